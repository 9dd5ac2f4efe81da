"""Manual search: classify the question, run the retrievers it deserves, fuse their ranks.

A confident intent (definition keyword, quoted string, error code...) goes straight to its
dominant retriever ("direct"); anything else runs every available retriever and fuses ranks,
not scores: contribution = weight / (k + rank + 1), rank from 0. Then tests and docs are ranked
below source unless the question is about tests, generated/minified files and archive folders
are demoted (a question about tests puts tests first instead), and only the best chunk of each file is kept unless `all_chunks`.

A single `modality` (bm25, trigram, ast) returns that retriever's ranking over every chunk,
with the same demotions (they are policy, not fusion).
"""

from __future__ import annotations

import time
from dataclasses import asdict, dataclass, field

from ..errors import QueryError
from ..store import ChunkHit, Store
from .intent import DIRECT_CONFIDENCE, Intent, about_tests, classify
from .retrievers import BM25Retriever, Ranked, SymbolRetriever, TrigramRetriever

MODALITIES = ("auto", "bm25", "vector", "trigram", "ast", "graph", "hybrid")
SCOPES = ("all", "src", "tests")
RRF_K = 40
RRF_K_THOROUGH = 60
MAX_QUERY_CHARS = 2000
ROLE_FACTOR = {"source": 1.0, "test": 0.5, "doc": 0.5}
TESTS_WANTED_FACTOR = {"source": 0.5, "test": 1.0, "doc": 0.5}  # "tests for X": tests first
DEMOTED_DIRS = ("archive/", "archived/", "legacy/", "deprecated/", "examples/old/", "fixtures/")
FLAG_FACTOR = 0.5
# retriever -> the weight group of the intent profiles
GROUP = {"bm25": "text", "trigram": "text", "ast": "structural", "vector": "semantic",
         "graph": "graph"}
_UNBUILT = {
    "vector": "the vector retriever is not built yet; use --modality auto, bm25, trigram or ast",
    "graph": "the graph retriever is not built yet; use --modality auto, bm25, trigram or ast",
    "hybrid": "hybrid search needs the vector retriever, which is not built yet; "
              "use --modality auto",
}


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

    def to_json(self) -> dict:
        """The `search --json` object of DESIGN.md (plus `modality`, `rule`, `notes`)."""
        out = {
            "query": self.query,
            "intent": self.intent,
            "confidence": self.confidence,
            "strategy": self.strategy,
            "modality": self.modality,
            "rule": self.rule,
            "results": [],
            "timings_ms": self.timings_ms,
            "notes": self.notes,
        }
        for r in self.results:
            item = asdict(r)
            item["score"] = round(r.score, 6)
            item["contributions"] = {k: round(v, 6) for k, v in r.contributions.items()}
            out["results"].append(item)
        return out


