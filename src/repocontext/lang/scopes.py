"""What a buffer defines and imports, for deciding whether a completion needs other files.

`analyze_scope` returns the names bound in the file (definitions, parameters, assignment and
loop targets, ...), the names it imports (with the module each comes from), and for local
variables assigned from a call, the callee (so `r = Response(); r.` knows that `r` is an
object of an imported type). Python, JavaScript/TypeScript and Go have precise binding queries.
Rust, C, C++, Java, Lua and Ruby have queries for what a function binds (its parameters, its
local declarations and patterns), read on top of the `name =` patterns the other languages
fall back to, so a name bound before is bound still. Rust's patterns and C's declarators nest
(`let (a, Some(b)) = ...`, `char **argv`): the query captures the pattern or declarator and
the names are read out of it here (`_captured_bindings`).
"""

from __future__ import annotations

import builtins
import functools
import re
from collections.abc import Iterator
from dataclasses import dataclass, field

from tree_sitter import Node, Query, QueryCursor

from .languages import compile_patterns

_BINDINGS: dict[str, list[str]] = {
    "python": [
        "(function_definition name: (identifier) @bind)",
        "(class_definition name: (identifier) @bind)",
        "(parameters (identifier) @bind)",
        "(default_parameter name: (identifier) @bind)",
        "(typed_parameter (identifier) @bind)",
        "(typed_default_parameter name: (identifier) @bind)",
        "(list_splat_pattern (identifier) @bind)",
        "(dictionary_splat_pattern (identifier) @bind)",
        "(lambda_parameters (identifier) @bind)",
        "(assignment left: (identifier) @bind)",
        "(assignment left: (pattern_list (identifier) @bind))",
        "(assignment left: (tuple_pattern (identifier) @bind))",
        "(augmented_assignment left: (identifier) @bind)",
        "(for_statement left: (identifier) @bind)",
        "(for_statement left: (pattern_list (identifier) @bind))",
        "(for_statement left: (tuple_pattern (identifier) @bind))",
        "(for_in_clause left: (identifier) @bind)",
        "(for_in_clause left: (pattern_list (identifier) @bind))",
        "(as_pattern_target (identifier) @bind)",
        "(named_expression name: (identifier) @bind)",
        "(global_statement (identifier) @bind)",
        "(nonlocal_statement (identifier) @bind)",
        "(assignment left: (identifier) @assigned right: (call function: (identifier) @callee))",
        "(assignment left: (identifier) @assigned right: (call function: (attribute attribute: (identifier) @callee)))",
    ],
    "javascript": [
        "(variable_declarator name: (identifier) @bind)",
        "(shorthand_property_identifier_pattern) @bind",
        "(array_pattern (identifier) @bind)",
        "(function_declaration name: (identifier) @bind)",
        "(class_declaration name: (identifier) @bind)",
        "(formal_parameters (identifier) @bind)",
        "(rest_pattern (identifier) @bind)",
        "(arrow_function parameter: (identifier) @bind)",
        "(catch_clause parameter: (identifier) @bind)",
        "(for_in_statement left: (identifier) @bind)",
        "(method_definition name: (property_identifier) @bind)",
        "(variable_declarator name: (identifier) @assigned value: (new_expression constructor: (identifier) @callee))",
        "(variable_declarator name: (identifier) @assigned value: (call_expression function: (identifier) @callee))",
    ],
    "go": [
        "(function_declaration name: (identifier) @bind)",
        "(method_declaration name: (field_identifier) @bind)",
        "(parameter_declaration name: (identifier) @bind)",
        "(short_var_declaration left: (expression_list (identifier) @bind))",
        "(var_spec name: (identifier) @bind)",
        "(const_spec name: (identifier) @bind)",
        "(type_spec name: (type_identifier) @bind)",
        "(range_clause left: (expression_list (identifier) @bind))",
    ],
}
_TS_EXTRA = [
    "(required_parameter pattern: (identifier) @bind)",
    "(optional_parameter pattern: (identifier) @bind)",
    "(interface_declaration name: (type_identifier) @bind)",
    "(type_alias_declaration name: (type_identifier) @bind)",
    "(class_declaration name: (type_identifier) @bind)",
    "(enum_declaration name: (identifier) @bind)",
]
_BINDINGS["typescript"] = _BINDINGS["javascript"] + _TS_EXTRA
_BINDINGS["tsx"] = _BINDINGS["typescript"]
# the languages whose queries read every binding of a file, its definitions and imports too;
# in the others below they read what a function binds, and `name =` patterns are read as well
EVERY_BINDING = frozenset(_BINDINGS)
# @pattern: a Rust pattern, whose names `_pattern_bindings` reads; @declarator: a C or C++
# declarator, whose name `_declared` reads
_BINDINGS["rust"] = [
    "(function_item name: (identifier) @bind)",
    "(struct_item name: (type_identifier) @bind)",
    "(enum_item name: (type_identifier) @bind)",
    "(type_item name: (type_identifier) @bind)",
    "(self_parameter (self) @bind)",
    "(parameter pattern: (_) @pattern)",
    "(closure_parameters (_) @pattern)",
    "(let_declaration pattern: (_) @pattern)",
    "(let_condition pattern: (_) @pattern)",
    "(for_expression pattern: (_) @pattern)",
    "(match_arm pattern: (match_pattern) @pattern)",
]
_BINDINGS["c"] = [
    "(parameter_declaration declarator: (_) @declarator)",
    "(declaration declarator: (_) @declarator)",
]
_BINDINGS["cpp"] = _BINDINGS["c"] + [
    "(optional_parameter_declaration declarator: (_) @declarator)",
    "(for_range_loop declarator: (_) @declarator)",
    "(structured_binding_declarator (identifier) @bind)",
]
_BINDINGS["java"] = [
    "(formal_parameter name: (identifier) @bind)",
    "(spread_parameter (variable_declarator name: (identifier) @bind))",
    "(local_variable_declaration declarator: (variable_declarator name: (identifier) @bind))",
    "(enhanced_for_statement name: (identifier) @bind)",
    "(catch_formal_parameter name: (identifier) @bind)",
    "(resource name: (identifier) @bind)",
    "(lambda_expression parameters: (identifier) @bind)",
    "(inferred_parameters (identifier) @bind)",
    "(instanceof_expression name: (identifier) @bind)",
]
_BINDINGS["lua"] = [
    "(function_declaration name: (identifier) @bind)",
    "(parameters name: (identifier) @bind)",
    "(variable_declaration (assignment_statement (variable_list name: (identifier) @bind)))",
    "(variable_declaration (variable_list name: (identifier) @bind))",
    "(for_generic_clause (variable_list name: (identifier) @bind))",
    "(for_numeric_clause name: (identifier) @bind)",
]
_BINDINGS["ruby"] = [
    "(method_parameters (identifier) @bind)",
    "(lambda_parameters (identifier) @bind)",
    "(block_parameters (identifier) @bind)",
    "(destructured_parameter (identifier) @bind)",
    "(optional_parameter name: (identifier) @bind)",
    "(keyword_parameter name: (identifier) @bind)",
    "(splat_parameter name: (identifier) @bind)",
    "(hash_splat_parameter name: (identifier) @bind)",
    "(block_parameter name: (identifier) @bind)",
    "(assignment left: (identifier) @bind)",
    "(left_assignment_list (identifier) @bind)",
    "(for pattern: (identifier) @bind)",
    "(exception_variable (identifier) @bind)",
]
# the languages whose bindings are read here (elsewhere, `name =` patterns stand in)
SCOPED = frozenset(_BINDINGS)

