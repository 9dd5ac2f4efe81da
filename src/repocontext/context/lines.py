"""The lines the repository has written, for the completion to copy: a line begun the way
another file's line begins is likely to go on the same way (`logger = logging.getLogger(` →
the project's own logger name, `from .console import` → what the project imports from it).
A cache language model of the project (Hellendoorn & Devanbu, FSE 2017) at the grain a typist
accepts, a line; complete/steering/lines.py's `LineSource` mixes it into the model's next
token.

Kept in memory per index handle: each source file's stripped lines counted, and the distinct
lines sorted for a prefix look-up. Read from the index's chunks (the lines the index holds,
not the disk), and read again only for the files whose content hash changed: a save costs its
own file's lines, not the repository's."""

from __future__ import annotations

import bisect
import heapq
from collections import Counter
from collections.abc import Iterable
from dataclasses import dataclass

MIN_CHARS = 4  # a stripped line shorter than this says nothing worth copying
MAX_CHARS = 160  # nor does a longer one (minified text, data)
MAX_DISTINCT = 400_000  # distinct lines kept at most (about 60 MB of a very large repository)
MAX_SCAN = 2_000  # lines beginning with the typed prefix looked at, at most: more is a guess
# (the most written of so many holds a small share of them, too small to be followed)


@dataclass(frozen=True)
class LineCandidate:
    """A stripped line of the repository that begins as the line being typed, and how many
    times the other files hold it."""

    text: str
    count: int


def counted_lines(chunks: Iterable[tuple[int, int, str]]) -> Counter[str]:
    """One file's stripped lines, counted once per line number, from its chunks (start line,
    end line, text). A chunk whose text is not its lines one for one (a class outline with its
    bodies elided) is left out: its other chunks hold those lines."""
    by_number: dict[int, str] = {}
    for start, end, text in chunks:
        lines = text.split("\n")
        if len(lines) != end - start + 1:
            continue
        for k, line in enumerate(lines):
            by_number[start + k] = line
    counts: Counter[str] = Counter()
    for line in by_number.values():
        stripped = line.strip()
        if MIN_CHARS <= len(stripped) <= MAX_CHARS:
            counts[stripped] += 1
    return counts


class RepositoryLines:
    """The repository's source lines, stripped and counted, looked up by how they begin. Never
    changed once published: `updated` makes the next one (the completion thread reads one
    while the context thread makes its successor)."""

    def __init__(self) -> None:
        self.files: dict[str, tuple[str, Counter[str]]] = {}  # path -> (hash, its lines)
        self.counts: Counter[str] = Counter()
        self.sorted: list[str] = []
        self.full = False  # MAX_DISTINCT reached: lines new after that are not kept

    def hashes(self) -> dict[str, str]:
        return {path: digest for path, (digest, _) in self.files.items()}

    def updated(self, changed: dict[str, tuple[str, Counter[str]] | None]) -> RepositoryLines:
        """A copy with the files that changed (their hash and lines, or None when gone)."""
        new = RepositoryLines()
        new.files, new.counts, new.full = dict(self.files), Counter(self.counts), self.full
        first = not self.files
        if not first:
            new.sorted = list(self.sorted)
        for path, lines in changed.items():
            old = new.files.pop(path, None)
            if old is not None:
                for line, n in old[1].items():
                    left = new.counts[line] - n
                    if left > 0:
                        new.counts[line] = left
                        continue
                    del new.counts[line]
                    if not first:
                        i = bisect.bisect_left(new.sorted, line)
                        if i < len(new.sorted) and new.sorted[i] == line:
                            del new.sorted[i]
            if lines is None:
                continue
            new.files[path] = lines
            for line, n in lines[1].items():
                if line in new.counts:
                    new.counts[line] += n
                elif len(new.counts) < MAX_DISTINCT:
                    new.counts[line] = n
                    if not first:
                        bisect.insort(new.sorted, line)
                else:
                    new.full = True
        if first:
            new.sorted = sorted(new.counts)
        return new

    def starting(self, prefix: str, path: str | None, limit: int = 16) -> list[LineCandidate]:
        """Every line that begins with `prefix` (stripped) and goes on past it, counted in the
        files other than `path` (the buffer being edited is newer than the index's copy of
        it), the most written first; the first `limit` of them as they are, the others summed
        into one with no text. Empty when more than MAX_SCAN lines begin so."""
        lo = bisect.bisect_left(self.sorted, prefix)
        hi = bisect.bisect_left(self.sorted, prefix + "\U0010ffff", lo)
        if hi - lo > MAX_SCAN:
            return []
        kept = self.files.get(path) if path is not None else None
        own = kept[1] if kept is not None else None
        found = []
        for line in self.sorted[lo:hi]:
            if len(line) <= len(prefix):
                continue
            n = self.counts[line] - (own[line] if own is not None else 0)
            if n > 0:
                found.append(LineCandidate(line, n))
        top = heapq.nlargest(limit, found, key=lambda c: (c.count, -len(c.text)))
        others = sum(c.count for c in found) - sum(c.count for c in top)
        return top + ([LineCandidate("", others)] if others else [])
