"""What a file says about the types of its names, read from the syntax tree, no type checker.

At `conn.` the completion needs the class of `conn`, which usually lives in another file. These
facts are what a reader would use: a parameter's annotation, `x = Builder(...)`, `x =
make()` where `make` is annotated `-> Builder`, `with open_db() as db`, `self.backend:
Backend` in `__init__`, a struct field's type, `x := pkg.NewT()`. Each language module turns
a tree into `FileFacts`; `context/receivers.py` resolves them across files with the index.

Types are kept as written (a dotted name after `normalize_annotation`), and values whose type
depends on another expression as a `Chain` (`self.make_builder(spec)` -> self, make_builder()),
to be resolved later in the file that wrote them.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Collection
from dataclasses import dataclass, field

from tree_sitter import Node

# A segment of a chain: a name, and whether it is called (`cursor()` in `conn.cursor().x`).
Segment = tuple[str, bool]
Chain = tuple[Segment, ...]


@dataclass(frozen=True)
class TypeSource:
    """Where a value's type comes from: an annotation (a type name) or an expression."""

    annotation: str | None = None  # a dotted type name, normalized
    chain: Chain | None = None  # the value is this expression's result


@dataclass
class FunctionFacts:
    name: str
    qualname: str
    line: int
    returns: str | None = None  # normalized return annotation
    returns_chain: Chain | None = None  # without an annotation: what its `return` gives
    params: dict[str, str] = field(default_factory=dict)  # parameter -> normalized annotation
    is_property: bool = False
    class_level: bool = False  # a classmethod or staticmethod (TypeScript: static)
    node: Node | None = field(default=None, repr=False)  # for locals, read on demand
    path: str | None = None  # the file, where a package spans several (Go)
    signature: str = ""  # its first line, where the index has no outline to show it (Go)


@dataclass
class ClassFacts:
    name: str
    qualname: str
    line: int
    bases: list[str] = field(default_factory=list)  # as written: "Base", "mod.Base"
    fields: dict[str, TypeSource] = field(default_factory=dict)
    methods: dict[str, FunctionFacts] = field(default_factory=dict)
    path: str | None = None  # the file, where a package spans several (Go)


@dataclass(frozen=True)
class Import:
    module: str  # "pkg.mod", ".sibling", "./util" (JS), "example.com/pkg" (Go)
    name: str | None = None  # the name taken from the module, None for the module itself


@dataclass
class FileFacts:
    language: str
    imports: dict[str, Import] = field(default_factory=dict)  # local name -> what it is
    classes: dict[str, ClassFacts] = field(default_factory=dict)  # by qualname
    functions: dict[str, FunctionFacts] = field(default_factory=dict)  # module-level
    variables: dict[str, TypeSource] = field(default_factory=dict)  # module-level
    star_imports: list[str] = field(default_factory=list)  # `from m import *`: modules
    source: bytes = field(default=b"", repr=False)


def file_facts(root: Node | None, source: bytes, language: str | None) -> FileFacts | None:
    """The facts of one parsed file, for the languages that have an extractor."""
    if root is None or language is None:
        return None
    if language == "python":
        from .python import python_facts

        return python_facts(root, source)
    if language in ("typescript", "tsx", "javascript"):
        from .typescript import typescript_facts

        return typescript_facts(root, source, language)
    if language == "go":
        from .go import go_facts

        return go_facts(root, source)
    return None


def local_types(
    facts: FileFacts, function: FunctionFacts, before_line: int
) -> dict[str, TypeSource]:
    """Parameters and local variables of `function` as known at `before_line` (1-based)."""
    if facts.language == "python":
        from .python_locals import python_locals

        return python_locals(function, facts.source, before_line)
    if facts.language in ("typescript", "tsx", "javascript"):
        from .typescript import typescript_locals

        return typescript_locals(function, facts.source, before_line)
    if facts.language == "go":
        from .go import go_locals

        return go_locals(function, facts.source, before_line)
    return {}


def locals_before(
    function: FunctionFacts,
    source: bytes,
    before_line: int,
    blocks: Collection[str],
    declared: Callable[[Node, bytes], list[tuple[str, TypeSource]]],
) -> dict[str, TypeSource]:
    """The annotated parameters of `function`, then its locals declared before `before_line`
    (in source order, so a name declared again takes its later type): the statements of its
    body and of the `blocks` nested in it are read with `declared` (the language's
    declarations: a statement that declares nothing gives [])."""
    out = {name: TypeSource(annotation=ann) for name, ann in function.params.items() if ann}
    body = function.node.child_by_field_name("body") if function.node is not None else None
    if body is None:
        return out
    stack, found = [body], []
    while stack:
        node = stack.pop()
        for child in node.named_children:
            if child.start_point[0] + 1 > before_line:
                continue
            if child.type in blocks:
                stack.append(child)
            else:
                found += [
                    (child.start_point[0], name, src) for name, src in declared(child, source)
                ]
    for _, name, src in sorted(found, key=lambda x: x[0]):
        out[name] = src
    return out


