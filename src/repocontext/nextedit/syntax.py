"""What the next-edit engine asks of a buffer's syntax tree: whether a place is code (not a
comment or a string), the call whose argument list holds a place, the function a place is in
and the names bound there.

A buffer is parsed once (tree-sitter, where lang/languages.py has its grammar); without a
grammar every place counts as code and no call or function is found, so only the rules that
need no tree (a renamed token, a sibling line) apply. Columns here are character offsets in
a line (`str` indices); the tree's are bytes, converted at this boundary.

(About 540 lines: one class and, per language, the node helpers it calls; apart, each rule
would be away from the node types it reads.)
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from functools import cached_property
from itertools import accumulate
from typing import TYPE_CHECKING

from ..lang.languages import has_grammar
from ..lang.locals import is_function
from ..lang.scopes import EVERY_BINDING, SCOPED, Scope, analyze_scope
from ..lang.symbols import Symbol, extract_symbols, parse_tree

if TYPE_CHECKING:
    from tree_sitter import Node, Tree

# inside these a place is text, unless a node of _CODE_IN_TEXT lies between (`f"{x}"`, `${x}`)
_TEXT_WORDS = ("comment", "string", "rune", "char", "regex", "text_block", "heredoc")
_CODE_IN_TEXT = frozenset({"interpolation", "template_substitution", "string_interpolation"})
# the fields that hold what is called, by grammar: function (most), name (Java, Lua),
# method (Ruby), constructor (`new X(...)`)
_CALLEE_FIELDS = ("function", "name", "method", "constructor")
# node types whose `name` field defines a name (not `nested_type_identifier`, `generic_type`)
_DEFINING = ("declaration", "definition", "declarator", "spec", "signature", "parameter",
             "item", "alias")  # fmt: skip
_MEMBER_DEFINITIONS = ("method", "field", "property")


@dataclass(frozen=True)
class Argument:
    text: str
    start: int  # character columns in the call's line
    end: int


@dataclass(frozen=True)
class Call:
    """A call whose argument list lies on one line: `callee` as written (`c.JSON`), `name`
    its last name (`JSON`), its arguments, and the columns of its parentheses."""

    line: int  # 0-based
    callee: str
    name: str
    arguments: tuple[Argument, ...]
    open: int  # the column of `(`
    close: int  # the column of `)`


class Syntax:
    """One buffer's text and tree."""

    def __init__(
        self, text: str, language: str | None, edit: tuple[Syntax, int, int, int] | None = None
    ):
        """`edit`: (the buffer before, row, old_count, new_count) when `text` is that buffer
        with its lines `row` .. `row + old_count` (0-based) replaced by `new_count` others:
        tree-sitter parses again only what the edit touched (`edited`)."""
        self.text = text
        self.lines = text.split("\n")
        self.language = language if has_grammar(language) else None
        self.source = text.encode("utf-8", "surrogatepass")
        self._starts = _line_starts(self.lines, len(self.source) == len(text))
        self._bindings: dict[int, set[str]] = {}  # a function node's id → the names it binds
        previous = self._tree_before(*edit) if edit is not None else None
        self.tree = parse_tree(self.source, self.language, previous) if self.language else None
        self.root: Node | None = self.tree.root_node if self.tree is not None else None

    def edited(self, text: str, row: int, old_count: int, new_count: int) -> Syntax:
        """The syntax of `text`, this buffer after an edit of whole lines: in a file of 6,000
        lines a second full parse was most of the next edit's time."""
        return Syntax(text, self.language, (self, row, old_count, new_count))

    def _tree_before(self, old: Syntax, row: int, old_count: int, new_count: int) -> Tree | None:
        """A copy of `old`'s tree told of the edit that made this text (`old` keeps its own)."""
        if old.tree is None or old.language != self.language:
            return None
        start, start_point = _place(old._starts, len(old.source), row)
        old_end, old_point = _place(old._starts, len(old.source), row + old_count)
        new_end, new_point = _place(self._starts, len(self.source), row + new_count)
        tree = old.tree.copy()
        tree.edit(start, old_end, new_end, start_point, old_point, new_point)
        return tree

    def breaks(self, row: int, new_line: str) -> bool:
        """Whether line `row` (0-based) written as `new_line` gives that line a syntax error
        it did not have, its brackets open and closed as before (a change that opens a call
        here and closes it lines below is judged where it ends, not here): a substitution
        that fits the tokens and not the grammar (`if f(x) -> None:`, `s := f(); s` on the
        right of `=`) is no edit a user makes."""
        if self.tree is None or self.language is None or row >= len(self.lines):
            return False
        if new_line == self.lines[row]:
            return False
        if _brackets(new_line) != _brackets(self.lines[row]):
            return False
        start = self._starts[row]
        old_end = start + len(self.lines[row].encode("utf-8", "surrogatepass"))
        added = new_line.encode("utf-8", "surrogatepass")
        tree = self.tree.copy()
        tree.edit(start, old_end, start + len(added), (row, 0),
                  (row, old_end - start), (row, len(added)))  # fmt: skip
        after = parse_tree(self.source[:start] + added + self.source[old_end:], self.language, tree)
        if after is None or self.root is None:
            return False
        return _errors_on(after.root_node, row) > _errors_on(self.root, row)

    def byte(self, line: int, col: int) -> int:
        return self._starts[line] + len(self.lines[line][:col].encode("utf-8", "surrogatepass"))

    def column(self, line: int, byte_col: int) -> int:
        """The character column of a byte column in `line`."""
        raw = self.lines[line].encode("utf-8", "surrogatepass")[:byte_col]
        return len(raw.decode("utf-8", "ignore"))

    def node(self, line: int, start: int, end: int) -> Node | None:
        if self.root is None:
            return None
        return self.root.descendant_for_byte_range(self.byte(line, start), self.byte(line, end))

    def is_code(self, line: int, start: int, end: int) -> bool:
        """Whether the text at these columns is code: in no comment and no string (a string's
        interpolation is code). Both ends are asked: a match may span nodes."""
        return self._code_at(line, start, start + 1) and self._code_at(line, end - 1, end)

    def _code_at(self, line: int, start: int, end: int) -> bool:
        node = self.node(line, start, max(end, start + 1))
        while node is not None:
            if node.type in _CODE_IN_TEXT:
                return True
            if _is_text(node):
                return False
            node = node.parent
        return True

    def string_closes_at(self, line: int) -> int | None:
        """The column of the backtick that closes, on `line`, a string opened on a line above
        (a Go raw string, a template literal spanning lines); None when the line does not
        begin inside one or does not close it."""
        text = self.lines[line]
        if self.root is None or "`" not in text:
            return None
        start = self._starts[line]
        node = self.root.descendant_for_byte_range(start, start)
        while node is not None and node.start_point[0] == line:
            node = node.parent  # the line's first node: the string is an ancestor
        while node is not None and not _is_text(node):
            node = node.parent
        while node is not None and node.parent is not None and _is_text(node.parent):
            node = node.parent  # the whole literal, its backticks included
        if node is None or node.start_point[0] >= line or node.end_point[0] != line:
            return None
        close = self.column(line, node.end_point[1] - 1)
        return close if text[close : close + 1] == "`" else None

    def identifier_at(self, line: int, start: int, end: int) -> Node | None:
        """The identifier node exactly at these columns, or None (a keyword, text)."""
        node = self.node(line, start, end)
        if node is None or node.child_count:
            return None
        if node.start_byte != self.byte(line, start) or node.end_byte != self.byte(line, end):
            return None
        kind = node.type
        if "identifier" in kind or kind in ("constant", "name", "word", "property"):
            return node
        return None

    def is_key(self, line: int, start: int, end: int) -> bool:
        """Whether the name at these columns labels a value rather than naming a binding: a
        Python keyword argument's name (`f(size=size)`), an object literal's key (`{size:
        size}`). A renamed variable keeps them."""
        node = self.node(line, start, end)
        parent = node.parent if node is not None else None
        if node is None or parent is None:
            return False
        if parent.type == "keyword_argument":
            return parent.child_by_field_name("name") == node
        return node.type == "property_identifier" and parent.type == "pair"

    def is_shorthand(self, line: int, start: int, end: int) -> bool:
        """Whether the name at these columns is a JS/TS shorthand property (`{value}`, `const
        {value} = o`): key and variable at once, so a renamed variable keeps the key."""
        node = self.node(line, start, end)
        return node is not None and node.type in (
            "shorthand_property_identifier",
            "shorthand_property_identifier_pattern",
        )

    def is_definition(self, node: Node) -> bool:
        """Whether an identifier is the name its parent defines (`def name`, `type Name`,
        `const name =`), not a use of it (`core.Name`, `Name<T>` have a name field too)."""
        parent = node.parent
        if parent is None or not any(word in parent.type for word in _DEFINING):
            return False
        if parent.type.endswith("parameters"):
            return True  # Python's and JavaScript's bare parameters: `def f(value)`
        named = parent.child_by_field_name("name") or parent.child_by_field_name("pattern")
        return named is not None and named.start_byte == node.start_byte

    def defines_member(self, node: Node) -> bool:
        """Whether a definition's name is a member's (a method, a field, a property): used
        as `.name`, not bare."""
        parent = node.parent
        if parent is None or parent.type.endswith("parameters"):
            return False  # a parameter, in Ruby's `method_parameters` too, is bare
        if any(word in parent.type for word in _MEMBER_DEFINITIONS):
            return True
        up = parent.parent
        while up is not None and up.type in ("decorated_definition", "block"):
            up = up.parent
        return (
            up is not None and up.type == "class_definition" and parent.type != "class_definition"
        )

    def owner_lines(self, node: Node) -> tuple[int, int] | None:
        """A type parameter's scope: the lines of the declaration it belongs to."""
        parent = node.parent
        if parent is None or "type_parameter" not in parent.type:
            return None
        owner = parent.parent
        while owner is not None and owner.type in ("type_parameters", "type_parameter_list"):
            owner = owner.parent
        return (owner.start_point[0], owner.end_point[0]) if owner is not None else None

    def receiver_siblings(self, node: Node, name: str) -> tuple[tuple[int, int], ...]:
        """Where a Go method's receiver is renamed, the lines of the type's other methods
        whose receiver is `name` too: Go names a type's receivers alike (the linters say
        so), and a commit that renames one renames them all (cobra, gin, chi)."""
        parameter = node.parent
        receivers = parameter.parent if parameter is not None else None
        method = receivers.parent if receivers is not None else None
        if (
            self.language != "go"
            or self.root is None
            or parameter is None
            or parameter.type != "parameter_declaration"
            or method is None
            or method.type != "method_declaration"
            or method.child_by_field_name("receiver") != receivers
        ):
            return ()
        kind = _receiver(method)
        out = []
        for other in self.root.named_children:
            if other.type != "method_declaration" or other.id == method.id:
                continue
            if _receiver(other) == kind and _receiver_name(other) == name:
                out.append((other.start_point[0], other.end_point[0]))
        return tuple(out)

    def call_around(self, line: int, start: int, end: int) -> Call | None:
        """The innermost call whose argument list holds these columns, strictly between its
        parentheses; None where there is none or its arguments span lines."""
        node = self.node(line, start, max(end, start))
        at, until = self.byte(line, start), self.byte(line, end)
        while node is not None:
            arguments = node.child_by_field_name("arguments")
            if arguments is not None and arguments.start_byte < at and until < arguments.end_byte:
                return self._call(node, arguments)
            node = node.parent
        return None

    def call_named_at(self, line: int, start: int, end: int) -> Call | None:
        """The call whose callee ends with the name at these columns (`f` of `x.f(...)`)."""
        node = self.node(line, start, end)
        end_byte = self.byte(line, end)
        for _ in range(4):
            if node is None:
                return None
            arguments = node.child_by_field_name("arguments")
            callee = _callee(node)
            if arguments is not None and callee is not None:
                return self._call(node, arguments) if callee.end_byte == end_byte else None
            node = node.parent
        return None

    def _call(self, node: Node, arguments: Node) -> Call | None:
        row = arguments.start_point[0]
        callee = _callee(node)
        if callee is None or arguments.end_point[0] != row or not arguments.text:
            return None
        if arguments.text[:1] != b"(" or arguments.text[-1:] != b")":
            return None  # Ruby's bare arguments, Lua's string or table argument
        text = self.source[callee.start_byte : callee.end_byte].decode("utf-8", "replace")
        args = []
        for child in arguments.named_children:
            if "comment" in child.type:
                continue
            start = self.column(row, child.start_point[1])
            end = self.column(row, child.end_point[1])
            args.append(Argument(self.lines[row][start:end], start, end))
        name = text.replace("::", ".").replace("->", ".").rsplit(".", 1)[-1]
        return Call(
            line=row,
            callee=text,
            name=name,
            arguments=tuple(args),
            open=self.column(row, arguments.start_point[1]),
            close=self.column(row, arguments.end_point[1]) - 1,
        )

    def local_scope(self, line: int, col: int, name: str) -> tuple[int, int] | None:
        """The lines (0-based, inclusive) of the innermost function around this place that
        binds `name` itself (a parameter, an assignment): where a rename of it ends. None
        where the name is the function's own, is bound in no function around it, or the
        language's bindings are not read here."""
        if self.root is None or self.language not in SCOPED:
            return None
        node = self.node(line, col, col + 1)
        while node is not None:
            if is_function(node):
                own = node.child_by_field_name("name")
                if own is not None and own.text == name.encode():
                    return None
                if name in self._bound(node):
                    return node.start_point[0], node.end_point[0]
            node = node.parent
        return None

    def _bound(self, function: Node) -> set[str]:
        """The names a function binds (its nested functions' too), read once per buffer."""
        found = self._bindings.get(function.id)
        if found is None:
            found = analyze_scope(function, self.source, self.language, set(), []).bound
            self._bindings[function.id] = found
        return found

    def scoped(self) -> bool:
        """Whether the functions' bindings are read in this language (local_scope)."""
        return self.root is not None and self.language in SCOPED

    def function_lines(self, line: int, col: int) -> tuple[int, int] | None:
        """The lines (0-based, inclusive) of the innermost function around this place."""
        node = self.node(line, col, col + 1)
        while node is not None and not is_function(node):
            node = node.parent
        return (node.start_point[0], node.end_point[0]) if node is not None else None

    def is_builtin(self, name: str) -> bool:
        """A keyword or a name the language gives (`string`, `len`, `console`): never one
        the buffer renames."""
        return Scope(self.language).is_builtin(name)

    def defines(self, name: str) -> bool:
        """Whether one of the file's definitions (a function, a type, a member, a constant)
        is named `name`. Not a module's plain variable (`var grey = ...`): a word of a comment
        or a string that names one is rarely renamed with it (express: two wrong proposals)."""
        return name in self._definitions

    @cached_property
    def _definitions(self) -> frozenset[str]:
        """The names `defines` knows, read from the tree once (an edit asks per changed word)."""
        if self.root is None or self.language is None:
            return frozenset()
        names: set[str] = set()
        found: list[Symbol] = extract_symbols(self.source, self.language, self.root)
        while found:
            symbol = found.pop()
            if not symbol.binding:
                names.add(symbol.name)
            found.extend(symbol.members)
        return frozenset(names)

    @cached_property
    def modules(self) -> frozenset[str]:
        """The names the file's imported packages go by (Go's `reflect`, Python's `np` for
        `import numpy as np`, a JavaScript namespace or default import of a package):
        `reflect.Value` is a package's, never a member of a type renamed elsewhere."""
        if self.root is None:
            return frozenset()
        read = _IMPORTS.get(self.language or "")
        return frozenset(read(self.root)) if read is not None else frozenset()

    def binds_in_file(self, name: str) -> bool:
        """Whether the file binds `name` anywhere (a definition, a parameter, an assignment,
        an import): a variable, not a package or a global from elsewhere. True where the
        file's definitions and imports are not read (the question cannot be answered)."""
        if self.root is None or self.language not in EVERY_BINDING:
            return True
        return name in analyze_scope(self.root, self.source, self.language, set(), []).bound


