"""Code-aware terms for the BM25 index: identifiers are kept whole and also split into words.

The FTS5 tokenizer keeps `_` inside tokens, so `should_strip_auth` is one term (an exact
identifier query scores it highly); `expand_identifiers` appends the words of every compound
identifier (`should strip auth`, `Return Request` for `ReturnRequest`, `utf 16` for `utf16`)
so that plain-language questions match code too. The same function prepares both the indexed
text and the query, so the two always agree.
"""

from __future__ import annotations

import functools
import re

_IDENTIFIER = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")
# Boundaries: lower->Upper, UPPER->Upper lower (HTTPServer -> HTTP Server), letter<->digit, "_".
_PARTS = re.compile(r"[A-Z]+(?=[A-Z][a-z])|[A-Z]?[a-z]+|[A-Z]+|[0-9]+")


@functools.lru_cache(maxsize=65536)
def split_identifier(identifier: str) -> tuple[str, ...]:
    """`should_strip_auth` -> (should, strip, auth); `parseHTTPResponse2` -> (parse, HTTP, Response, 2)."""
    return tuple(_PARTS.findall(identifier))


def identifier_words(text: str) -> list[str]:
    """The split words of each distinct compound identifier in `text`, in order of appearance.

    Each identifier contributes its words once: repeated use already counts through the whole
    identifier's term frequency, and `self._thread_local` used twenty times should not make a
    chunk about "local" things.
    """
    words: list[str] = []
    for ident in dict.fromkeys(_IDENTIFIER.findall(text)):
        parts = split_identifier(ident)
        if len(parts) > 1:
            words.extend(parts)
    return words


def expand_identifiers(text: str) -> str:
    """`text` followed by the words of its compound identifiers (for the FTS columns)."""
    if not text:
        return ""
    words = identifier_words(text)
    return f"{text}\n{' '.join(words)}" if words else text
