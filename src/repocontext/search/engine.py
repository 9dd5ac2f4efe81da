"""Manual search: classify the question, run the retrievers it deserves, fuse their ranks.

A confident intent (>= 0.85: a definition keyword, "who calls", a quoted string...) goes
straight to its dominant retriever ("direct"); anything else runs every available retriever in
parallel and fuses ranks, not scores: contribution = weight / (k + rank + 1), rank from 0,
weights from the intent's profile. Then a centrality boost, min(1 + 0.3 ln(1 + c), 1.5) with c
the number of files referencing the symbol; tests and docs ranked below source unless the
question is about tests (which puts tests first); generated, minified and archived files
demoted; and only the best chunk of each file kept unless `all_chunks`.

A single `modality` returns that retriever's ranking over every chunk, with the same role and
flag demotions (policy, not fusion). `hybrid` is plain RRF (k = 60) of BM25 and vectors.
"""

from __future__ import annotations

import math
import time
from concurrent.futures import ThreadPoolExecutor
from dataclasses import asdict, dataclass, field

from ..embed.model import EmbeddingModel
from ..errors import ModelMismatch, QueryError
from ..store import ChunkHit, Store
from .intent import DIRECT_CONFIDENCE, Intent, about_tests, classify
from .retrievers import REGISTRY, Query, Ranked, Retriever, VectorRetriever

RETRIEVERS = tuple(REGISTRY)
MODALITIES = ("auto", *RETRIEVERS, "hybrid")
SCOPES = ("all", "src", "tests")
RRF_K = 40
HYBRID_K = 60
MAX_QUERY_CHARS = 2000
MAX_TOP = 500  # results a query may ask for (each retriever looks at five times as many)
ROLE_FACTOR = {"source": 1.0, "test": 0.5, "doc": 0.5}
TESTS_WANTED_FACTOR = {"source": 0.5, "test": 1.0, "doc": 0.5}  # "tests for X": tests first
DEMOTED_DIRS = ("archive/", "archived/", "legacy/", "deprecated/", "examples/old/", "fixtures/")
FLAG_FACTOR = 0.5
EXACT_ONLY = ("trigram",)  # asked in `auto` only for an exact string (anything matches a word)


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
            item.pop("name")
            item["score"] = round(r.score, 6)
            item["contributions"] = {k: round(v, 6) for k, v in r.contributions.items()}
            out["results"].append(item)
        return out