# --- type names -------------------------------------------------------------------------------

# Generic containers: `list[Foo]` says nothing about the methods of the value itself that a
# completion would want (they are the container's), so such annotations give no type.
_CONTAINERS = frozenset(
    """list List dict Dict set Set frozenset FrozenSet tuple Tuple Iterable
Iterator Sequence Mapping MutableMapping MutableSequence Callable Generator AsyncIterator
AsyncIterable AsyncGenerator Awaitable Coroutine Any object str int float bool bytes None
Array Record Promise Partial Readonly ReadonlyArray Map string number boolean any unknown void
never undefined null error interface""".split()
)
_WRAPPERS = (
    "Optional",
    "typing.Optional",
    "Type",
    "type",
    "typing.Type",
    "ClassVar",
    "typing.ClassVar",
    "Final",
    "typing.Final",
    "Annotated",
    "typing.Annotated",
    "Required",
    "NotRequired",
)
_DOTTED = re.compile(r"[A-Za-z_][A-Za-z0-9_]*(?:\.[A-Za-z_][A-Za-z0-9_]*)*")


def normalize_annotation(text: str | None) -> str | None:
    """A written type, reduced to the one class a value of it has, or None.

    `Optional[X]`, `X | None`, `"X"`, `type[X]`, `*T` (Go), generics like `QuerySet[Model]`
    -> their class; containers and builtins -> None. A union of classes (`A | B`,
    `Union[A, B]`) keeps each: "A|B".
    """
    if not text:
        return None
    text = text.strip()
    for _ in range(6):
        text = text.strip().strip("\"'").strip()
        if text.startswith("*") or text.startswith("&"):
            text = text[1:]
            continue
        parts = _split_top(text, "|")
        head, args = _generic(text)
        if len(parts) == 1 and head in ("Union", "typing.Union") and args:
            parts = args
        if len(parts) > 1:
            kept = [
                n
                for p in parts
                if p.strip() not in ("None", "null", "undefined") and (n := normalize_annotation(p))
            ]
            return "|".join(dict.fromkeys(kept)) or None
        if head in _WRAPPERS and args:
            text = args[0]
            continue
        if head is not None:
            text = head
        break
    m = _DOTTED.fullmatch(text)
    if not m or text in _CONTAINERS or text.rsplit(".", 1)[-1] in _CONTAINERS:
        return None
    return text


def _generic(text: str) -> tuple[str | None, list[str]]:
    """`Head[a, b]` or `Head<a, b>` -> ("Head", ["a", "b"]); other text -> (None, [])."""
    for open_, close in (("[", "]"), ("<", ">")):
        i = text.find(open_)
        if i > 0 and text.endswith(close):
            return text[:i].strip(), _split_top(text[i + 1 : -1], ",")
    return None, []


def _split_top(text: str, sep: str) -> list[str]:
    """Split at `sep` outside brackets."""
    out, depth, start = [], 0, 0
    for i, ch in enumerate(text):
        if ch in "[(<{":
            depth += 1
        elif ch in "])>}":
            depth -= 1
        elif ch == sep and depth == 0:
            out.append(text[start:i])
            start = i + 1
    out.append(text[start:])
    return [p.strip() for p in out if p.strip()]


# --- the expression before the cursor ---------------------------------------------------------

_IDENT_TAIL = re.compile(r"[A-Za-z_$][A-Za-z0-9_$]*$")


def chain_before(text: str) -> Chain | None:
    """The expression that ends `text`, as a chain: `self.request.session` ->
    (self, request, session); `conn.cursor()` -> (conn, cursor()); `super()` -> (super()).

    Read backwards from the end, so it works on the half-written line a keystroke sends.
    Subscripts, literals and operators end the chain: None when nothing chain-like ends `text`.
    """
    segments: list[Segment] = []
    i = len(text)
    while True:
        called = False
        if i > 0 and text[i - 1] == ")":
            j = _matching_open(text, i - 1)
            if j is None:
                return None
            called, i = True, j
        m = _IDENT_TAIL.search(text[:i][-200:])
        if not m:
            return None
        name = m.group(0)
        segments.insert(0, (name, called))
        i -= len(name)
        k = i
        while k > 0 and text[k - 1] in " \t":
            k -= 1
        if k > 1 and text[k - 2 : k] in ("?.", "->"):
            i = k - 2
        elif k > 0 and text[k - 1] == ".":
            i = k - 1
        else:
            break
        while i > 0 and text[i - 1] in " \t":
            i -= 1
    return tuple(segments) if segments else None


def _matching_open(text: str, close: int) -> int | None:
    depth = 0
    for i in range(close, max(-1, close - 2000), -1):
        ch = text[i]
        if ch in ")]}":
            depth += 1
        elif ch in "([{":
            depth -= 1
            if depth == 0:
                return i if ch == "(" else None
    return None


def node_text(node: Node | None, source: bytes) -> str:
    if node is None:
        return ""
    return source[node.start_byte : node.end_byte].decode("utf-8", "replace")
