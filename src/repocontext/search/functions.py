"""The function-level answer to a bug report: which functions most likely need the change.

A pasted report is answered with chunks, like any query; what its reader wants is the function
to open (SWE-bench's localisation asks for exactly that). Most chunks already are functions or
methods, so the answer is drawn from the ranked chunks, with the evidence a report holds, each
kept as a reason that `--explain` prints:
- the search's rank of the function's chunk (after the second stage, when it ran);
- the report names it: one of its code-like identifiers is the function's name, qualified or
  not (`get_default`, `Option.get_default`, `resp.read()`);
- a frame of a traceback in it points into the function (the innermost frame counts most);
- the graph: a function the report names, or a frame points into, calls it. The fix is often
  one call below what the user sees.
A class found as a whole (its outline chunk) stands for its methods: each competes with the
class's rank, and the ones the report names or the frames point into come first. A function
copied into another file (zod's `deno/lib/` is `src/` again) is one answer, at the copy the
ranked chunks keep (a source file's, then the one closest to the root: fusion.py's `one_copy`).

Scores are sums of reciprocal ranks, as in the fusion: each kind of evidence adds
weight / (K + position), so no single kind decides alone.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from ..store import ChunkHit, Store
from .copies import copy_preference
from .frames import parse_frames, resolve

if TYPE_CHECKING:
    from .results import SearchResult

FUNCTION_KINDS = ("function", "method")
CONTAINER_KINDS = ("class", "struct", "interface", "trait", "impl", "enum", "module", "type")
K = 5
CANDIDATE_CHUNKS = 40  # ranked chunks looked at
MAX_FUNCTIONS = 10
# Weights of each kind of evidence (a search rank counts 1.0), chosen by leave-one-repository-out
# validation on the real bug reports of 15 repositories (bench/results/search_sets.md): a named
# identifier and the embedding's reading of the best files count a quarter and a half of a rank.
NAMED_WEIGHT = 0.25
FRAME_WEIGHT = 0.5
CALLEE_WEIGHT = 0.5
SIMILAR_WEIGHT = 0.5
SIMILAR_FILES = 3  # the best files, whose every function is read against the report
SIMILAR_PER_FILE = 5
MEMBER_FACTOR = 0.5  # a method standing in for its class's rank


@dataclass
class FunctionAnswer:
    path: str
    symbol: str
    start_line: int
    end_line: int
    score: float = 0.0
    reasons: list[str] = field(default_factory=list)
    chunk_ids: set[int] = field(default_factory=set, repr=False)
    role: str = field(default="source", repr=False)  # of its file (index/roles.py)

    def add(self, score: float, reason: str) -> None:
        self.score += score
        self.reasons.append(reason)

    def to_json(self) -> dict:
        return {
            "path": self.path,
            "symbol": self.symbol,
            "start_line": self.start_line,
            "end_line": self.end_line,
            "score": round(self.score, 6),
            "reasons": self.reasons,
        }


def function_answer(
    store: Store,
    report: str,
    ranked: list[SearchResult],
    names: list[str],
    similar: Callable[[list[int]], dict[int, float]] | None = None,
) -> list[FunctionAnswer]:
    """The functions of `ranked` (every chunk, best first) most likely to need the change for
    the report `report`, whose code-like identifiers are `names`. `similar`: the embedding
    similarity of the report to chunks, by id (None: no vectors)."""
    answers: dict[tuple[str, str], FunctionAnswer] = {}

    def answer(hit: ChunkHit | SearchResult) -> FunctionAnswer:
        symbol = _symbol(hit)
        key = (hit.path, symbol)
        if key not in answers:
            answers[key] = FunctionAnswer(
                hit.path, symbol, hit.start_line, hit.end_line, role=hit.role
            )
        else:  # a long function is several chunks: span them all
            a = answers[key]
            a.start_line, a.end_line = (
                min(a.start_line, hit.start_line),
                max(a.end_line, hit.end_line),
            )
        answers[key].chunk_ids.add(hit.chunk_id)
        return answers[key]

    containers: list[tuple[int, SearchResult]] = []
    seen_ranks: set[tuple[str, str]] = set()
    for rank, res in enumerate(ranked[:CANDIDATE_CHUNKS]):
        if res.kind in FUNCTION_KINDS and res.symbol:
            a = answer(res)
            if (res.path, a.symbol) not in seen_ranks:
                seen_ranks.add((res.path, a.symbol))
                a.add(1.0 / (K + rank), f"search rank {rank + 1}")
        elif res.kind in CONTAINER_KINDS and res.symbol:
            containers.append((rank, res))
    _members(store, containers, answer, names)
    if similar is not None:
        _similar(store, ranked, similar, answer)
    anchors = _named(store, names, answer) + _frames(store, report, answer)
    _callees(store, anchors, answer)
    found = _one_copy(store, [a for a in answers.values() if a.score > 0])
    best = sorted(found, key=lambda a: (-a.score, a.path, a.start_line))
    return best[:MAX_FUNCTIONS]


def _one_copy(store: Store, answers: list[FunctionAnswer]) -> list[FunctionAnswer]:
    """One answer for a function found in several files with the same text: the copy the
    ranked chunks would keep (copies.copy_preference: a source file's, then the fewest path
    parts; then the first path) names it, with the best score of the copies and that copy's
    reasons; each kind of evidence found the same text, so it is not added up."""
    hashes = store.chunk_hashes([i for a in answers for i in a.chunk_ids])
    groups: list[list[FunctionAnswer]] = []
    group_of: dict[tuple[str, str], int] = {}  # (symbol, a chunk's content hash) -> group
    for a in answers:
        keys = [(a.symbol, hashes[i]) for i in a.chunk_ids if i in hashes]
        index = next((group_of[k] for k in keys if k in group_of), None)
        if index is None:
            index = len(groups)
            groups.append([])
        groups[index].append(a)
        group_of.update((k, index) for k in keys)
    out = []
    for copies in groups:
        kept = min(copies, key=lambda a: (*copy_preference(a.role, a.path), a.path))
        strongest = max(copies, key=lambda a: a.score)
        kept.score, kept.reasons = strongest.score, strongest.reasons
        out.append(kept)
    return out


def _symbol(hit) -> str:
    return getattr(hit, "qualname", None) or getattr(hit, "symbol", None) or hit.name


def _members(store: Store, containers, answer, names: list[str]) -> None:
    """Each method of a class found as a whole, at half the class's rank; the methods the report
    names get their own evidence later."""
    if not containers:
        return
    paths = list(dict.fromkeys(res.path for _, res in containers))
    functions = store.chunks_in(paths, FUNCTION_KINDS)
    for rank, res in containers:
        prefix = f"{res.symbol}."
        for hit in functions:
            if hit.path == res.path and (hit.qualname or "").startswith(prefix):
                a = answer(hit)
                if not any(r.startswith("a method of") for r in a.reasons):
                    a.add(MEMBER_FACTOR / (K + rank), f"a method of {res.symbol} (rank {rank + 1})")


def _named(store: Store, names: list[str], answer) -> list[ChunkHit]:
    """Functions the report names, in the order it names them."""
    if not names:
        return []
    hits = [h for h in store.symbols_named(names, 200) if h.kind in FUNCTION_KINDS]
    lowered = [n.lower() for n in names]
    out = []
    for hit in hits:
        if hit.role != "source":
            continue
        qual = (hit.qualname or "").lower()
        position = next(
            (i for i, n in enumerate(lowered) if n == qual or n == (hit.name or "").lower()), None
        )
        if position is None:
            continue
        # a bare common name (`read`) in many classes says little: count it once per class
        a = answer(hit)
        if not any(r.startswith("named") for r in a.reasons):
            a.add(NAMED_WEIGHT / (K + position), f"named in the report ({names[position]})")
            out.append(hit)
    return out


def _frames(store: Store, report: str, answer) -> list[ChunkHit]:
    """Functions the traceback's frames point into, innermost first."""
    out = []
    for frame in parse_frames(report):
        path = resolve(store, frame)
        if path is None:
            continue
        hit = store.chunk_at(path, frame.line)
        if hit is None or hit.kind not in FUNCTION_KINDS:
            continue
        a = answer(hit)
        if not any(r.startswith("frame") for r in a.reasons):
            where = "innermost" if frame.innermost_first == 0 else f"{frame.innermost_first + 1}"
            a.add(FRAME_WEIGHT / (K + frame.innermost_first), f"frame {where} of the traceback")
            out.append(hit)
    return out


