"""Type facts of a Python file: imports (TYPE_CHECKING ones too, and those made inside a
function), classes with their bases, annotated and assigned attributes (class level and
`self.x` in any method), methods (a property's getter, not its setter) and functions with
their return annotations, module variables and type aliases (`Shape = Union[A, B]`). The names
of the function around the cursor are python_locals.py's.

Walks the statement spine with an explicit stack (module, class bodies, `if`/`try` blocks), and
method bodies only for `self.x` assignments, so a large file costs a few milliseconds.
"""

from __future__ import annotations

import functools

from tree_sitter import Node

from . import (
    Chain,
    ClassFacts,
    FileFacts,
    FunctionFacts,
    Import,
    TypeSource,
    node_text,
    normalize_annotation,
)

# statements whose bodies are walked; ERROR too: the half-typed line at the cursor can make
# tree-sitter wrap the code around it in an ERROR node, definitions and all
_BLOCKS = (
    "if_statement",
    "try_statement",
    "block",
    "else_clause",
    "elif_clause",
    "except_clause",
    "finally_clause",
    "with_statement",
    "for_statement",
    "while_statement",
    "match_statement",
    "case_clause",
    "ERROR",
)
_COPIES = ("copy.copy", "copy.deepcopy", "copy", "deepcopy")
_PROPERTY_DECORATORS = ("property", "cached_property", "functools.cached_property")


def python_facts(root: Node, source: bytes) -> FileFacts:
    facts = FileFacts("python", source=source)
    stack: list[Node] = [root]
    while stack:
        node = stack.pop()
        for child in node.named_children:
            t = child.type
            if t in ("import_statement", "import_from_statement"):
                _imports(child, source, facts.imports, facts.star_imports)
            elif t in ("class_definition", "decorated_definition", "function_definition"):
                definition, decorators = _unwrap(child, source)
                if definition is None:
                    continue
                if definition.type == "class_definition":
                    _class(definition, source, facts, prefix="")
                else:
                    fn = _function(definition, source, "", decorators)
                    facts.functions[fn.name] = fn
            elif t in ("expression_statement", "assignment"):
                _assignment(child, source, facts.variables)
            elif t == "type_alias_statement":  # `type Shape = Circle | Square`
                left, right = child.child_by_field_name("left"), child.child_by_field_name("right")
                alias = normalize_annotation(node_text(right, source))
                if left is not None and alias:
                    facts.variables[node_text(left, source)] = TypeSource(annotation=alias)
            elif t in _BLOCKS:
                stack.append(child)
    _local_imports(root, source, facts)
    return facts


def _local_imports(root: Node, source: bytes, facts: FileFacts) -> None:
    """Imports inside functions (`from .views.main import ChangeList` in a method, to avoid an
    import cycle) name the same thing everywhere in the file: kept where the module level does
    not bind the name itself."""
    found: dict[str, Import] = {}
    for node in _import_nodes(root):
        parent = node.parent
        if parent is not None and parent.type == "module":
            continue  # read above, with the module's statements
        _imports(node, source, found, [])
    for name, imp in found.items():
        if not any(name in known for known in (facts.imports, facts.classes, facts.functions)):
            facts.imports.setdefault(name, imp)


def _import_nodes(root: Node) -> list[Node]:
    from tree_sitter import QueryCursor

    captures = QueryCursor(_import_query()).captures(root)
    return captures.get("import", [])


@functools.cache
def _import_query():
    from tree_sitter import Query
    from tree_sitter_language_pack import get_language

    return Query(get_language("python"), "[(import_statement) (import_from_statement)] @import")


def expression_chain(node: Node | None, source: bytes) -> Chain | None:
    """`a.b(c).d` -> ((a, False), (b, True), (d, False)); None for anything else."""
    segments: list[tuple[str, bool]] = []
    called = False
    while node is not None:
        t = node.type
        if t == "call":
            function = node.child_by_field_name("function")
            args = node.child_by_field_name("arguments")
            if (
                node_text(function, source) in _COPIES
                and args is not None
                and len(args.named_children) == 1
            ):
                node = args.named_children[0]  # `copy.copy(self)`: a value of the same class
                continue
            called = True
            node = function
            continue
        if t in ("await", "parenthesized_expression"):
            node = node.named_children[0] if node.named_children else None
            continue
        if t in ("boolean_operator", "conditional_expression") and not segments:
            # `given or Default()`, `A() if c else b`: the operand that makes a new object
            operands = [
                c for c in node.named_children if c.type in ("call", "attribute", "identifier")
            ]
            calls = [c for c in operands if c.type == "call"]
            makers = calls or operands
            node = makers[0] if makers else None
            continue
        if t == "attribute":
            attr = node.child_by_field_name("attribute")
            segments.insert(0, (node_text(attr, source), called))
            called = False
            node = node.child_by_field_name("object")
            continue
        if t == "identifier":
            segments.insert(0, (node_text(node, source), called))
            return tuple(segments)
        return None
    return None


