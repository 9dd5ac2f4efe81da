"""The buffer around the cursor, read the way the trigger and the query need it.

`CursorView.of` clamps a cursor beyond the end of a line or of the buffer (the editor can send
one after a deletion), converts Neovim's byte column to a character index, parses the buffer
with tree-sitter, and extracts what the trigger rules look at: the identifiers near the
cursor, the word being typed, the callee of an unclosed call, the object of an attribute
access, whether an import is being written, and the function the cursor is in.

Keystrokes arrive on the same buffer, so `BufferAnalyses` keeps the last analyses: while only
the cursor's line changes (typing within a line, most keystrokes) the file's analysis is
reused as it is, the current line read from the text itself; otherwise the previous tree is
edited and parsed again incrementally. A Django file of 100 KB then costs no parse per
keystroke instead of several milliseconds (bench/results/methods.md).
"""

from __future__ import annotations

import re
from collections import OrderedDict
from dataclasses import dataclass, field

from tree_sitter import Tree

from ..lang.chunking import FileAnalysis, analyze_file
from ..lang.languages import has_grammar, language_for
from ..lang.literals import line_state
from ..lang.scopes import Scope, analyze_scope
from ..lang.symbols import parse_tree
from ..lang.text import cursor_in, split_lines
from ..lang.typefacts import Chain, FileFacts, chain_before, file_facts

_IDENT = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")
_TRAILING_WORD = re.compile(r"[A-Za-z_][A-Za-z0-9_]*$")
_ATTRIBUTE = re.compile(r"([A-Za-z_][A-Za-z0-9_]*)\s*(?:\.|::|->|:)\s*([A-Za-z_][A-Za-z0-9_]*)?$")
_IMPORT_LINE = re.compile(
    r"^\s*(?:import\b|from\s+\S*\s*(?:import\b)?|#include\b|use\s|"
    r".*\brequire\s*\(\s*['\"])"
)
_CALL_LOOKBACK_LINES = 5
# Identifiers on the cursor's line only: the next tokens belong to the statement being typed;
# a name used a line above was already written without help (an open call is followed back
# over several lines separately, see _find_callee).
_NEAR_LINES = 0
_TAIL_CHARS = 400