def _go_imports(root: Node) -> list[str]:
    """The names a Go file's imports go by: the alias (`h "net/http"`), else the path's last
    element less a version (`gopkg.in/yaml.v3` and `example.com/cli/v2`: `yaml`, `cli`)."""
    names = []
    for declaration in root.named_children:
        if declaration.type != "import_declaration":
            continue
        specs = [c for c in declaration.named_children if c.type == "import_spec"]
        for group in (c for c in declaration.named_children if c.type == "import_spec_list"):
            specs += [c for c in group.named_children if c.type == "import_spec"]
        for spec in specs:
            alias, path = spec.child_by_field_name("name"), spec.child_by_field_name("path")
            if alias is not None:
                if alias.type == "package_identifier" and alias.text:
                    names.append(alias.text.decode("utf-8", "replace"))
                continue  # `_` and `.` name nothing
            if path is None or not path.text:
                continue
            parts = path.text.decode("utf-8", "replace").strip('"`').split("/")
            if len(parts) > 1 and re.fullmatch(r"v\d+", parts[-1]):
                parts.pop()
            names.append(re.sub(r"\.v\d+$", "", parts[-1]))
    return names


def _python_imports(root: Node) -> list[str]:
    """`import a.b` binds `a`, `import numpy as np` binds `np`. A name of `from m import x`
    may be a class as well as a module, and its members are renamed with it: not read."""
    names = []
    for statement in root.named_children:
        if statement.type != "import_statement":
            continue
        for item in statement.named_children:
            if item.type == "aliased_import":
                alias = item.child_by_field_name("alias")
                if alias is not None and alias.text:
                    names.append(alias.text.decode("utf-8", "replace"))
            elif item.type == "dotted_name" and item.named_children:
                first = item.named_children[0].text
                names.append((first or b"").decode("utf-8", "replace"))
    return [n for n in names if n]


