"""The plain records that cross the store's boundary, in and out."""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class FileState:
    """What the index knows of a file, enough to decide whether it must be read again."""

    id: int
    size: int
    mtime_ns: int
    content_hash: str


@dataclass(frozen=True)
class FileRecord:
    path: str
    language: str | None
    size: int
    mtime_ns: int
    content_hash: str
    role: str = "source"  # source | test | tooling | doc (index/roles.py)
    flags: str = ""  # comma-separated: generated, minified, latin-1 (not UTF-8)


@dataclass(frozen=True)
class ChunkRecord:
    """One chunk as written: `fts` holds the five FTS column texts (identifier-expanded)."""

    start_line: int
    end_line: int
    kind: str
    name: str | None
    qualname: str | None
    signature: str | None
    doc: str | None
    text: str
    content_hash: str  # the key of what is embedded of it (embed/passage.py), path aside
    fts: tuple[str, str, str, str, str]
    lead: str | None = None  # its doc comment's lines as written (lang/chunking.py `Chunk.lead`)

    @property
    def literal_text(self) -> str:
        """What exact-string search reads of the chunk: its doc comment's lines, then its own."""
        return f"{self.lead}\n{self.text}" if self.lead else self.text


@dataclass(frozen=True)
class ChunkHit:
    """A chunk found by a query, with the file facts ranking needs."""

    chunk_id: int
    path: str
    start_line: int
    end_line: int
    kind: str
    name: str | None
    qualname: str | None
    signature: str | None
    role: str
    flags: str
    score: float


@dataclass(frozen=True)
class ReferenceHit:
    """A chunk that refers to a name in the graph (GraphTable.references_to)."""

    hit: ChunkHit  # its score: the number of references to the name it holds
    line: int  # the first line that holds one
    uses: bool  # a call, a member call or an inherited base: more than an import of the name


@dataclass(frozen=True)
class RefRecord:
    """A reference found in a file: a call, an import, an inherited base."""

    kind: str  # call | member | import | import_name | inherit
    name: str
    line: int
    chunk_index: int | None = None  # index into the file's chunk list
    # import_name: the module; call or member (a call of a common name, `x.print(`) on an
    # object: the object's last name (lang/references.py)
    module: str | None = None
