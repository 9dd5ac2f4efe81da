"""One edit, and the replacement in it that can apply elsewhere.

An edit is one changed region of a buffer: lines that were `old_lines` and are `new_lines`
(from the buffer before and after, or from the plugin's recent-edit record: the old text, the
new text and where). Its lines are compared token by token; what differs between the common
start and the common end is the change. Four kinds are recognised, most specific first:

- **rename**: one identifier became another (`count` → `total`). Surest at a definition's
  name; at a use it may be a one-off. A name followed by `.` that the file does not bind (a
  package, a global: `ioutil.ReadAll` → `io.ReadAll`) is an API moved, not a rename: it
  becomes a `tokens` replacement that keeps the member (`ioutil.ReadAll` only).
- **arguments**: a call's argument list changed (`f(a, b)` → `f(a, b, c)`): one argument added,
  removed, replaced or wrapped, or the whole list replaced; the same at the other calls of `f`
  with as many arguments.
- **tokens**: a run of code tokens holding a name became another (`interface{}` → `any`,
  `foo(` → `self.foo(`); strings and literals alone are not enough.
- **line**: anything else on one line: the same new line where a sibling line reads exactly
  as the old one did.

`confidence` says how often such a replacement is wanted at the other places: it starts each
place's score (places.py), and the places under the caller's threshold are not shown.

(About 570 lines: the four kinds of edit and their recognisers, most specific first, read in
the order `recognise` tries them.)
"""

from __future__ import annotations

import re
from dataclasses import dataclass, replace
from typing import NamedTuple

from .arguments import ArgumentChange, argument_change
from .syntax import Syntax

# identifiers (with `$` for JavaScript), numbers, quoted strings (to the line's end when not
# closed), then any other character
_TOKEN = re.compile(
    r"""(?:[^\W\d]|\$)[\w$]*|\d[\w.]*|"(?:\\.|[^"\\])*"?|'(?:\\.|[^'\\])*'?|`[^`]*`?"""
    r"|\?\.|->|::|\.\.\.|===|!==|==|!=|<=|>=|&&|\|\||:=|=>|\+\+|--|[-+*/%&|^]=|\?\?|\S"
)
MEMBER_OPERATORS = frozenset({".", "?.", "->", "::"})
_NAME = re.compile(r"(?:[^\W\d]|\$)[\w$]*\Z")
# an edit of more lines is not one replacement
MAX_EDIT_LINES = 8

# How often a rule's replacement is wanted at the other places: the share of its proposals
# that were right on the two repositories' history it was tuned on (spf13/cobra, colinhacks/
# zod: bench/next_edit.py, (right + 1) / (right + wrong + 2)); a place's confidence starts
# from it, and propose.MIN_CONFIDENCE keeps the sure ones.
CONFIDENCE = {
    "rename-definition": 0.93,  # a definition's name changed (a parameter's too)
    "rename-use": 0.43,  # a bare use changed to a name the buffer does not have yet
    "rename-member": 0.58,  # the same after a `.`: `x.count` → `x.total`
    "rename-switch": 0.29,  # a use changed to a name the buffer has: a choice made there
    "rename-text": 0.83,  # a definition's name in a comment or a string
    "tokens-qualify": 0.16,  # `foo` → `self.foo`
    "tokens-unqualify": 0.89,  # `self.foo` → `foo`
    "tokens-api": 0.5,  # `ioutil.ReadAll` → `io.ReadAll` (never seen while tuning)
    "tokens-extract": 0.8,  # `c.Flags()` → `flags`, in the function that binds it
    "tokens-wrap": 0.15,  # `x` → `f(x)`
    "tokens-swap": 0.39,  # other runs of tokens, bringing a name the buffer does not have
    "tokens-switch": 0.51,  # other runs of tokens, every name already in the buffer
    "arguments-insert": 0.46,
    "arguments-delete": 0.8,
    "arguments-replace": 0.47,
    "arguments-wrap": 0.72,
    "arguments-all": 0.8,
    "line": 0.75,  # a sibling line that read the same
}


