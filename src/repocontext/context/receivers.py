"""The type of the object before the dot, across files: `conn.`, `self.backend.`,
`builder = self.make_builder(spec); builder.`, `conn.cursor().execute(`, `super().`.

From the facts each file states about itself (lang/typefacts) and the index: a chain's head
is looked up where the cursor is (the enclosing function's parameters and locals, `self`, the
file's module variables, classes and imports), and each further segment in the class reached
so far and its bases, in the file that class is written in, so an annotation is always read
with the imports of the file that wrote it. Files other than the buffer are parsed on demand
and their facts cached by content.

The answer is a list of `TypeRef`s (usually one); an empty list means "unknown", never a guess.
(One module, longer than most: chains, names, imports and classes resolve each other
recursively, and split apart they would only call back and forth.)
Only a bare name that no import explains is looked up by name in the whole index, and only
when exactly one class has that name.
"""

from __future__ import annotations

import posixpath
from collections.abc import Callable
from dataclasses import dataclass

from ..index.imports import ImportResolver
from ..lang.languages import language_for
from ..lang.typefacts import (
    Chain,
    ClassFacts,
    FileFacts,
    FunctionFacts,
    Import,
    TypeSource,
    local_types,
)
from ..store import Store
from .facts import FileFactsCache

MAX_DEPTH = 12  # chain steps plus indirections (a local assigned from a field of a ...)
# following unannotated returns: `cl = self.get_changelist_instance(r)`, which returns
# `ChangeList(...)`, a local assigned from `self.get_changelist(r)`, which returns a class
MAX_RETURNS_DEPTH = 8
MAX_LINEAGE = 16  # a class and its bases (Django's views are 9 deep)


# bases that add no members a program calls on an instance (`object`, typing's markers)
ROOT_BASES = frozenset({"object", "ABC", "abc.ABC", "Protocol", "typing.Protocol", "Generic"})


@dataclass(frozen=True)
class TypeRef:
    """A class (or struct, interface) at `path`; `instance`: a value of it, not the class."""

    path: str
    qualname: str
    instance: bool = True
    module: bool = False  # a module (qualname ""): `mod.` where mod is an imported file
    guessed: bool = False  # from the variable's name alone (`paginator` -> Paginator)

    @property
    def name(self) -> str:
        return self.qualname.rsplit(".", 1)[-1]


@dataclass(frozen=True)
class Member:
    owner: TypeRef  # the class in the lineage that defines it
    name: str
    function: FunctionFacts | None = None
    field: TypeSource | None = None


@dataclass
class Receiver:
    """The object before the cursor's dot and what is known of it."""

    chain: Chain
    member: str  # the name being typed or called after the dot ("" right after it)
    types: list[TypeRef]

    def describe(self) -> str:
        text = ".".join(n + ("()" if c else "") for n, c in self.chain)
        kinds = ", ".join(t.qualname or posixpath.basename(t.path) for t in self.types)
        return f"{text} is {kinds}" if kinds else f"{text}: type unknown"


@dataclass
class _Scope:
    """Where a name is being resolved: a file, and within it maybe a function and a class."""

    path: str
    facts: FileFacts
    locals: dict[str, TypeSource] | None = None
    self_class: str | None = None


