"""Type facts of a Go file, from its explicit types: imports (by package name or alias),
structs (fields, embedded types as bases), interfaces (methods, embedded interfaces),
methods by receiver type, functions with their first result type; for the function around the
cursor, its receiver and parameters, `x := pkg.NewT()`, `x := &T{}`, `var x T`.

A Go package spans the files of a directory: methods are attached to their receiver's type
here even when the type is declared in another file, and `ReceiverTyper` merges the files of a
package (`merge_package`).
"""

from __future__ import annotations

import posixpath

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


def go_facts(root: Node, source: bytes) -> FileFacts:
    facts = FileFacts("go", source=source)
    for node in root.named_children:
        t = node.type
        if t == "import_declaration":
            for spec in _descendants(node, "import_spec"):
                path_node = spec.child_by_field_name("path")
                path = node_text(path_node, source).strip('"`')
                alias = spec.child_by_field_name("name")
                local = node_text(alias, source) if alias is not None else posixpath.basename(path)
                if local not in ("_", "."):
                    facts.imports[local] = Import(path)
        elif t == "type_declaration":
            for spec in node.named_children:
                if spec.type == "type_spec":
                    _type(spec, source, facts)
        elif t == "function_declaration":
            fn = _function(node, source, "")
            facts.functions[fn.name] = fn
        elif t == "method_declaration":
            receiver, param = _receiver(node, source)
            if not receiver:
                continue
            fn = _function(node, source, f"{receiver}.")
            if param:
                fn.params[param] = receiver
            cls = facts.classes.setdefault(receiver, ClassFacts(receiver, receiver, 0))
            cls.methods[fn.name] = fn
        elif t in ("var_declaration", "const_declaration"):
            for spec in _descendants(node, "var_spec"):
                for name, src in _var_spec(spec, source):
                    facts.variables.setdefault(name, src)
    return facts


# the statements whose bodies hold more of a function's locals
_BLOCKS = frozenset(
    """block statement_list if_statement for_statement expression_switch_statement
    type_switch_statement select_statement expression_case default_case
    communication_case""".split()
)


def go_locals(function: FunctionFacts, source: bytes, before_line: int) -> dict[str, TypeSource]:
    return locals_before(function, source, before_line, _BLOCKS, _local_declared)


def _local_declared(node: Node, source: bytes) -> list[tuple[str, TypeSource]]:
    """`x := pkg.NewT()` (of `x, err := f()`, x is f's first result), `var x T`."""
    if node.type == "var_declaration":
        return [pair for spec in _descendants(node, "var_spec") for pair in _var_spec(spec, source)]
    if node.type != "short_var_declaration":
        return []
    left = node.child_by_field_name("left")
    right = node.child_by_field_name("right")
    names = [c for c in (left.named_children if left else []) if c.type == "identifier"]
    values = right.named_children if right is not None else []
    src = _value(values[0], source) if names and values else None
    return [(node_text(names[0], source), src)] if src is not None else []


def merge_package(files: list[tuple[str, FileFacts]]) -> FileFacts:
    """The facts of a package: its files' facts together; each class and function remembers
    the file it is declared in (`path`), so its definition can be found in the index."""
    merged = FileFacts("go")
    for path, facts in files:
        for name, imp in facts.imports.items():
            merged.imports.setdefault(name, imp)
        for name, fn in facts.functions.items():
            fn.path = path
            merged.functions.setdefault(name, fn)
        merged.variables.update(
            {k: v for k, v in facts.variables.items() if k not in merged.variables}
        )
        for name, cls in facts.classes.items():
            target = merged.classes.setdefault(name, ClassFacts(name, name, 0))
            if cls.line:  # the declaration itself (not only methods found by receiver)
                target.line, target.bases, target.fields = cls.line, cls.bases, cls.fields
                target.path = path
            for mname, fn in cls.methods.items():
                fn.path = path
                target.methods.setdefault(mname, fn)
    return merged


def expression_chain(node: Node | None, source: bytes) -> Chain | None:
    segments: list[tuple[str, bool]] = []
    called = False
    while node is not None:
        t = node.type
        if t == "call_expression":
            called = True
            node = node.child_by_field_name("function")
            continue
        if t == "parenthesized_expression":
            node = node.named_children[0] if node.named_children else None
            continue
        if t == "selector_expression":
            segments.insert(0, (node_text(node.child_by_field_name("field"), source), called))
            called = False
            node = node.child_by_field_name("operand")
            continue
        if t == "identifier":
            segments.insert(0, (node_text(node, source), called))
            return tuple(segments)
        return None
    return None