class Token(NamedTuple):
    """A token of a line, and where it is (character offsets). A tuple: a long file's lines
    make tens of thousands of them per edit."""

    text: str
    start: int
    end: int


def tokens(line: str, start: int = 0, end: int | None = None) -> list[Token]:
    """The line's tokens; a string's interpolations (`${user.name}` in a template, `{name}`
    in a Python f-string) are code, tokenized as such between the string's pieces, so that
    a rename reaches them."""
    out: list[Token] = []
    for m in _TOKEN.finditer(line, start, len(line) if end is None else end):
        text = m.group()
        holes = _holes(text, _f_string(out, m.start())) if text[0] in "`\"'" else None
        if not holes:
            out.append(Token(text, m.start(), m.end()))
            continue
        cursor = m.start()
        for a, b in holes:  # offsets in the string: [a, b) is code
            out.append(Token(line[cursor : m.start() + a], cursor, m.start() + a))
            out += tokens(line, m.start() + a, m.start() + b)
            cursor = m.start() + b
        out.append(Token(line[cursor : m.end()], cursor, m.end()))
    return out


def line_tokens(syntax: Syntax, row: int) -> list[Token]:
    """A buffer line's tokens. A line that begins inside a string opened above it (a Go raw
    string, a template literal) closes it at its first backtick, and what follows is code:
    read alone, `Simply type ` + c.displayName() + ` help` would be two words and one string."""
    line = syntax.lines[row]
    close = syntax.string_closes_at(row)
    if close is None:
        return tokens(line)
    return [*tokens(line, 0, close), Token("`", close, close + 1), *tokens(line, close + 1)]


def _f_string(before: list[Token], at: int) -> bool:
    """Whether the string starting at `at` has an f prefix (`f"`, `rf'`) right before it."""
    if not before or before[-1].end != at:
        return False
    prefix = before[-1].text.lower()
    return "f" in prefix and len(prefix) <= 2 and set(prefix) <= set("rfb")


def _holes(text: str, f_string: bool) -> list[tuple[int, int]]:
    """The code spans inside a template literal's `${...}` or an f-string's `{...}` (not
    `{{`), as offsets in the string's text; none in any other token."""
    if text[:1] == "`":
        opener = "${"
    elif f_string and text[:1] in "\"'":
        opener = "{"
    else:
        return []
    holes = []
    i = 1
    while i < len(text):
        if text.startswith("{{", i) and opener == "{":
            i += 2
            continue
        if not text.startswith(opener, i):
            i += 1
            continue
        a = i + len(opener)
        depth, j = 1, a
        while j < len(text) and depth:
            depth += {"{": 1, "}": -1}.get(text[j], 0)
            j += 1
        if depth:
            break  # an unclosed hole: the rest is text
        if opener == "{":  # `{x!r:>10}`: the expression ends at its conversion or format
            inner = re.split(r"![rsa]|:(?!=)|=(?!=)\s*$", text[a : j - 1], maxsplit=1)[0]
            holes.append((a, a + len(inner)))
        else:
            holes.append((a, j - 1))
        i = j
    return holes


def is_name(text: str) -> bool:
    return bool(_NAME.match(text))


def is_literal(text: str) -> bool:
    return text[:1] in "\"'`" or text[:1].isdigit()


def member_before(toks: list[Token], index: int) -> bool:
    """Whether the token at `index` follows a member operator (`.`, `?.`, `->`, `::`)."""
    return index > 0 and toks[index - 1].text in MEMBER_OPERATORS


def around_old(old: tuple[str, ...], new: list[str]) -> tuple[list[str], list[str]] | None:
    """Where the new text holds the old tokens (`self.foo` holds `foo`): the tokens before and
    after them, which mark a place as changed already (`changed_already`); None where it does
    not."""
    k = len(old)
    for j in range(len(new) - k + 1):
        if tuple(new[j : j + k]) == old:
            return new[:j], new[j + k :]
    return None


