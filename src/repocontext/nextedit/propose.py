"""The next-edit engine's one call: from an edit to the next places, nearest and surest first.

`propose` takes the buffer before and after the edit (the bridge keeps both; a recorded edit
gives them through `propose_record`), recognises the replacement (edits.py) and finds where
it applies next (places.py): the buffer's places by distance, then, given the index, those
of the files it links to the edited name. Nothing here waits on a model; a few milliseconds
for a buffer of a few thousand lines (bench/next_edit.py measures it).
"""

from __future__ import annotations

import os
from typing import TYPE_CHECKING

from ..lang.languages import language_for
from .edits import Replacement, edit_between, edit_from_record, recognise
from .places import NextEditPlace, linked_places, places_in
from .syntax import Syntax

if TYPE_CHECKING:
    from ..store import Store

# The places under this confidence are not proposed: a wrong proposal is a false alarm on
# the user's screen. At 0.85, about 1 in 20 proposals was wrong on the history the rules
# were tuned on (bench/results/next_edit.md gives the other thresholds).
MIN_CONFIDENCE = 0.85
MAX_PLACES = 50


def propose(
    before: str,
    after: str,
    path: str,
    *,
    store: Store | None = None,
    root: str | os.PathLike | None = None,
    buffers: dict[str, str] | None = None,
    min_confidence: float = MIN_CONFIDENCE,
    limit: int = MAX_PLACES,
) -> list[NextEditPlace]:
    """The next places for the edit that turned `before` into `after` (the whole buffer,
    `path` root-relative). With `store`, the files the index links to the edited name follow
    the buffer's, read from `buffers` (root-relative path → unsaved text) or below `root`."""
    replacement, syntax = _recognised(before, after, path)
    if replacement is None:
        return []
    found = places_in(replacement, syntax, path, here=True)
    if store is not None and len(found) < limit:
        found += linked_places(replacement, store, path, root, buffers or {})
    return [p for p in found if p.confidence >= min_confidence][:limit]


def propose_record(
    buffer: str, path: str, line: int, col: int, old_text: str, new_text: str, **options
) -> list[NextEditPlace]:
    """`propose` for the plugin's recent-edit record: `new_text` now stands in `buffer` at
    `line` (1-based), character column `col`, where `old_text` was."""
    before, edit = edit_from_record(buffer, path, line, col, old_text, new_text)
    if edit is None:
        return []
    return propose(before, buffer, path, **options)


def explain(before: str, after: str, path: str) -> Replacement | None:
    """The replacement the edit makes that can apply elsewhere, or None (no edit, an edit of
    another shape): what `propose` looks for."""
    return _recognised(before, after, path)[0]


def _recognised(before: str, after: str, path: str) -> tuple[Replacement | None, Syntax]:
    language = language_for(path)
    syntax = Syntax(after, language)
    edit = edit_between(before, after, path)
    if edit is None:
        return None, syntax
    return recognise(edit, Syntax(before, language), syntax), syntax
