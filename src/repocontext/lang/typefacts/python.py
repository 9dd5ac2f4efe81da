"""Type facts of a Python file: imports (TYPE_CHECKING ones too), classes with their bases,
annotated and assigned attributes (class level and `self.x` in any method), methods and
functions with their return annotations, module variables; and, for the function around the
cursor, its parameters and locals up to the cursor.

Walks the statement spine with an explicit stack (module, class bodies, `if`/`try` blocks), and
method bodies only for `self.x` assignments, so a large file costs a few milliseconds.
"""

from __future__ import annotations

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
            elif t in _BLOCKS:
                stack.append(child)
    return facts


def python_locals(
    function: FunctionFacts, source: bytes, before_line: int
) -> dict[str, TypeSource]:
    """Parameters, then assignments in the body before `before_line`: the last one wins."""
    out = {name: TypeSource(annotation=ann) for name, ann in function.params.items() if ann}
    body = function.node.child_by_field_name("body") if function.node is not None else None
    if body is None:
        return out
    stack = [body]
    found: list[tuple[int, str, TypeSource]] = []
    while stack:
        node = stack.pop()
        for child in node.named_children:
            if child.start_point[0] + 1 > before_line:
                continue
            if child.type in ("expression_statement", "assignment"):
                for name, src in _assigned(child, source):
                    found.append((child.start_point[0], name, src))
            elif child.type == "with_statement":
                for item in _descendants(child, "with_item", depth=3):
                    value = item.child_by_field_name("value")
                    if value is not None and value.type == "as_pattern":
                        alias = value.child_by_field_name("alias")
                        target = alias.named_children[0] if alias and alias.named_children else None
                        expr = value.named_children[0] if value.named_children else None
                        chain = expression_chain(expr, source)
                        if target is not None and target.type == "identifier" and chain:
                            found.append(
                                (
                                    child.start_point[0],
                                    node_text(target, source),
                                    TypeSource(chain=chain),
                                )
                            )
                stack.append(child)
            elif child.type == "except_clause":
                value = child.child_by_field_name("value")
                if value is not None and value.type == "as_pattern":
                    alias = value.child_by_field_name("alias")
                    target = alias.named_children[0] if alias and alias.named_children else None
                    caught = value.named_children[0] if value.named_children else None
                    chain = expression_chain(caught, source)
                    if target is not None and chain:  # `except ValidationError as e`
                        found.append(
                            (
                                child.start_point[0],
                                node_text(target, source),
                                TypeSource(annotation=".".join(n for n, _ in chain)),
                            )
                        )
                stack.append(child)
            elif child.type in _BLOCKS or child.type == "block":
                stack.append(child)
    for _, name, src in sorted(found, key=lambda x: x[0]):
        out[name] = src
    return out


def expression_chain(node: Node | None, source: bytes) -> Chain | None:
    """`a.b(c).d` -> ((a, False), (b, True), (d, False)); None for anything else."""
    segments: list[tuple[str, bool]] = []
    called = False
    while node is not None:
        t = node.type
        if t == "call":
            called = True
            node = node.child_by_field_name("function")
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
            node = (calls or operands or [None])[0]
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
    if ann is not None:
        normalized = normalize_annotation(node_text(ann, source))
        if normalized:
            return TypeSource(annotation=normalized)
    chain = expression_chain(assign.child_by_field_name("right"), source)
    return TypeSource(chain=chain) if chain else None


def _descendants(node: Node, type_: str, depth: int) -> list[Node]:
    out, frontier = [], [node]
    for _ in range(depth):
        nxt = []
        for n in frontier:
            for c in n.named_children:
                (out if c.type == type_ else nxt).append(c)
        frontier = nxt
    return out