def changed_already(toks: list[Token], i: int, k: int, around: tuple[list[str], list[str]]) -> bool:
    """Whether the `k` tokens at `i` already stand inside the new text (`around_old`)."""
    before, after = around
    if i < len(before) or i + k + len(after) > len(toks):
        return False
    return [t.text for t in toks[i - len(before) : i]] == before and [
        t.text for t in toks[i + k : i + k + len(after)]
    ] == after


@dataclass(frozen=True)
class Edit:
    """Lines `first` (1-based) onward were `old_lines` and are now `new_lines`."""

    path: str
    first: int
    old_lines: tuple[str, ...]
    new_lines: tuple[str, ...]


@dataclass(frozen=True)
class LineChange:
    """What differs in one changed line: tokens `old_mid` became the text `new_text`, at
    columns `old_span` of the old line and `new_span` of the new one."""

    line: int  # 0-based, in both buffers (an edit of equal line counts)
    old_line: str
    new_line: str
    old_tokens: list[Token]
    new_tokens: list[Token]
    prefix: int  # tokens in common at the start
    suffix: int  # tokens in common at the end
    old_span: tuple[int, int]
    new_span: tuple[int, int]

    @property
    def old_mid(self) -> list[Token]:
        return self.old_tokens[self.prefix : len(self.old_tokens) - self.suffix]

    @property
    def new_mid(self) -> list[Token]:
        return self.new_tokens[self.prefix : len(self.new_tokens) - self.suffix]

    @property
    def new_text(self) -> str:
        return self.new_line[self.new_span[0] : self.new_span[1]]

    def _gaps(self, toks: list[Token], line: str) -> tuple[int, int]:
        """From the end of the common start to the start of the common end."""
        start = toks[self.prefix - 1].end if self.prefix else 0
        end = toks[len(toks) - self.suffix].start if self.suffix else len(line)
        return start, end

    @property
    def spacing_changed(self) -> bool:
        """Whether the spacing around the change changed too (`range(x)` → `range x`)."""
        o0, o1 = self._gaps(self.old_tokens, self.old_line)
        n0, n1 = self._gaps(self.new_tokens, self.new_line)
        old, new = self.old_line, self.new_line
        return (old[o0 : self.old_span[0]], old[self.old_span[1] : o1]) != (
            new[n0 : self.new_span[0]],
            new[self.new_span[1] : n1],
        )

    @property
    def new_gap_text(self) -> str:
        n0, n1 = self._gaps(self.new_tokens, self.new_line)
        return self.new_line[n0:n1]

    @property
    def old_gap_text(self) -> str:
        o0, o1 = self._gaps(self.old_tokens, self.old_line)
        return self.old_line[o0:o1]

    @property
    def key(self) -> tuple[tuple[str, ...], tuple[str, ...]]:
        return tuple(t.text for t in self.old_mid), tuple(t.text for t in self.new_mid)


@dataclass(frozen=True)
class Replacement:
    kind: str  # rename | tokens | arguments | line
    rule: str  # the CONFIDENCE key it was recognised by
    path: str
    line: int  # 0-based: the (first) edited line
    edited: frozenset[int]  # 0-based lines of the edit: none of them is a next place
    span: tuple[int, int]  # the new text's columns on the edited line
    confidence: float
    in_code: bool = True  # the edit was in code, not in a comment or a string
    old: tuple[str, ...] = ()  # rename, tokens: the tokens to find
    new: str = ""  # rename, tokens: their replacement
    gaps: str | None = None  # tokens: the old text with its spacing, where that changed too
    member: bool = False  # rename, tokens: the old text followed a member operator
    definition: bool = False  # rename: at a definition's name
    scope: tuple[int, int] | None = None  # rename: the lines of the function it is local to
    # rename of a Go receiver: the lines of the type's other methods that name theirs alike
    siblings: tuple[tuple[int, int], ...] = ()
    callee: str = ""  # arguments: the call as written at the edit (`c.JSON`)
    name: str = ""  # arguments: its last name (`JSON`); rename/tokens: the old name
    argument: ArgumentChange | None = None
    old_line: str = ""  # line: the old line, stripped
    new_line: str = ""  # line: the new line, stripped


