"""The fields a buffer declares: where `:RepoContext definition` finds a field the index does
not hold.

The index's symbols are definitions (functions, methods, types, constants); a class's fields
are lines of its outline, not symbols of their own. So `definition` on Gson's
`typeTokenCache` (a Java field, read as `typeTokenCache.get(type)`) said "no definition of
`typeTokenCache` in the index", as it did for a Go struct's field, a C struct's member, a Rust
struct's field, a TypeScript property or a Python attribute set in `__init__`. Here the
buffer's own declarations are read: each field of that name, with the type that declares it,
the one around the cursor first. A field of a type in another file is not found here.
"""

from __future__ import annotations

import functools
from dataclasses import dataclass

from tree_sitter import Node, Query, QueryCursor

from .languages import compile_patterns, has_grammar
from .symbols import parse

# @field: a field's name where it is declared; Python's `self.name = ...` also captures @self
_FIELDS: dict[str, list[str]] = {
    "java": ["(field_declaration declarator: (variable_declarator name: (identifier) @field))"],
    "go": ["(field_declaration name: (field_identifier) @field)"],
    "rust": ["(field_declaration name: (field_identifier) @field)"],
    "c": [
        "(field_declaration declarator: (field_identifier) @field)",
        "(field_declaration declarator: (_ declarator: (field_identifier) @field))",
        "(field_declaration declarator: (_ declarator: (_ declarator: (field_identifier) @field)))",
    ],
    "javascript": ["(field_definition property: (property_identifier) @field)"],
    "typescript": [
        "(public_field_definition name: (property_identifier) @field)",
        "(property_signature name: (property_identifier) @field)",
    ],
    "python": [
        "(class_definition body: (block (assignment left: (identifier) @field)))",
        "(class_definition body: (block (expression_statement (assignment left: (identifier) @field))))",
        "(assignment left: (attribute object: (identifier) @self attribute: (identifier) @field))",
    ],
}
_FIELDS["cpp"] = _FIELDS["c"]
_FIELDS["tsx"] = _FIELDS["typescript"]
# the declarations a field belongs to; a Go struct is named by its `type_spec`, a C struct
# without a name by the typedef around it
_OWNERS = frozenset(
    {
        "class_declaration",
        "interface_declaration",
        "enum_declaration",
        "record_declaration",
        "class_definition",
        "class",
        "struct_item",
        "enum_item",
        "union_item",
        "struct_specifier",
        "class_specifier",
        "union_specifier",
        "type_spec",
    }
)


# the field that holds a member's name after a dot: Python's `obj.attr`, Java's `this.seed`,
# Go's, Rust's and C's `field`, JavaScript's `property`, Lua's `t.field` and `t:method`, Ruby's
# `obj.method`
_MEMBER_FIELDS = ("attribute", "field", "property", "method")


@dataclass(frozen=True)
class FieldAt:
    """A field the buffer declares. Lines and columns are 1-based and 0-based bytes."""

    name: str
    owner: str | None  # the type that declares it; None for an anonymous one
    line: int
    col: int
    around: bool = False  # the type the place asked from is in declares it


def fields_named(
    text: str, language: str | None, name: str, line: int = 0, col: int = 0
) -> list[FieldAt]:
    """The buffer's declarations of a field `name`: the one of the type the cursor (1-based
    `line`, byte `col`) is in first (its class, or a Go or Rust method's receiver type), then
    the others in the buffer's order."""
    if not language or not has_grammar(language):
        return []
    query = _query(language)
    if query is None:
        return []
    source = text.encode("utf-8", "surrogatepass")
    root = parse(source, language)
    if root is None:
        return []
    wanted, found = name.encode("utf-8", "surrogatepass"), []
    for _, caps in QueryCursor(query).matches(root):
        node = next(iter(caps.get("field", ())), None)
        if node is None or node.text != wanted:
            continue
        if any(s.text != b"self" for s in caps.get("self", ())):
            continue  # `other.name = ...`: another object's attribute
        owner = _owner(node)
        if owner is None and "self" not in caps:
            continue  # not in a type: a local's assignment
        found.append((owner, node))
    here = _type_at(root, line, col)
    seen, fields = set(), []
    for owner, node in sorted(found, key=lambda f: f[1].start_byte):
        key = (owner.id if owner is not None else None, node.text)
        if key in seen:
            continue  # `self.name` set again in another method: the first is the declaration
        seen.add(key)
        fields.append(
            FieldAt(
                name=name,
                owner=_owner_name(owner),
                line=node.start_point[0] + 1,
                col=node.start_point[1],
                around=here is not None and _owner_name(owner) == here,
            )
        )
    return sorted(fields, key=lambda f: not f.around)


@functools.cache
def _query(language: str) -> Query | None:
    patterns = _FIELDS.get(language)
    return compile_patterns(language, patterns) if patterns else None


def _owner(node: Node) -> Node | None:
    up = node.parent
    while up is not None and up.type not in _OWNERS:
        up = up.parent
    return up


def _owner_name(owner: Node | None) -> str | None:
    if owner is None:
        return None
    named = owner.child_by_field_name("name")
    if named is None and owner.parent is not None and owner.parent.type == "type_definition":
        named = owner.parent.child_by_field_name("declarator")  # `typedef struct {...} Name;`
    return named.text.decode("utf-8", "replace") if named is not None and named.text else None


def _type_at(root: Node, line: int, col: int) -> str | None:
    """The name of the type whose code the place is in: the class around it, or the receiver
    type of the Go method or Rust `impl` around it (their methods are outside the struct)."""
    if line < 1:
        return None
    node: Node | None = root.descendant_for_point_range((line - 1, col), (line - 1, col))
    while node is not None:
        if node.type in _OWNERS:
            return _owner_name(node)
        receiver = None
        if node.type == "method_declaration" and node.child_by_field_name("receiver"):
            receiver = node.child_by_field_name("receiver")  # Go: `func (c *Cart) ...`
        elif node.type == "impl_item":
            receiver = node.child_by_field_name("type")  # Rust: `impl Cart`, `impl<T> Cart<T>`
        if receiver is not None:
            named = _first_type_identifier(receiver)
            return named.text.decode("utf-8", "replace") if named and named.text else None
        node = node.parent
    return None


def _first_type_identifier(node: Node) -> Node | None:
    if node.type == "type_identifier":
        return node
    for child in node.named_children:
        found = _first_type_identifier(child)
        if found is not None:
            return found
    return None


def after_a_dot(node: Node) -> bool:
    """Is this name a member read after a dot or an arrow (`obj.name`, `this.name`,
    `c->name`)? Python and Java write it as a plain identifier, like a variable."""
    parent = node.parent
    return parent is not None and any(
        parent.child_by_field_name(field) == node for field in _MEMBER_FIELDS
    )


def member_lines(text: str, language: str | None, name: str) -> list[int]:
    """The 1-based lines of the buffer that read or write `name` as a member (`self.root`,
    `c.lines`, `this.count`), in order."""
    if not language or not has_grammar(language):
        return []
    source = text.encode("utf-8", "surrogatepass")
    root = parse(source, language)
    if root is None:
        return []
    wanted, lines, stack = name.encode("utf-8", "surrogatepass"), set(), [root]
    while stack:
        node = stack.pop()
        if node.child_count:
            stack.extend(node.children)
        elif node.text == wanted and after_a_dot(node):
            lines.add(node.start_point[0] + 1)
    return sorted(lines)