KEYWORDS = frozenset(
    """
False None True and as assert async await break class continue def del elif else except finally
for from global if import in is lambda nonlocal not or pass raise return try while with yield self
cls const let var function new this typeof instanceof void delete switch case default do throw
catch extends implements interface type enum export public private protected static readonly
package func go defer chan map struct select range fallthrough goto fn impl trait mut pub use mod
crate match loop where local then end elseif until nil begin rescue ensure unless module def
require null undefined true false super
""".split()
)
JS_GLOBALS = frozenset(
    """console Math JSON Object Array Promise String Number Boolean Date Error
Map Set RegExp Symbol window document globalThis process module exports require setTimeout
setInterval clearTimeout clearInterval parseInt parseFloat isNaN fetch Buffer""".split()
)
GO_BUILTINS = frozenset(
    """append cap close complex copy delete imag len make new panic print
println real recover string int int64 int32 uint byte rune float64 float32 bool error any nil
fmt errors""".split()
)
PY_BUILTINS = frozenset(dir(builtins))


@dataclass
class Scope:
    language: str | None
    bound: set[str] = field(default_factory=set)  # defined or bound in this file
    imported: dict[str, str] = field(default_factory=dict)  # local name -> module
    # a name imported under another (`from m import x as y`, `import { x as y }`): y -> x
    aliases: dict[str, str] = field(default_factory=dict)
    assigned_from: dict[str, str] = field(default_factory=dict)  # var -> callee of its value

    def is_builtin(self, name: str) -> bool:
        if name in KEYWORDS:
            return True
        if self.language == "python":
            return name in PY_BUILTINS
        if self.language in ("javascript", "typescript", "tsx"):
            return name in JS_GLOBALS
        if self.language == "go":
            return name in GO_BUILTINS
        return False

    def is_foreign(self, name: str) -> bool:
        """Whether `name` comes from another file: imported, or bound nowhere in this one."""
        if name in self.imported:
            return True
        return name not in self.bound and not self.is_builtin(name)