def _js_imports(root: Node) -> list[str]:
    """A package's namespace (`import * as path from "path"`) or default import (`import
    fs from "fs"`). A relative path's is the project's own object: its members are renamed
    with it, so it is not read."""
    names = []
    for statement in root.named_children:
        source = statement.child_by_field_name("source")
        if statement.type != "import_statement" or source is None or not source.text:
            continue
        if source.text.decode("utf-8", "replace").strip("'\"`").startswith("."):
            continue
        for clause in (c for c in statement.named_children if c.type == "import_clause"):
            for item in clause.named_children:
                if item.type == "namespace_import":
                    item = next((c for c in item.named_children if c.type == "identifier"), item)
                if item.type == "identifier" and item.text:
                    names.append(item.text.decode("utf-8", "replace"))
    return names


_IMPORTS = {
    "go": _go_imports,
    "python": _python_imports,
    "javascript": _js_imports,
    "typescript": _js_imports,
    "tsx": _js_imports,
}


def _is_text(node: Node) -> bool:
    return any(word in node.type for word in _TEXT_WORDS)


def _receiver_parameter(method: Node) -> Node | None:
    receivers = method.child_by_field_name("receiver")
    if receivers is None:
        return None
    return next((c for c in receivers.named_children if c.type == "parameter_declaration"), None)