class Searcher:
    """Search over one open store. Cheap to create; holds no state between queries."""

    RETRIEVERS = ("bm25", "vector", "trigram", "ast", "graph")

    def __init__(self, store: Store, *, thorough: bool = False):
        self.store = store
        self.k = RRF_K_THOROUGH if thorough else RRF_K
        self.bm25 = BM25Retriever(store)
        self.trigram = TrigramRetriever(store)
        self.ast = SymbolRetriever(store)

    def search(self, query: str, *, top: int = 10, scope: str | None = None,
               modality: str = "auto", all_chunks: bool = False) -> SearchResponse:
        started = time.perf_counter()
        if modality not in MODALITIES:
            raise QueryError(f"unknown modality {modality!r}; use one of {', '.join(MODALITIES)}")
        if modality in _UNBUILT:
            raise QueryError(_UNBUILT[modality])
        if scope is not None and scope not in SCOPES:
            raise QueryError(f"unknown scope {scope!r}; use one of {', '.join(SCOPES)}")
        if not query.strip():
            raise QueryError("the query is empty; say what to look for")
        if top < 1:
            raise QueryError("--top must be at least 1")
        notes: list[str] = []
        if len(query) > MAX_QUERY_CHARS:
            notes.append(f"query cut to its first {MAX_QUERY_CHARS} characters")
            query = query[:MAX_QUERY_CHARS]
        intent = classify(query)
        timings: dict[str, float] = {}
        limit = max(50, top * 5)
        if modality != "auto":
            ranked = self._run(modality, query, limit, scope or "all", intent, timings)
            if ranked.note:
                notes.append(f"{modality}: {ranked.note}")
            results = [_raw_result(h, modality, rank) for rank, h in enumerate(ranked.hits)]
            tests_wanted = about_tests(query) or scope == "tests"
            results = self._apply_factors(results, tests_wanted)[:top]
            strategy = "direct"
        else:
            results, strategy = self._auto(query, intent, top, limit, scope, all_chunks,
                                           timings, notes)
        timings["total"] = (time.perf_counter() - started) * 1000
        return SearchResponse(
            query=query, intent=intent.name, confidence=intent.confidence, strategy=strategy,
            results=results, timings_ms={k: round(v, 3) for k, v in timings.items()},
            modality=modality, rule=intent.rule, notes=notes,
        )

    # --- auto --------------------------------------------------------------------------------
    def _available(self, intent: Intent) -> list[str]:
        names = ["bm25", "ast"]
        if intent.name == "exact_match":
            names.append("trigram")
        return [n for n in names if intent.weights.get(GROUP[n], 0) > 0]

    def _auto(self, query, intent, top, limit, scope, all_chunks, timings, notes):
        tests_wanted = about_tests(query) or scope == "tests"
        run_scope = scope or "all"
        available = self._available(intent)
        if intent.confidence >= DIRECT_CONFIDENCE:
            dominant = self._dominant(intent, available)
            ranked = self._run(dominant, query, limit, run_scope, intent, timings)
            if ranked.hits:
                hits = ranked.hits
                # stable: keeps the retriever's order within each role
                factors = TESTS_WANTED_FACTOR if tests_wanted else ROLE_FACTOR
                hits = sorted(hits, key=lambda h: factors.get(h.role, 1.0) < 1.0)
                results = [_raw_result(h, dominant, rank) for rank, h in enumerate(hits)]
                return _dedupe(results, all_chunks)[:top], "direct"
            notes.append(f"{dominant} found nothing; fell back to fusing every retriever")
            available = ["bm25", "trigram", "ast"]
        # Sequential: the lexical retrievers share one SQLite connection and take milliseconds.
        rankings = [self._run(n, query, limit, run_scope, intent, timings) for n in available]
        fused = self._fuse(rankings, intent, tests_wanted)
        return _dedupe(fused, all_chunks)[:top], "fused"

    def _dominant(self, intent: Intent, available: list[str]) -> str:
        if intent.name == "exact_match":
            return "trigram"
        return max(available, key=lambda n: (intent.weights.get(GROUP[n], 0), n == "bm25"))

    def _fuse(self, rankings: list[Ranked], intent: Intent, tests_wanted: bool):
        by_chunk: dict[int, SearchResult] = {}
        for ranked in rankings:
            weight = intent.weights.get(GROUP[ranked.retriever], 0.0)
            for rank, hit in enumerate(ranked.hits):
                res = by_chunk.get(hit.chunk_id)
                if res is None:
                    res = by_chunk[hit.chunk_id] = _raw_result(hit, None, None)
                    res.score = 0.0
                res.ranks[ranked.retriever] = rank + 1
                contribution = weight / (self.k + rank + 1)
                res.contributions[ranked.retriever] = contribution
                res.score += contribution
        return self._apply_factors(list(by_chunk.values()), tests_wanted)

    def _apply_factors(self, results: list[SearchResult], tests_wanted: bool):
        """Tests and docs below source (unless asked for), generated and archived files low."""
        for res in results:
            factor = 1.0
            role_factor = (TESTS_WANTED_FACTOR if tests_wanted else ROLE_FACTOR).get(res.role, 1.0)
            if role_factor != 1.0:
                res.factors[res.role] = role_factor
                factor *= role_factor
            if res.flags:
                res.factors[res.flags] = FLAG_FACTOR
                factor *= FLAG_FACTOR
            if any(f"/{d}" in f"/{res.path}" for d in DEMOTED_DIRS):
                res.factors["archive path"] = 0.5
                factor *= 0.5
            res.score *= factor
        return sorted(results, key=lambda r: (-r.score, r.path, r.start_line))

    def _run(self, name: str, query: str, limit: int, scope: str, intent: Intent,
             timings: dict[str, float]) -> Ranked:
        t0 = time.perf_counter()
        if name == "bm25":
            ranked = self.bm25.search(query, limit, scope)
        elif name == "trigram":
            literal = intent.target if intent.name == "exact_match" and intent.target else query
            ranked = self.trigram.search(literal, limit, scope)
        elif name == "ast":
            target = intent.target if intent.name == "find_definition" else None
            ranked = self.ast.search(query, limit, scope, target=target)
        else:  # pragma: no cover - guarded by _UNBUILT
            raise QueryError(_UNBUILT[name])
        timings[name] = (time.perf_counter() - t0) * 1000
        return ranked


def _raw_result(hit: ChunkHit, retriever: str | None, rank: int | None) -> SearchResult:
    ranks: dict[str, int | None] = {n: None for n in Searcher.RETRIEVERS}
    if retriever is not None and rank is not None:
        ranks[retriever] = rank + 1
    return SearchResult(
        path=hit.path, start_line=hit.start_line, end_line=hit.end_line,
        symbol=hit.qualname or hit.name, kind=hit.kind, score=hit.score, ranks=ranks,
        role=hit.role, flags=hit.flags,
    )


def _dedupe(results: list[SearchResult], all_chunks: bool) -> list[SearchResult]:
    if all_chunks:
        return results
    seen: set[str] = set()
    out = []
    for r in results:
        if r.path not in seen:
            seen.add(r.path)
            out.append(r)
    return out