def edit_between(before: str, after: str, path: str) -> Edit | None:
    """The one changed region between two texts of a buffer (None: no change)."""
    old, new = before.split("\n"), after.split("\n")
    start = 0
    while start < min(len(old), len(new)) and old[start] == new[start]:
        start += 1
    if start == len(old) == len(new):
        return None
    end_old, end_new = len(old), len(new)
    while end_old > start and end_new > start and old[end_old - 1] == new[end_new - 1]:
        end_old -= 1
        end_new -= 1
    return Edit(path, start + 1, tuple(old[start:end_old]), tuple(new[start:end_new]))


def edit_from_record(
    after: str, path: str, line: int, col: int, old_text: str, new_text: str
) -> tuple[str, Edit | None]:
    """The buffer before a recorded edit, and the edit: `new_text` now stands at `line`
    (1-based), character column `col`, where `old_text` was."""
    lines = after.split("\n")
    index = sum(len(x) + 1 for x in lines[: line - 1]) + col
    if after[index : index + len(new_text)] != new_text:
        return after, None
    before = after[:index] + old_text + after[index + len(new_text) :]
    return before, edit_between(before, after, path)


def line_change(
    line: int, old: str, new: str, before: Syntax | None = None, after: Syntax | None = None
) -> LineChange | None:
    """The tokens that differ between two versions of a line; None when only spacing did.
    With the buffers' syntax, each version is read as the places are (`line_tokens`)."""
    a, b = _read(before, line, old), _read(after, line, new)
    prefix = 0
    while prefix < min(len(a), len(b)) and a[prefix].text == b[prefix].text:
        prefix += 1
    suffix = 0
    while (
        suffix < min(len(a), len(b)) - prefix
        and a[len(a) - 1 - suffix].text == b[len(b) - 1 - suffix].text
    ):
        suffix += 1
    if prefix + suffix == len(a) == len(b):
        return None
    return LineChange(
        line, old, new, a, b, prefix, suffix, _span(a, prefix, suffix), _span(b, prefix, suffix)
    )


def _read(syntax: Syntax | None, line: int, text: str) -> list[Token]:
    """`text`'s tokens, read as `line_tokens` reads the buffer's line `line` when it is it."""
    if syntax is not None and syntax.lines[line : line + 1] == [text]:
        return line_tokens(syntax, line)
    return tokens(text)


def _span(toks: list[Token], prefix: int, suffix: int) -> tuple[int, int]:
    mid = toks[prefix : len(toks) - suffix]
    if mid:
        return mid[0].start, mid[-1].end
    at = toks[prefix - 1].end if prefix else (toks[prefix].start if toks else 0)
    return at, at


def line_changes(
    edit: Edit, before: Syntax | None = None, after: Syntax | None = None
) -> list[LineChange]:
    """The edit's changed lines, where they all make one change (the same tokens replaced the
    same way); none where the edit is of another shape. `before` and `after`: the buffer's
    syntax before and after the edit, when the caller has them (`line_change`)."""
    if not edit.old_lines or len(edit.old_lines) != len(edit.new_lines):
        return []
    if len(edit.old_lines) > MAX_EDIT_LINES:
        return []
    changes = []
    for offset, (old, new) in enumerate(zip(edit.old_lines, edit.new_lines, strict=True)):
        change = line_change(edit.first - 1 + offset, old, new, before, after)
        if change is not None:
            changes.append(change)
    if not changes or any(c.key != changes[0].key for c in changes):
        return []  # spacing only, or different changes on different lines
    return changes


