"""Where a recognised replacement applies next: the places, nearest first, in the buffer and
then in the files the index links to the edited name.

A place is one line: every occurrence of the old text there that is code (no comment, no
string: syntax.py), whole tokens (`count` is not in `counter`), in the same role (`.name`
where the edit was a member, a bare name where it was not; a definition's rename takes
both), and not already changed (`foo` inside `self.foo` after `foo` → `self.foo`). A rename
local to a function stays in it. In the buffer the edited place itself is skipped and places
are ranked by their distance from the edit; the other files follow, in the order the index's
look-up gives them (search/lookups.py: references; the graph's callers for an argument
change).
"""

from __future__ import annotations

import os
import re
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from ..index.reading import RefusedFile, read_in_root, source_text
from ..lang.languages import language_for
from .arguments import apply_argument
from .edits import (
    CONFIDENCE,
    Replacement,
    around_old,
    changed_already,
    is_name,
    line_tokens,
    member_before,
    tokens,
)
from .syntax import Syntax

if TYPE_CHECKING:
    from ..store import Store

# a place in another file is less sure than one in the buffer
OTHER_FILE = 0.9
# a definition's rename found in the other role (`.name` for a bare `name`, and back)
OTHER_ROLE = 0.9
# an argument change at a call on another object (`ctx.JSON` for `c.JSON`)
OTHER_CALLEE = 0.85
# a renamed method's `.name` at the end of a chain (`self.llm.tokenize`, `self.repo.status`
# for a renamed `tokenize` or `status`): an attribute's method, another object's as often as
# not; kept below the shown threshold
OTHER_RECEIVER = 0.8
_IMPORT_LINE = re.compile(r"^\s*(?:from\s+\S+\s+)?import\b|^\s*(?:export\s+)?import\b")
LINKED_FILES = 20
MAX_FILE_BYTES = 1_000_000


@dataclass(frozen=True)
class NextEditPlace:
    """One line to change next: the old text at byte columns [col, end_col) (0-based, as
    Neovim counts) becomes `new_text`; `new_line` is the whole line after it."""

    path: str
    line: int  # 1-based
    col: int
    end_col: int
    old_text: str
    new_text: str
    new_line: str
    confidence: float
    kind: str  # rename | tokens | arguments | line
    rule: str  # which rule of edits.py found it (edits.CONFIDENCE's key)
    distance: int | None  # lines from the edit; None in another file
    # what the score read (substitute.features), for the bench; not part of the place
    features: tuple[tuple[str, float], ...] = field(default=(), compare=False, repr=False)


def places_in(rep: Replacement, syntax: Syntax, path: str, here: bool) -> list[NextEditPlace]:
    """The places in one file's text; `here`: the edited buffer (the edit is skipped, a local
    rename stays in its function, places are ranked by distance)."""
    if rep.kind in ("rename", "tokens"):
        found = _token_places(rep, syntax, path, here)
    elif rep.kind == "arguments":
        found = _argument_places(rep, syntax, path, here)
    else:
        found = []
    if not found and here:
        found = _line_places(rep, syntax, path)
    found.sort(key=lambda p: (p.distance if p.distance is not None else 0, -p.confidence, p.line))
    return found


def linked_places(
    rep: Replacement,
    store: Store,
    path: str,
    root: str | os.PathLike | None,
    buffers: dict[str, str],
) -> list[NextEditPlace]:
    """The places in the other files the index links to the edited name: a definition's
    references, a called function's callers. Files are read from `buffers` (unsaved text)
    or below `root`."""
    paths = _linked_paths(rep, store, path)
    out: list[NextEditPlace] = []
    for other in paths:
        text = buffers.get(other)
        if text is None and root is not None:
            text = _read(root, other)
        if text is None:
            continue
        out.extend(places_in(rep, Syntax(text, language_for(other)), other, here=False))
    return out


def _linked_paths(rep: Replacement, store: Store, path: str) -> list[str]:
    from ..search.lookups import references

    if rep.kind == "rename" and rep.definition and rep.scope is None:
        hits = [r.path for r in references(store, rep.name, path, top=LINKED_FILES * 3).results]
    elif rep.kind == "arguments":
        hits = [h.path for h in store.graph.callers([rep.name], LINKED_FILES * 3)]
    else:
        return []
    seen: list[str] = []
    for hit in hits:
        if hit != path and hit not in seen and language_for(hit) == language_for(path):
            seen.append(hit)
    return seen[:LINKED_FILES]


def _read(root: str | os.PathLike, rel: str) -> str | None:
    try:
        data = read_in_root(root, rel, MAX_FILE_BYTES)
    except (OSError, RefusedFile):
        return None
    if len(data) > MAX_FILE_BYTES:
        return None
    text, binary = source_text(data)
    return None if binary else text


