"""Whether a suggestion is worth showing: the checks it passes after it is cleaned.

A small model proposes code in the wrong language, code that breaks the buffer's syntax, and
guesses it gives little probability to. Showing those costs the user a read and trust; a
suggestion that is not shown costs nothing. Three gates, each cheap next to generation:

- syntax: the buffer is parsed (tree-sitter, the buffer's language) with and without the
  suggestion in place. Lines that are in error only with it mean it broke something; it is cut
  back line by line to its last valid point, or dropped. Errors the buffer already had, such as
  the unfinished line the user is typing, do not count against it.
- language: a suggestion that breaks the buffer's syntax but parses cleanly in another
  language is in that language (Go in a `.lua` file): it is dropped, not cut.
- confidence: each line's confidence is the geometric mean of its tokens' probabilities under
  greedy decoding. A first line below `min_confidence` is dropped; a later one ends the
  suggestion. The threshold was chosen by measurement (bench/quality.py).

`apply` is pure: the engine calls it on every suggestion, and the benchmark calls it on one
generation with each gate setting.
"""

from __future__ import annotations

import math
import threading
from collections.abc import Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from tree_sitter import Parser

from ..config import DEFAULT_MIN_CONFIDENCE
from ..lang.languages import has_grammar, new_parser

# languages a suggestion may be in instead of the buffer's (grammars of the language pack)
OTHER_LANGUAGES = ("python", "javascript", "typescript", "go", "lua", "rust", "c", "java", "ruby")
# a buffer longer than this is parsed in a window of whole top-level blocks around the cursor
WHOLE_PARSE_LINES = 600
WINDOW_LINES = 120


@dataclass(frozen=True)
class GateSettings:
    syntax: bool = True
    language: bool = True
    min_confidence: float = DEFAULT_MIN_CONFIDENCE  # 0: off


OFF = GateSettings(syntax=False, language=False, min_confidence=0.0)


@dataclass(frozen=True)
class Placement:
    """Where the suggestion goes: the buffer's lines, the 1-based line and the 0-based column
    (characters) of the cursor, and the buffer's grammar name."""

    lines: Sequence[str]
    line: int
    col: int
    language: str | None


@dataclass(frozen=True)
class Verdict:
    text: str  # what is shown; "" when nothing is
    gate: str | None = None  # the gate that changed it: "<gate>-cut" or "<gate>-drop"


def apply(
    text: str, line_confidence: Sequence[float], where: Placement, settings: GateSettings
) -> Verdict:
    """The part of `text` worth showing at `where` under `settings`."""
    if not text:
        return Verdict("")
    gate = None
    if settings.min_confidence > 0 and line_confidence:
        keep = confident_lines(line_confidence, settings.min_confidence)
        lines = text.split("\n")
        if keep == 0:
            return Verdict("", "confidence-drop")
        if keep < len(lines):
            text = _cut("\n".join(lines[:keep]))
            gate = "confidence-cut"
        if not text:
            return Verdict("", "confidence-drop")
    if not (settings.syntax or settings.language) or not has_grammar(where.language):
        return Verdict(text, gate)
    check = SyntaxCheck(where)
    if not check.new_errors(text):
        return Verdict(text, gate)
    if settings.language and check.other_language(text):
        return Verdict("", "language-drop")
    if not settings.syntax:
        return Verdict(text, gate)
    lines = text.split("\n")
    for keep in range(len(lines) - 1, 0, -1):
        shorter = _cut("\n".join(lines[:keep]))
        if shorter and not check.new_errors(shorter):
            return Verdict(shorter, "syntax-cut")
    return Verdict("", "syntax-drop")


def confident_lines(line_confidence: Sequence[float], threshold: float) -> int:
    """How many leading lines are at or above `threshold`."""
    for i, c in enumerate(line_confidence):
        if c < threshold:
            return i
    return len(line_confidence)


def line_confidence(text: str, tokens: Sequence[tuple[int, int, float]]) -> list[float]:
    """The geometric-mean token probability of each line of `text`, from `(start, end,
    logprob)` spans of the tokens that made it. A line's tokens are those that overlap its
    non-blank characters (an indentation or a newline alone says little); a blank line is 1."""
    out: list[float] = []
    start = 0
    for line in text.split("\n"):
        lo = start + len(line) - len(line.lstrip())
        hi = start + len(line.rstrip())
        lps = [lp for s, e, lp in tokens if s < hi and e > lo] if hi > lo else []
        out.append(math.exp(sum(lps) / len(lps)) if lps else 1.0)
        start += len(line) + 1
    return out