# --- helpers ----------------------------------------------------------------------------------


def _unwrap(node: Node, source: bytes) -> tuple[Node | None, list[str]]:
    if node.type != "decorated_definition":
        return node, []
    decorators = [
        node_text(d, source).lstrip("@").split("(")[0].strip()
        for d in node.named_children
        if d.type == "decorator"
    ]
    return node.child_by_field_name("definition"), decorators


def _imports(node: Node, source: bytes, out: dict[str, Import], stars: list[str]) -> None:
    if node.type == "import_statement":
        for name in node.children_by_field_name("name"):
            if name.type == "aliased_import":
                module = node_text(name.child_by_field_name("name"), source)
                alias = node_text(name.child_by_field_name("alias"), source)
                out[alias] = Import(module)
            else:
                module = node_text(name, source)
                # `import a.b` binds `a`; `a.b.C` is then read as module a.b, class C
                out.setdefault(module.split(".")[0], Import(module.split(".")[0]))
                out[module] = Import(module)
        return
    module_node = node.child_by_field_name("module_name")
    module = node_text(module_node, source)
    if any(c.type == "wildcard_import" for c in node.named_children):
        stars.append(module)
    for name in node.children_by_field_name("name"):
        if name.type == "aliased_import":
            original = node_text(name.child_by_field_name("name"), source)
            alias = node_text(name.child_by_field_name("alias"), source)
            out[alias] = Import(module, original)
        else:
            text = node_text(name, source)
            out[text] = Import(module, text)


def _class(node: Node, source: bytes, facts: FileFacts, prefix: str) -> None:
    name = node_text(node.child_by_field_name("name"), source)
    qualname = f"{prefix}{name}"
    cls = ClassFacts(name, qualname, node.start_point[0] + 1)
    supers = node.child_by_field_name("superclasses")
    for arg in supers.named_children if supers is not None else []:
        if arg.type in ("identifier", "attribute"):
            cls.bases.append(node_text(arg, source))
        elif arg.type == "subscript":  # Generic[T], Base[Model]
            value = arg.child_by_field_name("value")
            if value is not None and value.type in ("identifier", "attribute"):
                cls.bases.append(node_text(value, source))
    facts.classes[qualname] = cls
    body = node.child_by_field_name("body")
    stack = [body] if body is not None else []
    while stack:
        block = stack.pop()
        for child in block.named_children:
            if child.type in ("expression_statement", "assignment"):
                _assignment(child, source, cls.fields)
            elif child.type in ("function_definition", "decorated_definition", "class_definition"):
                definition, decorators = _unwrap(child, source)
                if definition is None:
                    continue
                if definition.type == "class_definition":
                    _class(definition, source, facts, prefix=f"{qualname}.")
                    continue
                fn = _function(definition, source, f"{qualname}.", decorators)
                if fn.name in cls.methods and any(
                    d.endswith((".setter", ".deleter")) for d in decorators
                ):
                    continue  # `@query.setter`: the property's getter says what it gives
                cls.methods[fn.name] = fn
                _self_attributes(fn, source, cls)
            elif child.type in ("if_statement", "try_statement", "block", "else_clause", "ERROR"):
                stack.append(child)


def _function(node: Node, source: bytes, prefix: str, decorators: list[str]) -> FunctionFacts:
    name = node_text(node.child_by_field_name("name"), source)
    fn = FunctionFacts(
        name,
        f"{prefix}{name}",
        node.start_point[0] + 1,
        node=node,
        is_property=any(d in _PROPERTY_DECORATORS or d.endswith(".getter") for d in decorators),
        # `@classmethod`, `@staticmethod`, or a decorator of one's own (Django's
        # `@classonlymethod`) on a method whose first parameter is `cls`
        class_level=any(d in ("classmethod", "staticmethod") for d in decorators)
        or bool(decorators)
        and _first_parameter(node, source) == "cls",
    )
    returns = node.child_by_field_name("return_type")
    fn.returns = normalize_annotation(node_text(returns, source)) if returns else None
    body = node.child_by_field_name("body")
    end = body.start_byte if body is not None else node.end_byte
    fn.signature = " ".join(
        source[node.start_byte : end].decode("utf-8", "replace").split()
    ).rstrip(":")
    if fn.returns is None and body is not None:
        fn.returns_chain = _returned(body, source)
    params = node.child_by_field_name("parameters")
    for p in params.named_children if params is not None else []:
        if p.type in ("typed_parameter", "typed_default_parameter"):
            ident = p.child_by_field_name("name") or next(
                (c for c in p.named_children if c.type == "identifier"), None
            )
            ann = normalize_annotation(node_text(p.child_by_field_name("type"), source))
            if ident is not None and ann:
                fn.params[node_text(ident, source)] = ann
    return fn


