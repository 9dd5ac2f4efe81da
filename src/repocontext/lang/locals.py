"""What the word under the editor's cursor is, read from the buffer's syntax tree: a keyword
of the language, a name local to the function around it, or a name for the index (and the
import that brings it into the buffer, if one does: its module, and its name there).

`:RepoContext definition` and `references` look a name up in the index, which holds the
repository's definitions and the graph's edges between them. A parameter or a local variable
is in neither, so the index's answer for a parameter `arg` was every chunk of the repository
whose text holds an `arg` (30 places in other functions), and a keyword (`func`) was looked
up as if it were a name. Here a local name is answered by the function that binds it (the
line that binds it, the lines that use it), as a language server would, and a keyword is
said to be one. In the languages whose bindings lang/scopes.py reads (Python, JavaScript,
TypeScript, Go, Rust, C, C++, Java, Lua, Ruby); in another every name goes to the index.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from tree_sitter import Node

from .languages import has_grammar
from .members import after_a_dot
from .references import extract_references
from .scopes import SCOPED, analyze_scope, binding_nodes
from .symbols import parse

# the node types of a name as a variable is written (not a member after a dot, not a type)
_VARIABLE_NODES = frozenset(
    {
        "identifier",
        "shorthand_property_identifier",
        "shorthand_property_identifier_pattern",
        "shorthand_field_identifier",  # Rust's `Point { x, .. }`
        "self",  # Rust's receiver, bound by the method's `&self`
    }
)
_FUNCTION_TYPES = frozenset(
    {
        "lambda",
        "arrow_function",
        "func_literal",
        "closure_expression",
        "lambda_expression",  # Java, C++
        "constructor_declaration",  # Java
    }
)
# what a C or C++ function's innermost declarator is when it names it (`total`, `Foo::total`,
# `~Foo`, `operator==`), not a lambda's parameter list
_NAMES = ("identifier", "destructor_name", "operator_name")
# a Python name declared global or nonlocal is the module's or the outer function's
_NOT_LOCAL = frozenset({"global_statement", "nonlocal_statement"})


@dataclass(frozen=True)
class LocalName:
    """A name bound by the function around the cursor. Lines are 1-based."""

    name: str
    function: str | None  # the function's own name; None for a lambda or a closure
    function_line: int
    # the binding that reaches the cursor: the one under it, else the last on a line before
    # it (`e` of the `except` above, not the first `except`'s), else the first
    bound_at: int
    lines: tuple[int, ...]  # each line of the function where it is written, in order


@dataclass(frozen=True)
class WordAt:
    """The cursor's word as the tree reads it: a keyword, a local name, a member after a dot
    (`self.root`, `c.lines`: never the local of that name), or none of them."""

    keyword: bool = False
    local: LocalName | None = None
    member: bool = False
    # a keyword argument's name (`echo(text, err=err)` on the first `err`): the function
    # called, whose parameter it names
    argument_of: str | None = None


def word_at(text: str, language: str | None, line: int, col: int, word: str) -> WordAt:
    """What `word`, under or after byte column `col` of 1-based `line` (as Neovim's
    `<cword>` picks it), is in the buffer `text` of `language`."""
    lines = text.split("\n")
    if not has_grammar(language) or not 1 <= line <= len(lines) or not word:
        return WordAt()
    row = lines[line - 1]
    span = _occurrence(
        row, len(row.encode("utf-8", "surrogatepass")[:col].decode("utf-8", "ignore")), word
    )
    source = text.encode("utf-8", "surrogatepass")
    root = parse(source, language) if span else None
    if span is None or root is None:
        return WordAt()
    before = sum(len(t.encode("utf-8", "surrogatepass")) + 1 for t in lines[: line - 1])
    start = before + len(row[: span[0]].encode("utf-8", "surrogatepass"))
    end = start + len(word.encode("utf-8", "surrogatepass"))
    node = root.descendant_for_byte_range(start, end)
    if node is None or (node.start_byte, node.end_byte) != (start, end):
        return WordAt()
    if not node.is_named and node.type == word:
        return WordAt(keyword=True)
    if after_a_dot(node):
        return WordAt(member=True)
    if node.parent is not None and node.parent.type == "keyword_argument":
        if node.parent.child_by_field_name("name") == node:  # the local of that name too
            local = _local(node, word, language) if language in SCOPED else None
            return WordAt(local=local, argument_of=_callee(node.parent))
    if language in SCOPED and (node.type in _VARIABLE_NODES or node.type == "type_identifier"):
        return WordAt(local=_local(node, word, language))
    return WordAt()


@dataclass(frozen=True)
class ImportedName:
    """Where the buffer's name comes from: the module, and the name it has there where the
    import renames it (`from shop.tax import compute_tax as ct`: `compute_tax`)."""

    module: str
    original: str | None = None


def imported_from(text: str, language: str | None, name: str) -> ImportedName | None:
    """The import that brings `name` into the buffer `text`, if one does (asked only when
    the index has no definition of it: a second parse then costs nothing anyone waits for)."""
    if not has_grammar(language):
        return None
    source = text.encode("utf-8", "surrogatepass")
    root = parse(source, language)
    if root is None:
        return None
    references = extract_references(root, source, language)
    scope = analyze_scope(root, source, language, set(), references)
    if name not in scope.imported:
        return None
    return ImportedName(scope.imported[name], scope.aliases.get(name))


def _occurrence(row: str, col: int, word: str) -> tuple[int, int] | None:
    """The columns of `word` as a whole word in `row`: the one under `col`, else the first
    after it (Neovim's `<cword>`)."""
    for found in re.finditer(rf"(?<![\w$]){re.escape(word)}(?![\w$])", row):
        if found.end() > col:
            return found.span()
    return None


def _local(node: Node, name: str, language: str) -> LocalName | None:
    """The innermost function around `node` that binds `name` itself, as a LocalName; None
    where no function does (a module's name, an import, a global) or it is a function's own
    name. A type's name (`type TState = ...` in zustand's createStoreImpl) is local where the
    function declares that type."""
    is_type = node.type == "type_identifier"
    function = node.parent
    while function is not None:
        if is_function(function):
            own = function.child_by_field_name("name")
            if own is not None and own.id == node.id:
                # the function's own name: the function around it binds it (a nested `def`),
                # or none does and it is the index's
                function = function.parent
                continue
            binds = [
                b
                for b in binding_nodes(function, language)
                if b.text == name.encode()
                and _function_of(b) == function
                and b != own
                and not _in_a_type(b, function)
                and (b.type == "type_identifier" or not is_type)
            ]
            if any(b.parent is not None and b.parent.type in _NOT_LOCAL for b in binds):
                return None
            if binds:
                return LocalName(
                    name=name,
                    function=_function_name(function),
                    function_line=function.start_point[0] + 1,
                    bound_at=_reaching(binds, node) + 1,
                    lines=_uses(function, name, of_type=is_type),
                )
        function = function.parent
    return None


def is_function(node: Node) -> bool:
    """A function, method, lambda or closure: a node with a body whose type says so."""
    if node.child_by_field_name("body") is None:
        return False
    kind = node.type
    return kind in _FUNCTION_TYPES or (
        ("function" in kind or "method" in kind) and "call" not in kind
    )


def _function_name(function: Node) -> str | None:
    """A function's name: its own (C's inside its declarator), else the one it is given
    (`const createStore = () => ...`, `handlers.save = function () ...`, `{ save: () => ... }`,
    Rust's `let f = |x| ...`); None for an anonymous one."""
    named = function.child_by_field_name("name")
    declarator = function.child_by_field_name("declarator")
    while named is None and declarator is not None:  # C: `int *total(...)`, innermost
        inner = declarator.child_by_field_name("declarator")
        if inner is None and declarator.type.endswith(_NAMES):
            named = declarator
        declarator = inner
    up = function.parent
    if named is None and up is not None:
        # a declarator, an assignment, an object's pair, a Rust `let`, C++'s `auto f = [..]`
        for field in ("name", "left", "key", "pattern", "declarator"):
            named = up.child_by_field_name(field)
            if named is not None and named.id != function.id:
                break
            named = None
    return named.text.decode("utf-8", "replace") if named is not None and named.text else None


def _callee(argument: Node) -> str | None:
    """The name of the function a keyword argument is given to: `echo` of `echo(x, err=e)`,
    `open` of `self.open(mode=m)`."""
    call = argument.parent.parent if argument.parent is not None else None
    function = call.child_by_field_name("function") if call is not None else None
    if function is not None and function.type == "attribute":
        function = function.child_by_field_name("attribute")
    if function is None or function.type != "identifier" or not function.text:
        return None
    return function.text.decode("utf-8", "replace")


def _reaching(binds: list[Node], node: Node) -> int:
    """The 0-based line of the binding that reaches `node`, as a reader (or jedi) follows it
    back: `node` itself where it binds; else the last binding on an earlier line, one that
    runs whichever branch is taken first (after `if m: value = value.items()`, the parameter;
    in an `else`, not the `if`'s), and never one whose own value holds `node` (`verify = (...
    or verify)`); else the first."""
    if any(b.start_byte == node.start_byte for b in binds):
        return node.start_point[0]
    earlier = [
        b for b in binds if b.start_point[0] < node.start_point[0] and not _in_its_value(b, node)
    ]
    sure = [b for b in earlier if not _in_a_branch_without(b, node)]
    chosen = sure or earlier
    return max(b.start_point[0] for b in chosen) if chosen else min(b.start_point[0] for b in binds)


# branches of which one runs: an `if`'s (its consequence and alternative, not its condition),
# a `switch`'s or `match`'s cases, a `try`'s `except` clauses
_CONDITIONALS = frozenset({"if_statement", "if_expression", "elif_clause", "else_clause"})
_ALTERNATIVES = frozenset(
    {
        "case_clause",
        "switch_case",
        "switch_default",
        "switch_block_statement_group",
        "expression_case",
        "type_case",
        "default_case",
        "communication_case",
        "match_arm",
        "except_clause",
        "catch_clause",
    }
)


def _in_a_branch_without(binding: Node, node: Node) -> bool:
    """Is `binding` in a branch (of an `if`, a `switch`, a `try`'s `except`s) that `node` is
    not in? Whether it ran, the text cannot say."""
    branch = binding.parent
    while branch is not None and branch.parent is not None:
        up = branch.parent
        alternative = branch.type in _ALTERNATIVES or (
            up.type in _CONDITIONALS and up.child_by_field_name("condition") != branch
        )
        if alternative and not _within(node, branch):
            return True
        branch = up
    return False


# where a binding's value is written beside it: a use in the value reads an earlier binding
_ASSIGNMENTS = frozenset(
    {
        "assignment",
        "augmented_assignment",
        "assignment_expression",
        "variable_declarator",
        "short_var_declaration",
        "let_declaration",
        "init_declarator",
    }
)
_TARGETS = frozenset({"pattern_list", "tuple_pattern", "list_pattern", "expression_list"})


def _in_its_value(binding: Node, node: Node) -> bool:
    """Is `node` in the value `binding` is given (`verify = (... or verify)` over lines)?"""
    up = binding.parent
    while up is not None and up.type in _TARGETS:
        up = up.parent
    return up is not None and up.type in _ASSIGNMENTS and _within(node, up)


def _within(node: Node, outer: Node) -> bool:
    return outer.start_byte <= node.start_byte and node.end_byte <= outer.end_byte


def _function_of(node: Node) -> Node | None:
    """The innermost function around `node`; for a function's own name, the one around that
    function (a nested `def helper` is a name of the function it is written in)."""
    up = node.parent
    if up is not None and is_function(up) and up.child_by_field_name("name") == node:
        up = up.parent
    while up is not None and not is_function(up):
        up = up.parent
    return up


def _in_a_type(node: Node, function: Node) -> bool:
    """Is `node` written in a type, below `function`? A TypeScript function type's parameter
    (`(state: TState) => TState` in a cast) binds nothing in the code around it."""
    up = node.parent
    while up is not None and up != function:
        if up.type.endswith("_type") or up.type == "type_annotation":
            return True
        up = up.parent
    return False


def _uses(function: Node, name: str, of_type: bool = False) -> tuple[int, ...]:
    """The lines of `function` where `name` is written as a variable (not a member after a
    dot, nor the name of a keyword argument, which is the callee's parameter, nor in a type);
    `of_type`: as a type, in the types too."""
    wanted, found, stack = name.encode(), set(), [function]
    kinds = _VARIABLE_NODES | {"type_identifier"} if of_type else _VARIABLE_NODES
    while stack:
        node = stack.pop()
        if (
            node.type in kinds
            and node.text == wanted
            and not _a_member_or_keyword(node)
            and (of_type or not _in_a_type(node, function))
        ):
            found.add(node.start_point[0] + 1)
        stack.extend(node.children)
    return tuple(sorted(found))


def _a_member_or_keyword(node: Node) -> bool:
    """Is this identifier a member's name after a dot (`obj.name`, `this.name`), a method's
    name in a call (Java's `open()`), or a keyword argument's name (`f(name=1)`, the callee's
    parameter)? None of them is the variable."""
    parent = node.parent
    if parent is None:
        return False
    if after_a_dot(node):
        return True
    return parent.type in ("keyword_argument", "method_invocation") and (
        parent.child_by_field_name("name") == node
    )
