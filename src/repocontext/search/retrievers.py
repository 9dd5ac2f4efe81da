"""The retrievers: each turns a `Query` into a ranked list of chunks from one index structure.

- `BM25Retriever` (text): FTS5 BM25 over path, name, signature, doc and body, weighted per
  column; query words are stemmed by the same tokenizer and compound identifiers are split the
  same way as at index time.
- `TrigramRetriever` (text): exact, case-insensitive substrings (error strings, partial names).
- `SymbolRetriever` (structural, "ast"): definitions whose name is an identifier of the query.
- `VectorRetriever` (semantic): nearest chunks to the query's embedding (sqlite-vec, or an
  in-memory matrix for a long-lived searcher).
- `GraphRetriever` (graph): callers, importers and the impact radius (depth 2) of a symbol.

Each is a `Retriever`, whose attributes and hooks say everything the search engine needs to
know about it (what it costs, whether it can answer now, what to compute before it searches):
`search/engine.py` names none of them, so a new retriever is a class here and a line in
`REGISTRY`. Retrievers return raw rankings; weighting, demotions and fusion are fusion.py's.
The five live in one module (about 480 lines) so that what tells them apart sits side by side.
"""

from __future__ import annotations

import re
import threading
from collections.abc import Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, ClassVar

from ..errors import EmbeddingModelError, ModelMismatch, RepoContextError
from ..index.terms import split_identifier
from ..store import ChunkHit, Store
from .intent import Intent
from .spelling import other_spelling

if TYPE_CHECKING:
    import numpy as np

    from ..embed.model import EmbeddingModel

# path, name, signature, doc, body (store.FTS_COLUMNS): names and signatures say what a chunk
# is about more densely than bodies do.
BM25_WEIGHTS = (2.0, 6.0, 3.0, 2.0, 1.0)

# Words that carry no meaning in a question about code. Kept short on purpose: BM25's IDF
# already discounts common words, this only stops them from matching comments by chance.
STOPWORDS = frozenset(
    """
a about above after again all am an and any are as at be because been before being below
between both but by can could did do does doing don down during each few for from further had
has have having he her here hers him his i if in into is it its itself just me more most my no
nor not of off on once only or other our out over own same she should so some such than that
the their theirs them then there these they this those through to too under until up very was
we were what when where which while who whom why will with would you your yours s t d ll m re
ve y isn aren wasn weren won doesn didn
how does work works find show me please
""".split()
)

_CODE_WORD = re.compile(r"[A-Za-z_][A-Za-z0-9_]*(?:(?:\.|::)[A-Za-z_][A-Za-z0-9_]*)*")
_INNER_CAPITAL = re.compile(r"[a-z0-9][A-Z]")
_WORD = re.compile(r"[A-Za-z_][A-Za-z0-9_]*|[0-9]+")


@dataclass(frozen=True)
class Ranked:
    """One retriever's result list."""

    retriever: str
    hits: list[ChunkHit]
    note: str | None = None  # why the list is empty, or (a `caveat`) what its hits lack
    caveat: bool = False  # the note qualifies the hits (vectors for part of the index)
    abstained: bool = False  # the query gave it nothing to search with (no identifier)


@dataclass(frozen=True)
class Query:
    """A question as every retriever receives it."""

    text: str
    limit: int = 50
    scope: str = "all"  # all | src | tests
    intent: Intent | None = None  # None: a plain list of words (the completion context)
    fusing: bool = False  # asked as one voice of the fusion, not on its own
    prepared: Any = None  # what the retriever's `prepare` made of `text`, when it ran already

    @property
    def target(self) -> str | None:
        return self.intent.target if self.intent is not None else None

    def is_a(self, *intents: str) -> bool:
        return self.intent is not None and self.intent.name in intents


