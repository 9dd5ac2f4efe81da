"""References in a source file: calls, imports and inherited bases, found with tree-sitter queries.

The queries run in C over the whole tree (calls sit inside function bodies, which the symbol
walker never enters). Names are kept unresolved here; the graph resolves imports to files and
matches called names against the symbol table. Patterns that a grammar version does not know
are dropped one by one, so a grammar update degrades the graph instead of breaking indexing.
"""

from __future__ import annotations

import functools
from dataclasses import dataclass

from tree_sitter import Node, Query, QueryCursor

from .languages import compile_patterns


@dataclass(frozen=True)
class Reference:
    kind: str  # call | member | import | import_name | inherit
    name: str
    line: int  # 1-based
    # for import_name: the module it is imported from; for a call on an object (and a
    # `member`: such a call of a name too common to count as a call, `console.print(`), the
    # object's last name: `ctx` in `self.ctx.exit()`, `cursor()` in `conn.cursor().execute()`,
    # "" for anything else (a literal, a subscript)
    module: str | None = None


# capture names: @call, @import (a module or path string), @inherit, @from_stmt (Python)
_PATTERNS: dict[str, list[str]] = {
    "python": [
        "(call function: (identifier) @call)",
        "(call function: (attribute attribute: (identifier) @call))",
        "(import_statement name: (dotted_name) @import)",
        "(import_statement name: (aliased_import name: (dotted_name) @import))",
        "(import_from_statement) @from_stmt",
        "(class_definition superclasses: (argument_list (identifier) @inherit))",
        "(class_definition superclasses: (argument_list (attribute attribute: (identifier) @inherit)))",
    ],
    "javascript": [
        "(call_expression function: (identifier) @call)",
        "(call_expression function: (member_expression property: (property_identifier) @call))",
        "(new_expression constructor: (identifier) @call)",
        "(import_statement source: (string (string_fragment) @import))",
        "(import_specifier name: (identifier) @import_name)",
        '((call_expression function: (identifier) @_req arguments: (arguments (string (string_fragment) @import))) (#eq? @_req "require"))',
        "(class_heritage (identifier) @inherit)",
    ],
    "typescript": [
        "(call_expression function: (identifier) @call)",
        "(call_expression function: (member_expression property: (property_identifier) @call))",
        "(new_expression constructor: (identifier) @call)",
        "(import_statement source: (string (string_fragment) @import))",
        "(import_specifier name: (identifier) @import_name)",
        "(extends_clause value: (identifier) @inherit)",
        "(implements_clause (type_identifier) @inherit)",
    ],
    "go": [
        "(call_expression function: (identifier) @call)",
        "(call_expression function: (selector_expression field: (field_identifier) @call))",
        "(import_spec path: (interpreted_string_literal) @import)",
    ],
    "rust": [
        "(call_expression function: (identifier) @call)",
        "(call_expression function: (field_expression field: (field_identifier) @call))",
        "(call_expression function: (scoped_identifier name: (identifier) @call))",
        "(macro_invocation macro: (identifier) @call)",
        "(use_declaration argument: (_) @import)",
    ],
    "java": [
        "(method_invocation name: (identifier) @call)",
        "(object_creation_expression type: (type_identifier) @call)",
        "(import_declaration (scoped_identifier) @import)",
        "(superclass (type_identifier) @inherit)",
        "(super_interfaces (type_list (type_identifier) @inherit))",
    ],
    "c": [
        "(call_expression function: (identifier) @call)",
        "(call_expression function: (field_expression field: (field_identifier) @call))",
        "(preproc_include path: (string_literal) @import)",
        "(preproc_include path: (system_lib_string) @import)",
    ],
    "cpp": [
        "(call_expression function: (identifier) @call)",
        "(call_expression function: (field_expression field: (field_identifier) @call))",
        "(call_expression function: (qualified_identifier name: (identifier) @call))",
        "(preproc_include path: (string_literal) @import)",
        "(preproc_include path: (system_lib_string) @import)",
        "(base_class_clause (type_identifier) @inherit)",
    ],
    "lua": [
        "(function_call name: (identifier) @call)",
        "(function_call name: (dot_index_expression field: (identifier) @call))",
        "(function_call name: (method_index_expression method: (identifier) @call))",
        '((function_call name: (identifier) @_req arguments: (arguments (string content: (string_content) @import))) (#eq? @_req "require"))',
    ],
    "ruby": [
        "(call method: (identifier) @call)",
        "(superclass (constant) @inherit)",
        '((call method: (identifier) @_req arguments: (argument_list (string (string_content) @import))) (#match? @_req "^require"))',
    ],
}
_PATTERNS["tsx"] = _PATTERNS["typescript"]

