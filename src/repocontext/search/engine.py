"""Manual search: classify the question, run the retrievers it deserves, fuse their ranks.

A confident intent (>= 0.85: a definition keyword, "who calls", a quoted string...) goes
straight to its dominant retriever ("direct"); anything else runs every usable retriever the
intent's profile weighs and fuses their ranks (fusion.py), then keeps at most `PER_FILE` chunks
of one file unless `all_chunks`. The SQL retrievers run one after another on the connection
they share (threads would only queue on it); a retriever's preparation (the query's
embedding) runs in a thread beside them (`_run_many`).

Before that, two kinds of query get evidence of their own, weighted to dominate the fusion:
a message pasted without quotes whose fixed parts occur verbatim in the code (literal.py), and
a long text (an issue, over 30 words) whose stack-trace frames point into the repository
(frames.py); a long text is always fused, never sent to one retriever on a phrase it contains.

A single `modality` returns that retriever's ranking over every chunk, with the same role and
flag demotions (policy, not fusion). `hybrid` is plain RRF (k = 60) of the word and meaning
retrievers. What sets one retriever apart from another (its cost, whether it can answer now,
what it prepares) is an attribute of the retriever (retrievers.py): no retriever is named here.
About 550 lines: the five ways a question is answered (direct, fused, a message found verbatim,
a long text, one modality) share the one Searcher's retrievers and pool.
"""

from __future__ import annotations

import re
import time
from collections import Counter
from concurrent.futures import Future, ThreadPoolExecutor
from dataclasses import replace
from pathlib import Path
from typing import TYPE_CHECKING, Any

from ..choices import MAX_TOP, MODALITIES, PER_FILE, RETRIEVERS, SCOPES
from ..errors import ModelMismatch, QueryError
from ..index.unindexed import definitions_outside_index, first_index_running
from ..runtime.threads import single_pool
from ..store import Store
from .frames import frame_hits
from .functions import FunctionAnswer, function_answer
from .fusion import (
    HYBRID_K,
    RRF_K,
    apply_factors,
    call_neighbours,
    centrality_boost,
    definition_first,
    exact_case_first,
    fuse,
    one_copy,
    role_first,
    wrappers_lower,
)
from .intent import DIRECT_CONFIDENCE, Intent, about_tests, classify, is_long, quoted_inside
from .literal import find_literal, may_be_a_message, runs_of
from .report import called_names, code_of
from .rerank import RERANK_INTENTS, SecondStage
from .results import (
    SearchResponse,
    SearchResult,
    after_the_first,
    cap_per_file,
    one_piece_each,
    raw_result,
)
from .retrievers import REGISTRY, Query, Ranked, Retriever, definition_order, symbol_candidates

if TYPE_CHECKING:
    from collections.abc import Callable

    from ..embed.model import EmbeddingModel
    from ..embed.reranker import CrossEncoder

    FileCap = Callable[[list[SearchResult]], list[SearchResult]]

__all__ = ["PER_FILE", "SearchResponse", "SearchResult", "Searcher"]