def _first_parameter(node: Node, source: bytes) -> str:
    params = node.child_by_field_name("parameters")
    first = params.named_children[0] if params is not None and params.named_children else None
    return node_text(first, source) if first is not None and first.type == "identifier" else ""


def _returned(body: Node, source: bytes) -> Chain | None:
    """What an unannotated function returns, when a `return` of it is a name, an attribute or
    a call (the first such, nested definitions excluded): `return self._query` -> self._query."""
    stack = [body]
    while stack:
        block = stack.pop(0)
        for child in block.named_children:
            if child.type == "return_statement" and child.named_children:
                chain = expression_chain(child.named_children[0], source)
                if chain and chain[0][0] not in ("None", "True", "False"):
                    return chain
            elif child.type in _BLOCKS:
                stack.append(child)
    return None


def _self_attributes(fn: FunctionFacts, source: bytes, cls: ClassFacts) -> None:
    """`self.x: T = ...` and `self.x = <expr>` anywhere in the method's body; a parameter's
    annotation stands in for it (`self.backend = backend` with `backend: Backend`)."""
    params = fn.node.child_by_field_name("parameters") if fn.node is not None else None
    first = next(
        (
            c
            for c in (params.named_children if params is not None else [])
            if c.type == "identifier"
        ),
        None,
    )
    me = node_text(first, source) if first is not None else "self"
    body = fn.node.child_by_field_name("body") if fn.node is not None else None
    stack = [body] if body is not None else []
    while stack:
        block = stack.pop()
        for child in block.named_children:
            if child.type in ("expression_statement", "assignment"):
                assign = (
                    child
                    if child.type == "assignment"
                    else (child.named_children[0] if child.named_children else None)
                )
                if assign is None or assign.type != "assignment":
                    continue
                left = assign.child_by_field_name("left")
                if (
                    left is None
                    or left.type != "attribute"
                    or node_text(left.child_by_field_name("object"), source) != me
                ):
                    continue
                attr = node_text(left.child_by_field_name("attribute"), source)
                src = _source_of(assign, source)
                if (
                    src is not None
                    and src.chain
                    and len(src.chain) == 1
                    and (src.chain[0][0] in fn.params and not src.chain[0][1])
                ):
                    src = TypeSource(annotation=fn.params[src.chain[0][0]])
                if src is not None and (attr not in cls.fields or src.annotation):
                    cls.fields[attr] = src
            elif child.type in _BLOCKS:
                stack.append(child)


def _assignment(stmt: Node, source: bytes, out: dict[str, TypeSource]) -> None:
    for name, src in _assigned(stmt, source):
        if name not in out or src.annotation:  # an annotation beats a later plain assignment
            out[name] = src


def _assigned(stmt: Node, source: bytes) -> list[tuple[str, TypeSource]]:
    # an assignment sits in an expression_statement, or bare in a block the parser recovered
    # from an error (the half-typed line below it)
    assign = (
        stmt
        if stmt.type == "assignment"
        else (stmt.named_children[0] if stmt.named_children else None)
    )
    if assign is None or assign.type != "assignment":
        return []
    left = assign.child_by_field_name("left")
    if left is None or left.type != "identifier":
        return []
    src = _source_of(assign, source)
    return [(node_text(left, source), src)] if src is not None else []


def _source_of(assign: Node, source: bytes) -> TypeSource | None:
    ann = assign.child_by_field_name("type")
    right = assign.child_by_field_name("right")
    if ann is not None:
        written = node_text(ann, source)
        if written.rsplit(".", 1)[-1] == "TypeAlias":  # `Shape: TypeAlias = Circle | Square`
            alias = normalize_annotation(node_text(right, source)) if right is not None else None
            return TypeSource(annotation=alias) if alias else None
        normalized = normalize_annotation(written)
        if normalized:
            return TypeSource(annotation=normalized)
    if _is_union(right, source):  # `Shape = Union[Circle, Square]`: a name for the classes
        alias = normalize_annotation(node_text(right, source))
        return TypeSource(annotation=alias) if alias else None
    chain = expression_chain(right, source)
    return TypeSource(chain=chain) if chain else None


_UNIONS = ("Union", "typing.Union", "Optional", "typing.Optional")


def _is_union(node: Node | None, source: bytes) -> bool:
    """`Union[A, B]`, `Optional[A]`, `A | B | None`: a type, written as a value."""
    if node is None:
        return False
    if node.type == "subscript":
        return node_text(node.child_by_field_name("value"), source) in _UNIONS
    if node.type == "binary_operator":
        op = node.child_by_field_name("operator")
        return (
            op is not None
            and node_text(op, source) == "|"
            and all(
                side is not None
                and (side.type in ("identifier", "attribute", "none") or _is_union(side, source))
                for side in (node.child_by_field_name("left"), node.child_by_field_name("right"))
            )
        )
    return False
