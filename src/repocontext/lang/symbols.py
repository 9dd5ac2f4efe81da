"""Definitions in a source file, found with tree-sitter: name, kind, span, signature, docstring.

`extract_symbols` walks the statement spine of the tree (module level and container bodies) with
an explicit stack, so a deeply nested file cannot exhaust Python's recursion limit. It enters a
function body once only, in JavaScript and TypeScript: a module-level function that defines
functions at the top of its body (immer's `enablePatches() { function applyPatches_() ... }`,
zustand's `createStoreImpl = () => { const setState = ... }`) holds them as members,
`enablePatches.applyPatches_`, since there a module's real functions often live (through a
curried arrow too: `persistImpl = (config) => (set, get) => { const hydrate = ... }`). A
module-level binding is a definition in JavaScript, TypeScript and Go (`const cuid2Regex`, `var
ErrNotFound`), in Python only UPPER_CASE ones (all of them cost Python's search two answers);
a file with more than MAX_BINDINGS of them is a table of data and keeps them in windows.
Parse failures degrade to "no symbols" (the file is still indexed as line windows); tree-sitter
itself is error-tolerant, so a file full of syntax errors still yields the definitions it can
recognise.

(About 560 lines: one walker with a branch for each language's definitions, beside the small
helpers those branches call.)
"""

from __future__ import annotations

import functools
import re
from dataclasses import dataclass, field

from tree_sitter import Node, Parser, Tree

from .languages import SPECS, LanguageSpec, new_parser

_QUALIFIER = re.compile(r"::|:|\.")
_UPPER_CONST = re.compile(r"^_*[A-Z][A-Z0-9_]*$")
# A file with more module-level variables than this is a table of data (an icon set, a
# translation, generated values): one chunk each would cost an embedding each (5,000 one-line
# `export const iconN = "..."` took 16.6 s to index against 2.6 s as windows), and a search by
# one of them is rare. Its variables stay in windows; the dev repositories' most is 18.
MAX_BINDINGS = 64
_MAX_SIGNATURE_CHARS = 400
_CLASS_KINDS = frozenset({"class", "struct", "interface", "trait", "impl", "enum", "module"})
_MAX_DOC_CHARS = 1200
_JS_FAMILY = frozenset({"javascript", "typescript", "tsx"})
# what wraps a value without changing what it is: `(f) as T`, `f satisfies T`, `f!`, `<T>f`
_JS_WRAPPED = frozenset(
    {
        "as_expression",
        "satisfies_expression",
        "parenthesized_expression",
        "non_null_expression",
        "type_assertion",
    }
)
_JS_FUNCTIONS = ("function_expression", "function", "arrow_function", "generator_function")
# statements at the top of a function's body that define a nested function
_JS_DECLARED = ("function_declaration", "generator_function_declaration")
_JS_NESTED = frozenset(
    {
        "function_declaration",
        "generator_function_declaration",
        "lexical_declaration",
        "variable_declaration",
    }
)


@dataclass
class Symbol:
    kind: str
    name: str
    qualname: str
    start_line: int  # 1-based, inclusive, includes decorators
    end_line: int
    signature: str
    doc: str | None
    is_container: bool = False
    members: list[Symbol] = field(default_factory=list)
    parent: Symbol | None = field(default=None, repr=False)
    # an object literal's members are cut out only where the literal is long: a short one
    # reads best whole (chunking.py decides, it knows what long is)
    split_if_long: bool = False
    # the first line of the leading comment taken as `doc` (JSDoc, `///`, Go's `// Name ...`):
    # its lines belong to the definition, not to a window of their own (chunking.py)
    doc_start_line: int | None = None
    # a module's variable or lowercase constant holding a plain value (`const cuid2Regex = ...`,
    # Go's `var ErrNotFound = ...`): a symbol only while the file has few (MAX_BINDINGS)
    binding: bool = False


@functools.cache
def _parser(language: str) -> Parser:
    return new_parser(language)


def parse(source: bytes, language: str) -> Node | None:
    """The syntax tree's root, or None for a language without a grammar here."""
    tree = parse_tree(source, language)
    return tree.root_node if tree is not None else None


def parse_tree(source: bytes, language: str, old: Tree | None = None) -> Tree | None:
    """The syntax tree; given the previous tree of the same buffer, already `edit`ed to match,
    tree-sitter reuses every part the edit did not touch (an incremental parse)."""
    if language not in SPECS:
        return None
    parser = _parser(language)
    return parser.parse(source, old) if old is not None else parser.parse(source)