@functools.cache
def _query(language: str) -> Query | None:
    patterns = _BINDINGS.get(language)
    return compile_patterns(language, patterns) if patterns else None


def binding_nodes(node: Node, language: str) -> list[Node]:
    """The nodes under `node` that bind a name (a definition, a parameter, an assignment),
    in a language of SCOPED; [] in another."""
    query = _query(language)
    if query is None:
        return []
    return [b for _, caps in QueryCursor(query).matches(node) for b in _captured_bindings(caps)]


def _captured_bindings(caps: dict[str, list[Node]]) -> Iterator[Node]:
    """The name nodes one match binds: captured as they are, or read out of a captured Rust
    pattern or C declarator."""
    yield from caps.get("bind", ())
    for pattern in caps.get("pattern", ()):
        yield from _pattern_bindings(pattern)
    for declarator in caps.get("declarator", ()):
        name = _declared(declarator)
        if name is not None:
            yield name


# what a Rust pattern's names are not in: a type, a path (`Color::Red`), a match arm's guard
_NOT_IN_PATTERN = frozenset({"scoped_identifier", "scoped_type_identifier", "generic_type"})
_PATTERN_FIELDS_SKIPPED = frozenset({"type", "condition"})


def _pattern_bindings(node: Node) -> Iterator[Node]:
    """The names a Rust pattern binds: `a` and `b` in `(a, Some(b))`, `x` in `Point { x, .. }`.
    A name written with a capital is a constant or a unit variant (`None`, `MAX`), as rustc's
    own lint has it, not a binding."""
    if node.type == "identifier":
        if not (node.text or b"A")[:1].isupper():
            yield node
        return
    if node.type == "shorthand_field_identifier":
        yield node
        return
    if node.type in _NOT_IN_PATTERN:
        return
    for index, child in enumerate(node.children):
        if node.field_name_for_child(index) not in _PATTERN_FIELDS_SKIPPED:
            yield from _pattern_bindings(child)


def _declared(node: Node) -> Node | None:
    """The name a C or C++ declarator declares (`p` of `*p = &x`, `argv` of `**argv`, `fp` of
    `(*fp)(int)`); None for a function's prototype, whose name is not a variable."""
    while node.type != "identifier":
        if node.type == "function_declarator":
            inner = node.child_by_field_name("declarator")
            if inner is None or inner.type != "parenthesized_declarator":
                return None
            node = inner
            continue
        inner = node.child_by_field_name("declarator")
        if inner is None:  # `(*fp)`, `&x`: the declarator is a child with no field name
            inner = next(iter(node.named_children), None)
        if inner is None:
            return None
        node = inner
    return node