class Searcher:
    """Search over one open store.

    `model` enables the vector retriever (None: lexical, structural and graph only; the reason
    goes in `model_problem` and is reported as a note). `cache_vectors` keeps the vectors in
    memory, for a searcher that answers many queries.
    """

    def __init__(
        self,
        store: Store,
        *,
        model: EmbeddingModel | None = None,
        model_problem: str | None = None,
        cache_vectors: bool = False,
    ):
        self.store = store
        self.k = RRF_K
        self.retrievers: dict[str, Retriever] = {
            name: r
            for name, make in REGISTRY.items()
            if (r := make(store, model, cache_vectors)) is not None
        }
        vector = self.retrievers.get("vector")
        self.vector = vector if isinstance(vector, VectorRetriever) else None
        self.model_problem = model_problem
        self._pool: ThreadPoolExecutor | None = None

    def close(self) -> None:
        if self._pool is not None:
            self._pool.shutdown(wait=False)

    def search(
        self,
        query: str,
        *,
        top: int = 10,
        scope: str | None = None,
        modality: str = "auto",
        all_chunks: bool = False,
    ) -> SearchResponse:
        started = time.perf_counter()
        if modality not in MODALITIES:
            raise QueryError(f"unknown modality {modality!r}; use one of {', '.join(MODALITIES)}")
        if scope is not None and scope not in SCOPES:
            raise QueryError(f"unknown scope {scope!r}; use one of {', '.join(SCOPES)}")
        if not query.strip():
            raise QueryError("the query is empty; say what to look for")
        if not 1 <= top <= MAX_TOP:
            raise QueryError(f"--top is {top}; ask for 1 to {MAX_TOP} results")
        notes: list[str] = []
        if len(query) > MAX_QUERY_CHARS:
            notes.append(f"query cut to its first {MAX_QUERY_CHARS} characters")
            query = query[:MAX_QUERY_CHARS]
        intent = classify(query)
        timings: dict[str, float] = {}
        limit = max(50, top * 5)
        tests_wanted = about_tests(query) or scope == "tests"
        run_scope = scope or "all"
        if modality in ("vector", "hybrid"):
            self._require_vectors(modality)
        if modality == "hybrid":
            rankings = self._run_many(
                ["bm25", "vector"], query, limit, run_scope, intent, timings, notes
            )
            fused = self._fuse(rankings, {"bm25": 1.0, "vector": 1.0}, HYBRID_K)
            results, strategy = self._apply_factors(fused, tests_wanted)[:top], "fused"
        elif modality != "auto":
            ranked = self._run(modality, query, limit, run_scope, intent, timings)
            if ranked.note:
                notes.append(f"{modality}: {ranked.note}")
            results = [_raw_result(h, modality, rank) for rank, h in enumerate(ranked.hits)]
            results, strategy = self._apply_factors(results, tests_wanted)[:top], "direct"
        else:
            results, strategy = self._auto(
                query, intent, top, limit, run_scope, tests_wanted, all_chunks, timings, notes
            )
        timings["total"] = (time.perf_counter() - started) * 1000
        return SearchResponse(
            query=query,
            intent=intent.name,
            confidence=intent.confidence,
            strategy=strategy,
            results=results,
            timings_ms={k: round(v, 3) for k, v in timings.items()},
            modality=modality,
            rule=intent.rule,
            notes=notes,
        )

    # --- auto --------------------------------------------------------------------------------
    def _available(self, intent: Intent, notes: list[str]) -> list[str]:
        names = []
        for name, retriever in self.retrievers.items():
            if intent.weights.get(retriever.group, 0) <= 0:
                continue
            if name in EXACT_ONLY and intent.name != "exact_match":
                continue
            if retriever is self.vector and not self._vectors_usable(notes):
                continue
            names.append(name)
        if self.vector is None and intent.weights.get("semantic", 0) > 0:
            self._vectors_usable(notes)  # says why vector search is off
        return names

    def _vectors_usable(self, notes: list[str]) -> bool:
        if self.vector is None:
            if self.model_problem:
                notes.append(f"vector search is off: {self.model_problem}")
            return False
        try:
            self.vector.check_model()
        except ModelMismatch as exc:
            notes.append(f"vector search is off: {exc}")
            return False
        return True

    def _require_vectors(self, modality: str) -> None:
        if self.vector is None:
            raise QueryError(
                f"--modality {modality} needs the embedding model: "
                f"{self.model_problem or 'no model is loaded'}"
            )
        self.vector.check_model()

    def _auto(self, query, intent, top, limit, scope, tests_wanted, all_chunks, timings, notes):
        available = self._available(intent, notes)
        if intent.confidence >= DIRECT_CONFIDENCE:
            dominant = self._dominant(intent, available)
            ranked = self._run(dominant, query, limit, scope, intent, timings)
            if ranked.hits:
                # stable: keeps the retriever's order within each role
                factors = TESTS_WANTED_FACTOR if tests_wanted else ROLE_FACTOR
                hits = sorted(ranked.hits, key=lambda h: factors.get(h.role, 1.0) < 1.0)
                results = [_raw_result(h, dominant, rank) for rank, h in enumerate(hits)]
                return _dedupe(results, all_chunks)[:top], "direct"
            notes.append(
                f"{dominant} found nothing"
                + (f" ({ranked.note})" if ranked.note else "")
                + "; fell back to fusing the other retrievers"
            )
            available = [
                n
                for n, r in self.retrievers.items()
                if n != dominant and (r is not self.vector or self._vectors_usable([]))
            ]
        rankings = self._run_many(available, query, limit, scope, intent, timings, notes)
        weights = {n: intent.weights.get(self.retrievers[n].group, 0.0) or 0.1 for n in available}
        fused = self._fuse(rankings, weights, self.k)
        self._centrality_boost(fused)
        return _dedupe(self._apply_factors(fused, tests_wanted), all_chunks)[:top], "fused"

    def _dominant(self, intent: Intent, available: list[str]) -> str:
        if intent.name == "exact_match":
            return "trigram"
        return max(
            available, key=lambda n: (intent.weights.get(self.retrievers[n].group, 0), n == "bm25")
        )

    def _run_many(self, names, query, limit, scope, intent, timings, notes) -> list[Ranked]:
        """The SQLite retrievers one after the other (they share one connection, so threads
        would only queue on it), while the query is embedded in a thread: ONNX releases the
        GIL, so the embedding overlaps the SQL work instead of adding to it."""
        embedding = None
        if "vector" in names and self.vector is not None:
            if self._pool is None:
                self._pool = ThreadPoolExecutor(max_workers=1, thread_name_prefix="embed")
            t0 = time.perf_counter()
            embedding = self._pool.submit(self.vector.embed, query)
        rankings = [
            self._run(n, query, limit, scope, intent, timings, fusing=True)
            for n in names
            if n != "vector"
        ]
        if embedding is not None:
            vector = embedding.result()
            timings["embed_query"] = (time.perf_counter() - t0) * 1000
            t1 = time.perf_counter()
            rankings.append(
                self.vector.search(Query(query, limit, scope, intent, fusing=True, vector=vector))
            )
            timings["vector"] = (time.perf_counter() - t1) * 1000
        for ranked in rankings:
            if ranked.note and not ranked.hits:
                notes.append(f"{ranked.retriever}: {ranked.note}")
            elif ranked.note and ranked.retriever == "vector":
                notes.append(f"vector: {ranked.note}")
        return rankings

    def _fuse(self, rankings: list[Ranked], weights: dict[str, float], k: int):
        by_chunk: dict[int, SearchResult] = {}
        for ranked in rankings:
            weight = weights.get(ranked.retriever, 0.0)
            for rank, hit in enumerate(ranked.hits):
                res = by_chunk.get(hit.chunk_id)
                if res is None:
                    res = by_chunk[hit.chunk_id] = _raw_result(hit, None, None)
                    res.score = 0.0
                if res.ranks[ranked.retriever] is not None:
                    continue  # a retriever may list a chunk twice (graph: caller and importer)
                res.ranks[ranked.retriever] = rank + 1
                contribution = weight / (k + rank + 1)
                res.contributions[ranked.retriever] = contribution
                res.score += contribution
        return list(by_chunk.values())

    def _centrality_boost(self, results: list[SearchResult]) -> None:
        counts = self.store.graph.centrality([r.name for r in results if r.name])
        for res in results:
            c = counts.get(res.name or "", 0)
            if c:
                boost = min(1 + 0.3 * math.log(1 + c), 1.5)
                res.factors["centrality"] = round(boost, 3)
                res.score *= boost

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

    def _run(
        self,
        name: str,
        query: str,
        limit: int,
        scope: str,
        intent: Intent,
        timings: dict[str, float],
        fusing: bool = False,
    ) -> Ranked:
        retriever = self.retrievers.get(name)
        if retriever is None:
            raise QueryError(f"{name} search needs the embedding model: {self.model_problem}")
        t0 = time.perf_counter()
        vector = None
        if retriever is self.vector:
            vector = self.vector.embed(query)
            timings["embed_query"] = (time.perf_counter() - t0) * 1000
        ranked = retriever.search(Query(query, limit, scope, intent, fusing, vector))
        timings[name] = (time.perf_counter() - t0) * 1000
        return ranked


def _raw_result(hit: ChunkHit, retriever: str | None, rank: int | None) -> SearchResult:
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
