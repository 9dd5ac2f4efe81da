"""The retrievers: each turns a query into a ranked list of chunks from one index structure.

- `BM25Retriever` (text): FTS5 BM25 over path, name, signature, doc and body, weighted per
  column; query words are stemmed by the same tokenizer and compound identifiers are split the
  same way as at index time.
- `TrigramRetriever` (text): exact, case-insensitive substrings (error strings, partial names).
- `SymbolRetriever` (structural, "ast"): definitions whose name is an identifier of the query.

Retrievers return raw rankings; weighting, demotions and fusion belong to `engine`.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from ..index.terms import split_identifier
from ..store import ChunkHit, Store

# path, name, signature, doc, body (store.FTS_COLUMNS): names and signatures say what a chunk
# is about more densely than bodies do.
BM25_WEIGHTS = (2.0, 6.0, 3.0, 2.0, 1.0)

# Words that carry no meaning in a question about code. Kept short on purpose: BM25's IDF
# already discounts common words, this only stops them from matching comments by chance.
STOPWORDS = frozenset("""
a about above after again all am an and any are as at be because been before being below
between both but by can could did do does doing don down during each few for from further had
has have having he her here hers him his i if in into is it its itself just me more most my no
nor not of off on once only or other our out over own same she should so some such than that
the their theirs them then there these they this those through to too under until up very was
we were what when where which while who whom why will with would you your yours s t d ll m re
ve y isn aren wasn weren won doesn didn
how does work works find show me please
""".split())

_CODE_WORD = re.compile(r"[A-Za-z_][A-Za-z0-9_]*(?:(?:\.|::)[A-Za-z_][A-Za-z0-9_]*)*")
_INNER_CAPITAL = re.compile(r"[a-z0-9][A-Z]")
_WORD = re.compile(r"[A-Za-z_][A-Za-z0-9_]*|[0-9]+")


@dataclass(frozen=True)
class Ranked:
    """One retriever's result list."""

    retriever: str
    hits: list[ChunkHit]
    note: str | None = None  # why the list is empty, when it is


def _fts_quote(term: str) -> str:
    return '"' + term.replace('"', '""') + '"'


def bm25_terms(query: str) -> list[str]:
    """Query terms for BM25: identifiers whole plus their parts, stopwords dropped."""
    terms: list[str] = []
    seen: set[str] = set()

    def add(term: str) -> None:
        key = term.lower()
        if key not in seen and key not in STOPWORDS:
            seen.add(key)
            terms.append(term)

    for word in _WORD.findall(query):
        add(word)
        parts = split_identifier(word)
        if len(parts) > 1:
            for part in parts:
                add(part)
    return terms


class BM25Retriever:
    name = "bm25"

    def __init__(self, store: Store, weights: tuple[float, ...] = BM25_WEIGHTS):
        self.store = store
        self.weights = weights

    def search(self, query: str, limit: int, scope: str = "all") -> Ranked:
        terms = bm25_terms(query)
        if not terms:
            return Ranked(self.name, [], "no searchable words in the query")
        match = " OR ".join(_fts_quote(t) for t in terms)
        return Ranked(self.name, self.store.bm25_search(match, self.weights, limit, scope))


class TrigramRetriever:
    name = "trigram"

    def __init__(self, store: Store):
        self.store = store

    def search(self, query: str, limit: int, scope: str = "all") -> Ranked:
        literal = query.strip()
        if len(literal) >= 2 and literal[0] == literal[-1] and literal[0] in "\"'`":
            literal = literal[1:-1]
        if len(literal) < 3:
            return Ranked(self.name, [], "exact-string search needs at least 3 characters")
        # Non-overlapping trigrams cover the literal; the store confirms the exact substring.
        grams = [literal[i : i + 3] for i in range(0, len(literal) - 2, 3)] + [literal[-3:]]
        match = " AND ".join(_fts_quote(g) for g in dict.fromkeys(grams[:16]))
        return Ranked(self.name, self.store.trigram_search(match, literal, limit, scope))


_KIND_ORDER = {"class": 0, "struct": 0, "interface": 0, "trait": 0, "enum": 0, "type": 0,
               "function": 1, "method": 1, "impl": 2, "module": 2, "namespace": 2,
               "constant": 3, "macro": 3}
_ROLE_ORDER = {"source": 0, "doc": 1, "test": 2}


class SymbolRetriever:
    """Definitions by name from the symbol table: exact case first, then source before tests."""

    name = "ast"

    def __init__(self, store: Store):
        self.store = store

    def search(self, query: str, limit: int, scope: str = "all",
               target: str | None = None) -> Ranked:
        names = _symbol_candidates(query, target)
        if not names:
            return Ranked(self.name, [], "no identifier in the query")
        wanted = {n.lower() for n in names}
        hits = self.store.symbols_named(sorted(wanted), limit * 4, scope)

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

        return Ranked(self.name, sorted(hits, key=order)[:limit])


def _symbol_candidates(query: str, target: str | None) -> list[str]:
    """Identifiers in the query that could be symbol names (`A.b` also as `b`)."""
    if target:
        raw = [target]
    else:
        # In a sentence only code-looking words are identifiers: `parse_config`, `parseConfig`,
        # `Session.send`, `x2`; "send" or "password" are English and left to BM25.
        raw = [
            w for w in _CODE_WORD.findall(query)
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
