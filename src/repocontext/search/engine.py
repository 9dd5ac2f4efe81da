"""Manual search: classify the question, run the retrievers it deserves, fuse their ranks.

A confident intent (>= 0.85: a definition keyword, "who calls", a quoted string...) goes
straight to its dominant retriever ("direct"); anything else runs every available retriever
(the SQLite ones one after another on one connection, the query's embedding in a thread beside
them: `_run_many`) and fuses ranks, not scores: contribution = weight / (k + rank + 1), rank from 0,
weights from the intent's profile. Then a centrality boost, min(1 + 0.3 ln(1 + c), 1.5) with c
the number of files referencing the symbol; tests and docs ranked below source unless the
question asks for tests (which puts tests first); generated, minified and archived files
demoted; and at most `PER_FILE` chunks of one file kept unless `all_chunks`.

Before that, two kinds of query get evidence of their own, weighted to dominate the fusion:
a message pasted without quotes whose fixed parts occur verbatim in the code (literal.py), and
a long text (an issue, over 30 words) whose stack-trace frames point into the repository
(frames.py); a long text is always fused, never sent to one retriever on a phrase it contains.

A single `modality` returns that retriever's ranking over every chunk, with the same role and
flag demotions (policy, not fusion). `hybrid` is plain RRF (k = 60) of BM25 and vectors.
"""

from __future__ import annotations

import math
import re
import time
from concurrent.futures import ThreadPoolExecutor
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from ..choices import MAX_TOP, MODALITIES, PER_FILE, RETRIEVERS, SCOPES
from ..errors import EmbeddingModelError, ModelMismatch, QueryError
from ..index.unindexed import definitions_outside_index, first_index_running
from ..store import ChunkHit, Store
from .frames import frame_hits
from .functions import FunctionAnswer, function_answer
from .intent import DIRECT_CONFIDENCE, Intent, about_tests, classify, is_long
from .literal import find_literal, may_be_a_message
from .rerank import RERANK_INTENTS, SecondStage
from .retrievers import (
    REGISTRY,
    Query,
    Ranked,
    Retriever,
    VectorRetriever,
    definition_order,
    symbol_candidates,
)

if TYPE_CHECKING:
    from collections.abc import Callable

    from ..embed.model import EmbeddingModel
    from ..embed.reranker import CrossEncoder

assert tuple(REGISTRY) == RETRIEVERS, "choices.RETRIEVERS names the registry's retrievers"
RRF_K = 40
HYBRID_K = 60
MAX_QUERY_CHARS = 2000
ROLE_FACTOR = {"source": 1.0, "test": 0.5, "tooling": 0.4, "doc": 0.5}
# "tests for X": tests first
TESTS_WANTED_FACTOR = {"source": 0.5, "test": 1.0, "tooling": 0.4, "doc": 0.5}
DEMOTED_DIRS = ("archive/", "archived/", "legacy/", "deprecated/", "examples/old/", "fixtures/")
FLAG_FACTOR = 0.5
EXACT_ONLY = ("trigram",)  # asked in `auto` only for an exact string (anything matches a word)
# A message found verbatim in the code, and the frames of a pasted stack trace, are the most
# direct evidence a query can hold: their weights dominate the fusion.
LITERAL_WEIGHT = 1.0
FRAME_WEIGHT = 1.0
# An issue's text or a traceback (intent.is_long): every retriever is asked.
LONG_WEIGHTS = {"bm25": 0.4, "vector": 0.3, "ast": 0.3, "graph": 0.05}
# When no lexical retriever finds anything, no word of the query is in the code (a typo, a
# made-up word, another project's name): nearest neighbours are then only shown above this
# cosine similarity, not the model's floor (0.2), which every query clears somewhere in a big
# index. Chosen in bench/results/lone_vectors.md: above what made-up words reach, below what
# the labelled questions' answers score.
LONE_VECTOR_SIMILARITY = 0.4
ERROR_LINE = re.compile(
    r"^\s*(?:E\s+)?(?:[A-Za-z_]\w*\.)*[A-Z]\w*(?:Error|Exception|Warning|Exit)\b:\s*\S.*$",
    re.MULTILINE,
)


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


