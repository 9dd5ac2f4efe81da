"""Cutting a file into chunks: one per symbol where a grammar exists, line windows elsewhere.

- functions, methods, constants and types: their own lines (decorators included; a leading
  doc comment is the chunk's `doc`, and its lines make no window of their own: they are the
  chunk's `lead`, the raw lines above it, which exact-string search reads as grep would);
  a body longer than `SPLIT_CHARS` is cut into windows that all carry the symbol's name;
- containers (class, impl, module, namespace): an outline, the header plus each member's
  signature; the chunk's line range is the header only, so a search hit on a class chunk
  never claims a method's lines. A container's other lines (a field's value, a comment between
  methods, `spa = this.safeParseAsync`) are windows of their own, as the module's are: zod's
  `types.ts` lost 308 lines when the class's whole span counted as covered. Those of a
  function or an object literal with members (JS/TS, symbols.py) carry its name, being its
  code; an object literal short enough for one chunk stays whole;
- lines covered by no symbol (imports, module code) and files without a grammar: windows of
  about `WINDOW_CHARS` cut at line boundaries with `OVERLAP_CHARS` of overlap. A window always
  starts after the previous one, and one long line is cut into pieces, so a 200 KB line
  cannot loop or produce a 200 KB chunk.

Every symbol chunk is made of whole lines, so symbols that share a line each repeat it: a
minified file of one 950 KB line and 6,638 functions asked for 6 GB of chunks. The chunks of a
file may hold at most `MAX_CHUNK_FACTOR` times its text (plus `CHUNK_SLACK_CHARS`); a file
that would need more is cut into plain windows instead (`FileAnalysis.coarse`), which hold
about its size once.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, replace

from tree_sitter import Node

from .languages import has_grammar
from .references import Reference, extract_references
from .symbols import Symbol, extract_symbols, parse
from .text import split_lines

CHARS_PER_TOKEN = 4
WINDOW_CHARS = 700 * CHARS_PER_TOKEN
OVERLAP_CHARS = 80 * CHARS_PER_TOKEN
SPLIT_CHARS = 2 * WINDOW_CHARS
MAX_CHUNK_FACTOR = 4
CHUNK_SLACK_CHARS = 16 * WINDOW_CHARS
# containers whose lines outside their members are their own code, named as they are
_NAMED_REST = frozenset({"function", "constant"})
# a line that only closes what its container opened: no window of its own
_CLOSERS = re.compile(r"^\s*(?:[)\]};,]*|end)\s*$")
# Bump it when what the chunker names or cuts changes (here or in symbols.py): an index made by
# another version reads and cuts every file again on its next run (index/indexer.py).
# tests/test_chunking.py fingerprints what an index stores of its sample files and fails on a
# change made without a bump.
# 2: TS/JS object literals, cast arrows, class fields, nested functions; 3: doc comments
# belong to their definition (no window of their own); 4: a chunk's content hash is the key of
# what is embedded of it (embed/passage.py), so vectors of older doc comments and names go;
# 5: a doc comment's tag lines (`@param`) are not embedded. The keys are made when a file is
# cut, so a change to what embed/passage.py embeds bumps this too. 6: module-level bindings
# (`const cuid2Regex`, Go's package `var`s) and the functions of curried arrows are symbols;
# 7: not in a file with more than symbols.MAX_BINDINGS of them (a table of data); 8: a
# definition's doc comment lines are kept as its chunk's `lead` (exact-string search).
CHUNKER_VERSION = 8


@dataclass(frozen=True)
class Chunk:
    start_line: int  # 1-based, inclusive
    end_line: int
    kind: str  # function, method, class, ..., or "code" / "text" for windows
    text: str
    name: str | None = None
    qualname: str | None = None
    signature: str | None = None
    doc: str | None = None
    # the definition's doc comment as written, the lines right above `start_line` that no
    # chunk holds (`doc` is its prose): what exact-string search reads there (a Go, Rust or
    # JSDoc comment was in no chunk's text, so a phrase grep finds in it was not found)
    lead: str | None = None


@dataclass(frozen=True)
class FileAnalysis:
    chunks: list[Chunk]
    # references with the index (into `chunks`) of the innermost chunk holding their line
    references: list[tuple[Reference, int | None]]
    root: Node | None = None  # the syntax tree, for callers that look further
    coarse: bool = False  # symbols would have cost too much text: plain windows instead


def chunk_file(text: str, language: str | None) -> list[Chunk]:
    """All chunks of a file, in source order."""
    return analyze_file(text, language, references=False).chunks


def analyze_file(
    text: str, language: str | None, references: bool = True, root: Node | None = None
) -> FileAnalysis:
    """Chunks and (where a grammar exists) references, from one parse of the file (or from
    `root`, a tree the caller already has for this text)."""
    lines = split_lines(text)
    if not lines:
        return FileAnalysis([], [], None)
    source = text.encode("utf-8", "surrogatepass")
    if root is None and has_grammar(language):
        root = parse(source, language)
    symbols = (
        extract_symbols(source, language, root) if root is not None and language is not None else []
    )
    budget = MAX_CHUNK_FACTOR * len(text) + CHUNK_SLACK_CHARS
    coarse = False
    try:
        chunks = _chunks(lines, symbols, language, _Budget(budget))
    except _OverBudget:
        chunks, coarse = _windows(lines, 1, len(lines), "code"), True
    refs: list[tuple[Reference, int | None]] = []
    if references and root is not None and language is not None:
        owner = _line_owners(chunks, len(lines))
        refs = [
            (r, owner[r.line] if r.line < len(owner) else None)
            for r in extract_references(root, source, language)
        ]
    return FileAnalysis(chunks, refs, root, coarse)


def _line_owners(chunks: list[Chunk], n_lines: int) -> list[int | None]:
    """For each line, the index of the smallest chunk that covers it."""
    owner: list[int | None] = [None] * (n_lines + 2)
    spans = sorted(
        range(len(chunks)), key=lambda i: chunks[i].start_line - chunks[i].end_line
    )  # widest first
    for i in spans:
        c = chunks[i]
        for line in range(c.start_line, min(c.end_line, n_lines) + 1):
            owner[line] = i
    return owner


class _OverBudget(Exception):
    pass


class _Budget:
    """Characters of chunk text a file may still have."""

    def __init__(self, chars: int):
        self.left = chars

    def take(self, chunks: list[Chunk]) -> list[Chunk]:
        self.left -= sum(len(c.text) + len(c.lead or "") for c in chunks)
        if self.left < 0:
            raise _OverBudget
        return chunks


def _chunks(
    lines: list[str], symbols: list[Symbol], language: str | None, budget: _Budget
) -> list[Chunk]:
    if not symbols:
        return _windows(lines, 1, len(lines), "code" if has_grammar(language) else "text")
    chunks: list[Chunk] = []
    covered = [False] * (len(lines) + 2)
    stack = list(reversed(symbols))
    while stack:
        sym = stack.pop()
        start, end = sym.start_line, min(sym.end_line, len(lines))
        for i in range(_first_line(sym), start):
            covered[i] = True  # its doc comment: in the chunk's doc, no window of its own
        lead = "\n".join(lines[_first_line(sym) - 1 : start - 1]) or None
        if sym.is_container and not _whole(sym, lines, start, end):
            outline = _outline(sym, lines)
            chunks.extend(budget.take([replace(outline, lead=lead)]))
            for i in range(start, outline.end_line + 1):
                covered[i] = True
            for first, last in _gaps(sym, outline.end_line + 1, end):
                empty = all(_CLOSERS.match(x) for x in lines[first - 1 : last])
                if sym.kind in _NAMED_REST and not empty:
                    chunks.extend(budget.take(_named_windows(sym, lines, first, last)))
                elif not empty:
                    continue  # a class's own lines: windows with the module's, below
                for i in range(first, last + 1):
                    covered[i] = True
            stack.extend(reversed(sym.members))
        else:
            for i in range(start, end + 1):
                covered[i] = True
            made = _symbol_chunks(sym, lines, start, end)
            if made:  # its first chunk is the one below the doc comment
                made[0] = replace(made[0], lead=lead)
            chunks.extend(budget.take(made))
    chunks.extend(_uncovered_windows(lines, covered))
    chunks.sort(key=lambda c: (c.start_line, c.end_line))
    return chunks


def _whole(sym: Symbol, lines: list[str], start: int, end: int) -> bool:
    """An object literal short enough to be one chunk: its members stay in it."""
    return sym.split_if_long and len("\n".join(lines[start - 1 : end])) <= SPLIT_CHARS


def _gaps(sym: Symbol, first: int, last: int) -> list[tuple[int, int]]:
    """The runs of lines first..last that none of `sym`'s members spans."""
    taken = [False] * (last - first + 2)
    for m in sym.members:
        for i in range(max(_first_line(m), first), min(m.end_line, last) + 1):
            taken[i - first] = True
    runs: list[tuple[int, int]] = []
    i = first
    while i <= last:
        if taken[i - first]:
            i += 1
            continue
        j = i
        while j + 1 <= last and not taken[j + 1 - first]:
            j += 1
        runs.append((i, j))
        i = j + 1
    return runs


