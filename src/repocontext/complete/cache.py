"""Recent suggestions, keyed so that typing through a suggestion reuses it.

An entry remembers where it was made (file, line, the text before the cursor, a digest of the
lines around) and what was suggested. A later request on the same line whose text before the
cursor is the old one plus characters that the suggestion starts with gets the rest of the
suggestion at once, without the model. Least recently used entries go first.
"""

from __future__ import annotations

import hashlib
import threading
from collections import OrderedDict
from dataclasses import dataclass


@dataclass(frozen=True)
class CacheKey:
    path: str
    line: int
    surroundings: str  # digest of the lines above and below the cursor's line


@dataclass
class CachedSuggestion:
    before: str  # the cursor's line up to the cursor, when the suggestion was made
    text: str


def surroundings_digest(lines_above: list[str], lines_below: list[str]) -> str:
    h = hashlib.blake2b(digest_size=12)
    for line in lines_above[-8:]:
        h.update(line.encode("utf-8", "replace") + b"\n")
    h.update(b"\x00")
    for line in lines_below[:2]:
        h.update(line.encode("utf-8", "replace") + b"\n")
    return h.hexdigest()


class SuggestionCache:
    def __init__(self, size: int = 256):
        self.size = size
        self._items: OrderedDict[tuple[CacheKey, str], CachedSuggestion] = OrderedDict()
        self._lock = threading.Lock()

    def put(self, key: CacheKey, before: str, text: str) -> None:
        if not text:
            return
        with self._lock:
            self._items[(key, before)] = CachedSuggestion(before, text)
            self._items.move_to_end((key, before))
            while len(self._items) > self.size:
                self._items.popitem(last=False)

    def get(self, key: CacheKey, before: str) -> str | None:
        """The remaining suggestion for `before`, if an entry on this line covers it."""
        with self._lock:
            exact = self._items.get((key, before))
            if exact is not None:
                self._items.move_to_end((key, before))
                return exact.text
            for (k, old_before), entry in reversed(self._items.items()):
                if k != key or not before.startswith(old_before):
                    continue
                typed = before[len(old_before) :]
                if entry.text.startswith(typed) and len(typed) < len(entry.text):
                    return entry.text[len(typed) :]
            return None