def extract_symbols(source: bytes, language: str, root: Node | None = None) -> list[Symbol]:
    """Top-level symbols of `source`, containers carrying their members (nested)."""
    spec = SPECS.get(language)
    if spec is None:
        return []
    if root is None:
        root = parse(source, language)
    if root is None:
        return []
    return _Walker(spec, source).walk(root)


class _Walker:
    def __init__(self, spec: LanguageSpec, source: bytes):
        self.spec = spec
        self.src = source
        self._doc_start: int | None = None  # set by _leading_comment for the symbol made now

    def text(self, node: Node | None) -> str:
        if node is None:
            return ""
        return self.src[node.start_byte : node.end_byte].decode("utf-8", "replace")

    def walk(self, root: Node) -> list[Symbol]:
        top: list[Symbol] = []
        # stack of (node to scan the children of, owning container or None, wrapper span node)
        stack: list[tuple[Node, Symbol | None]] = [(root, None)]
        while stack:
            node, owner = stack.pop()
            found: list[Symbol] = []
            pending: list[tuple[Node, Symbol | None]] = []
            prev: Node | None = None
            for child in node.named_children:
                sym, inner = self._symbol_at(child, owner, prev)
                if sym is not None:
                    found.append(sym)
                    if sym.is_container and inner is not None:
                        pending.append((inner, sym))
                elif child.type in self.spec.descend or child.type == "ERROR":
                    pending.append((child, owner))
                prev = child
            (owner.members if owner else top).extend(found)
            # Children are scanned in order, so push in reverse to keep members ordered.
            stack.extend(reversed(pending))
        if sum(s.binding for s in top) > MAX_BINDINGS:
            top = [s for s in top if not s.binding]
        _sort_tree(top)
        return top

    def _symbol_at(
        self, node: Node, owner: Symbol | None, prev: Node | None
    ) -> tuple[Symbol | None, Node | None]:
        """The symbol `node` defines (unwrapping decorators/export/template) and its member node."""
        outer = node
        if node.type in self.spec.wrappers:
            inner = node.child_by_field_name("definition") or node.child_by_field_name(
                "declaration"
            )
            if inner is None:
                named = [c for c in node.named_children if c.type in self.spec.definitions]
                inner = named[-1] if named else None
            if inner is None or inner.type not in self.spec.definitions:
                return None, None
            node = inner
        if node.type not in self.spec.definitions:
            return None, None
        in_function = _in_function(owner)
        if in_function and node.type not in _JS_NESTED:
            return None, None
        kind = self.spec.definitions[node.type]
        name_node, kind = self._name(node, kind, owner)
        if name_node is None or (in_function and kind != "function"):
            return None, None
        name = name_node if isinstance(name_node, str) else self.text(name_node)
        name = " ".join(name.split())
        if not name:
            return None, None
        if owner is not None and kind in self.spec.method_kinds and owner.kind in _CLASS_KINDS:
            kind = "method"
        is_container = node.type in self.spec.containers
        body = node.child_by_field_name("body")
        inner = body if is_container else None
        split_if_long = False
        if owner is None and self.spec.name in _JS_FAMILY:
            inner = self._js_members_node(node, kind) or inner
            is_container = is_container or inner is not None
            split_if_long = inner is not None and inner.type == "object"
        signature = self._signature(outer, node, body)
        self._doc_start = None
        doc = self._docstring(node, body) or self._leading_comment(outer, prev)
        # `A::f` (C++), `M.run` / `M:meth` (Lua): the last segment is the name, the rest qualifies it.
        dotted = _QUALIFIER.sub(".", name)
        if node.type == "method_declaration" and self.spec.name == "go":
            receiver = _go_receiver_type(self.text(node.child_by_field_name("receiver")))
            dotted = f"{receiver}.{name}" if receiver else name
        if "::" in name and kind == "function":
            kind = "method"  # `int A::f() {...}` defined outside its class
        qualname = f"{owner.qualname}.{dotted}" if owner else dotted
        sym = Symbol(
            kind=kind,
            name=dotted.rsplit(".", 1)[-1],
            qualname=qualname,
            start_line=outer.start_point[0] + 1,
            end_line=_end_line(outer),
            signature=signature,
            doc=doc,
            is_container=is_container,
            parent=owner,
            split_if_long=split_if_long,
            doc_start_line=self._doc_start,
            binding=self._plain_binding(node, kind, name),
        )
        return sym, inner

    def _plain_binding(self, node: Node, kind: str, name: str) -> bool:
        """A module-level variable or lowercase constant holding neither a function, a class
        nor an object literal (those were symbols before module bindings were)."""
        if node.type == "var_spec":
            return True
        if kind not in ("constant", "variable") or _UPPER_CONST.match(name):
            return False
        if node.type not in ("lexical_declaration", "variable_declaration"):
            return False
        value = self._js_value(node)
        return value is None or value.type != "object"

    def _js_members_node(self, node: Node, kind: str) -> Node | None:
        """Where a module-level JS/TS definition's members are, when it has any: the body of
        a function that defines functions at its top, or an object literal with methods
        (`export const objectTraps = { get(state, prop) {...}, ... }`); else None."""
        value = self._js_value(node)
        if value is None:
            return None
        if kind == "function":
            block = value.child_by_field_name("body")
            # curried, as middleware is written: `(config) => (set, get, api) => { ... }`
            while (inner := _unwrap(block)) is not None and inner.type in _JS_FUNCTIONS:
                block = inner.child_by_field_name("body")
            if block is None or block.type != "statement_block":
                return None
            return block if any(self._defines_function(c) for c in block.named_children) else None
        if kind in ("constant", "variable") and value.type == "object":
            methods = any(
                c.type == "method_definition" or (c.type == "pair" and _js_function(c, "value"))
                for c in value.named_children
            )
            return value if methods else None
        return None

    def _defines_function(self, statement: Node) -> bool:
        """`function f() {}` or `const f = () => {}` (in a function's body)."""
        if statement.type in _JS_DECLARED:
            return True
        if statement.type not in _JS_NESTED:
            return False
        picked = self._declarator(statement, False)
        return picked is not None and picked[2] == "function"

    def _js_value(self, node: Node) -> Node | None:
        """The function or object a JS/TS definition defines: the declaration itself, or the
        value assigned (casts and parentheses taken off)."""
        if node.type in _JS_DECLARED:
            return node
        if node.type == "expression_statement":
            expr = node.named_children[0] if node.named_children else None
            return _unwrap(expr.child_by_field_name("right")) if expr is not None else None
        picked = self._declarator(node, True)
        return picked[1] if picked is not None else None

    def _declarator(self, node: Node, module_level: bool) -> tuple[Node, Node | None, str] | None:
        """The declarator of `const a = ..., b = ...` that names a symbol: its name, value (casts
        and parentheses taken off) and kind. A function (`((s) => ...) as CreateStore` too) or
        a class anywhere; at module level any other value too (`const cuid2Regex = /.../`,
        `export const finishDraft = immer.finishDraft.bind(immer)`: where it is defined is what
        a look-up by its name wants), a constant where declared `const`, else a variable; an
        object literal there (`const errors = { 0: "Illegal state", ... }`) holds its methods
        as members. Not what `require(...)` gives: that is an import."""
        for decl in node.named_children:
            if decl.type != "variable_declarator":
                continue
            name = decl.child_by_field_name("name")
            value = _unwrap(decl.child_by_field_name("value"))
            if name is None:
                continue
            if value is not None and value.type in _JS_FUNCTIONS:
                return name, value, "function"
            if value is not None and value.type == "class":
                return name, value, "class"
            if module_level and name.type == "identifier" and not _required(value):
                declared = node.child(0)
                constant = declared is not None and declared.type == "const"
                return name, value, "constant" if constant else "variable"
        return None

    # --- names ---------------------------------------------------------------------------------
    def _name(self, node: Node, kind: str, owner: Symbol | None) -> tuple[Node | str | None, str]:
        t = node.type
        lang = self.spec.name
        if lang == "python" and t in ("expression_statement", "assignment"):
            if owner is not None:
                return None, kind
            assign = (
                node
                if t == "assignment"
                else (node.named_children[0] if node.named_children else None)
            )
            if assign is None or assign.type != "assignment":
                return None, kind
            left = assign.child_by_field_name("left")
            if left is None or left.type != "identifier" or not _UPPER_CONST.match(self.text(left)):
                return None, kind
            return left, "constant"
        if t in ("lexical_declaration", "variable_declaration") and lang != "lua":
            picked = self._declarator(node, owner is None)
            return (picked[0], picked[2]) if picked is not None else (None, kind)
        if t in ("public_field_definition", "field_definition"):
            # `produce: IProduce = (base, recipe) => {...}`, `static create = (...) => ...`: a
            # class field holding a function is a method to whoever calls or looks it up
            if not _js_function(node, "value"):
                return None, kind
            return node.child_by_field_name("name") or node.child_by_field_name("property"), kind
        if t == "pair":
            # `{ get: function () {...}, set: (s, v) => ... }`: a member of an object literal
            key = node.child_by_field_name("key")
            if key is None or not _js_function(node, "value"):
                return None, kind
            return (_strip_string_quotes(self.text(key)) if key.type == "string" else key), kind
        if t == "expression_statement" and lang in ("javascript", "typescript", "tsx"):
            return _assigned_function(node, self.text), "function"
        if lang == "lua" and t == "assignment_statement":
            values = [c for c in node.named_children if c.type == "expression_list"]
            targets = [c for c in node.named_children if c.type == "variable_list"]
            if (
                values
                and targets
                and values[0].named_children
                and (values[0].named_children[0].type == "function_definition")
            ):
                return (targets[0].named_children[0] if targets[0].named_children else None), kind
            return None, kind
        if t in ("function_definition", "field_declaration") and lang in ("c", "cpp"):
            declarator = node.child_by_field_name("declarator")
            if t == "field_declaration" and (
                declarator is None or "function_declarator" not in _declarator_types(declarator)
            ):
                return None, kind
            return _innermost_declarator(declarator), kind
        if t in ("struct_specifier", "union_specifier", "enum_specifier", "class_specifier"):
            if node.child_by_field_name("body") is None:
                return None, kind
            return node.child_by_field_name("name"), kind
        if t == "type_definition":
            return _innermost_declarator(node.child_by_field_name("declarator")), kind
        if t == "impl_item":
            return _impl_type_name(node.child_by_field_name("type")), kind
        if t == "method_declaration" and lang == "go":
            return node.child_by_field_name("name"), kind
        return node.child_by_field_name("name"), kind

    # --- signature and docs ----------------------------------------------------------------------
    def _signature(self, outer: Node, node: Node, body: Node | None) -> str:
        """Everything from the definition's first byte to its body, whitespace collapsed."""
        start = node.start_byte
        if outer is not node and outer.type == "decorated_definition":
            start = outer.start_byte
        end = body.start_byte if body is not None and body.start_byte > start else node.end_byte
        text = self.src[start:end].decode("utf-8", "replace")
        if self.spec.name == "ruby":  # no delimiter before the body: the header is one line
            text = text.split("\n", 1)[0]
        if body is None:
            text = text.split("\n", 1)[0] if node.end_point[0] > node.start_point[0] + 3 else text
        text = " ".join(text.split()).rstrip("{:= ").rstrip()
        if len(text) > _MAX_SIGNATURE_CHARS:
            text = text[:_MAX_SIGNATURE_CHARS] + "..."
        return text

    def _docstring(self, node: Node, body: Node | None) -> str | None:
        """Python docstrings: a string as the first statement of the body."""
        if self.spec.name != "python" or body is None or not body.named_children:
            return None
        first = body.named_children[0]
        if first.type == "expression_statement" and first.named_children:
            first = first.named_children[0]
        if first.type != "string":
            return None
        return _clip_doc(_strip_string_quotes(self.text(first)))

    def _leading_comment(self, outer: Node, prev: Node | None) -> str | None:
        """Comments that end on the line right above the definition (doc comments, JSDoc, ///);
        in JavaScript and TypeScript also a `/** ... */` block one blank line above it, the
        way commander and express write theirs (`*/`, a blank line, `command(nameAndArgs) {`)."""
        lines: list[str] = []
        expected_end = outer.start_point[0] - 1
        node = outer.prev_named_sibling if prev is None else prev
        if node is None and outer.parent is not None:
            # first in a body whose comment the grammar attached to the enclosing node (Ruby)
            node = outer.parent.prev_named_sibling
        if node is not None and self._jsdoc_one_blank_line_above(node, outer):
            expected_end -= 1
        while node is not None and node.type in self.spec.comment_types:
            if _end_line(node) - 1 != expected_end:
                break
            lines.insert(0, self.text(node))
            expected_end = node.start_point[0] - 1
            self._doc_start = node.start_point[0] + 1
            node = node.prev_named_sibling
        if not lines:
            return None
        return _clip_doc(_strip_comment_markers("\n".join(lines)))

    def _jsdoc_one_blank_line_above(self, comment: Node, outer: Node) -> bool:
        """A JS/TS `/** ... */` block that only one blank line separates from `outer`."""
        if self.spec.name not in _JS_FAMILY or comment.type not in self.spec.comment_types:
            return False
        if not self.src.startswith(b"/**", comment.start_byte):
            return False
        between = self.src[comment.end_byte : outer.start_byte]
        return not between.strip() and between.count(b"\n") == 2