class Searcher:
    """Search over one open store.

    `model` enables the vector retriever (None: lexical, structural and graph only; the reason
    goes in `model_problem` and is reported as a note). `cache_vectors` keeps the vectors in
    memory, for a searcher that answers many queries. `reranker` loads the second stage's model
    (rerank.py; None: no second stage).
    """

    def __init__(
        self,
        store: Store,
        *,
        model: EmbeddingModel | None = None,
        model_problem: str | None = None,
        cache_vectors: bool = False,
        reranker: Callable[[], CrossEncoder | None] | None = None,
        root: Path | None = None,
    ):
        self.store = store
        # the tree's root: while a first index is under way, a definition is also looked for
        # in the files it has not reached (index/unindexed.py)
        self.root = root
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
        # the second stage's model, loaded when a question first needs it
        self.second_stage = SecondStage(store, reranker) if reranker is not None else None

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
        per_file: int | None = PER_FILE,
        second_stage: bool = True,
    ) -> SearchResponse:
        """`per_file`: at most this many chunks of one file in `auto`'s results (None: all;
        `all_chunks` is the same as None). `second_stage`: rerank where it pays (rerank.py);
        off, the first stage's order as it is (the benchmark's baseline)."""
        started = time.perf_counter()
        if modality not in MODALITIES:
            raise QueryError(f"unknown modality {modality!r}; use one of {', '.join(MODALITIES)}")
        if scope is not None and scope not in SCOPES:
            raise QueryError(f"unknown scope {scope!r}; use one of {', '.join(SCOPES)}")
        if not query.strip():
            raise QueryError("the query is empty; say what to look for")
        _check_utf8(query)
        if not 1 <= top <= MAX_TOP:
            raise QueryError(f"--top is {top}; ask for 1 to {MAX_TOP} results")
        if per_file is not None and per_file < 1:
            raise QueryError(f"--per-file is {per_file}; ask for 1 or more chunks of a file")
        notes: list[str] = []
        functions: list[FunctionAnswer] = []
        if len(query) > MAX_QUERY_CHARS:
            notes.append(f"query cut to its first {MAX_QUERY_CHARS} characters")
            query = query[:MAX_QUERY_CHARS]
        intent = classify(query)
        timings: dict[str, float] = {}
        limit = max(50, top * 5)
        pasted = intent.name == "exact_match" and intent.rule == "error message"
        tests_wanted = about_tests(query, pasted) or scope == "tests"
        run_scope = scope or "all"
        if modality in ("vector", "hybrid"):
            self._require_vectors(modality)
        if modality == "hybrid":
            rankings = self._run_many(
                ["bm25", "vector"], query, limit, run_scope, intent, timings, notes
            )
            fused = self._fuse([(r, 1.0) for r in rankings], HYBRID_K)
            results, strategy = self._apply_factors(fused, tests_wanted)[:top], "fused"
        elif modality != "auto":
            ranked = self._run(modality, query, limit, run_scope, intent, timings)
            if modality == "ast" and intent.name == "find_definition":
                ranked = self._with_unindexed(ranked, query, intent, run_scope, timings, notes)
            if ranked.note:
                notes.append(f"{modality}: {ranked.note}")
            results = [_raw_result(h, modality, rank) for rank, h in enumerate(ranked.hits)]
            results, strategy = self._apply_factors(results, tests_wanted)[:top], "direct"
        else:
            cap = None if all_chunks else per_file
            if is_long(query):
                results, functions = self._long(
                    query, limit, run_scope, second_stage, timings, notes
                )
                results, strategy = _per_file(results, cap)[:top], "fused"
                intent = Intent("understand_code", 0.5, None, "long text")
            else:
                results, strategy, intent = self._auto(
                    query, intent, top, limit, run_scope, tests_wanted, cap, second_stage,
                    timings, notes,
                )  # fmt: skip
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
            functions=functions,
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
            self.vector.check_model()  # (loads the model, the first time)
        except (ModelMismatch, EmbeddingModelError) as exc:
            notes.append(f"vector search is off: {exc}")
            return False
        return True

    def _require_vectors(self, modality: str) -> None:
        if self.vector is None:
            raise QueryError(
                f"--modality {modality} needs the embedding model: "
                f"{self.model_problem or 'no model is loaded'}"
            )
        try:
            self.vector.check_model()
        except EmbeddingModelError as exc:
            raise QueryError(f"--modality {modality} needs the embedding model: {exc}") from exc

    def _auto(
        self, query, intent, top, limit, scope, tests_wanted, per_file, second_stage, timings, notes
    ):
        if _may_be_a_message(query, intent):
            t0 = time.perf_counter()
            literal = find_literal(self.store, query, limit, scope)
            timings["literal"] = (time.perf_counter() - t0) * 1000
            if literal.hits:
                intent = Intent("exact_match", 0.85, literal.fragments[0], "found in the code")
                tests_wanted = scope == "tests" or about_tests(query, pasted=True)
                names = [n for n in self.retrievers if n not in EXACT_ONLY]
                names = [n for n in names if self.retrievers[n] is not self.vector
                         or self._vectors_usable(notes)]  # fmt: skip
                rankings = self._run_many(names, query, limit, scope, intent, timings, notes)
                weighted = [(Ranked("trigram", literal.hits), LITERAL_WEIGHT)] + [
                    (r, 0.2 if r.retriever in ("bm25", "vector") else 0.1) for r in rankings
                ]
                fused = self._fuse(weighted, self.k)
                self._centrality_boost(fused)
                results = self._apply_factors(fused, tests_wanted)
                return _per_file(results, per_file)[:top], "fused", intent
        if intent.confidence >= DIRECT_CONFIDENCE:
            # never the vectors: the embedding model is not even loaded for these
            lexical = [n for n, r in self.retrievers.items() if r is not self.vector]
            dominant = self._dominant(intent, lexical)
            ranked = self._run(dominant, query, limit, scope, intent, timings)
            if dominant == "ast":
                ranked = self._with_unindexed(ranked, query, intent, scope, timings, notes)
            if ranked.hits:
                # stable: keeps the retriever's order within each role
                factors = TESTS_WANTED_FACTOR if tests_wanted else ROLE_FACTOR
                hits = sorted(ranked.hits, key=lambda h: factors.get(h.role, 1.0) < 1.0)
                results = [_raw_result(h, dominant, rank) for rank, h in enumerate(hits)]
                return _per_file(results, per_file)[:top], "direct", intent
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
        else:
            available = self._available(intent, notes)
        rankings = self._run_many(available, query, limit, scope, intent, timings, notes)
        if intent.name == "find_definition":
            rankings = [
                self._with_unindexed(r, query, intent, scope, timings, notes)
                if r.retriever == "ast" else r
                for r in rankings
            ]  # fmt: skip
        weights = {n: intent.weights.get(self.retrievers[n].group, 0.0) or 0.1 for n in available}
        fused = self._fuse([(r, weights.get(r.retriever, 0.0)) for r in rankings], self.k)
        self._centrality_boost(fused)
        results = self._apply_factors(fused, tests_wanted)
        if intent.name == "find_definition" and self.root and first_index_running(self.store):
            # BM25 and the graph have not seen the files the index has not reached: a look-alike
            # they know (`HttpResponse` for `HTTPResponse`) would outrank the definition found
            # there. While the index is partial, definitions of the exact name come first.
            exact = set(symbol_candidates(query, intent.target))
            results.sort(key=lambda r: r.name not in exact and r.symbol not in exact)
        if second_stage and intent.name in RERANK_INTENTS and self.second_stage is not None:
            t0 = time.perf_counter()
            results = self.second_stage.rerank(query, results)
            timings["rerank"] = (time.perf_counter() - t0) * 1000
            if self.second_stage.problem:
                notes.append(f"the second stage is off: {self.second_stage.problem}")
        return _per_file(results, per_file)[:top], "fused", intent

    def _with_unindexed(self, ranked, query, intent, scope, timings, notes) -> Ranked:
        """During a first index: with its own, the definitions in files it has not reached."""
        if self.root is None or not first_index_running(self.store):
            return ranked
        t0 = time.perf_counter()
        names = symbol_candidates(query, intent.target)
        extra = [
            h for h in definitions_outside_index(self.root, self.store, names)
            if scope == "all" or h.role == ("test" if scope == "tests" else "source")
        ]  # fmt: skip
        timings["unindexed"] = (time.perf_counter() - t0) * 1000
        notes.append(
            "the index is still being built: "
            + (f"{len(extra)} definition(s) found in files it has not reached yet (git grep)"
               if extra else "files it has not reached yet were searched too (git grep)")
        )  # fmt: skip
        hits = sorted(ranked.hits + extra, key=definition_order(names))
        return Ranked(ranked.retriever, hits, ranked.note)

    def _long(self, query, limit, scope, second_stage, timings, notes):
        """An issue's text or a stack trace: every retriever, plus the frames of its traces
        and the messages of its error lines, found verbatim (see frames.py and literal.py).
        Every chunk, ranked, and the function-level answer (functions.py)."""
        intent = Intent("understand_code", 0.5, None, "long text")
        t0 = time.perf_counter()
        evidence: list[tuple[Ranked, float]] = []
        frames = frame_hits(self.store, query, limit)
        if frames:
            evidence.append((Ranked("ast", frames), FRAME_WEIGHT))
        timings["frames"] = (time.perf_counter() - t0) * 1000
        t0 = time.perf_counter()
        for line in dict.fromkeys(m.group(0).strip() for m in ERROR_LINE.finditer(query)):
            literal = find_literal(self.store, line, limit, scope)
            if literal.hits:
                evidence.append((Ranked("trigram", literal.hits), LITERAL_WEIGHT))
                break
        timings["literal"] = (time.perf_counter() - t0) * 1000
        names = [n for n in LONG_WEIGHTS if n in self.retrievers]
        names = [n for n in names if self.retrievers[n] is not self.vector
                 or self._vectors_usable(notes)]  # fmt: skip
        kept: dict = {}
        rankings = self._run_many(names, query, limit, scope, intent, timings, notes, kept)
        fused = self._fuse(evidence + [(r, LONG_WEIGHTS[r.retriever]) for r in rankings], self.k)
        self._centrality_boost(fused)
        results = self._apply_factors(fused, tests_wanted=False)
        t0 = time.perf_counter()
        similar = None
        if self.vector is not None and "vector" in kept:
            vector = kept["vector"]
            similar = lambda ids: self.vector.similarities(vector, ids)  # noqa: E731
        functions = function_answer(
            self.store, query, results, symbol_candidates(query, None), similar
        )
        timings["functions"] = (time.perf_counter() - t0) * 1000
        return results, functions

    def _dominant(self, intent: Intent, available: list[str]) -> str:
        if intent.name == "exact_match":
            return "trigram"
        return max(
            available, key=lambda n: (intent.weights.get(self.retrievers[n].group, 0), n == "bm25")
        )

    def _run_many(
        self, names, query, limit, scope, intent, timings, notes, keep: dict | None = None
    ) -> list[Ranked]:
        """The SQLite retrievers one after the other (they share one connection, so threads
        would only queue on it), while the query is embedded in a thread: ONNX releases the
        GIL, so the embedding overlaps the SQL work instead of adding to it."""
        embedding = None
        vectors = self.vector
        if "vector" in names and vectors is not None:
            if self._pool is None:
                self._pool = ThreadPoolExecutor(max_workers=1, thread_name_prefix="embed")
            t0 = time.perf_counter()
            embedding = self._pool.submit(vectors.embed, query)
        rankings = [
            self._run(n, query, limit, scope, intent, timings, fusing=True)
            for n in names
            if n != "vector"
        ]
        if embedding is not None and vectors is not None:
            vector = embedding.result()
            if keep is not None:
                keep["vector"] = vector  # the query's embedding, for a later stage
            timings["embed_query"] = (time.perf_counter() - t0) * 1000
            t1 = time.perf_counter()
            rankings.append(
                vectors.search(Query(query, limit, scope, intent, fusing=True, vector=vector))
            )
            timings["vector"] = (time.perf_counter() - t1) * 1000
        for ranked in rankings:
            if ranked.note and not ranked.hits:
                notes.append(f"{ranked.retriever}: {ranked.note}")
            elif ranked.note and ranked.retriever == "vector":
                notes.append(f"vector: {ranked.note}")
        return self._without_lone_weak_neighbours(rankings, notes)

    def _without_lone_weak_neighbours(self, rankings: list[Ranked], notes: list[str]):
        """Where only the semantic retrievers found anything, keep their hits above
        LONE_VECTOR_SIMILARITY: a query none of whose words is in the code gets its nearest
        chunks anyway, and below that they are unrelated ("nothing found" is the answer)."""
        semantic = {n for n, r in self.retrievers.items() if r.group == "semantic"}
        lexical = [r for r in rankings if r.retriever not in semantic]
        if not lexical or any(r.hits for r in lexical):
            return rankings
        kept = []
        for ranked in rankings:
            if ranked.retriever in semantic and ranked.hits:
                close = [h for h in ranked.hits if h.score >= LONE_VECTOR_SIMILARITY]
                if len(close) < len(ranked.hits):
                    notes.append(
                        f"{ranked.retriever}: no word of the query is in the code, and "
                        f"{len(ranked.hits) - len(close)} chunks were too far in meaning to "
                        f"show (cosine similarity below {LONE_VECTOR_SIMILARITY})"
                    )
                ranked = Ranked(ranked.retriever, close, ranked.note)
            kept.append(ranked)
        return kept

    def _fuse(self, rankings: list[tuple[Ranked, float]], k: int):
        """Weighted reciprocal-rank fusion of (ranking, weight) pairs. Two rankings may come
        from one index (a message's literal runs and the trigram retriever): a chunk's rank
        under that name is its first."""
        by_chunk: dict[int, SearchResult] = {}
        for ranked, weight in rankings:
            seen: set[int] = set()  # a retriever may list a chunk twice (graph: caller, importer)
            for rank, hit in enumerate(ranked.hits):
                if hit.chunk_id in seen:
                    continue
                seen.add(hit.chunk_id)
                res = by_chunk.get(hit.chunk_id)
                if res is None:
                    res = by_chunk[hit.chunk_id] = _raw_result(hit, None, None)
                    res.score = 0.0
                name = ranked.retriever
                if res.ranks[name] is None:
                    res.ranks[name] = rank + 1
                contribution = weight / (k + rank + 1)
                res.contributions[name] = res.contributions.get(name, 0.0) + contribution
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
        if isinstance(retriever, VectorRetriever):
            vector = retriever.embed(query)
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
        chunk_id=hit.chunk_id,
    )