class Retriever:
    """What every retriever is, and what the engine may ask of it besides `search`.

    The defaults describe the common case: a query on the index's connection, always usable,
    nothing to compute first. A retriever that differs says so here, not in the engine.
    """

    name: ClassVar[str]  # the modality (`--modality NAME`) and the key of its rank in results
    group: ClassVar[str]  # its weight group in the intent profiles: text | structural | ...
    # "sql": a query on the index's connection; "model": also a model's run per query, and the
    # model's load the first time. A confident question, answered by one retriever, is never
    # sent to a "model" one (the model is not even loaded for it).
    cost: ClassVar[str] = "sql"
    # asked in `auto` only for an exact string (a substring matches any word), and the one a
    # confident exact-string question goes to; a message found verbatim counts under its name
    answers_exact_strings: ClassVar[bool] = False
    # its hits are definitions by name: a first index's unreached files add theirs, and the
    # frames of a pasted stack trace count under its name
    finds_definitions: ClassVar[bool] = False
    # what it needs to work, for the error of `--modality NAME` when `problem()` says it cannot
    needs: ClassVar[str] = "the index"
    # the timing's name of `prepare` (None: nothing to prepare)
    preparation: ClassVar[str | None] = None

    def search(self, query: Query) -> Ranked:
        raise NotImplementedError

    def problem(self) -> RepoContextError | None:
        """Why it cannot answer now (shown as a note, or raised for `--modality NAME`), or
        None when it can."""
        return None

    def prepare(self, text: str) -> Any:
        """The work one query needs before `search`, done off the index's connection: the
        engine runs it in a thread beside the SQL retrievers and passes its result as
        `Query.prepared`. Only called where `preparation` is set."""
        return None

    def similarity(self, prepared: Any) -> Callable[[list[int]], dict[int, float]] | None:
        """How close each of some chunks is to the query, for a later stage that reads whole
        files (the function-level answer); None where the retriever has no such measure."""
        return None


COMMON_TERM_CHUNKS = 5000  # a BM25 term matching this many chunks or more is left out


def _fts_quote(term: str) -> str:
    return '"' + term.replace('"', '""') + '"'


def bm25_terms(query: str) -> list[str]:
    """Query terms for BM25: identifiers whole plus their parts, stopwords dropped, a word
    in both British and American spelling (spelling.py)."""
    terms: list[str] = []
    seen: set[str] = set()

    def add(term: str) -> None:
        key = term.lower()
        if key not in seen and key not in STOPWORDS:
            seen.add(key)
            terms.append(term)
            if (other := other_spelling(key)) is not None and other not in seen:
                seen.add(other)
                terms.append(other)

    for word in _WORD.findall(query):
        add(word)
        parts = split_identifier(word)
        if len(parts) > 1:
            for part in parts:
                add(part)
    return terms


class BM25Retriever(Retriever):
    name = "bm25"
    group = "text"

    def __init__(self, store: Store, weights: tuple[float, ...] | None = None):
        self.store = store
        self._weights = weights

    @property
    def weights(self) -> tuple[float, ...]:
        """The columns' weights: given, or BM25_WEIGHTS as it is now (bench/tuning.py sets it)."""
        return self._weights if self._weights is not None else BM25_WEIGHTS

    def search(self, query: Query) -> Ranked:
        terms = bm25_terms(query.text)
        if not terms:
            return Ranked(self.name, [], "no searchable words in the query", abstained=True)
        match = " OR ".join(_fts_quote(t) for t in self._without_common(terms))
        return Ranked(
            self.name, self.store.bm25_search(match, self.weights, query.limit, query.scope)
        )

    def _without_common(self, terms: list[str]) -> list[str]:
        """The terms without those in COMMON_TERM_CHUNKS chunks or more, while one is left.

        FTS5 scores every chunk that matches any term before it keeps the best: the cost of a
        query is the length of its terms' lists. In a large repository a word like `get` or
        `value` matches a chunk in ten, made this grow with the repository (a context query
        took 60-360 ms on 30,000 files), while BM25 gives such a word almost no weight (a low
        IDF). Dropping them kept 14-20 of the best 20 (measured in bench/results/monorepo.md).
        """
        if len(terms) < 2:
            return terms
        counts = self.store.term_counts([_fts_quote(t) for t in terms], COMMON_TERM_CHUNKS)
        kept = [t for t, n in zip(terms, counts) if n < COMMON_TERM_CHUNKS]
        return kept or [max(terms, key=len)]


