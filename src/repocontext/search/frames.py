"""Stack traces in a query: each frame that points into the repository is a direct lookup.

A bug report often carries a traceback. Its frames name a file (as installed on the reporter's
machine: `.../site-packages/_pytest/fixtures.py`), a line and a function; matched against the
index by the longest path suffix (`_pytest/fixtures.py` is `src/_pytest/fixtures.py` here) and
looked up by line, they are the most direct evidence a query can hold. Innermost frames come
first: that is where the error was raised, and usually near where the fix goes.

Formats: Python (`File "x.py", line 12, in f`), JavaScript/TypeScript (`at f (x.ts:12:5)`),
Go (`\tpath/x.go:12 +0x1d`), and any `path.ext:line`.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from ..store import ChunkHit, Store

_PYTHON = re.compile(r'File "([^"]+)", line (\d+)(?:, in ([\w<>.]+))?')
_JS = re.compile(
    r"\bat (?:(?:async )?([\w$.<>\[\] ]+?) \()?((?:[A-Za-z]:)?[^\s():]+\.(?:[cm]?[jt]sx?)):(\d+)"
)
_GENERIC = re.compile(
    r"((?:[A-Za-z]:)?[\w./\\@+-]+\.(?:py|go|rs|java|kt|rb|c|cc|cpp|h|hpp|cs|php|lua|swift|"
    r"scala|[cm]?[jt]sx?)):(\d+)\b"
)
MAX_FRAMES = 20


@dataclass(frozen=True)
class Frame:
    path: str  # as written in the trace
    line: int
    function: str | None
    innermost_first: int  # 0 for the frame where the error was raised


def parse_frames(text: str) -> list[Frame]:
    """The frames of every stack trace in `text`, innermost first."""
    python = [(m.group(1), int(m.group(2)), m.group(3)) for m in _PYTHON.finditer(text)]
    if python:  # Python prints the innermost frame last
        return [Frame(p, n, f, i) for i, (p, n, f) in enumerate(reversed(python[-MAX_FRAMES:]))]
    js = [(m.group(2), int(m.group(3)), m.group(1)) for m in _JS.finditer(text)]
    found = js or [(m.group(1), int(m.group(2)), None) for m in _GENERIC.finditer(text)]
    return [Frame(p, n, f, i) for i, (p, n, f) in enumerate(found[:MAX_FRAMES])]


def resolve(store: Store, frame: Frame) -> str | None:
    """The indexed file a frame's path is: the longest suffix of it that names one file."""
    parts = [p for p in re.split(r"[/\\]", frame.path) if p and p != "."]
    for k in range(min(len(parts), 5), 0, -1):
        suffix = "/".join(parts[-k:])
        paths = store.paths_ending_with(suffix, limit=2)
        if len(paths) == 1 and (k >= 2 or len(parts) == 1):
            return paths[0]
    return None


def frame_hits(store: Store, text: str, limit: int) -> list[ChunkHit]:
    """The chunks the trace's frames point at, innermost first, each once."""
    hits: list[ChunkHit] = []
    seen: set[int] = set()
    for frame in parse_frames(text):
        path = resolve(store, frame)
        if path is None:
            continue
        hit = store.chunk_at(path, frame.line)
        if hit is None and frame.function:
            named = [h for h in store.symbols_named([frame.function], 20) if h.path == path]
            hit = named[0] if named else None
        if hit is not None and hit.chunk_id not in seen:
            seen.add(hit.chunk_id)
            hits.append(hit)
        if len(hits) >= limit:
            break
    return hits