def _first_line(sym: Symbol) -> int:
    """The first line a definition owns: its doc comment's, where one was taken as its doc."""
    return min(sym.doc_start_line or sym.start_line, sym.start_line)


def _symbol_chunks(sym: Symbol, lines: list[str], start: int, end: int) -> list[Chunk]:
    body = "\n".join(lines[start - 1 : end])
    if len(body) <= SPLIT_CHARS:
        return [Chunk(start, end, sym.kind, body, **_meta(sym))]
    return _named_windows(sym, lines, start, end)


def _named_windows(sym: Symbol, lines: list[str], start: int, end: int) -> list[Chunk]:
    return [
        Chunk(w.start_line, w.end_line, sym.kind, w.text, **_meta(sym))
        for w in _windows(lines, start, end, sym.kind)
    ]


def _meta(sym: Symbol) -> dict:
    return dict(name=sym.name, qualname=sym.qualname, signature=sym.signature, doc=sym.doc)


def _outline(sym: Symbol, lines: list[str]) -> Chunk:
    """Header lines of a container plus one signature line per member."""
    first_member = min((m.start_line for m in sym.members), default=sym.end_line + 1)
    header_end = max(sym.start_line, min(first_member - 1, sym.end_line))
    # a header longer than the outline holds keeps only the lines it shows; the rest are gaps
    size = len(lines[sym.start_line - 1]) + 1
    for i in range(sym.start_line + 1, header_end + 1):
        size += len(lines[i - 1]) + 1
        if size > SPLIT_CHARS:
            header_end = i - 1
            break
    header = lines[sym.start_line - 1 : header_end]
    indent = ""
    if sym.members:
        member_line = lines[sym.members[0].start_line - 1]
        indent = member_line[: len(member_line) - len(member_line.lstrip())]
    outline = header + [f"{indent}{m.signature} ..." for m in sym.members]
    text = "\n".join(outline)
    if len(text) > SPLIT_CHARS:
        text = text[:SPLIT_CHARS]
    return Chunk(
        sym.start_line,
        header_end,
        sym.kind,
        text,
        name=sym.name,
        qualname=sym.qualname,
        signature=sym.signature,
        doc=sym.doc,
    )