class TrigramRetriever(Retriever):
    name = "trigram"
    group = "text"
    answers_exact_strings = True

    def __init__(self, store: Store):
        self.store = store

    def search(self, query: Query) -> Ranked:
        literal = (
            query.target if query.is_a("exact_match") and query.target else query.text
        ).strip()
        if len(literal) >= 2 and literal[0] == literal[-1] and literal[0] in "\"'`":
            literal = literal[1:-1]
        if len(literal) < 3:
            return Ranked(
                self.name, [], "exact-string search needs at least 3 characters", abstained=True
            )
        return Ranked(
            self.name,
            self.store.trigram_search(trigram_match(literal), literal, query.limit, query.scope),
        )


def trigram_match(literal: str) -> str:
    """The trigram index's expression for a literal of 3 characters or more: non-overlapping
    trigrams cover it, and the store confirms the exact substring."""
    grams = [literal[i : i + 3] for i in range(0, len(literal) - 2, 3)] + [literal[-3:]]
    return " AND ".join(_fts_quote(g) for g in dict.fromkeys(grams[:16]))


_KIND_ORDER = {
    "class": 0,
    "struct": 0,
    "interface": 0,
    "trait": 0,
    "enum": 0,
    "type": 0,
    "function": 1,
    "method": 1,
    "impl": 2,
    "module": 2,
    "namespace": 2,
    "constant": 3,
    "variable": 3,
    "macro": 3,
}
_ROLE_ORDER = {"source": 0, "doc": 1, "tooling": 2, "test": 3}


class SymbolRetriever(Retriever):
    """Definitions by name from the symbol table: exact case first, then source before tests."""

    name = "ast"
    group = "structural"
    finds_definitions = True

    def __init__(self, store: Store):
        self.store = store

    def search(self, query: Query) -> Ranked:
        target = query.target if query.is_a("find_definition") else None
        names = symbol_candidates(query.text, target)
        if not names:
            return Ranked(self.name, [], "no identifier in the query", abstained=True)
        wanted = sorted({n.lower() for n in names})
        hits = self.store.symbols_named(wanted, query.limit * 4, query.scope)
        return Ranked(self.name, sorted(hits, key=definition_order(names))[: query.limit])


def definition_order(names: list[str]) -> Callable[[ChunkHit], tuple]:
    """The sort key of definitions of `names`: exact case first, then source before tests,
    plain files, classes and functions before the rest, shallow paths first."""
    wanted = {n.lower() for n in names}

    def order(hit: ChunkHit) -> tuple:
        exact = hit.name in names or hit.qualname in names
        qual = (hit.qualname or "").lower() in wanted and "." in (hit.qualname or "")
        return (
            not exact and not qual,
            _ROLE_ORDER.get(hit.role, 3),
            bool(hit.flags),
            _KIND_ORDER.get(hit.kind, 4),
            hit.path.count("/"),
            hit.path,
            hit.start_line,
        )

    return order


def symbol_candidates(query: str, target: str | None) -> list[str]:
    """Identifiers in the query that could be symbol names (`A.b` also as `b`)."""
    if target:
        raw = [target]
    else:
        # In a sentence only code-looking words are identifiers: `parse_config`, `parseConfig`,
        # `Session.send`, `x2`; "send" or "password" are English and left to BM25.
        raw = [
            w
            for w in _CODE_WORD.findall(query)
            if "_" in w or "." in w or _INNER_CAPITAL.search(w) or any(c.isdigit() for c in w)
        ]
    names: list[str] = []
    for word in raw:
        word = word.replace("::", ".").strip("`().")
        if not word:
            continue
        names.append(word)
        if "." in word:
            names.append(word.rsplit(".", 1)[-1])
    return names