def _unwrap(value: Node | None) -> Node | None:
    """`((s) => ...) as T`, `(f) satisfies T`, `f!`, `<T>f`: the value inside."""
    while value is not None and value.type in _JS_WRAPPED:
        inner = value.named_children
        if not inner:
            return None
        value = inner[-1] if value.type == "type_assertion" else inner[0]
    return value


def _required(value: Node | None) -> bool:
    """`require("x")`, `require("debug")("app")`, `require("./route").Route`: an import."""
    while value is not None and value.type in ("call_expression", "member_expression"):
        inner = value.child_by_field_name("function") or value.child_by_field_name("object")
        if inner is not None and inner.type == "identifier" and inner.text == b"require":
            return True
        value = _unwrap(inner)
    return False


def _js_function(node: Node, field_name: str) -> bool:
    value = _unwrap(node.child_by_field_name(field_name))
    return value is not None and value.type in _JS_FUNCTIONS


def _in_function(owner: Symbol | None) -> bool:
    """Whether `owner` is a function whose body is being scanned for nested functions."""
    return owner is not None and owner.kind == "function"


def _assigned_function(statement: Node, text) -> str | None:
    """The name a statement `target = function ...` defines (JavaScript): the target as
    written (`res.json`, `exports.parse`, `Foo.prototype.bar`), or, for `module.exports =
    function name(...)`, the function's own name; None for any other statement."""
    expr = statement.named_children[0] if statement.named_children else None
    if expr is None or expr.type != "assignment_expression":
        return None
    left, right = expr.child_by_field_name("left"), _unwrap(expr.child_by_field_name("right"))
    if left is None or right is None or right.type not in _JS_FUNCTIONS:
        return None
    if left.type not in ("member_expression", "identifier"):
        return None
    target = text(left)
    if target in ("module.exports", "exports"):
        own = right.child_by_field_name("name")
        return text(own) if own is not None else None
    return target


