"""A candidate snippet of completion context, and what each source's kind of evidence is
worth (its prior) before the text itself is looked at.

    definition  the definition of a foreign name, found through the file's own import (1.0),
                or by name alone (0.8, shared among same-named definitions: a "twin" in
                another module never beats the real callee); the method after `obj.` in the
                class of obj or the base that defines it (1.0)
    member      the outline of the class an attribute is taken from (0.9); the outline of
                obj's class (0.95) and of its bases (0.8) at `obj.`, or (0.6) once the
                method itself is known
    callgraph   what the enclosing function's callees call, one hop (0.5) or two (0.3)
    bm25/vector the lexical and semantic search over the query (0.4, falling with rank)
    buffer/edit the editor's open buffers and recent edit locations, current text (0.45)
    yank        recently yanked text (0.3)
"""

from __future__ import annotations

from dataclasses import dataclass

from ..store import ChunkHit

PRIOR = {
    "definition": 1.0,
    "member": 0.9,
    "callgraph": 0.5,
    "callgraph2": 0.3,
    "bm25": 0.4,
    "vector": 0.4,
    "buffer": 0.45,
    "edit": 0.45,
    "yank": 0.3,
}
CONFIDENT = 0.9  # a prior at least this high is a definition the structure vouches for


@dataclass
class Candidate:
    source: str
    prior: float
    hit: ChunkHit | None = None  # from the index
    path: str = ""
    start_line: int = 0
    end_line: int = 0
    text: str | None = None  # for editor-side candidates (buffers, edits, yanks)
    symbol: str | None = None
    why: str = ""
    # a class outline sent for `obj.<prefix>`: members matching the prefix come first
    outline_prefix: str | None = None

    def __post_init__(self):
        if self.hit is not None:
            self.path = self.hit.path
            self.start_line, self.end_line = self.hit.start_line, self.hit.end_line
            self.symbol = self.hit.qualname or self.hit.name

    @property
    def key(self) -> tuple:
        return (self.path, self.start_line, self.end_line)