class VectorRetriever(Retriever):
    """Nearest chunks by cosine similarity to the query's embedding.

    A one-shot searcher (the CLI) asks sqlite-vec, which scans the vectors on disk; a
    long-lived one (`cache=True`, the editor) keeps them in a numpy matrix, reloaded when the
    number of vectors changes: a 40k x 384 scan takes about a millisecond in memory against
    about 15 ms in sqlite-vec, while loading costs about 200 ms once.
    """

    name = "vector"
    group = "semantic"
    cost = "model"
    needs = "the embedding model"
    preparation = "embed_query"

    def __init__(
        self,
        store: Store,
        model: EmbeddingModel | None,
        cache: bool = False,
        model_problem: str | None = None,
    ):
        """`model` None: the retriever is off, and `model_problem` says why."""
        self.store = store
        self.model = model
        self.model_problem = model_problem
        self.cache = cache
        self._matrix: tuple[np.ndarray, np.ndarray, np.ndarray] | None = None
        self._matrix_at = (-1, -1)  # the store's vectors when the matrix was loaded
        self._coverage_at: tuple[tuple[int, int], tuple[int, int]] | None = None
        self._lock = threading.Lock()

    def check_model(self) -> None:
        """Refuse to compare a query with vectors made by another model."""
        stored = self.store.vectors.model_key()
        if self.model is not None and stored is not None and stored != self.model.identity.key():
            raise ModelMismatch(
                f"the index's vectors were made by {self.store.vectors.model_description()}, "
                f"but the configured model is {self.model.identity.describe()}; run "
                "`repocontext index` to re-embed with the configured model, or configure the "
                "old one again"
            )

    def problem(self) -> RepoContextError | None:
        if self.model is None:
            return EmbeddingModelError(self.model_problem or "no model is loaded")
        try:
            self.check_model()  # (loads the model, the first time)
        except (ModelMismatch, EmbeddingModelError) as exc:
            return exc
        return None

    def prepare(self, text: str) -> np.ndarray:
        return self._model().embed_query(text)

    def similarity(self, prepared: np.ndarray) -> Callable[[list[int]], dict[int, float]]:
        return lambda chunk_ids: self.similarities(prepared, chunk_ids)

    def _model(self) -> EmbeddingModel:
        if self.model is None:
            raise EmbeddingModelError(self.model_problem or "no model is loaded")
        return self.model

    def search(self, query: Query) -> Ranked:
        self.check_model()
        limit, scope = query.limit, query.scope
        done, total = self._coverage()
        if done == 0:
            return Ranked(
                self.name,
                [],
                "no vectors yet: run `repocontext index` (without --no-embed) to compute them",
                caveat=True,
            )
        note = None
        if done < total:
            note = f"vectors cover {done} of {total} chunks; `repocontext index` finishes the rest"
        q = self.prepare(query.text) if query.prepared is None else query.prepared
        floor = self._model().config.min_similarity
        if not self.cache:
            hits = [h for h in self.store.vectors.knn(q, limit, scope) if h.score >= floor]
        else:
            import numpy as np

            ids, starts, mat = self._cached()
            scores = np.maximum.reduceat(mat @ q, starts)  # a passage: its nearest window
            k = min(len(scores), limit if scope == "all" else limit * 4)
            top = np.argpartition(-scores, k - 1)[:k]
            top = top[np.argsort(-scores[top], kind="stable")]
            close = [i for i in top if scores[i] >= floor]
            hits = self.store.vectors.hits_for(
                [(int(ids[i]), float(scores[i])) for i in close], scope
            )[:limit]
        if note is not None:
            return Ranked(self.name, hits, note, caveat=True)
        if not hits:
            return Ranked(
                self.name, [], f"nothing is similar enough (cosine similarity below {floor})"
            )
        return Ranked(self.name, hits)

    def similarities(self, vector: np.ndarray, chunk_ids: list[int]) -> dict[int, float]:
        """Cosine similarity of the query's embedding to each of these chunks (that has a
        vector): the function-level answer's reading of a whole file."""
        return {
            cid: float((rows @ vector).max())
            for cid, rows in self.store.vectors.of_chunks(chunk_ids).items()
        }

    def _coverage(self) -> tuple[int, int]:
        """(chunk contents with a vector, chunk contents), recounted only when vectors change."""
        stored = self.store.vectors.stored()
        if self._coverage_at is None or self._coverage_at[0] != stored:
            self._coverage_at = (stored, self.store.vectors.coverage())
        return self._coverage_at[1]

    def _cached(self) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """(each passage's embedding id, where its rows start, every row), reloaded when
        vectors or windows were added or collected since (as `_coverage` last read)."""
        import numpy as np

        assert self._coverage_at is not None  # search() read the coverage first
        count = self._coverage_at[0]
        with self._lock:
            if self._matrix is None or self._matrix_at != count:
                ids, mat = self.store.vectors.matrix()
                starts = np.flatnonzero(np.r_[True, ids[1:] != ids[:-1]]) if len(ids) else ids
                self._matrix, self._matrix_at = (ids[starts], starts, mat), count
            return self._matrix