def _go_receiver_type(receiver: str) -> str:
    """`(s *Server)` -> `Server`; `(Server[T])` -> `Server`."""
    words = re.findall(r"[A-Za-z_][A-Za-z0-9_]*", receiver)
    return words[-1] if len(words) <= 2 and words else (words[1] if len(words) > 1 else "")


def _declarator_types(start: Node) -> set[str]:
    types = set()
    node: Node | None = start
    while node is not None:
        types.add(node.type)
        node = node.child_by_field_name("declarator")
    return types


def _innermost_declarator(node: Node | None) -> Node | None:
    while node is not None:
        if node.type in (
            "identifier",
            "field_identifier",
            "type_identifier",
            "qualified_identifier",
            "destructor_name",
            "operator_name",
            "primitive_type",
        ):
            return node
        nxt = node.child_by_field_name("declarator")
        if nxt is None:
            named = [c for c in node.named_children if "identifier" in c.type]
            return named[0] if named else None
        node = nxt
    return None


def _end_line(node: Node) -> int:
    row, col = node.end_point
    # A node ending at column 0 ends on the previous line (trailing newline included).
    return row if col == 0 and row > node.start_point[0] else row + 1


def _strip_string_quotes(text: str) -> str:
    text = text.lstrip("rRbBuUfF")
    for q in ('"""', "'''", '"', "'"):
        if text.startswith(q) and text.endswith(q) and len(text) >= 2 * len(q):
            return text[len(q) : -len(q)].strip()
    return text.strip()