_ASSIGN = re.compile(
    r"^\s*(?:local\s+|let\s+|var\s+|const\s+|my\s+)?([A-Za-z_]\w*)\s*:?=[^=]", re.MULTILINE
)


def analyze_scope(
    root: Node | None, source: bytes, language: str | None, symbol_names: set[str], references: list
) -> Scope:
    """The file's bindings and imports; `symbol_names` and `references` come from the same parse."""
    scope = Scope(language, bound=set(symbol_names))
    if language not in EVERY_BINDING:  # `name =` where no query reads every binding
        text = source if root is None else source[root.start_byte : root.end_byte]
        scope.bound.update(_ASSIGN.findall(text.decode("utf-8", "replace")))
    for ref in references:
        if ref.kind == "import_name":
            scope.imported[ref.name] = ref.module or ""
        elif ref.kind == "import":
            if language == "python" and not ref.name.startswith("."):
                scope.imported[ref.name.split(".")[0]] = ref.name
            elif language == "go":
                scope.imported[ref.name.rsplit("/", 1)[-1]] = ref.name
    query = _query(language) if (root is not None and language) else None
    if query is None or root is None:
        return scope
    captures = QueryCursor(query).matches(root)
    for _, caps in captures:
        for node in _captured_bindings(caps):
            scope.bound.add(source[node.start_byte : node.end_byte].decode("utf-8", "replace"))
        assigned, callee = caps.get("assigned"), caps.get("callee")
        if assigned and callee:
            var = source[assigned[0].start_byte : assigned[0].end_byte].decode("utf-8", "replace")
            scope.assigned_from[var] = source[callee[0].start_byte : callee[0].end_byte].decode(
                "utf-8", "replace"
            )
    if language in ("javascript", "typescript", "tsx"):
        _js_import_bindings(root, source, scope)
    if language == "python":
        _python_aliases(root, source, scope)
    return scope


def _js_import_bindings(root: Node, source: bytes, scope: Scope) -> None:
    """Default and namespace imports bind a local name to the module."""
    for stmt in root.named_children:
        if stmt.type != "import_statement":
            continue
        src = stmt.child_by_field_name("source")
        module = (
            source[src.start_byte : src.end_byte].decode("utf-8", "replace").strip("'\"")
            if src
            else ""
        )
        for clause in stmt.named_children:
            if clause.type != "import_clause":
                continue
            for child in clause.named_children:
                if child.type == "identifier":
                    scope.imported[_text(child, source)] = module
                elif child.type == "namespace_import" and child.named_children:
                    scope.imported[_text(child.named_children[0], source)] = module
                elif child.type == "named_imports":
                    for spec in child.named_children:
                        named = spec.child_by_field_name("name")
                        alias = spec.child_by_field_name("alias") or named
                        if alias is not None:
                            scope.imported[_text(alias, source)] = module
                        if alias is not None and named is not None and alias != named:
                            scope.aliases[_text(alias, source)] = _text(named, source)


def _python_aliases(root: Node, source: bytes, scope: Scope) -> None:
    """`import a.b as c` and `from m import x as y` bind c and y."""
    stack = [root]
    while stack:
        node = stack.pop()
        for child in node.named_children:
            if child.type in ("import_statement", "import_from_statement"):
                module_node = child.child_by_field_name("module_name")
                module = _text(module_node, source) if module_node else ""
                for name in child.children_by_field_name("name"):
                    if name.type == "aliased_import":
                        alias = name.child_by_field_name("alias")
                        named = name.child_by_field_name("name")
                        target = _text(named, source) if named is not None else ""
                        if alias is not None:
                            scope.imported[_text(alias, source)] = module or target
                        if alias is not None and module:  # `from m import x as y`
                            scope.aliases[_text(alias, source)] = target
            elif child.type in (
                "if_statement",
                "try_statement",
                "block",
                "else_clause",
                "except_clause",
                "finally_clause",
            ):
                stack.append(child)


def _text(node: Node, source: bytes) -> str:
    return source[node.start_byte : node.end_byte].decode("utf-8", "replace")
