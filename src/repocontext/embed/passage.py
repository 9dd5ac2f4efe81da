"""What is embedded for a chunk, and the key its vector is kept under.

A vector stands for the whole passage, not for the chunk's text alone: the passage carries the
chunk's name, kind, signature and a doc comment above it. So the key is a hash of the passage
(its path aside), and a renamed definition, an edited doc comment above an unchanged body, or a
release that embeds something else than the last one gets a vector of its own on the next index
run, instead of keeping one that describes what is no longer there. The path is left out of the
key so that identical copies of a chunk (a source tree shipped twice) share one vector, as
search's `one_copy` expects; a moved file keeps its vector, its path embedded as it was.

No numpy here: index/prepare.py computes keys in the index's worker processes.
"""

from __future__ import annotations

import hashlib


def passage_text(
    path: str, qualname: str | None, kind: str, signature: str | None, doc: str | None, body: str
) -> str:
    """What is embedded for a chunk: where it is and what it is called, then its words."""
    parts = [f"{path} {qualname or ''} ({kind})"]
    if signature and signature[:40] not in body[:400]:
        parts.append(signature)
    if doc and doc[:40] not in body[:800]:  # a doc comment above the chunk's first line
        parts.append(doc)
    parts.append(body)
    return "\n".join(parts)


def passage_key(
    qualname: str | None, kind: str, signature: str | None, doc: str | None, body: str
) -> str:
    """The key a chunk's vector is kept under: the passage without its path, hashed."""
    text = passage_text("", qualname, kind, signature, doc, body)
    return hashlib.sha256(text.encode("utf-8", "replace")).hexdigest()[:32]