def _receiver(method: Node) -> bytes | None:
    """A Go method's receiver type, pointer or not (`*Command` and `Command` are one)."""
    parameter = _receiver_parameter(method)
    kind = parameter.child_by_field_name("type") if parameter is not None else None
    while kind is not None and kind.type == "pointer_type":
        kind = kind.named_children[0] if kind.named_children else None
    return kind.text if kind is not None else None


def _receiver_name(method: Node) -> str | None:
    parameter = _receiver_parameter(method)
    name = parameter.child_by_field_name("name") if parameter is not None else None
    return name.text.decode("utf-8", "replace") if name is not None and name.text else None


def _callee(node: Node) -> Node | None:
    for field in _CALLEE_FIELDS:
        callee = node.child_by_field_name(field)
        if callee is not None:
            return callee
    return None


def _brackets(line: str) -> tuple[int, ...]:
    """How many of each kind of bracket the line leaves open (negative: closes)."""
    return tuple(line.count(o) - line.count(c) for o, c in ("()", "[]", "{}"))


def _errors_on(root: Node, row: int) -> int:
    """The error and missing nodes of the tree that touch line `row`."""
    found, stack = 0, [root]
    while stack:
        node = stack.pop()
        if node.end_point[0] < row or node.start_point[0] > row:
            continue
        found += node.type == "ERROR" or node.is_missing
        if node.has_error:
            stack.extend(node.children)
    return found


def _line_starts(lines: list[str], ascii: bool) -> list[int]:
    """Each line's first byte (`ascii`: a character is a byte in every line)."""
    if ascii:
        sizes = (len(line) + 1 for line in lines[:-1])
    else:
        sizes = (len(line.encode("utf-8", "surrogatepass")) + 1 for line in lines[:-1])
    return [0, *accumulate(sizes)]


def _place(starts: list[int], size: int, row: int) -> tuple[int, tuple[int, int]]:
    """The byte and the point where line `row` begins; past the last line, the text's end."""
    if row < len(starts):
        return starts[row], (row, 0)
    return size, (len(starts) - 1, size - starts[-1])
