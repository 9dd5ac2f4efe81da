"""The buffer around the cursor, read the way the trigger and the query need it.

`CursorView.of` clamps a cursor beyond the end of a line or of the buffer (the editor can send
one after a deletion), converts Neovim's byte column to a character index, parses the buffer
once with tree-sitter, and extracts what the trigger rules look at: the identifiers near the
cursor, the word being typed, the callee of an unclosed call, the object of an attribute
access, whether an import is being written, and the function the cursor is in.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field

from ..index.chunking import FileAnalysis, analyze_file, split_lines
from ..lang.languages import language_for
from ..lang.scopes import Scope, analyze_scope

_IDENT = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")
_TRAILING_WORD = re.compile(r"[A-Za-z_][A-Za-z0-9_]*$")
_ATTRIBUTE = re.compile(r"([A-Za-z_][A-Za-z0-9_]*)\s*(?:\.|::|->|:)\s*([A-Za-z_][A-Za-z0-9_]*)?$")
_IMPORT_LINE = re.compile(r"^\s*(?:import\b|from\s+\S*\s*(?:import\b)?|#include\b|use\s|"
                          r".*\brequire\s*\(\s*['\"])")
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

    @classmethod
    def of(cls, path: str, text: str, line: int, col: int) -> CursorView:
        language = language_for(path)
        lines = split_lines(text) or [""]
        line = min(max(line, 1), len(lines))
        current = lines[line - 1]
        raw = current.encode("utf-8")
        char_col = len(raw[: max(col, 0)].decode("utf-8", "ignore"))
        analysis = analyze_file(text, language)
        source = text.encode("utf-8", "surrogatepass")
        root = analysis.root
        names = {c.name for c in analysis.chunks if c.name}
        scope = analyze_scope(root, source, language, names, [r for r, _ in analysis.references])
        view = cls(path, language, lines, line, char_col, analysis, scope)
        view._read_cursor()
        return view

    def _read_cursor(self) -> None:
        current = self.lines[self.line - 1]
        self.before = before = current[: self.char_col]
        # Patterns only look at the end of the line: a 100 KB minified line must not make
        # a backtracking regex quadratic on the keystroke path.
        tail = before[-_TAIL_CHARS:]
        m = _TRAILING_WORD.search(tail)
        self.partial = m.group(0) if m else ""
        above = self.lines[max(0, self.line - 1 - _NEAR_LINES): self.line - 1]
        near_text = "\n".join([a[-_TAIL_CHARS:] for a in above] + [tail])
        self.near = list(dict.fromkeys(_IDENT.findall(_strip_strings(near_text))))
        self.writing_import = bool(_IMPORT_LINE.match(before[:_TAIL_CHARS]))
        self.in_comment_or_string = _in_comment_or_string(before, self.language)
        attr = _ATTRIBUTE.search(tail)
        if attr and (attr.group(2) is None or attr.group(2) == self.partial):
            self.attr_base = attr.group(1)
        self._find_callee()
        self.enclosing = self._enclosing_definition()

    def _find_callee(self) -> None:
        """The name before the innermost unclosed "(" within the last few lines."""
        start = max(0, self.line - _CALL_LOOKBACK_LINES)
        text = "\n".join(self.lines[start: self.line - 1] + [self.before])[-4 * _TAIL_CHARS:]
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
                    m = re.search(r"([A-Za-z_][A-Za-z0-9_]*)\s*(?:\.|::|->)\s*"
                                  r"([A-Za-z_][A-Za-z0-9_]*)\s*$|([A-Za-z_][A-Za-z0-9_]*)\s*$",
                                  text[max(0, i - 200):i])
                    if m:
                        if m.group(2):
                            self.callee, self.callee_base = m.group(2), m.group(1)
                        else:
                            self.callee = m.group(3)
                    return
                depth -= 1

    def _enclosing_definition(self) -> str | None:
        best = None
        for chunk in self.analysis.chunks:
            if chunk.qualname and chunk.start_line <= self.line <= chunk.end_line:
                if best is None or chunk.end_line - chunk.start_line < best.end_line - best.start_line:
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
                return [r.name for r, idx in self.analysis.references
                        if idx == i and r.kind == "call"]
        return []


_STRING = re.compile(r"'''.*?'''|\"\"\".*?\"\"\"|'(?:\\.|[^'\\\n])*'|\"(?:\\.|[^\"\\\n])*\"",
                     re.S)


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
