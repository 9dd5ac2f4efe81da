"""What is embedded for a chunk, and the key its vector is kept under.

A vector stands for the whole passage, not for the chunk's text alone: the passage carries the
chunk's name, kind, signature and a doc comment above it. So the key is a hash of the passage
(its path aside), and a renamed definition, an edited doc comment above an unchanged body, or a
release that embeds something else than the last one gets a vector of its own on the next index
run, instead of keeping one that describes what is no longer there. The path is left out of the
key so that identical copies of a chunk (a source tree shipped twice) share one vector, as
search's `one_copy` expects; a moved file keeps its vector, its path embedded as it was.

A doc comment is embedded up to its first tag line (`@param {string} name`, `@api private`):
the model reads 128 tokens of a passage (the rest in later windows, `later_windows`: a
long function's logic is past its first lines), and tags repeat the signature where the prose says
what the definition is for (commander.js: 3 more JavaScript answers in the top 5 of the
labelled sets' questions and reports, bench/results/search_sets.md).

Keys are computed when a file is cut (index/prepare.py, in the index's worker processes: no
numpy here), so a change to what is embedded bumps lang/chunking.py's CHUNKER_VERSION: every
index then cuts its files again and embeds what changed.
"""

from __future__ import annotations

import hashlib

WINDOW_OVERLAP = 16  # tokens a later window repeats of the one before


def passage_header(path: str, qualname: str | None, kind: str) -> str:
    """Where a chunk is and what it is called: the first line of its passage and of each of
    its later windows."""
    return f"{path} {qualname or ''} ({kind})"


def passage_text(
    path: str, qualname: str | None, kind: str, signature: str | None, doc: str | None, body: str
) -> str:
    """What is embedded for a chunk: where it is and what it is called, then its words."""
    parts = [passage_header(path, qualname, kind)]
    if signature and signature[:40] not in body[:400]:
        parts.append(signature)
    summary = doc_prose(doc) if doc else ""
    if summary and summary[:40] not in body[:800]:  # a doc comment above the chunk's first line
        parts.append(summary)
    parts.append(body)
    return "\n".join(parts)


def later_windows(
    passage: str,
    header: str,
    offsets: list[tuple[int, int]],
    width: int,
    header_width: int,
    most: int,
) -> list[str]:
    """The windows of a passage past the `width` tokens a model reads of it, each headed by
    `header` and `WINDOW_OVERLAP` tokens into the one before (a line cut at a window's end is
    read whole in the next), at most `most`. `offsets`: each token's (start, end) characters
    in the passage; `header_width`: the header's tokens."""
    step = width - header_width - 1  # the header's line break
    if len(offsets) <= width or step <= WINDOW_OVERLAP or most <= 0:
        return []
    windows: list[str] = []
    start = width - WINDOW_OVERLAP
    while len(windows) < most:
        end = min(len(offsets), start + step)
        windows.append(f"{header}\n{passage[offsets[start][0] : offsets[end - 1][1]]}")
        if end == len(offsets):
            break
        start = end - WINDOW_OVERLAP
    return windows


def doc_prose(doc: str) -> str:
    """A doc comment's prose: up to its first tag line (`@param {string} name`, `@api
    private`, `@return`), which says what the signature already says."""
    kept = []
    for line in doc.splitlines():
        if line.lstrip().startswith("@"):
            break
        kept.append(line)
    return "\n".join(kept).strip()


def passage_key(
    qualname: str | None, kind: str, signature: str | None, doc: str | None, body: str
) -> str:
    """The key a chunk's vector is kept under: the passage without its path, hashed."""
    text = passage_text("", qualname, kind, signature, doc, body)
    return hashlib.sha256(text.encode("utf-8", "replace")).hexdigest()[:32]
