"""What a search answers: one `SearchResult` per chunk, with the evidence behind its place
(each retriever's rank, its share of the score, the factors applied), in a `SearchResponse`
that is also the `search --json` object."""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import asdict, dataclass, field
from typing import Any

from ..choices import CHUNKS_PER_PLACE, PER_FILE_MOST, RETRIEVERS
from ..store import ChunkHit
from .functions import FunctionAnswer


@dataclass
class SearchResult:
    path: str
    start_line: int
    end_line: int
    symbol: str | None
    kind: str
    score: float
    ranks: dict[str, int | None]
    role: str = "source"
    flags: str = ""
    contributions: dict[str, float] = field(default_factory=dict)
    factors: dict[str, float] = field(default_factory=dict)
    name: str | None = field(default=None, repr=False)
    chunk_id: int = field(default=0, repr=False)
    # the second stage's reading (rerank.py): the model's score and rank, the first stage's rank
    rerank: dict[str, float] | None = None
    # why it stands where its score alone would not put it (--explain): the name as asked
    # before a look-alike, at the place of an identical copy, found deeper after the first
    placed: str | None = None
    # its definition's head (`fn from(f: f64) -> Self`): what tells apart results of one name,
    # the methods of several `impl From<X> for Value`, a property's getter and setter
    signature: str | None = None


@dataclass
class SearchResponse:
    query: str
    intent: str
    confidence: float
    strategy: str  # "direct" | "fused"
    results: list[SearchResult]
    timings_ms: dict[str, float]
    modality: str = "auto"
    rule: str = ""
    notes: list[str] = field(default_factory=list)
    # a long text (a bug report): the functions most likely to need the change (functions.py)
    functions: list[FunctionAnswer] = field(default_factory=list)

    def to_json(self) -> dict:
        """The `search --json` object (doc/repocontext.txt |repocontext-search-json|; its core
        keys in doc/architecture.md's command-line contract, plus `modality`, `rule`, `notes`)."""
        results: list[dict[str, Any]] = []
        out = {
            "query": self.query,
            "intent": self.intent,
            "confidence": self.confidence,
            "strategy": self.strategy,
            "modality": self.modality,
            "rule": self.rule,
            "results": results,
            "timings_ms": self.timings_ms,
            "notes": self.notes,
            "functions": [f.to_json() for f in self.functions],
        }
        for r in self.results:
            item = asdict(r)
            item.pop("name")
            item.pop("chunk_id")
            item["score"] = round(r.score, 6)
            item["contributions"] = {k: round(v, 6) for k, v in r.contributions.items()}
            results.append(item)
        return out


SIGNATURE_SHOWN = 80  # characters of a signature a list shows


def heads_to_show(results: list[SearchResult]) -> dict[int, str]:
    """The signature each result of a list shows, by its index: only where results of the
    same name have different heads (three `Value.from`, one per `impl From<X>`), cut to
    SIGNATURE_SHOWN characters; a name shown once needs none."""
    heads: dict[str, set[str]] = {}
    for r in results:
        if r.symbol and r.signature:
            heads.setdefault(r.symbol, set()).add(r.signature)
    out = {}
    for i, r in enumerate(results):
        if r.symbol and r.signature and len(heads[r.symbol]) > 1:
            head = " ".join(r.signature.split())
            out[i] = head if len(head) <= SIGNATURE_SHOWN else head[: SIGNATURE_SHOWN - 3] + "..."
    return out


def raw_result(hit: ChunkHit, retriever: str | None, rank: int | None) -> SearchResult:
    """A hit as a result, ranked by `retriever` at `rank` (from 0) or by none yet."""
    ranks: dict[str, int | None] = {n: None for n in RETRIEVERS}
    if retriever is not None and rank is not None:
        ranks[retriever] = rank + 1
    return SearchResult(
        path=hit.path,
        start_line=hit.start_line,
        end_line=hit.end_line,
        symbol=hit.qualname or hit.name,
        kind=hit.kind,
        score=hit.score,
        ranks=ranks,
        role=hit.role,
        flags=hit.flags,
        name=hit.name,
        chunk_id=hit.chunk_id,
        signature=hit.signature,
    )


def one_piece_each(
    results: list[SearchResult], first_pieces: Mapping[int, int]
) -> list[SearchResult]:
    """A long definition once, at its best piece's place: its other pieces (windows of one
    function, store/queries.py `first_pieces`) would hold places that other definitions
    need (cobra's `genPowerShellComp` held three of the first five, above the answer)."""
    seen: set[int] = set()
    out = []
    for r in results:
        head = first_pieces.get(r.chunk_id)  # none for a file the index has not reached
        if head is not None:
            if head in seen:
                continue
            seen.add(head)
        out.append(r)
    return out


def cap_per_file(
    results: list[SearchResult], cap: int | None, sizes: Mapping[str, int] | None = None
) -> list[SearchResult]:
    """At most `cap` chunks of each file, in rank order (None: every chunk); with `sizes` (a
    file's chunks in the index), one more for each CHUNKS_PER_PLACE of them up to
    PER_FILE_MOST, so that a file holding much of the code is not held to the places of a
    small one, nor fills the list."""
    if cap is None:
        return results
    sizes = sizes or {}
    count: dict[str, int] = {}
    out = []
    for r in results:
        count[r.path] = count.get(r.path, 0) + 1
        places = cap + sizes.get(r.path, 0) // CHUNKS_PER_PLACE
        if count[r.path] <= min(places, max(cap, PER_FILE_MOST)):
            out.append(r)
    return out


def after_the_first(
    first: list[SearchResult],
    more: list[SearchResult],
    top: int,
    cap: Callable[[list[SearchResult]], list[SearchResult]],
) -> list[SearchResult]:
    """`first`, then those of `more` (the results of a deeper search) it lacks, up to `top`,
    with the cap per file (`cap`) over the whole: asking for more results adds to the first
    ones and never reorders them."""
    listed = {r.chunk_id for r in first}
    added = [r for r in more if r.chunk_id not in listed]
    for r in added:
        r.placed = f"found deeper, after the first {len(first)} (their order is kept)"
    return cap(first + added)[:top]