def recognise(
    edit: Edit, before: Syntax, after: Syntax, changes: list[LineChange] | None = None
) -> Replacement | None:
    """The replacement `edit` makes that can apply elsewhere, or None. `changes`: its
    `line_changes`, when the caller has them already (they read every edited line again)."""
    if changes is None:
        changes = line_changes(edit, before, after)
    if not changes:
        return None
    change = changes[0]
    row, (start, end) = change.line, change.new_span
    in_code = after.is_code(row, start, max(end, start + 1))
    base = Replacement(
        kind="line",
        rule="line",
        path=edit.path,
        line=row,
        edited=frozenset(range(edit.first - 1, edit.first - 1 + len(edit.old_lines))),
        span=change.new_span,
        confidence=CONFIDENCE["line"],
        in_code=in_code,
        old_line=change.old_line.strip(),
        new_line=change.new_line.strip(),
    )
    if len(changes) > 1:
        return base
    if not in_code:  # in a comment or a string: a definition's name, or the same line only
        return _rename(change, base, before, after, in_code=False) or base
    found = (
        _rename(change, base, before, after, in_code=True)
        or _arguments(change, base, before, after)
        or _tokens(change, base, before)
    )
    return _local(found, change, after) if found is not None else base


def _local(rep: Replacement, change: LineChange, after: Syntax) -> Replacement:
    """A replacement whose new name is bound in the function around the edit (a parameter,
    a local) stays in that function: the name means nothing outside it."""
    if rep.kind not in ("rename", "tokens") or rep.member:
        return rep
    name = next((t.text for t in change.new_mid if is_name(t.text)), None)
    if name is None:
        return rep
    scope = after.local_scope(change.line, change.new_span[0], name)
    if (
        scope is None
        and rep.kind == "tokens"
        and len(rep.old) > 1
        and [name] == [t.text for t in change.new_mid]
    ):
        # an expression replaced by a name (`c.Flags()` → `flags`): a variable extracted,
        # which holds in its own function only
        scope = after.function_lines(change.line, change.new_span[0])
        if scope is not None:
            rep = _ruled(rep, "tokens-extract")
    if scope is None:
        return rep
    if rep.scope is not None:
        scope = (max(scope[0], rep.scope[0]), min(scope[1], rep.scope[1]))
    return replace(rep, scope=scope)


def _rename(
    change: LineChange, base: Replacement, before: Syntax, after: Syntax, in_code: bool
) -> Replacement | None:
    old_mid, new_mid = change.old_mid, change.new_mid
    if len(old_mid) != 1 or len(new_mid) != 1:
        return None
    old, new = old_mid[0].text, new_mid[0].text
    if not (is_name(old) and is_name(new)) or before.is_builtin(old):
        return None
    row, (start, end) = change.line, change.new_span
    if not in_code:
        # a word in a comment or a string renames code only where it is one of the file's
        # definitions (a doc comment's first word, a registry's key)
        if not before.defines(old):
            return None
        return _ruled(base, "rename-text", old=(old,), new=new, name=old)
    node = after.identifier_at(row, start, end)
    if after.root is not None and node is None:
        return None  # a keyword, or a name the tree does not see: not a rename
    member = member_before(change.old_tokens, change.prefix)
    following = change.old_tokens[change.prefix + 1 : change.prefix + 3]
    qualifier = [t.text for t in following[:1]] == ["."] and len(following) == 2
    if qualifier and not member and is_name(following[1].text) and not before.binds_in_file(old):
        # `ioutil.ReadAll` → `io.ReadAll`: the member moved, not every use of the package
        return _ruled(
            base,
            "tokens-api",
            old=(old, ".", following[1].text),
            new=f"{new}.{following[1].text}",
            name=old,
        )
    definition = node is not None and after.is_definition(node)
    scope = None if member else before.local_scope(row, change.old_span[0], old)
    siblings: tuple[tuple[int, int], ...] = ()
    if definition and node is not None:
        member = after.defines_member(node)  # a method's uses are `.name`, a function's not
        scope = after.owner_lines(node) or scope
        siblings = after.receiver_siblings(node, old)
    if definition:
        rule = "rename-definition"
    elif _names(before.text, new):
        rule = "rename-switch"
    else:
        rule = "rename-member" if member else "rename-use"
    return _ruled(
        base,
        rule,
        old=(old,),
        new=new,
        name=old,
        member=member,
        definition=definition,
        scope=scope,
        siblings=siblings,
    )