assert tuple(REGISTRY) == RETRIEVERS, "choices.RETRIEVERS names the registry's retrievers"
MAX_QUERY_CHARS = 2000
# How deep each retriever's list is read for the ranking, whatever `top` asks: a deeper list
# changes the fusion (more of the call neighbours found, more definitions a name may mean), and
# the first results must not depend on how many were asked for. The editor asked for 20 (lists
# 100 deep), the command line and the benchmarks 10 (50 deep): of the 521 labelled queries, 5
# crossed the top-5 line at 100 (3 out, 2 in; Go 22.3 -> 22.0 per 25, Python 19.4 -> 19.2).
CANDIDATES = 50
# Results past those the ranking at CANDIDATES gives come after them, from lists twice, four
# times... as deep, up to `top` times DEEPER: asking for more adds results, never reorders the
# first ones.
DEEPER = 5
# A message found verbatim in the code is the most direct evidence a query can hold: its weight
# dominates the fusion.
LITERAL_WEIGHT = 1.0
# What a question quotes and the code holds verbatim (`how is the "Did you mean this?" list
# built`): beside the question's own weights, as much as its words and its meaning together.
QUOTED_WEIGHT = 0.7
MAX_QUOTED = 8  # quoted texts looked up at most (a pasted report may quote dozens of paths)
# What a pasted report holds beside its words, each kind weighted by what it predicted on
# repositories held out of the tuning (bench/search_tuning.py, bench/results/search_sets.md):
# the frames of a stack trace, an error line found verbatim, and the definitions of what the
# reporter's own code calls (report.py). Identifiers named in the prose count through the
# structural retriever's share of LONG_WEIGHTS. The code's weight, 0 on 15 repositories (0.3
# cost jinja2's and gin's reports their file), is 0.3 on 21: left out of the tuning, each
# repository gains on the rest's choice (file@5 + function@10, 1.639 -> 1.669) and no
# language's mean drops; it gives Rust back the top-5 the issue 52 fixes cost it.
REPORT_EVIDENCE = {"traceback": 1.0, "error_message": 1.0, "code": 0.3}
# Beside a message found verbatim, the other retrievers' weights, by group.
WITH_A_LITERAL = {"text": 0.2, "semantic": 0.2, "structural": 0.1, "graph": 0.1}
# An issue's text or a traceback (intent.is_long): every retriever is asked, weighted by group.
LONG_WEIGHTS = {"text": 0.4, "semantic": 0.3, "structural": 0.3, "graph": 0.05}
# The groups `--modality hybrid` fuses: words and meaning.
HYBRID_GROUPS = ("text", "semantic")
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