# --- helpers ----------------------------------------------------------------------------------


def _type(spec: Node, source: bytes, facts: FileFacts) -> None:
    name = node_text(spec.child_by_field_name("name"), source)
    body = spec.child_by_field_name("type")
    if body is None or body.type not in ("struct_type", "interface_type"):
        return
    cls = facts.classes.setdefault(name, ClassFacts(name, name, spec.start_point[0] + 1))
    cls.line = spec.start_point[0] + 1
    if body.type == "struct_type":
        for field in _descendants(body, "field_declaration"):
            type_text = node_text(field.child_by_field_name("type"), source)
            names = field.children_by_field_name("name")
            if not names:  # an embedded type: its fields and methods are promoted
                cls.bases.append(type_text.lstrip("*"))
                continue
            ann = normalize_annotation(type_text)
            for n in names:
                if ann:
                    cls.fields[node_text(n, source)] = TypeSource(annotation=ann)
    else:
        for elem in body.named_children:
            if elem.type == "method_elem":
                fn = _function(elem, source, f"{name}.")
                cls.methods[fn.name] = fn
            elif elem.type == "type_elem":
                cls.bases += [node_text(c, source) for c in elem.named_children]


def _function(node: Node, source: bytes, prefix: str) -> FunctionFacts:
    name = node_text(node.child_by_field_name("name"), source)
    fn = FunctionFacts(name, f"{prefix}{name}", node.start_point[0] + 1, node=node)
    body = node.child_by_field_name("body")
    end = body.start_byte if body is not None else node.end_byte
    fn.signature = " ".join(source[node.start_byte : end].decode("utf-8", "replace").split())
    result = node.child_by_field_name("result")
    if result is not None:
        if result.type == "parameter_list":  # (T, error): the first result
            first = next(
                (c for c in result.named_children if c.type == "parameter_declaration"), None
            )
            result = first.child_by_field_name("type") if first is not None else None
        fn.returns = normalize_annotation(node_text(result, source)) if result else None
    params = node.child_by_field_name("parameters")
    for p in params.named_children if params is not None else []:
        ann = normalize_annotation(node_text(p.child_by_field_name("type"), source))
        for n in p.children_by_field_name("name"):
            if ann:
                fn.params[node_text(n, source)] = ann
    return fn


def _receiver(node: Node, source: bytes) -> tuple[str | None, str | None]:
    params = node.child_by_field_name("receiver")
    decl = next(
        (c for c in (params.named_children if params else []) if c.type == "parameter_declaration"),
        None,
    )
    if decl is None:
        return None, None
    typ = normalize_annotation(node_text(decl.child_by_field_name("type"), source).split("[")[0])
    name = decl.child_by_field_name("name")
    return typ, (node_text(name, source) if name is not None else None)


def _var_spec(spec: Node, source: bytes) -> list[tuple[str, TypeSource]]:
    ann = normalize_annotation(node_text(spec.child_by_field_name("type"), source))
    value = spec.child_by_field_name("value")
    out = []
    for n in spec.children_by_field_name("name"):
        if ann:
            out.append((node_text(n, source), TypeSource(annotation=ann)))
        elif value is not None and value.named_children:
            src = _value(value.named_children[0], source)
            if src is not None:
                out.append((node_text(n, source), src))
    return out


def _value(node: Node, source: bytes) -> TypeSource | None:
    """`&T{}` and `T{}` have type T; calls and selectors are chains."""
    if node.type == "unary_expression":
        node = node.child_by_field_name("operand") or node
    if node.type == "composite_literal":
        ann = normalize_annotation(node_text(node.child_by_field_name("type"), source))
        return TypeSource(annotation=ann) if ann else None
    chain = expression_chain(node, source)
    return TypeSource(chain=chain) if chain else None


def _descendants(node: Node, type_: str) -> list[Node]:
    out, stack = [], [node]
    while stack:
        n = stack.pop()
        for c in n.named_children:
            if c.type == type_:
                out.append(c)
            else:
                stack.append(c)
    return out