def _callees(store: Store, anchors: list[ChunkHit], answer) -> None:
    """Functions called by the named and framed ones, defined in the same file or a file the
    anchors live in: a callee name shared by half the repository (`get`) says nothing."""
    if not anchors:
        return
    paths = {h.path for h in anchors}
    for position, anchor in enumerate(anchors[:10]):
        called = store.graph.called_names([anchor.chunk_id])
        if not called:
            continue
        for hit in store.symbols_named(called, 100):
            if hit.kind not in FUNCTION_KINDS or hit.path not in paths or hit.role != "source":
                continue
            a = answer(hit)
            if not any(r.startswith("called by") for r in a.reasons):
                a.add(CALLEE_WEIGHT / (K + position), f"called by {_symbol(anchor)}")


def _similar(store: Store, ranked, similar, answer) -> None:
    """Within-file ranking: every function of the best files, read against the report by the
    embedding model; the closest few of each file gain, by their rank in the file."""
    files = list(dict.fromkeys(r.path for r in ranked))[:SIMILAR_FILES]
    functions = store.chunks_in(files, FUNCTION_KINDS)
    scores = similar([h.chunk_id for h in functions])
    for path in files:
        mine = [h for h in functions if h.path == path and h.chunk_id in scores]
        mine.sort(key=lambda h: -scores[h.chunk_id])
        for position, hit in enumerate(mine[:SIMILAR_PER_FILE]):
            a = answer(hit)
            if not any(r.startswith("close to") for r in a.reasons):
                a.add(
                    SIMILAR_WEIGHT / (K + position),
                    f"close to the report's words ({position + 1} in its file)",
                )