class Searcher:
    """Search over one open store.

    `model` enables the semantic retriever (None: lexical, structural and graph only; the
    reason goes in `model_problem` and is reported as a note). `cache_vectors` keeps the
    vectors in memory, for a searcher that answers many queries. `reranker` loads the second
    stage's model (rerank.py; None: no second stage).
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
            name: make(store, model, model_problem, cache_vectors)
            for name, make in REGISTRY.items()
        }
        # the retriever a message found verbatim counts under, and a stack trace's frames
        self._exact = next(n for n, r in self.retrievers.items() if r.answers_exact_strings)
        self._definitions = next(n for n, r in self.retrievers.items() if r.finds_definitions)
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
        per_file: int | None = None,
        second_stage: bool = True,
    ) -> SearchResponse:
        """`per_file`: at most this many chunks of one file in `auto`'s results (None: PER_FILE,
        one more for each CHUNKS_PER_PLACE chunks a file has, up to PER_FILE_MOST;
        `all_chunks`: every one). `second_stage`: rerank where it pays (rerank.py); off, the
        first stage's order as it is (the benchmark's baseline)."""
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
        if len(query) > MAX_QUERY_CHARS:
            notes.append(f"query cut to its first {MAX_QUERY_CHARS} characters")
            query = query[:MAX_QUERY_CHARS]
        intent = classify(query)
        timings: dict[str, float] = {}
        pasted = intent.name == "exact_match" and intent.rule == "error message"
        tests_wanted = about_tests(query, pasted) or scope == "tests"
        ask = (query, intent, modality, top, scope or "all", tests_wanted, all_chunks, per_file)
        results, strategy, intent, functions = self._answer(
            *ask, CANDIDATES, second_stage, timings, notes
        )
        depth, cap, found = CANDIDATES, self._file_cap(all_chunks, per_file), len(results)
        while len(results) < top and depth < top * DEEPER:  # more asked for than ranked
            depth *= 2  # the same depths whatever `top`: a longer list starts with a shorter one
            more = self._answer(*ask, depth, False, {}, [])[0]
            results = after_the_first(results, more, top, cap if modality == "auto" else list)
            if len(more) <= found:  # the lists hold no more than that: deeper finds the same
                break
            found = len(more)
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

    def _answer(
        self, query, intent, modality, top, run_scope, tests_wanted, all_chunks, per_file, limit,
        second_stage, timings, notes,
    ):  # fmt: skip
        """The results of `search` with each retriever's list `limit` deep: (results, strategy,
        intent, the function-level answer)."""
        functions: list[FunctionAnswer] = []
        if modality == "hybrid":
            names = [
                n
                for n, r in self.retrievers.items()
                if r.group in HYBRID_GROUPS and not r.answers_exact_strings
            ]
            self._require(modality, names)
            rankings = self._run_many(names, query, limit, run_scope, intent, timings, notes)
            fused = fuse([(r, 1.0) for r in rankings], HYBRID_K)
            results, strategy = apply_factors(fused, tests_wanted)[:top], "fused"
        elif modality != "auto":
            self._require(modality, [modality])
            ranked = self._run(modality, query, limit, run_scope, intent, timings)
            if modality == self._definitions and intent.name == "find_definition":
                ranked = self._with_unindexed(ranked, query, intent, run_scope, timings, notes)
            if ranked.note:
                notes.append(f"{modality}: {ranked.note}")
            results = [raw_result(h, modality, rank) for rank, h in enumerate(ranked.hits)]
            results, strategy = apply_factors(results, tests_wanted)[:top], "direct"
        else:
            cap = self._file_cap(all_chunks, per_file)
            if is_long(query):
                results, functions = self._long(
                    query, top, limit, run_scope, second_stage, timings, notes
                )
                results, strategy = cap(results)[:top], "fused"
                intent = Intent("understand_code", 0.5, None, "long text")
            else:
                results, strategy, intent = self._auto(
                    query, intent, top, limit, run_scope, tests_wanted, cap, second_stage,
                    timings, notes,
                )  # fmt: skip
        return results, strategy, intent, functions

    # --- which retrievers --------------------------------------------------------------------
    def _usable(self, names, notes: list[str] | None) -> list[str]:
        """Those of `names` that can answer now; why each other cannot goes in `notes`."""
        kept = []
        for name in names:
            problem = self.retrievers[name].problem()
            if problem is None:
                kept.append(name)
            elif notes is not None:
                notes.append(f"{name} search is off: {problem}")
        return kept

    def _require(self, modality: str, names: list[str]) -> None:
        """Asked for by name, a retriever that cannot answer is an error, not a note."""
        for name in names:
            retriever = self.retrievers[name]
            problem = retriever.problem()
            if isinstance(problem, ModelMismatch):
                raise problem  # its message says how to fix the index
            if problem is not None:
                raise QueryError(
                    f"--modality {modality} needs {retriever.needs}: {problem}"
                ) from problem

    def _available(self, intent: Intent, notes: list[str]) -> list[str]:
        """The retrievers the intent's profile weighs, that can answer now."""
        weighed = [
            name
            for name, r in self.retrievers.items()
            if intent.weights.get(r.group, 0) > 0
            and (intent.name == "exact_match" or not r.answers_exact_strings)
        ]
        return self._usable(weighed, notes)

    def _dominant(self, intent: Intent, available: list[str]) -> str:
        """The one retriever a confident question goes to: the heaviest in its profile (the
        first in the registry among equals)."""
        if intent.name == "exact_match":
            return self._exact
        return max(available, key=lambda n: intent.weights.get(self.retrievers[n].group, 0))

    def _file_cap(self, all_chunks: bool, per_file: int | None) -> FileCap:
        """What `auto` keeps of each file: every chunk; or a long definition once (its best
        piece), then `per_file` chunks of each file, or by default PER_FILE and one more for
        each CHUNKS_PER_PLACE chunks the file has, up to PER_FILE_MOST (a file holding much of
        the code holds much of the answers: zod's types.ts, cJSON.c; but one file never fills
        the list)."""
        if all_chunks:
            return lambda results: results
        if per_file is not None:
            return lambda results: cap_per_file(self._one_piece_each(results), per_file)

        def by_size(results: list[SearchResult]) -> list[SearchResult]:
            results = self._one_piece_each(results)
            shown = Counter(r.path for r in results)
            crowded = [path for path, n in shown.items() if n > PER_FILE]
            return cap_per_file(results, PER_FILE, self.store.chunks_per_file(crowded))

        return by_size

    def _one_piece_each(self, results: list[SearchResult]) -> list[SearchResult]:
        """A long definition's pieces after its best one left out (results.py)."""
        shown: Counter[tuple[str, str | None]] = Counter(
            (r.path, r.symbol) for r in results if r.symbol and r.chunk_id
        )
        repeated = [r.chunk_id for r in results if r.chunk_id and shown[(r.path, r.symbol)] > 1]
        if not repeated:
            return results
        return one_piece_each(results, self.store.first_pieces(repeated))

    # --- auto --------------------------------------------------------------------------------
    def _auto(
        self, query, intent, top, limit, scope, tests_wanted, cap, second_stage, timings, notes
    ):
        if _may_be_a_message(query, intent):
            t0 = time.perf_counter()
            literal = find_literal(self.store, query, limit, scope)
            timings["literal"] = (time.perf_counter() - t0) * 1000
            if literal.hits:
                intent = Intent("exact_match", 0.85, literal.fragments[0], "found in the code")
                tests_wanted = scope == "tests" or about_tests(query, pasted=True)
                names = [n for n, r in self.retrievers.items() if not r.answers_exact_strings]
                names = self._usable(names, notes)
                rankings = self._run_many(names, query, limit, scope, intent, timings, notes)
                weighted = [(Ranked(self._exact, literal.hits), LITERAL_WEIGHT)] + [
                    (r, WITH_A_LITERAL[self.retrievers[r.retriever].group]) for r in rankings
                ]
                fused = fuse(weighted, self.k)
                self._by_the_index(fused)
                results = one_copy(self.store, apply_factors(fused, tests_wanted), top, notes)
                return cap(results)[:top], "fused", intent
        if intent.confidence >= DIRECT_CONFIDENCE:
            # never a retriever that needs a model: it is not even loaded for these
            cheap = [n for n, r in self.retrievers.items() if r.cost == "sql"]
            dominant = self._dominant(intent, cheap)
            ranked = self._run(dominant, query, limit, scope, intent, timings)
            if dominant == self._definitions:
                ranked = self._with_unindexed(ranked, query, intent, scope, timings, notes)
            if ranked.hits:
                hits = role_first(ranked.hits, tests_wanted)
                results = [raw_result(h, dominant, rank) for rank, h in enumerate(hits)]
                results = one_copy(self.store, results, top, notes)
                if dominant == self._exact and (name := _quoted_name(intent)):
                    results = definition_first(results, name)
                return cap(results)[:top], "direct", intent
            notes.append(
                f"{dominant} found nothing"
                + (f" ({ranked.note})" if ranked.note else "")
                + "; fell back to fusing the other retrievers"
            )
            available = self._usable([n for n in self.retrievers if n != dominant], None)
        else:
            available = self._available(intent, notes)
        rankings = self._run_many(available, query, limit, scope, intent, timings, notes)
        if intent.name == "find_definition":
            rankings = [
                self._with_unindexed(r, query, intent, scope, timings, notes)
                if r.retriever == self._definitions else r
                for r in rankings
            ]  # fmt: skip
        weights = {n: intent.weights.get(self.retrievers[n].group, 0.0) or 0.1 for n in available}
        weighted = [(r, weights.get(r.retriever, 0.0)) for r in rankings]
        if intent.name != "exact_match" and (quoted := self._quoted(query, limit, scope, timings)):
            weighted.append((quoted, QUOTED_WEIGHT))
        fused = fuse(weighted, self.k)
        self._by_the_index(fused)
        results = apply_factors(fused, tests_wanted)
        if intent.name == "find_definition":
            results = exact_case_first(results, symbol_candidates(query, intent.target))
        if intent.name == "find_definition" and self.root and first_index_running(self.store):
            # BM25 and the graph have not seen the files the index has not reached: a look-alike
            # they know (`HttpResponse` for `HTTPResponse`) would outrank the definition found
            # there. While the index is partial, definitions of the exact name come first.
            exact = set(symbol_candidates(query, intent.target))
            before = list(results)
            results.sort(key=lambda r: r.name not in exact and r.symbol not in exact)
            for place, res in enumerate(results):
                if res is not before[place] and res.score < before[place].score:
                    res.placed = res.placed or "named as asked, while the first index runs"
        # capped first: the second stage then reorders the very five a person sees (reordered
        # before the cap, a chunk of a file the cap drops could change, and with it the five)
        results = cap(one_copy(self.store, results, top, notes))
        if second_stage and intent.name in RERANK_INTENTS and self.second_stage is not None:
            t0 = time.perf_counter()
            results = self.second_stage.rerank(query, results)
            timings["rerank"] = (time.perf_counter() - t0) * 1000
            if self.second_stage.problem:
                notes.append(f"the second stage is off: {self.second_stage.problem}")
        return results[:top], "fused", intent

    def _by_the_index(self, fused: list[SearchResult]) -> None:
        """What the index says of the fused chunks beside their ranks (fusion.py): how central
        each is, which are one call away from the best, and which only pass a call on."""
        centrality_boost(self.store, fused)
        call_neighbours(self.store, fused, self.k)
        wrappers_lower(self.store, fused)

    def _quoted(self, query, limit, scope, timings) -> Ranked | None:
        """The chunks holding what a question quotes, verbatim, as a pasted message is looked
        up (literal.py: a quoted `did you mean ...?` by its fixed words; a quoted word or two
        is BM25's to find)."""
        quoted = [t for t in dict.fromkeys(quoted_inside(query)) if runs_of(t)][:MAX_QUOTED]
        if not quoted:
            return None
        t0 = time.perf_counter()
        hits = [h for text in quoted for h in find_literal(self.store, text, limit, scope).hits]
        timings["quoted"] = (time.perf_counter() - t0) * 1000
        return Ranked(self._exact, hits) if hits else None

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
        return replace(ranked, hits=hits)

    def _long(self, query, top, limit, scope, second_stage, timings, notes):
        """An issue's text or a stack trace: every retriever, plus the frames of its traces
        and the messages of its error lines, found verbatim (see frames.py and literal.py).
        Every chunk, ranked, one of each set of copies, and the function-level answer
        (functions.py)."""
        intent = Intent("understand_code", 0.5, None, "long text")
        t0 = time.perf_counter()
        evidence: list[tuple[Ranked, float]] = []
        frames = frame_hits(self.store, query, limit)
        if frames:
            evidence.append((Ranked(self._definitions, frames), REPORT_EVIDENCE["traceback"]))
        timings["frames"] = (time.perf_counter() - t0) * 1000
        if REPORT_EVIDENCE["code"] > 0 and (called := called_names(code_of(query))):
            t0 = time.perf_counter()
            hits = self.store.symbols_named([n.lower() for n in called], limit * 4, scope)
            hits = sorted(hits, key=definition_order(called))[:limit]
            evidence.append((Ranked(self._definitions, hits), REPORT_EVIDENCE["code"]))
            timings["code"] = (time.perf_counter() - t0) * 1000
        t0 = time.perf_counter()
        for line in dict.fromkeys(m.group(0).strip() for m in ERROR_LINE.finditer(query)):
            literal = find_literal(self.store, line, limit, scope)
            if literal.hits:
                weight = REPORT_EVIDENCE["error_message"]
                evidence.append((Ranked(self._exact, literal.hits), weight))
                break
        timings["literal"] = (time.perf_counter() - t0) * 1000
        if quoted := self._quoted(query, limit, scope, timings):
            evidence.append((quoted, QUOTED_WEIGHT))
        names = [n for n, r in self.retrievers.items() if not r.answers_exact_strings]
        names = self._usable(names, notes)
        prepared: dict[str, Any] = {}
        rankings = self._run_many(names, query, limit, scope, intent, timings, notes, prepared)
        weights = [(r, LONG_WEIGHTS[self.retrievers[r.retriever].group]) for r in rankings]
        fused = fuse(evidence + weights, self.k)
        self._by_the_index(fused)
        results = one_copy(self.store, apply_factors(fused, tests_wanted=False), top, notes)
        t0 = time.perf_counter()
        similar = next(
            (s for n, p in prepared.items() if (s := self.retrievers[n].similarity(p))), None
        )
        functions = function_answer(
            self.store, query, results, symbol_candidates(query, None), similar
        )
        timings["functions"] = (time.perf_counter() - t0) * 1000
        return results, functions

    # --- running them --------------------------------------------------------------------------
    def _run_many(
        self, names, query, limit, scope, intent, timings, notes, prepared: dict | None = None
    ) -> list[Ranked]:
        """The SQL retrievers one after the other (they share one connection, so threads
        would only queue on it), while those with a preparation (the query's embedding: ONNX
        releases the GIL) prepare in a thread, so that it overlaps the SQL work instead of
        adding to it; they search last. `prepared` receives each preparation, for a later
        stage."""
        preparing: dict[str, tuple[float, Future]] = {}
        for name in names:
            retriever = self.retrievers[name]
            if retriever.preparation is not None:
                if self._pool is None:
                    self._pool = single_pool("prepare")
                preparing[name] = (time.perf_counter(), self._pool.submit(retriever.prepare, query))
        rankings = [
            self._run(n, query, limit, scope, intent, timings, fusing=True)
            for n in names
            if n not in preparing
        ]
        for name, (t0, future) in preparing.items():
            retriever = self.retrievers[name]
            value = future.result()
            if prepared is not None:
                prepared[name] = value
            timings[str(retriever.preparation)] = (time.perf_counter() - t0) * 1000
            t1 = time.perf_counter()
            rankings.append(
                retriever.search(Query(query, limit, scope, intent, fusing=True, prepared=value))
            )
            timings[name] = (time.perf_counter() - t1) * 1000
        notes.extend(f"{r.retriever}: {r.note}" for r in rankings if r.note and r.caveat)
        if not any(r.hits for r in rankings):  # why nothing was found; with a result, noise
            searched = [r for r in rankings if not r.abstained] or rankings
            notes.extend(f"{r.retriever}: {r.note}" for r in searched if r.note and not r.caveat)
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
                ranked = replace(ranked, hits=close)
            kept.append(ranked)
        return kept

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
        retriever = self.retrievers[name]
        t0 = time.perf_counter()
        prepared = None
        if retriever.preparation is not None:
            prepared = retriever.prepare(query)
            timings[retriever.preparation] = (time.perf_counter() - t0) * 1000
        ranked = retriever.search(Query(query, limit, scope, intent, fusing, prepared))
        timings[name] = (time.perf_counter() - t0) * 1000
        return ranked


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


_NAME = re.compile(r"[A-Za-z_$][\w$]*(?:\.[A-Za-z_$][\w$]*)*")


def _quoted_name(intent: Intent) -> str | None:
    """The identifier a quoted query is (`"cJSON_AddItemToObject"`, `"Router.Walk"`), if it
    is one: its definitions then come first (fusion.definition_first)."""
    target = (intent.target or "").strip()
    if intent.rule == "quoted string" and _NAME.fullmatch(target):
        return target
    return None


def _may_be_a_message(query: str, intent: Intent) -> bool:
    """Worth looking for verbatim in the code: not a question, not a confident definition,
    reference or impact question, a few words at least (literal.py)."""
    if intent.confidence >= DIRECT_CONFIDENCE and intent.rule != "error message":
        return False
    return may_be_a_message(query)