class ReceiverTyper:
    def __init__(self, store: Store, imports: ImportResolver, read: Callable[[str], str | None]):
        self.store = store
        self.imports = imports
        self.files = FileFactsCache(imports, read)

    # --- entry point -------------------------------------------------------------------------
    def receiver(
        self,
        path: str,
        facts: FileFacts,
        chain: Chain,
        member: str,
        enclosing: str | None,
        line: int,
    ) -> Receiver:
        """What `chain` is at `line` of the buffer at `path` (whose facts are given)."""
        self.files.new_request()
        function = _function(facts, enclosing)
        locals_ = local_types(facts, function, line) if function is not None else None
        if facts.language == "go":  # the buffer is one file of its package
            facts = self.files.package(posixpath.dirname(path), {path: facts}) or facts
        scope = _Scope(path, facts, locals_, _class_of(facts, enclosing))
        return Receiver(chain, member, self.resolve_chain(chain, scope, 0))

    def facts(self, path: str) -> FileFacts | None:
        return self.files.facts(path)

    # --- chains ------------------------------------------------------------------------------
    def resolve_chain(self, chain: Chain, scope: _Scope, depth: int) -> list[TypeRef]:
        if not chain or depth > MAX_DEPTH:
            return []
        refs = self._head(chain[0], scope, depth)
        for segment in chain[1:]:
            refs = _unique([r for ref in refs for r in self._step(ref, segment, depth)])
            if not refs:
                return []
        return refs

    def _head(self, segment: tuple[str, bool], scope: _Scope, depth: int) -> list[TypeRef]:
        name, called = segment
        facts = scope.facts
        if name in ("self", "this") and scope.self_class:
            return [TypeRef(scope.path, scope.self_class)]
        if name == "cls" and scope.self_class:
            return [TypeRef(scope.path, scope.self_class, instance=called)]
        if name == "super" and scope.self_class and (called or facts.language != "python"):
            # Python's `super().m(`, TypeScript's `super.m(`
            return [r for r in self.lineage(TypeRef(scope.path, scope.self_class))[1:]]
        if scope.locals and name in scope.locals:
            found = self._source(
                scope.locals[name],
                _Scope(scope.path, facts, scope.locals, scope.self_class),
                depth + 1,
            )
            if called:  # `cls = self.get_class(); cls(...)`: a local holding a class, called
                found = [r for t in found for r in ([t] if t.instance else self._called(t, depth))]
        else:
            found = self._in_file(name, called, scope, depth)
        if not found and not called and name[:1].islower() and depth == 0:
            return self._named_like(name, scope.path)
        return found

    def _named_like(self, name: str, near: str) -> list[TypeRef]:
        """An untyped variable named after a class: `paginator` -> Paginator, `content_type` ->
        ContentType, when exactly one class of the index has that name. Marked as a guess."""
        camel = "".join(part[:1].upper() + part[1:] for part in name.strip("_").split("_"))
        if len(camel) < 4:
            return []
        hits = [(h.path, h.qualname) for h in self.store.classes_named(camel, 3) if h.qualname]
        if len(hits) != 1:
            return []
        path, qualname = hits[0]
        return [TypeRef(path, qualname or camel, guessed=True)]

    def _in_file(self, name: str, called: bool, scope: _Scope, depth: int) -> list[TypeRef]:
        """A module-level name of `scope`'s file: variable, class, function or import."""
        facts = scope.facts
        if name in facts.variables:
            return self._source(facts.variables[name], _Scope(scope.path, facts), depth + 1)
        if name in facts.classes:
            return [TypeRef(facts.classes[name].path or scope.path, name, instance=called)]
        if name in facts.functions:
            fn = facts.functions[name]
            return self._returns(fn, _Scope(fn.path or scope.path, facts), depth) if called else []
        if name in facts.imports:
            out = []
            for target in self._import(facts.imports[name], scope.path, depth):
                if target.module or target.instance or not called:
                    out.append(target)  # a module, a variable's value, a class itself
                else:
                    out += self._called(target, depth)
            return out
        for module in facts.star_imports:  # `from .fields import *`
            resolved = self.imports.resolve(scope.path, module, language_for(scope.path))
            found = self._defined_in(resolved, name, depth + 1) if resolved else []
            if found:
                return [
                    r
                    for t in found
                    for r in ([t] if t.instance or not called else self._called(t, depth))
                ]
        if name[:1].isupper():
            ref = self._by_name(name, scope.path)
            return [TypeRef(ref.path, ref.qualname, instance=called)] if ref else []
        return []

    def _called(self, ref: TypeRef, depth: int) -> list[TypeRef]:
        """The value of calling what `ref` names: a class gives an instance; a function (found
        as a class-less name in its file) gives what its return annotation says."""
        facts = self.facts(ref.path)
        if facts is None:
            return []
        if ref.qualname in facts.classes:
            return [TypeRef(ref.path, ref.qualname)]
        fn = facts.functions.get(ref.qualname)
        return self._returns(fn, _Scope(ref.path, facts), depth) if fn else []

    def _step(self, ref: TypeRef, segment: tuple[str, bool], depth: int) -> list[TypeRef]:
        name, called = segment
        if ref.module:
            facts = self.facts(ref.path)
            if facts is None:
                return []
            if (
                name not in facts.classes
                and name not in facts.functions
                and name not in facts.variables
                and name not in facts.imports
            ):
                sub = self._module(ref.path, name)  # `pkg.sub` where sub is a module
                return [sub] if sub else []
            return self._in_file(name, called, _Scope(ref.path, facts), depth + 1)
        member = self.member(ref, name)
        if member is None:
            return []
        owner_facts = self.facts(member.owner.path)
        if owner_facts is None:
            return []
        scope = _Scope(member.owner.path, owner_facts, self_class=member.owner.qualname)
        if member.function is not None:
            if called or member.function.is_property:
                return self._returns(member.function, scope, depth, member.owner)
            return []
        return self._source(member.field, scope, depth + 1)

    def _returns(
        self, fn: FunctionFacts, scope: _Scope, depth: int, owner: TypeRef | None = None
    ) -> list[TypeRef]:
        """What calling `fn` gives: its return annotation, or else what its `return` returns,
        read with the function's own parameters and locals."""
        if fn.returns:
            return self._type(fn.returns, scope, depth, owner)
        if fn.returns_chain is None or depth > MAX_RETURNS_DEPTH:
            return []
        inner = _Scope(
            scope.path,
            scope.facts,
            local_types(scope.facts, fn, 1 << 30) if scope.facts.source else None,
            scope.self_class,
        )
        return self.resolve_chain(fn.returns_chain, inner, depth + 2)

    def _source(self, source: TypeSource | None, scope: _Scope, depth: int) -> list[TypeRef]:
        if source is None or depth > MAX_DEPTH:
            return []
        if source.annotation:
            return self._type(source.annotation, scope, depth)
        if source.chain:
            return self.resolve_chain(source.chain, scope, depth + 1)
        return []

    def _type(
        self, annotation: str | None, scope: _Scope, depth: int, owner: TypeRef | None = None
    ) -> list[TypeRef]:
        """A written type name, read in `scope`'s file."""
        if not annotation or depth > MAX_DEPTH:
            return []
        if "|" in annotation:  # a union: each of its classes
            return _unique(
                [r for part in annotation.split("|") for r in self._type(part, scope, depth, owner)]
            )
        if annotation in ("Self", "typing.Self", "typing_extensions.Self") and owner:
            return [TypeRef(owner.path, owner.qualname)]
        parts = annotation.split(".")
        facts = scope.facts
        if len(parts) == 1:
            refs = self._in_file(annotation, True, _Scope(scope.path, facts), depth + 1)
            return [r for r in refs if not r.module]
        # `mod.Class` / `pkg.mod.Class`: the longest head that the file imports as a module
        for k in range(len(parts) - 1, 0, -1):
            head = ".".join(parts[:k])
            imp = facts.imports.get(head)
            if imp is None:
                continue
            target = next((r for r in self._import(imp, scope.path, depth) if r.module), None)
            for part in parts[k:-1]:
                target = self._module(target.path, part) if target and target.module else None
            if target is not None and target.module:
                cls = self._class_in(target.path, parts[-1], depth)
                if cls is not None:
                    return [cls]
        ref = self._by_name(parts[-1], scope.path)
        return [ref] if ref else []

    # --- classes -----------------------------------------------------------------------------
    def lineage(self, ref: TypeRef) -> list[TypeRef]:
        """The class and its bases, nearest first (breadth first, each once)."""
        out: list[TypeRef] = []
        queue = [TypeRef(ref.path, ref.qualname)]
        while queue and len(out) < MAX_LINEAGE:
            current = queue.pop(0)
            if current in out:
                continue
            out.append(current)
            cls = self.class_facts(current)
            if cls is None:
                continue
            facts = self.facts(current.path)
            if facts is None:  # the file went since its class was read
                continue
            for base in cls.bases:
                queue.extend(self._type(base, _Scope(current.path, facts), 0))
        return out

    def member(self, ref: TypeRef, name: str) -> Member | None:
        """`name` as defined by the class or the nearest base that has it."""
        for cls_ref in self.lineage(ref):
            cls = self.class_facts(cls_ref)
            if cls is None:
                continue
            if name in cls.methods:
                return Member(cls_ref, name, function=cls.methods[name])
            if name in cls.fields:
                return Member(cls_ref, name, field=cls.fields[name])
        return None

    def all_members(self, ref: TypeRef) -> list[Member]:
        """Every method of the class and its bases, each once (the nearest definition)."""
        out: list[Member] = []
        seen: set[str] = set()
        for cls_ref in self.lineage(ref):
            cls = self.class_facts(cls_ref)
            for name, fn in cls.methods.items() if cls else ():
                if name not in seen:
                    seen.add(name)
                    out.append(Member(cls_ref, name, function=fn))
        return out

    def member_names(self, ref: TypeRef) -> tuple[list[str], bool]:
        """The names an instance of the class has, methods and fields, nearest class first
        (what the decoder may spell after `obj.`: complete/healing.py, NameBias), and whether
        that is all of them: False when a base is not in the index (a library's class)."""
        out: dict[str, None] = {}
        complete = True
        for cls_ref in self.lineage(ref):
            cls = self.class_facts(cls_ref)
            if cls is None:
                complete = False
                continue
            out.update(dict.fromkeys(cls.methods))
            out.update(dict.fromkeys(cls.fields))
            facts = self.facts(cls_ref.path)
            if facts is None:  # the file went since its class was read
                complete = False
                continue
            for base in cls.bases:
                if base not in ROOT_BASES and not self._type(base, _Scope(cls_ref.path, facts), 0):
                    complete = False
        return list(out), complete

    def members_starting(self, ref: TypeRef, prefix: str, limit: int = 5) -> list[Member]:
        """Methods whose name starts with `prefix` (the word being typed), nearest class first."""
        out: list[Member] = []
        seen: set[str] = set()
        for cls_ref in self.lineage(ref):
            cls = self.class_facts(cls_ref)
            for name, fn in cls.methods.items() if cls else ():
                if name.startswith(prefix) and name not in seen:
                    seen.add(name)
                    out.append(Member(cls_ref, name, function=fn))
        return sorted(out, key=lambda m: (m.name != prefix, len(m.name)))[:limit]

    def class_facts(self, ref: TypeRef) -> ClassFacts | None:
        facts = self.facts(ref.path)
        return facts.classes.get(ref.qualname) if facts else None

    # --- names across files --------------------------------------------------------------------
    def _import(self, imp: Import, importer: str, depth: int) -> list[TypeRef]:
        """What an import binds: a module (a file), a class or function of one (as the class or
        function itself, `instance=False`), or the value of a module variable (`apps`)."""
        language = language_for(importer)
        if imp.name is None:
            target = self.imports.resolve(importer, imp.module, language)
            return [TypeRef(target, "", module=True)] if target else []
        # `from pkg import mod` may name a module
        sep = "" if imp.module.endswith((".", "/")) else "."
        as_module = self.imports.resolve(importer, f"{imp.module}{sep}{imp.name}", language)
        target = self.imports.resolve(importer, imp.module, language)
        if target is not None:
            found = self._defined_in(target, imp.name, depth)
            if found:
                return found
        if as_module is not None and as_module != target:
            return [TypeRef(as_module, "", module=True)]
        return []

    def _defined_in(self, path: str, name: str, depth: int) -> list[TypeRef]:
        """`name` in the file at `path`: a class, a function, or a variable's value; imports
        followed (a package's __init__ passing on a name)."""
        facts = self.facts(path)
        if facts is None or depth > MAX_DEPTH:
            return []
        if name in facts.classes or name in facts.functions:
            found = facts.classes.get(name) or facts.functions.get(name)
            where = found.path if found is not None else None
            return [TypeRef(where or path, name, instance=False)]
        if name in facts.variables:
            return self._source(facts.variables[name], _Scope(path, facts), depth + 1)
        imp = facts.imports.get(name)
        if imp is not None and not imp.module and imp.name:  # `export default class Foo`
            return self._defined_in(path, imp.name, depth + 1)
        if imp is not None:  # `from .models import Model` in a package's __init__
            return self._import(imp, path, depth + 1)
        for module in facts.star_imports:
            resolved = self.imports.resolve(path, module, language_for(path))
            refs = self._defined_in(resolved, name, depth + 1) if resolved else []
            if refs:
                return refs
        return []

    def _class_in(self, path: str, name: str, depth: int) -> TypeRef | None:
        found = next((r for r in self._defined_in(path, name, depth) if not r.instance), None)
        if found is None or found.module:
            return None
        facts = self.facts(found.path)
        if facts is None or found.qualname not in facts.classes:
            return None
        return TypeRef(found.path, found.qualname)

    def in_module(self, module: TypeRef, name: str) -> list[TypeRef]:
        """What `name` is in the module `module` (a class or function, as itself)."""
        return self._defined_in(module.path, name, 0)

    def _module(self, path: str, name: str) -> TypeRef | None:
        """The submodule `name` of the package or module at `path`."""
        language = language_for(path)
        if language != "python":
            return None
        base = posixpath.dirname(path) if path.endswith("__init__.py") else path[:-3]
        for candidate in (f"{base}/{name}.py", f"{base}/{name}/__init__.py"):
            if candidate in self.imports.paths:
                return TypeRef(candidate, "", module=True)
        return None

    def _by_name(self, name: str, near: str) -> TypeRef | None:
        """The one class of this name in the index (the closest to `near` among a few)."""
        hits = [h for h in self.store.classes_named(name, 10) if h.qualname]
        if not hits or len(hits) > 3:
            return None
        best = max(hits, key=lambda h: (h.role == "source", _shared_dirs(h.path, near)))
        return TypeRef(best.path, best.qualname or name)


def _function(facts: FileFacts, enclosing: str | None) -> FunctionFacts | None:
    """The function or method whose qualname is `enclosing` (or its nearest named ancestor)."""
    while enclosing:
        if enclosing in facts.functions:
            return facts.functions[enclosing]
        owner, _, name = enclosing.rpartition(".")
        cls = facts.classes.get(owner)
        if cls is not None and name in cls.methods:
            return cls.methods[name]
        enclosing = owner or None
    return None


def _class_of(facts: FileFacts, enclosing: str | None) -> str | None:
    while enclosing:
        if enclosing in facts.classes:
            return enclosing
        enclosing = enclosing.rpartition(".")[0] or None
    return None


def _shared_dirs(a: str, b: str) -> int:
    return (
        len(
            posixpath.commonpath([posixpath.dirname(a) or ".", posixpath.dirname(b) or "."]).split(
                "/"
            )
        )
        if posixpath.dirname(a) and posixpath.dirname(b)
        else 0
    )


def _unique(refs: list[TypeRef]) -> list[TypeRef]:
    return list(dict.fromkeys(refs))