def _token_places(rep: Replacement, syntax: Syntax, path: str, here: bool) -> list[NextEditPlace]:
    old, first, k = rep.old, rep.old[0], len(rep.old)
    new_toks = [t.text for t in tokens(rep.new)]
    around = around_old(old, new_toks)
    method = rep.member and rep.definition
    out = []
    for row, line in enumerate(syntax.lines):
        if first not in line:
            continue
        if here and rep.scope is not None and not _in_scope(rep, row):
            continue
        toks = line_tokens(syntax, row)
        spans: list[tuple[int, int]] = []
        factor = 1.0
        chained: list[tuple[int, int]] = []  # a method's name at the end of a chain
        for i in range(len(toks) - k + 1):
            if toks[i].text != first or tuple(t.text for t in toks[i : i + k]) != old:
                continue
            start, end = toks[i].start, toks[i + k - 1].end
            if here and row == rep.line and start < rep.span[1] and rep.span[0] < end:
                continue  # the edit itself
            if rep.gaps is not None:  # the spacing changed too: only where it was the same
                start = toks[i - 1].end if i else 0
                end = toks[i + k].start if i + k < len(toks) else len(line)
                if line[start:end] != rep.gaps:
                    continue
            if member_before(toks, i) != rep.member:
                if here or rep.member or not rep.definition:
                    continue
                factor = OTHER_ROLE  # another file's `pkg.name` for a definition's `name`
            elif method:
                if _IMPORT_LINE.match(line):
                    continue  # `from .index.indexer import`: a module's path, no member
            if method and i >= 2 and toks[i - 2].text in syntax.modules:
                if not member_before(toks, i - 2):
                    continue  # `reflect.Value`: a package's, not the renamed field or method
            if around is not None and changed_already(toks, i, k, around):
                continue
            if not syntax.is_code(row, toks[i].start, toks[i + k - 1].end):
                continue
            if rep.kind == "rename" and not rep.member and syntax.is_key(row, start, end):
                continue  # `size=size`, `{size: size}`: the key is no use of the variable
            if method and i >= 3 and toks[i - 3].text == "." and is_name(toks[i - 2].text):
                chained.append((start, end))
                continue
            spans.append((start, end))
        if not spans and chained:
            spans, factor = chained, min(factor, OTHER_RECEIVER)  # only those: less sure
        if not spans:
            continue
        parts, cursor = [], spans[0][0]
        for start, end in spans:
            renamed = rep.new
            # a shorthand property keeps its key: `{value}` → `{value: item}`
            if rep.kind == "rename" and not rep.member and syntax.is_shorthand(row, start, end):
                renamed = f"{line[start:end]}: {rep.new}"
            parts += [line[cursor:start], renamed]
            cursor = end
        new_text = "".join(parts)
        c0, c1 = spans[0][0], spans[-1][1]
        confidence = rep.confidence * factor * (1.0 if here else OTHER_FILE)
        out.append(_place(rep, path, row, line, c0, c1, new_text, confidence, here))
    return out


def _in_scope(rep: Replacement, row: int) -> bool:
    """Whether a local rename reaches this line: its function, or a method of the same Go
    receiver type whose receiver is named alike."""
    assert rep.scope is not None
    return any(start <= row <= end for start, end in (rep.scope, *rep.siblings))


def _argument_places(
    rep: Replacement, syntax: Syntax, path: str, here: bool
) -> list[NextEditPlace]:
    assert rep.argument is not None
    out = []
    for row, line in enumerate(syntax.lines):
        if rep.name not in line:
            continue
        toks = line_tokens(syntax, row)
        for i in range(len(toks) - 1):
            if toks[i].text != rep.name or toks[i + 1].text != "(":
                continue
            call = syntax.call_named_at(row, toks[i].start, toks[i].end)
            if call is None or (here and row == rep.line and call.open == rep.span[0]):
                continue
            if not syntax.is_code(row, toks[i].start, toks[i].end):
                continue
            inner = apply_argument(rep.argument, call, line)
            if inner is None:
                continue
            confidence = rep.confidence * (1.0 if call.callee == rep.callee else OTHER_CALLEE)
            confidence *= 1.0 if here else OTHER_FILE
            new_text = f"({inner})"
            out.append(_place(rep, path, row, line, call.open, call.close + 1, new_text,
                              confidence, here))  # fmt: skip
    return out


def _line_places(rep: Replacement, syntax: Syntax, path: str) -> list[NextEditPlace]:
    """Sibling lines that read as the edited line did: the same new line there."""
    old = rep.old_line
    if not old or old == rep.new_line:
        return []
    if not any(is_name(t.text) and not syntax.is_builtin(t.text) for t in tokens(old)):
        return []  # `});`, `return nil`: too common a line to say it is a sibling
    out = []
    for row, line in enumerate(syntax.lines):
        if row in rep.edited or line.strip() != old:
            continue
        start = len(line) - len(line.lstrip())
        end = len(line.rstrip())
        if syntax.is_code(row, start, end) != rep.in_code:
            continue  # a line of code for a line of a string, or back
        confidence = CONFIDENCE["line"]
        out.append(_place(rep, path, row, line, start, end, rep.new_line, confidence, True, "line"))
    return out


def _place(
    rep: Replacement, path: str, row: int, line: str, start: int, end: int, new_text: str,
    confidence: float, here: bool, kind: str | None = None,
) -> NextEditPlace:  # fmt: skip
    col = len(line[:start].encode("utf-8", "surrogatepass"))
    end_col = len(line[:end].encode("utf-8", "surrogatepass"))
    return NextEditPlace(
        path=path,
        line=row + 1,
        col=col,
        end_col=end_col,
        old_text=line[start:end],
        new_text=new_text,
        new_line=line[:start] + new_text + line[end:],
        confidence=round(confidence, 3),
        kind=kind or rep.kind,
        rule=kind or rep.rule,
        distance=abs(row - rep.line) if here else None,
    )