def _names(text: str, name: str) -> bool:
    """Whether `text` holds `name` as a whole word."""
    return re.search(rf"(?<![\w$]){re.escape(name)}(?![\w$])", text) is not None


def _arguments(
    change: LineChange, base: Replacement, before: Syntax, after: Syntax
) -> Replacement | None:
    row = change.line
    new_call = after.call_around(row, *change.new_span)
    old_call = before.call_around(row, *change.old_span)
    if new_call is None or old_call is None or new_call.callee != old_call.callee:
        return None
    argument = argument_change(old_call, new_call)
    if argument is None:
        return None
    return _ruled(
        base,
        f"arguments-{argument.op}",
        callee=new_call.callee,
        name=new_call.name,
        argument=argument,
        span=(new_call.open, new_call.close + 1),
    )


def _tokens(change: LineChange, base: Replacement, before: Syntax) -> Replacement | None:
    old_mid, new_mid = change.old_mid, change.new_mid
    if any(is_literal(t.text) for t in old_mid + new_mid):
        return None
    toks, prefix = change.old_tokens, change.prefix
    old = [t.text for t in old_mid]
    new_text, gaps, rule = change.new_text, None, "tokens-swap"
    member = member_before(toks, prefix)
    if not old_mid:  # an insertion: anchored to a name only when it qualifies it
        inserted = "".join(t.text for t in new_mid)
        right = toks[prefix] if prefix < len(toks) else None
        if not (inserted.endswith(tuple(MEMBER_OPERATORS)) and right and is_name(right.text)):
            return None
        old, new_text, member, rule = [right.text], new_text + right.text, False, "tokens-qualify"
    elif not new_mid:  # a deletion: `self.foo` → `foo`
        deleted = "".join(old)
        right = toks[len(toks) - change.suffix] if change.suffix else None
        if not (deleted.endswith(tuple(MEMBER_OPERATORS)) and right and is_name(right.text)):
            return None
        old, new_text, rule = [*old, right.text], right.text, "tokens-unqualify"
    else:
        if change.spacing_changed:
            new_text, gaps = change.new_gap_text, change.old_gap_text
        new_names = [t.text for t in new_mid]
        if _holds(new_names, old):
            rule = "tokens-wrap"
        elif all(_names(before.text, t) for t in new_names if is_name(t)):
            rule = "tokens-switch"
    if not old_mid:
        names = [toks[prefix]]
    elif not new_mid:
        names = [toks[len(toks) - change.suffix]]
    else:
        names = [t for t in old_mid if is_name(t.text)]
    # names the tree sees as such (not keywords), none the language gives (`string`, `len`)
    names = [t for t in names if not before.is_builtin(t.text)]
    if before.root is not None:
        names = [t for t in names if before.identifier_at(change.line, t.start, t.end)]
    if not names:
        return None
    return _ruled(
        base,
        rule,
        old=tuple(old),
        new=new_text,
        gaps=gaps,
        name=names[0].text,
        member=member,
    )


def _holds(tokens_: list[str], run: list[str]) -> bool:
    k = len(run)
    return any(tokens_[j : j + k] == run for j in range(len(tokens_) - k + 1))


def _ruled(base: Replacement, rule: str, **changes) -> Replacement:
    kind = rule.split("-")[0]
    return replace(base, kind=kind, rule=rule, confidence=CONFIDENCE[rule], **changes)
