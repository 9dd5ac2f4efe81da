"""Type facts of a TypeScript (or JavaScript) file, from its explicit types: imports, classes
(fields, constructor parameter properties, `this.x = new X()`, methods and getters with
their return types), interfaces, functions, `const x: T`, `const x = new T()`; for the function
around the cursor, its typed parameters and `const`/`let` declarations before the cursor.

`Promise<T>` as a return type counts as T: the value is nearly always awaited.
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
    locals_before,
    node_text,
    normalize_annotation,
)

_DECLARATIONS = ("lexical_declaration", "variable_declaration")
_FUNCTION_VALUES = ("arrow_function", "function_expression", "function")


def typescript_facts(root: Node, source: bytes, language: str) -> FileFacts:
    facts = FileFacts(language, source=source)
    for node in root.named_children:
        if node.type == "export_statement":
            inner = node.child_by_field_name("declaration")
            if inner is None:
                _reexports(node, source, facts.imports)
                continue
            is_default = any(c.type == "default" for c in node.children)
            name = _top_level(inner, source, facts)
            if is_default and name:
                facts.imports.setdefault("default", Import("", name))
        elif node.type == "import_statement":
            _imports(node, source, facts.imports)
        else:
            _top_level(node, source, facts)
    return facts


# the statements whose bodies hold more of a function's locals
_BLOCKS = frozenset(
    """statement_block if_statement for_statement for_in_statement while_statement
    try_statement else_clause catch_clause finally_clause""".split()
)


def typescript_locals(
    function: FunctionFacts, source: bytes, before_line: int
) -> dict[str, TypeSource]:
    return locals_before(function, source, before_line, _BLOCKS, _local_declared)


def _local_declared(node: Node, source: bytes) -> list[tuple[str, TypeSource]]:
    return _declared(node, source) if node.type in _DECLARATIONS else []


def expression_chain(node: Node | None, source: bytes) -> Chain | None:
    segments: list[tuple[str, bool]] = []
    called = False
    while node is not None:
        t = node.type
        if t in ("call_expression", "new_expression"):
            called = True
            node = node.child_by_field_name("function") or node.child_by_field_name("constructor")
            continue
        if t in (
            "await_expression",
            "parenthesized_expression",
            "non_null_expression",
            "as_expression",
        ):
            node = node.named_children[0] if node.named_children else None
            continue
        if t == "member_expression":
            segments.insert(0, (node_text(node.child_by_field_name("property"), source), called))
            called = False
            node = node.child_by_field_name("object")
            continue
        if t in ("identifier", "this"):
            segments.insert(0, (node_text(node, source), called))
            return tuple(segments)
        return None
    return None


# --- helpers ----------------------------------------------------------------------------------


def _imports(node: Node, source: bytes, out: dict[str, Import]) -> None:
    src = node.child_by_field_name("source")
    module = node_text(src, source).strip("'\"`") if src is not None else ""
    for clause in node.named_children:
        if clause.type != "import_clause":
            continue
        for child in clause.named_children:
            if child.type == "identifier":
                out[node_text(child, source)] = Import(module, "default")
            elif child.type == "namespace_import" and child.named_children:
                out[node_text(child.named_children[0], source)] = Import(module)
            elif child.type == "named_imports":
                for spec in child.named_children:
                    name = spec.child_by_field_name("name")
                    alias = spec.child_by_field_name("alias") or name
                    if name is not None:
                        out[node_text(alias, source)] = Import(module, node_text(name, source))


def _reexports(node: Node, source: bytes, out: dict[str, Import]) -> None:
    """`export { X, Y as Z } from "./x"`: the names this file passes on."""
    src = node.child_by_field_name("source")
    if src is None:
        return
    module = node_text(src, source).strip("'\"`")
    for clause in node.named_children:
        if clause.type != "export_clause":
            continue
        for spec in clause.named_children:
            name = spec.child_by_field_name("name")
            alias = spec.child_by_field_name("alias") or name
            if name is not None:
                out.setdefault(node_text(alias, source), Import(module, node_text(name, source)))


def _top_level(node: Node, source: bytes, facts: FileFacts) -> str | None:
    t = node.type
    if t in ("class_declaration", "abstract_class_declaration", "interface_declaration"):
        cls = _class(node, source)
        facts.classes[cls.qualname] = cls
        return cls.name
    if t in ("function_declaration", "generator_function_declaration"):
        fn = _function(node, source, "")
        facts.functions[fn.name] = fn
        return fn.name
    if t in _DECLARATIONS:
        for decl in node.named_children:
            if decl.type != "variable_declarator":
                continue
            value = decl.child_by_field_name("value")
            name = node_text(decl.child_by_field_name("name"), source)
            if value is not None and value.type in _FUNCTION_VALUES:
                fn = _function(value, source, "", name=name)
                facts.functions[name] = fn
        for name, src in _declared(node, source):
            facts.variables.setdefault(name, src)
    return None


def _class(node: Node, source: bytes) -> ClassFacts:
    name = node_text(node.child_by_field_name("name"), source)
    cls = ClassFacts(name, name, node.start_point[0] + 1)
    for child in node.named_children:
        if child.type == "class_heritage":
            for clause in child.named_children:
                for base in clause.named_children:
                    if base.type in (
                        "identifier",
                        "type_identifier",
                        "member_expression",
                        "nested_type_identifier",
                        "generic_type",
                    ):
                        text = node_text(base, source).split("<")[0]
                        cls.bases.append(text)
        elif child.type == "extends_type_clause":  # interface I extends J
            cls.bases += [node_text(b, source).split("<")[0] for b in child.named_children]
    body = node.child_by_field_name("body")
    for member in body.named_children if body is not None else []:
        t = member.type
        if t in ("public_field_definition", "property_signature", "field_definition"):
            field = node_text(
                member.child_by_field_name("name") or member.child_by_field_name("property"), source
            )
            ann = _annotation(member.child_by_field_name("type"), source)
            value = expression_chain(member.child_by_field_name("value"), source)
            if ann:
                cls.fields[field] = TypeSource(annotation=ann)
            elif value:
                cls.fields[field] = TypeSource(chain=value)
        elif t in ("method_definition", "method_signature", "abstract_method_signature"):
            fn = _function(member, source, f"{name}.")
            fn.is_property = any(c.type == "get" for c in member.children)
            fn.class_level = any(c.type == "static" for c in member.children)
            accessor = any(c.type in ("get", "set") for c in member.children)
            if fn.name == "constructor":
                _constructor(member, fn, source, cls)
            elif not (accessor and fn.name in cls.methods):
                # `static widget(...)` beside `get widget()`: the method, whose signature
                # is what a call needs, is kept over the accessor
                cls.methods[fn.name] = fn
    return cls


def _constructor(node: Node, fn: FunctionFacts, source: bytes, cls: ClassFacts) -> None:
    """Parameter properties (`constructor(private repo: Repo)`) and `this.x = ...`."""
    params = node.child_by_field_name("parameters")
    for p in params.named_children if params is not None else []:
        if any(c.type == "accessibility_modifier" or c.type == "readonly" for c in p.children):
            name = node_text(p.child_by_field_name("pattern"), source)
            ann = _annotation(p.child_by_field_name("type"), source)
            if name and ann:
                cls.fields[name] = TypeSource(annotation=ann)
    body = node.child_by_field_name("body")
    for stmt in body.named_children if body is not None else []:
        expr = (
            stmt.named_children[0]
            if stmt.type == "expression_statement" and stmt.named_children
            else None
        )
        if expr is None or expr.type != "assignment_expression":
            continue
        left = expr.child_by_field_name("left")
        if (
            left is None
            or left.type != "member_expression"
            or node_text(left.child_by_field_name("object"), source) != "this"
        ):
            continue
        field = node_text(left.child_by_field_name("property"), source)
        chain = expression_chain(expr.child_by_field_name("right"), source)
        if chain and len(chain) == 1 and chain[0][0] in fn.params and not chain[0][1]:
            cls.fields.setdefault(field, TypeSource(annotation=fn.params[chain[0][0]]))
        elif chain:
            cls.fields.setdefault(field, TypeSource(chain=chain))


def _function(node: Node, source: bytes, prefix: str, name: str | None = None) -> FunctionFacts:
    name = name or node_text(node.child_by_field_name("name"), source)
    fn = FunctionFacts(name, f"{prefix}{name}", node.start_point[0] + 1, node=node)
    fn.returns = _annotation(node.child_by_field_name("return_type"), source)
    body = node.child_by_field_name("body")
    end = body.start_byte if body is not None else node.end_byte
    fn.signature = " ".join(
        source[node.start_byte : end].decode("utf-8", "replace").split()
    ).rstrip("{; ")
    params = node.child_by_field_name("parameters")
    for p in params.named_children if params is not None else []:
        if p.type in ("required_parameter", "optional_parameter"):
            pname = node_text(p.child_by_field_name("pattern"), source)
            ann = _annotation(p.child_by_field_name("type"), source)
            if pname and ann:
                fn.params[pname] = ann
    return fn


def _annotation(node: Node | None, source: bytes) -> str | None:
    if node is None:
        return None
    text = node_text(node, source).lstrip(":").strip()
    if text.startswith("Promise<") and text.endswith(">"):
        text = text[len("Promise<") : -1]
    return normalize_annotation(text)


def _declared(node: Node, source: bytes) -> list[tuple[str, TypeSource]]:
    out = []
    for decl in node.named_children:
        if decl.type != "variable_declarator":
            continue
        name_node = decl.child_by_field_name("name")
        if name_node is None or name_node.type != "identifier":
            continue
        ann = _annotation(decl.child_by_field_name("type"), source)
        value = decl.child_by_field_name("value")
        if ann:
            out.append((node_text(name_node, source), TypeSource(annotation=ann)))
        elif value is not None and value.type not in _FUNCTION_VALUES:
            chain = expression_chain(value, source)
            if chain:
                out.append((node_text(name_node, source), TypeSource(chain=chain)))
    return out