_COMMENT_MARKERS = re.compile(r"^\s*(///?|//!|/\*\*?|\*/|\*|#+|--+)\s?", re.MULTILINE)


def _strip_comment_markers(text: str) -> str:
    text = _COMMENT_MARKERS.sub("", text)
    return text.replace("*/", "").strip()


def _clip_doc(text: str) -> str | None:
    text = text.strip()
    if not text:
        return None
    return text if len(text) <= _MAX_DOC_CHARS else text[:_MAX_DOC_CHARS] + "..."


def _sort_tree(symbols: list[Symbol]) -> None:
    stack = [symbols]
    while stack:
        group = stack.pop()
        group.sort(key=lambda s: s.start_line)
        stack.extend(s.members for s in group if s.members)


def _impl_type_name(typ: Node | None) -> Node | None:
    """The name an `impl` block's methods are qualified by: the type's own name, without its
    generics, lifetimes, references or path (`impl<'a> Read for &'a mut SliceRead<'a>` is
    SliceRead's, so its methods are `SliceRead.method`, as a user and a question name them;
    the raw type text made `&'a mut SliceRead<'a>.method`, which no name matched)."""
    while typ is not None:
        if typ.type in ("type_identifier", "primitive_type"):
            return typ
        if typ.type in ("generic_type", "reference_type", "pointer_type"):
            typ = typ.child_by_field_name("type")
        elif typ.type == "scoped_type_identifier":
            typ = typ.child_by_field_name("name")
        else:  # a tuple, an array, a function type: the raw text, as before
            return typ
    return None
