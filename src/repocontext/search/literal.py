"""Messages pasted without quotes: find the fixed parts of a message in the code, verbatim.

People paste an error from a terminal as it was printed: `FieldError: Cannot resolve keyword
'titel' into field. Choices are: body, id, title`. The code holds `"Cannot resolve keyword '%s'
into field. Choices are: %s"`; the printed values stand where the placeholders were. So the
query is cut at what looks like a value (quoted text, numbers, paths, dotted or snake_case
names) and the longest runs of words between are looked up in the exact-substring (trigram)
index, shortening a run by a word at either end when the whole run is not found (a value that
looked like an ordinary word), then trying each half (a message built from two literals), then
its first and last few words (a value in the middle that read as a word). A run found only in
tests and docs (which hold the message as printed) goes on to shorter attempts. A
run counts when it is long enough to mean something and rare enough to point somewhere
(`MAX_HITS`). A dozen lookups at most, a few milliseconds each.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field

from ..store import ChunkHit, Store
from .retrievers import Query, TrigramRetriever

MIN_CHARS = 12
MIN_WORDS = 3
MAX_HITS = 25  # a run found in more chunks than this is a common phrase, not a message
MAX_LOOKUPS = 12
EDGE_WORDS = 4

# `pkg.module.SomeError: ` as Python prints an exception before its message
_EXCEPTION_PREFIX = re.compile(
    r"^\s*(?:[A-Za-z_][\w]*\.)*[A-Z]\w*(?:Error|Exception|Warning|Exit|Failure|Interrupt)\b"
    r"(?:\s*\[[^\]]*\])?\s*:\s*"
)
# what a printed value looks like: quoted text, a path, a number, a dotted or snake_case name
_VALUE = re.compile(
    r"""'[^']*'|"[^"]*"|`[^`]*`|<[^>]*>|\S*[/\\]\S+|\S*\d\S*|[A-Za-z_]\w*(?:\.\w+)+|\w+_\w+"""
)
_QUESTION = re.compile(
    r"^\s*(?:how|why|what|where|when|which|who|explain|show|find|list|is|are|does|do|can|"
    r"should|could)\b",
    re.IGNORECASE,
)


@dataclass
class LiteralMatch:
    fragments: list[str] = field(default_factory=list)  # the runs found, longest first
    hits: list[ChunkHit] = field(default_factory=list)  # chunks holding them, best first

    @property
    def longest(self) -> int:
        return max((len(f) for f in self.fragments), default=0)


_MESSAGE_SIGNS = re.compile(r"""[:'"`%(){}\[\]/\d]|\s-\s""")


def may_be_a_message(text: str) -> bool:
    """Worth looking up verbatim: not a question, and long (five words or more) or marked as
    printed text is (a colon, quotes, brackets, a number, a path). Three plain words ("read
    settings config") are a question put tersely, and occur in docstrings by chance."""
    if _QUESTION.match(text):
        return False
    words = len(text.split())
    return words >= 5 or (words >= 3 and bool(_MESSAGE_SIGNS.search(text)))


def runs_of(message: str) -> list[str]:
    """The runs of words between the values of `message`, longest first."""
    text = _EXCEPTION_PREFIX.sub("", message.strip(), count=1)
    runs = []
    for piece in _VALUE.split(text):
        run = " ".join(piece.split()).strip(" .,:;!?-()[]{}")
        if len(run) >= MIN_CHARS and len(run.split()) >= MIN_WORDS:
            runs.append(run)
    return sorted(dict.fromkeys(runs), key=len, reverse=True)


def find_literal(store: Store, message: str, limit: int, scope: str = "all") -> LiteralMatch:
    """The chunks holding the longest fixed runs of `message` (see the module docstring)."""
    trigram = TrigramRetriever(store)
    found = LiteralMatch()
    scores: dict[int, tuple[int, int]] = {}  # chunk id -> (longest run held, runs held)
    by_id: dict[int, ChunkHit] = {}
    lookups = 0
    for run in runs_of(message):
        words = run.split()
        # the whole run, a word off either end, then each half (a message the code builds
        # from two literals, or spaced differently, holds each half but not the whole)
        half = len(words) // 2
        tries = [words] + [words[a : len(words) - b] for a, b in ((1, 0), (0, 1), (1, 1))]
        tries += [words[:half], words[half:]] if len(words) >= 6 else []
        # a printed value that reads as a plain word (`the function scoped fixture`) splits
        # the fixed text anywhere: its first and last few words are then what is left whole
        tries += [words[:EDGE_WORDS], words[-EDGE_WORDS:]] if len(words) >= 2 * EDGE_WORDS else []
        for attempt in tries:
            text = " ".join(attempt)
            if len(text) < MIN_CHARS or len(attempt) < MIN_WORDS or lookups >= MAX_LOOKUPS:
                continue
            lookups += 1
            hits = trigram.search(Query(text, MAX_HITS + 1, scope)).hits
            if not hits or len(hits) > MAX_HITS:
                continue
            found.fragments.append(text)
            for h in hits:
                longest, count = scores.get(h.chunk_id, (0, 0))
                scores[h.chunk_id] = (max(longest, len(text)), count + 1)
                by_id[h.chunk_id] = h
            if any(h.role == "source" for h in hits):
                break
            # only tests and docs hold it: they assert on the printed message, values and
            # all, while the code that prints it holds only its fixed parts; look for those
        if lookups >= MAX_LOOKUPS:
            break
    ranked = sorted(by_id, key=lambda i: (-scores[i][0], -scores[i][1], by_id[i].path))
    found.hits = [by_id[i] for i in ranked[:limit]]
    return found