def _uncovered_windows(lines: list[str], covered: list[bool]) -> list[Chunk]:
    out: list[Chunk] = []
    i = 1
    n = len(lines)
    while i <= n:
        if covered[i]:
            i += 1
            continue
        j = i
        while j + 1 <= n and not covered[j + 1]:
            j += 1
        if any(lines[k - 1].strip() for k in range(i, j + 1)):
            out.extend(_windows(lines, i, j, "code"))
        i = j + 1
    return out


def _windows(lines: list[str], first: int, last: int, kind: str) -> list[Chunk]:
    """Line windows over lines[first..last] (1-based, inclusive); see the module docstring."""
    out: list[Chunk] = []
    start = first
    while start <= last:
        line = lines[start - 1]
        if len(line) > WINDOW_CHARS:
            # One long line: pieces of it, each its own chunk on that line number.
            for offset in range(0, len(line), WINDOW_CHARS - OVERLAP_CHARS):
                piece = line[offset : offset + WINDOW_CHARS]
                out.append(Chunk(start, start, kind, piece))
                if offset + WINDOW_CHARS >= len(line):
                    break
            start += 1
            continue
        size = 0
        end = start
        while end <= last and (end == start or size + len(lines[end - 1]) + 1 <= WINDOW_CHARS):
            if len(lines[end - 1]) > WINDOW_CHARS:
                break
            size += len(lines[end - 1]) + 1
            end += 1
        end -= 1  # last line included
        text = "\n".join(lines[start - 1 : end])
        if text.strip():
            out.append(Chunk(start, end, kind, text))
        if end >= last:
            break
        # Next window starts so that about OVERLAP_CHARS are shared, but always moves forward.
        back = 0
        nxt = end + 1
        while nxt - 1 > start + 1 and back + len(lines[nxt - 2]) + 1 <= OVERLAP_CHARS:
            back += len(lines[nxt - 2]) + 1
            nxt -= 1
        start = max(nxt, start + 1)
    return out