@dataclass
class CursorView:
    path: str
    language: str | None
    lines: list[str]
    line: int  # 1-based, clamped
    char_col: int  # character index in the line, clamped
    analysis: FileAnalysis
    scope: Scope
    before: str = ""  # the current line up to the cursor
    partial: str = ""  # the identifier being typed at the cursor
    near: list[str] = field(default_factory=list)  # identifiers near the cursor, in order
    callee: str | None = None
    callee_base: str | None = None
    attr_base: str | None = None  # `X` in `X.` or `X.att` at the cursor
    writing_import: bool = False
    in_comment_or_string: bool = False
    enclosing: str | None = None  # qualname of the innermost definition around the cursor
    # `conn.cur`, `self.a.b().`, or `conn.execute(` with the cursor in its arguments: the
    # expression before the dot as a chain, and the member after it (typed so far, or called)
    receiver_chain: Chain | None = None
    member: str = ""
    receiver_col: int | None = None  # byte offset of the receiver's last character (`obj.`)
    source: bytes = b""

    analyzed: _Analyzed | None = None

    @classmethod
    def of(
        cls, path: str, text: str, line: int, col: int, cache: BufferAnalyses | None = None
    ) -> CursorView:
        language = language_for(path)
        lines = split_lines(text) or [""]
        line, char_col = cursor_in(lines, line, col)
        analyzed = (cache or BufferAnalyses(1)).analyze(path, language, text, lines, line)
        view = cls(
            path,
            language,
            lines,
            line,
            char_col,
            analyzed.analysis,
            analyzed.scope,
            source=analyzed.source,
            analyzed=analyzed,
        )
        view._read_cursor()
        return view

    def facts(self) -> FileFacts | None:
        """The type facts of this buffer (lang/typefacts), from the same tree."""
        return self.analyzed.facts() if self.analyzed is not None else None

    def _read_cursor(self) -> None:
        current = self.lines[self.line - 1]
        self.before = before = current[: self.char_col]
        # Patterns only look at the end of the line: a 100 KB minified line must not make
        # a backtracking regex quadratic on the keystroke path.
        state = line_state(before[-4 * _TAIL_CHARS :], self.language)
        if state is None:
            self.in_comment_or_string = _in_comment_or_string(before, self.language)
            tail = before[-_TAIL_CHARS:]
        else:
            # in an f-string's `{...}` (a template literal's `${...}`) the cursor is in code:
            # the words read around it are the interpolation's, not the string's
            self.in_comment_or_string = state.kind != "code"
            tail = before[-4 * _TAIL_CHARS :][state.code_start :][-_TAIL_CHARS:]
        m = _TRAILING_WORD.search(tail)
        self.partial = m.group(0) if m else ""
        above = self.lines[max(0, self.line - 1 - _NEAR_LINES) : self.line - 1]
        near_text = "\n".join([a[-_TAIL_CHARS:] for a in above] + [tail])
        self.near = list(dict.fromkeys(_IDENT.findall(_strip_strings(near_text))))
        self.writing_import = bool(_IMPORT_LINE.match(before[:_TAIL_CHARS]))
        attr = _ATTRIBUTE.search(tail)
        if attr and (attr.group(2) is None or attr.group(2) == self.partial):
            self.attr_base = attr.group(1)
        stem = _strip_strings(tail[: len(tail) - len(self.partial)]).rstrip()
        for sep in ("?.", ".", "->"):
            if stem.endswith(sep) and not stem.endswith(".."):
                self.receiver_chain = chain_before(stem[: -len(sep)].rstrip())
                self.member = self.partial
                end = len(before) - len(self.partial)
                end = len(before[:end].rstrip()) - len(sep)
                end = len(before[:end].rstrip()) - 1
                self.receiver_col = len(before[:end].encode("utf-8")) if end >= 0 else None
                break
        self._find_callee()
        self.enclosing = self._enclosing_definition()

    def _find_callee(self) -> None:
        """The name before the innermost unclosed "(" within the last few lines."""
        start = max(0, self.line - _CALL_LOOKBACK_LINES)
        text = "\n".join(self.lines[start : self.line - 1] + [self.before])[-4 * _TAIL_CHARS :]
        text = _strip_strings(text)
        depth = 0
        for i in range(len(text) - 1, -1, -1):
            ch = text[i]
            if ch in ")]}":
                depth += 1
            elif ch in "([{":
                if depth == 0:
                    if ch != "(":
                        return
                    m = re.search(
                        r"([A-Za-z_][A-Za-z0-9_]*)\s*(?:\.|::|->)\s*"
                        r"([A-Za-z_][A-Za-z0-9_]*)\s*$|([A-Za-z_][A-Za-z0-9_]*)\s*$",
                        text[max(0, i - 200) : i],
                    )
                    if m:
                        if m.group(2):
                            self.callee, self.callee_base = m.group(2), m.group(1)
                        else:
                            self.callee = m.group(3)
                    chain = chain_before(text[:i].rstrip())
                    if chain and len(chain) > 1 and self.receiver_chain is None:
                        self.receiver_chain, self.member = chain[:-1], chain[-1][0]
                    return
                depth -= 1

    def _enclosing_definition(self) -> str | None:
        best = None
        for chunk in self.analysis.chunks:
            if chunk.qualname and chunk.start_line <= self.line <= chunk.end_line:
                if (
                    best is None
                    or chunk.end_line - chunk.start_line < best.end_line - best.start_line
                ):
                    best = chunk
        return best.qualname if best else None

    def prefix_text(self, max_chars: int) -> str:
        """The text before the cursor, at most `max_chars`, cut back to whole lines and
        without the half-typed statement on the cursor's line."""
        above = "\n".join(self.lines[: self.line - 1])
        text = above[-max_chars:]
        if len(above) > max_chars and "\n" in text:
            text = text.split("\n", 1)[1]
        return text

    def called_in_enclosing(self) -> list[str]:
        """Names called inside the definition around the cursor (its callees)."""
        for i, chunk in enumerate(self.analysis.chunks):
            if chunk.qualname == self.enclosing:
                return [
                    r.name for r, idx in self.analysis.references if idx == i and r.kind == "call"
                ]
        return []


_STRING = re.compile(r"'''.*?'''|\"\"\".*?\"\"\"|'(?:\\.|[^'\\\n])*'|\"(?:\\.|[^\"\\\n])*\"", re.S)


def _strip_strings(text: str) -> str:
    return _STRING.sub('""', text)


def _in_comment_or_string(before: str, language: str | None) -> bool:
    stripped = _strip_strings(before)
    if stripped.count('"') % 2 or stripped.count("'") % 2:
        return True
    markers = ("#",) if language in ("python", "ruby") else ("//",) if language else ("#", "//")
    if language == "lua":
        markers = ("--",)
    return any(m in stripped for m in markers)


class _Analyzed:
    """One analysis of a buffer: the tree, its chunks and references, its scope, and (made
    when first asked for) its type facts, all from the same source bytes."""

    def __init__(
        self,
        key: tuple,
        tree: Tree | None,
        source: bytes,
        analysis: FileAnalysis,
        scope: Scope,
        language: str | None,
    ):
        self.key, self.tree, self.source = key, tree, source
        self.analysis, self.scope, self.language = analysis, scope, language
        self._facts: FileFacts | None = None
        self._facts_done = False

    def facts(self) -> FileFacts | None:
        if not self._facts_done:
            self._facts = file_facts(self.analysis.root, self.source, self.language)
            self._facts_done = True
        return self._facts