_CALL_NOISE = frozenset(
    {
        "require",
        "print",
        "len",
        "str",
        "int",
        "isinstance",
        "super",
        "getattr",
        "setattr",
        "hasattr",
        "range",
        "list",
        "dict",
        "set",
        "tuple",
        "bool",
        "type",
        "format",
        "append",
        "get",
        "join",
    }
)


@functools.cache
def _query(language: str) -> Query | None:
    patterns = _PATTERNS.get(language)
    return compile_patterns(language, patterns) if patterns else None


def extract_references(root: Node, source: bytes, language: str) -> list[Reference]:
    query = _query(language)
    if query is None:
        return []
    captures = QueryCursor(query).captures(root)
    out: list[Reference] = []

    def text(node: Node) -> str:
        return source[node.start_byte : node.end_byte].decode("utf-8", "replace")

    for node in captures.get("call", ()):
        name = text(node)
        receiver = _receiver(node, text)
        if name not in _CALL_NOISE:
            out.append(Reference("call", name, node.start_point[0] + 1, receiver))
        elif receiver is not None:
            out.append(Reference("member", name, node.start_point[0] + 1, receiver))
    for node in captures.get("inherit", ()):
        out.append(Reference("inherit", text(node), node.start_point[0] + 1))
    for node in captures.get("import", ()):
        module = text(node).strip("\"'<>")
        if module:
            out.append(Reference("import", module, node.start_point[0] + 1))
    for node in captures.get("import_name", ()):
        out.append(Reference("import_name", text(node), node.start_point[0] + 1))
    for node in captures.get("from_stmt", ()):
        out.extend(_python_from_import(node, text))
    out.sort(key=lambda r: (r.line, r.kind, r.name))
    return out


# the node a called member sits in, and the field that holds the object before it
_OBJECT_FIELDS = {
    "attribute": "object",  # Python
    "member_expression": "object",  # JavaScript, TypeScript
    "selector_expression": "operand",  # Go
    "field_expression": "value",  # Rust ("argument" in C and C++)
    "dot_index_expression": "table",  # Lua
    "method_index_expression": "table",
    "method_invocation": "object",  # Java
}


def _receiver(node: Node, text) -> str | None:
    """The object's last name when `node` (a called name) is a member of one: `ctx` in
    `self.ctx.exit(`, `cursor()` in `conn.cursor().execute(`, "" for another object (a
    literal, a subscript); None for a bare call."""
    parent = node.parent
    field = _OBJECT_FIELDS.get(parent.type) if parent is not None else None
    if field is None or parent is None:
        return None
    obj = parent.child_by_field_name(field) or parent.child_by_field_name("argument")
    if obj is None or obj == node:
        return None
    called = ""
    while obj is not None and obj.type in ("call", "call_expression", "function_call"):
        called = "()"
        obj = obj.child_by_field_name("function") or obj.child_by_field_name("name")
    if obj is None:
        return ""
    if obj.type in ("identifier", "this", "self", "field_identifier", "property_identifier"):
        return text(obj) + called
    for f in ("attribute", "property", "field", "method", "name"):
        last = obj.child_by_field_name(f)
        if last is not None and obj.type in _OBJECT_FIELDS:
            return text(last) + called
    return ""


def _python_from_import(node: Node, text) -> list[Reference]:
    """`from .pkg.mod import a, b as c` -> an import of `.pkg.mod` and the names a, b."""
    module_node = node.child_by_field_name("module_name")
    if module_node is None:
        return []
    module = text(module_node)
    line = node.start_point[0] + 1
    refs = [Reference("import", module, line)]
    for child in node.children_by_field_name("name"):
        target = child.child_by_field_name("name") if child.type == "aliased_import" else child
        if target is not None:
            name = text(target).rsplit(".", 1)[-1]
            refs.append(Reference("import_name", name, line, module=module))
    return refs