def _check_utf8(query: str) -> None:
    """A query must be text: bytes that are not UTF-8 (a command line in another encoding
    arrives with them as lone surrogates) cannot be embedded, and match nothing verbatim."""
    try:
        query.encode("utf-8")
    except UnicodeEncodeError as exc:
        code = ord(query[exc.start])
        what = f"byte 0x{code - 0xDC00:02x}" if 0xDC80 <= code <= 0xDCFF else f"U+{code:04X}"
        raise QueryError(
            f"the query is not UTF-8 text ({what} at character {exc.start + 1}); type it "
            "again as UTF-8 (the terminal's locale, LANG, may be another encoding)"
        ) from None


def _per_file(results: list[SearchResult], cap: int | None) -> list[SearchResult]:
    """At most `cap` chunks of each file, in rank order (None: every chunk)."""
    if cap is None:
        return results
    count: dict[str, int] = {}
    out = []
    for r in results:
        count[r.path] = count.get(r.path, 0) + 1
        if count[r.path] <= cap:
            out.append(r)
    return out


def _may_be_a_message(query: str, intent: Intent) -> bool:
    """Worth looking for verbatim in the code: not a question, not a confident definition,
    reference or impact question, a few words at least (literal.py)."""
    if intent.confidence >= DIRECT_CONFIDENCE and intent.rule != "error message":
        return False
    return may_be_a_message(query)