class BufferAnalyses:
    """The last analysis of each of a few buffers (see the module docstring)."""

    def __init__(self, size: int = 8):
        self.size = size
        self._last: OrderedDict[str, _Analyzed] = OrderedDict()

    def analyze(
        self, path: str, language: str | None, text: str, lines: list[str], line: int
    ) -> _Analyzed:
        # The key leaves the cursor's line out: typing in it does not change the rest.
        key = (
            language,
            len(lines),
            line,
            hash("\n".join(lines[: line - 1])),
            hash("\n".join(lines[line:])),
        )
        last = self._last.get(path)
        if last is not None and last.key == key:
            self._last.move_to_end(path)
            return last
        analyzed = _analyze(key, language, text, last)
        if not _inside_definition(analyzed, line):
            # A half-typed condition or call (`if (!(a || (b = view.`) can make tree-sitter's
            # error recovery drop the function around the cursor, and the types of its
            # parameters with it: parse again with the cursor line's brackets closed. Only
            # then, since a line of a multi-line call is balanced by the lines below it.
            closed = _with_brackets_closed(text, lines, line)
            if closed is not None:
                again = _analyze(key, language, closed, None)
                if _inside_definition(again, line):
                    analyzed = again
        self._last[path] = analyzed
        self._last.move_to_end(path)
        if len(self._last) > self.size:
            self._last.popitem(last=False)
        return analyzed


def _analyze(key: tuple, language: str | None, text: str, last: _Analyzed | None) -> _Analyzed:
    """Parse `text` (incrementally from `last`'s tree when there is one) and analyse it."""
    source = text.encode("utf-8", "surrogatepass")
    tree = None
    if has_grammar(language):
        old = None
        if last is not None and last.tree is not None and last.language == language:
            old = last.tree.copy()
            _edit(old, last.source, source)
        tree = parse_tree(source, language, old)
    analysis = analyze_file(text, language, root=tree.root_node if tree else None)
    names = {c.name for c in analysis.chunks if c.name}
    scope = analyze_scope(
        analysis.root, source, language, names, [r for r, _ in analysis.references]
    )
    return _Analyzed(key, tree, source, analysis, scope, language)


def _inside_definition(analyzed: _Analyzed, line: int) -> bool:
    return any(c.qualname and c.start_line <= line <= c.end_line for c in analyzed.analysis.chunks)


_OPENERS, _CLOSERS = "([{", ")]}"


def _with_brackets_closed(text: str, lines: list[str], line: int) -> str | None:
    """`text` with the brackets left open on line `line` closed at its end, or None when
    there are none (or the line closes one opened above it, or holds an open string)."""
    current = lines[line - 1]
    stripped = _strip_strings(current)
    if stripped.count('"') % 2 or stripped.count("'") % 2:
        return None
    stack: list[str] = []
    for ch in stripped:
        if ch in _OPENERS:
            stack.append(ch)
        elif ch in _CLOSERS:
            if not stack or _OPENERS.index(stack[-1]) != _CLOSERS.index(ch):
                return None
            stack.pop()
    if not stack:
        return None
    end = sum(len(x) + 1 for x in lines[: line - 1]) + len(current)
    if text[end - len(current) : end] != current:
        return None  # line ends other than "\n": leave it
    closers = "".join(_CLOSERS[_OPENERS.index(c)] for c in reversed(stack))
    return text[:end] + closers + text[end:]


def _edit(tree: Tree, old: bytes, new: bytes) -> None:
    """Tell `tree` (of `old`) which bytes changed to make `new`: one span, found as the
    longest common prefix and suffix (compared a block at a time, in C)."""
    start = _common_prefix(old, new)
    end = _common_suffix(old, new, min(len(old), len(new)) - start)
    tree.edit(
        start_byte=start,
        old_end_byte=len(old) - end,
        new_end_byte=len(new) - end,
        start_point=_point(old, start),
        old_end_point=_point(old, len(old) - end),
        new_end_point=_point(new, len(new) - end),
    )


def _common_prefix(a: bytes, b: bytes, step: int = 4096) -> int:
    n = min(len(a), len(b))
    i = 0
    while i + step <= n and a[i : i + step] == b[i : i + step]:
        i += step
    stop = min(i + step, n)
    while i < stop and a[i] == b[i]:
        i += 1
    return i


def _common_suffix(a: bytes, b: bytes, limit: int, step: int = 4096) -> int:
    k = 0
    while (
        k + step <= limit and a[len(a) - k - step : len(a) - k] == b[len(b) - k - step : len(b) - k]
    ):
        k += step
    stop = min(k + step, limit)
    while k < stop and a[len(a) - 1 - k] == b[len(b) - 1 - k]:
        k += 1
    return k


def _point(source: bytes, offset: int) -> tuple[int, int]:
    row = source.count(b"\n", 0, offset)
    return row, offset - (source.rfind(b"\n", 0, offset) + 1)
