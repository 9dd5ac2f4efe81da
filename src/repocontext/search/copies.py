"""Which of identical copies of a text names them all: one rule for the ranked chunks
(fusion.one_copy) and the function answer (functions.py), so that both name the same file."""

from __future__ import annotations


def copy_preference(role: str, path: str) -> tuple[bool, int]:
    """The sort key of a copy (the least is kept): a source file's before a test's or a
    doc's, then the one closest to the root (`src/types.ts`, not `deno/lib/types.ts`)."""
    return role != "source", path.count("/")