def _cut(text: str) -> str:
    return text.rstrip() if text.strip() else ""


class SyntaxCheck:
    """The buffer's error lines without a suggestion, computed once, against which each
    candidate (the suggestion, then its shorter forms) is compared."""

    def __init__(self, where: Placement):
        self.where = where
        lines = list(where.lines) or [""]
        row = min(max(where.line, 1), len(lines)) - 1
        first, last = _window(lines, row)
        self.lines = lines[first:last]
        self.row = row - first
        self.col = min(where.col, len(self.lines[self.row]))
        spans = error_spans("\n".join(self.lines), where.language or "")
        self.base = {r for first, last in spans for r in range(first, last + 1)}
        # the error holding the line being typed, if it is unfinished: its last row
        self.typing_last = max(
            (last for first, last in spans if first <= self.row <= last), default=None
        )

    def new_errors(self, text: str) -> set[int]:
        """Lines in error with `text` in place that were not (moved by its newlines) without.
        Where the line being typed is already in error (unfinished), the error that holds it
        is the user's: a one-line suggestion may leave it unfinished, however far
        tree-sitter's recovery then stretches it; a longer one may not stretch it further."""
        current = self.lines[self.row]
        placed = self.lines[: self.row] + [current[: self.col] + text + current[self.col :]]
        source = "\n".join(placed + self.lines[self.row + 1 :])
        added = text.count("\n")
        moved = {r if r <= self.row else r + added for r in self.base}
        rows: set[int] = set()
        for first, last in error_spans(source, self.where.language or ""):
            if self.typing_last is not None and first <= self.row <= last:
                if added == 0:
                    continue
                limit = self.typing_last + added if self.typing_last > self.row else self.row
                rows.update(range(max(first, limit + 1), last + 1))
            else:
                rows.update(range(first, last + 1))
        return rows - moved

    def other_language(self, text: str) -> str | None:
        """Another language `text` parses cleanly in, when the buffer's does not parse it."""
        if not error_lines(text, self.where.language or ""):
            return None
        if len(text.strip()) < 8:  # too short to say
            return None
        for language in OTHER_LANGUAGES:
            if language != self.where.language and not error_lines(text, language):
                return language
        return None


def _window(lines: list[str], row: int) -> tuple[int, int]:
    """The lines parsed for a check: all of a short buffer; in a long one, from a top-level
    line (no indentation) at least WINDOW_LINES above the cursor to one as far below."""
    if len(lines) <= WHOLE_PARSE_LINES:
        return 0, len(lines)
    first = max(0, row - WINDOW_LINES)
    while first > 0 and not _top_level(lines[first]):
        first -= 1
    last = min(len(lines), row + WINDOW_LINES)
    while last < len(lines) and not _top_level(lines[last]):
        last += 1
    return first, last


def _top_level(line: str) -> bool:
    return bool(line) and not line[0].isspace() and line[0] not in ")]}"


_parsers = threading.local()


def error_lines(source: str, language: str) -> set[int]:
    """0-based rows covered by tree-sitter's ERROR nodes or holding a MISSING node."""
    return {row for first, last in error_spans(source, language) for row in range(first, last + 1)}


def error_spans(source: str, language: str) -> list[tuple[int, int]]:
    """(first, last) 0-based rows of each outermost ERROR node and each MISSING node."""
    parser = _parser(language)
    if parser is None:
        return []
    tree = parser.parse(source.encode("utf-8", "surrogatepass"))
    spans: list[tuple[int, int]] = []
    stack = [tree.root_node]
    while stack:
        node = stack.pop()
        if node.is_missing:
            spans.append((node.start_point[0], node.start_point[0]))
        elif node.is_error:
            spans.append((node.start_point[0], node.end_point[0]))
            continue
        if node.has_error:
            stack.extend(node.children)
    return spans


def _parser(language: str) -> Parser | None:
    """A parser per thread and language (a tree-sitter Parser is not safe to share)."""
    cache: dict[str, Parser | None] | None = getattr(_parsers, "cache", None)
    if cache is None:
        cache = _parsers.cache = {}
    if language not in cache:
        if not has_grammar(language):
            cache[language] = None
        else:
            cache[language] = new_parser(language)
    return cache[language]