class GraphRetriever(Retriever):
    """Who calls a symbol, who imports it, and (for impact) who calls those: depth 2.

    Ranked by distance first (direct callers and importers, then their callers), then by how
    many references each chunk holds. For a definition question it ranks the definitions of
    the name by how many files import each one's file.
    """

    name = "graph"
    group = "graph"

    def __init__(self, store: Store):
        self.store = store

    def search(self, query: Query) -> Ranked:
        limit, scope = query.limit, query.scope
        depth = 2 if query.is_a("impact_analysis") else 1
        target = (
            query.target
            if query.is_a("find_references", "impact_analysis", "find_definition")
            else None
        )
        # Inside auto fusion a definition question asks the graph which definition the code
        # depends on; asked for by name (--modality graph), it lists references.
        definitions = query.fusing and query.is_a("find_definition")
        names = symbol_candidates(query.text, target)
        if not names:
            return Ranked(self.name, [], "no identifier to follow in the graph", abstained=True)
        graph = self.store.graph
        if definitions:
            # For "where is X defined": the graph's evidence is which definition of X the rest
            # of the code depends on, i.e. whose file more files import.
            hits = self.store.symbols_named(names, limit, scope)
            weight = graph.importer_counts(sorted({h.path for h in hits}))
            hits.sort(key=lambda h: (-weight.get(h.path, 0), h.path, h.start_line))
            return Ranked(self.name, hits)
        def_paths = graph.definition_paths(names)
        # A Go package is a directory: imports of it name the directory.
        dirs = sorted({p.rsplit("/", 1)[0] + "/" for p in def_paths if "/" in p})
        first = graph.callers(names, limit, scope) + graph.importers(
            def_paths + dirs, names, limit, scope
        )
        hits = _unique(first)
        if depth >= 2 and hits:
            second_names = sorted({h.name for h in hits if h.name})
            hits = _unique(hits + graph.callers(second_names, limit, scope))
        if not hits:
            return Ranked(self.name, [], f"nothing references {names[0]}")
        return Ranked(self.name, hits[:limit])


def _unique(hits: list[ChunkHit]) -> list[ChunkHit]:
    seen: set[int] = set()
    out = []
    for h in hits:
        if h.chunk_id not in seen:
            seen.add(h.chunk_id)
            out.append(h)
    return out


# name -> how to make it for a store, given the embedding model (or why there is none) and
# whether the searcher lives long enough to keep things in memory. The order is the order
# retrievers are asked in, and the first of equal weight is the one a confident question goes to.
REGISTRY: dict[str, Callable[[Store, EmbeddingModel | None, str | None, bool], Retriever]] = {
    "bm25": lambda store, model, problem, cache: BM25Retriever(store),
    "vector": lambda store, model, problem, cache: VectorRetriever(store, model, cache, problem),
    "trigram": lambda store, model, problem, cache: TrigramRetriever(store),
    "ast": lambda store, model, problem, cache: SymbolRetriever(store),
    "graph": lambda store, model, problem, cache: GraphRetriever(store),
}
