"""Fusing rankings into one order, and the policy applied to it.

Ranks are fused, not scores (a BM25 score and a cosine similarity have no common scale):
weighted reciprocal-rank fusion, contribution = weight / (k + rank + 1), rank from 0. Then a
centrality boost, min(1 + 0.3 ln(1 + c), 1.5) with c the number of files referencing the
symbol; then, in Go, the chunks one call away from the best few (`call_neighbours`); a
function that only passes the call on to one of its own name ranked as a doc is
(`wrappers_lower`); tests, docs and example programs ranked below source unless the question
asks for tests (which puts tests first); generated, minified and archived files demoted; a
definition spelt as asked before one that differs only in case; of identical chunks in
different files (a vendored copy of the source), one.
"""

from __future__ import annotations

import math
import re

from ..lang.languages import language_for
from ..store import ChunkHit, Store
from .copies import copy_preference
from .results import SearchResult, raw_result
from .retrievers import Ranked

# `auto`'s fusion: 20, not the literature's 60, lets a retriever's first few ranks count more;
# chosen by leave-one-repository-out validation on 15 repositories (bench/results/
# search_sets.md: k 20 won in all 15 folds, held-out mean 1.232 against 1.220 at 40).
RRF_K = 20
HYBRID_K = 60  # `--modality hybrid`: plain RRF as the literature has it
ROLE_FACTOR = {"source": 1.0, "test": 0.5, "tooling": 0.4, "doc": 0.5}
# "tests for X": tests first
TESTS_WANTED_FACTOR = {"source": 0.5, "test": 1.0, "tooling": 0.4, "doc": 0.5}
DEMOTED_DIRS = ("archive/", "archived/", "legacy/", "deprecated/", "examples/old/", "fixtures/")
# Example programs show a library in use, as its docs do, and are ranked as docs are: a
# question about how the library behaves wants the library (chi's `_examples/router-walk`
# outranked the `node.routes` a report on chi.Walk was about)
EXAMPLE_DIRS = ("examples/", "example/", "_examples/", "_example/")
FLAG_FACTOR = 0.5
# A declaration file holds signatures without their code, often emitted by a compiler: ranked
# as a generated file is, so a question about how something works gets the implementation
# (commander's typings/index.d.ts, JSDoc right above each declaration, outranked its
# lib/command.js on 4 questions); alone, it still answers
DECLARATION_SUFFIXES = (".d.ts", ".d.mts", ".d.cts", ".pyi")
# A function that calls, or is called by, one of the best source chunks is more likely what
# a question is about than its own ranks say: the words of a question often match a public
# wrapper or a helper's doc while the logic asked about sits one call away (cobra's
# `commandNameMatches` and its caller `findNext`, logrus's `Logger.Writer` and the
# `Entry.WriterLevel` it calls). Each of the NEIGHBOUR_PARENTS best source chunks adds
# weight / (k + its place) to those of its neighbours the retrievers found, the weight by the
# language of the chunk (NEIGHBOUR_WEIGHT: a language, or "*" for any, to its weight; none:
# 0); NEIGHBOUR_DEFINITIONS bounds how ambiguous a name may be to be followed. Go only,
# chosen by leave-one-repository-out validation on 21 repositories (bench/results/
# search_sets.md): Go's top five rose in 3 of 5 repositories and fell in none; the same
# weight for every language lowered C's and JavaScript's.
NEIGHBOUR_WEIGHT: dict[str, float] = {"go": 0.2}
NEIGHBOUR_PARENTS = 5
NEIGHBOUR_DEFINITIONS = 3
# A function whose body only passes the call on to a function of its own name (logrus's
# package-level `Fatal`, `Fatalf` and `FatalFn` call `std.Fatal`...; a method that calls its
# field's method of the same name) says in the question's words what its callee does: it is
# ranked as a doc is, so that the function that does it comes first (logrus's question on
# what runs after a fatal log: `Logger.Exit` 8th below such wrappers, 5th with the factor;
# no repository's top five lower, bench/results/search_sets.md). Its callee, one call away,
# still gains from its place (`call_neighbours` runs first). Fused lists only: a definition
# asked for by name is shown as asked.
WRAPPER_FACTOR = ROLE_FACTOR["doc"]
WRAPPER_LINES = 12  # a wrapper's chunk is at most this many lines (its doc comment included)
WRAPPER_KINDS = ("function", "method")
# lines of a body that do nothing: brackets alone, comments, a docstring's first line
_IDLE_LINE = re.compile(r"^\s*(?:[{}()\[\];,]*\s*|(?://|#|/\*|\*|\"\"\"|''').*)$")


def fuse(rankings: list[tuple[Ranked, float]], k: int) -> list[SearchResult]:
    """Weighted reciprocal-rank fusion of (ranking, weight) pairs. Two rankings may come from
    one index (a message's literal runs and the trigram retriever): a chunk's rank under that
    name is its first. A chunk starts where its earliest hit does: a literal found in its doc
    comment shows the comment (store `trigram_search`), whichever list named it first."""
    by_chunk: dict[int, SearchResult] = {}
    for ranked, weight in rankings:
        seen: set[int] = set()  # a retriever may list a chunk twice (graph: caller, importer)
        for rank, hit in enumerate(ranked.hits):
            if hit.chunk_id in seen:
                continue
            seen.add(hit.chunk_id)
            res = by_chunk.get(hit.chunk_id)
            if res is None:
                res = by_chunk[hit.chunk_id] = raw_result(hit, None, None)
                res.score = 0.0
            res.start_line = min(res.start_line, hit.start_line)
            name = ranked.retriever
            if res.ranks[name] is None:
                res.ranks[name] = rank + 1
            contribution = weight / (k + rank + 1)
            res.contributions[name] = res.contributions.get(name, 0.0) + contribution
            res.score += contribution
    return list(by_chunk.values())


def centrality_boost(store: Store, results: list[SearchResult]) -> None:
    """Symbols many files reference are what a question is more often about."""
    counts = store.graph.centrality([r.name for r in results if r.name])
    for res in results:
        c = counts.get(res.name or "", 0)
        if c:
            boost = min(1 + 0.3 * math.log(1 + c), 1.5)
            res.factors["centrality"] = round(boost, 3)
            res.score *= boost


def call_neighbours(store: Store, results: list[SearchResult], k: int) -> None:
    """Corroboration by the call graph (see NEIGHBOUR_WEIGHT): only chunks already in
    `results` gain, so nothing a retriever did not find is added."""
    if not any(NEIGHBOUR_WEIGHT.values()):
        return
    by_id = {r.chunk_id: r for r in results}
    best = sorted((r for r in results if r.role == "source"), key=lambda r: -r.score)
    for place, parent in enumerate(best[:NEIGHBOUR_PARENTS]):
        language = language_for(parent.path) or ""
        gain = NEIGHBOUR_WEIGHT.get(language, NEIGHBOUR_WEIGHT.get("*", 0.0)) / (k + place + 1)
        if not gain:
            continue
        for chunk_id in store.graph.call_neighbours(
            parent.chunk_id, parent.name, NEIGHBOUR_DEFINITIONS
        ):
            if (res := by_id.get(chunk_id)) is not None:
                res.contributions["neighbours"] = res.contributions.get("neighbours", 0.0) + gain
                res.score += gain


def wrappers_lower(store: Store, results: list[SearchResult]) -> None:
    """Each function or method among `results` that only passes the call on to a function of
    its own name (`passes_the_call_on`) takes WRAPPER_FACTOR, shown as `wrapper`."""
    short = [
        r
        for r in results
        if r.kind in WRAPPER_KINDS and r.name and r.end_line - r.start_line < WRAPPER_LINES
    ]
    texts = store.chunk_texts([r.chunk_id for r in short])
    for res in short:
        text = texts.get(res.chunk_id)
        if text and res.name and passes_the_call_on(text, res.name):
            res.score *= WRAPPER_FACTOR
            res.factors["wrapper"] = WRAPPER_FACTOR


def passes_the_call_on(text: str, name: str) -> bool:
    """Whether a function's text (its head, then its body) has one line of body, brackets,
    comments and a docstring's first line aside, and that line calls a function `name`."""
    lines = text.splitlines()
    opened = next((i for i, line in enumerate(lines) if line.rstrip().endswith(("{", ":"))), None)
    if opened is None:
        return False
    body = [line.strip() for line in lines[opened + 1 :] if not _IDLE_LINE.match(line)]
    return len(body) == 1 and re.search(rf"(?<!\w){re.escape(name)}\s*\(", body[0]) is not None


def apply_factors(results: list[SearchResult], tests_wanted: bool) -> list[SearchResult]:
    """Tests, docs and examples below source (unless tests are asked for), generated and
    archived files and declaration files low; the results sorted by their score."""
    for res in results:
        factor = 1.0
        role_factor = (TESTS_WANTED_FACTOR if tests_wanted else ROLE_FACTOR).get(res.role, 1.0)
        if role_factor != 1.0:
            res.factors[res.role] = role_factor
            factor *= role_factor
        if res.flags:
            res.factors[res.flags] = FLAG_FACTOR
            factor *= FLAG_FACTOR
        if res.path.endswith(DECLARATION_SUFFIXES):
            res.factors["declaration"] = FLAG_FACTOR
            factor *= FLAG_FACTOR
        if res.role == "source" and _in_folder(res.path, EXAMPLE_DIRS):
            res.factors["example"] = ROLE_FACTOR["doc"]
            factor *= ROLE_FACTOR["doc"]
        if _in_folder(res.path, DEMOTED_DIRS):
            res.factors["archive path"] = 0.5
            factor *= 0.5
        res.score *= factor
    return sorted(results, key=lambda r: (-r.score, r.path, r.start_line))


def _in_folder(path: str, folders: tuple[str, ...]) -> bool:
    """`path` lies under one of `folders` ("examples/", "examples/old/") at any depth."""
    return any(f"/{folder}" in f"/{path}" for folder in folders)


def role_first(hits: list[ChunkHit], tests_wanted: bool) -> list[ChunkHit]:
    """A single retriever's hits with the roles below source after the rest (stable: its own
    order kept within each)."""
    factors = TESTS_WANTED_FACTOR if tests_wanted else ROLE_FACTOR
    return sorted(hits, key=lambda h: factors.get(h.role, 1.0) < 1.0)


SPELT_AS_ASKED = "spelt as asked, before a name that differs only in case"


def exact_case_first(results: list[SearchResult], names: list[str]) -> list[SearchResult]:
    """A definition named as the query spells it before one whose name differs only in case
    (the function `createStore` before its type `CreateStore`). Names are looked up without
    case, so both are found, and the look-alike, imported by more files, may outrank the
    one asked for. The look-alikes keep their order after it; every other result keeps its
    place."""
    exact = set(names)
    folded = {n.lower() for n in names}

    def match(r: SearchResult) -> int:  # 0: as spelt, 1: in another case, 2: neither
        if r.name in exact or r.symbol in exact:
            return 0
        if (r.name or "").lower() in folded or (r.symbol or "").lower() in folded:
            return 1
        return 2

    places = [i for i, r in enumerate(results) if match(r) < 2]
    reordered = list(results)
    for i, res in zip(places, sorted((results[i] for i in places), key=match)):
        if res is not results[i] and match(res) == 0 and res.score < results[i].score:
            res.placed = SPELT_AS_ASKED
        reordered[i] = res
    return reordered


DEFINED_AS_QUOTED = "the definition of the quoted name, before the places that use it"
# what a chunk that is no definition is called (a file's text between definitions)
_NO_DEFINITION = frozenset({"code", "text", "module"})


def definition_first(results: list[SearchResult], name: str) -> list[SearchResult]:
    """The definitions of a quoted identifier (`"cJSON_AddItemToObject"`, exact case) before
    the chunks that only use it: an exact-string search ranks by occurrences, which put five
    heavy users (test.c first) above the function itself. The others keep their order."""
    first = [
        i
        for i, r in enumerate(results)
        if r.kind not in _NO_DEFINITION and name in (r.name, r.symbol)
    ]
    for place, i in enumerate(first):
        if i > place:
            results[i].placed = DEFINED_AS_QUOTED
    return [results[i] for i in first] + [r for i, r in enumerate(results) if i not in first]


COPIES_NAMED = 3  # at most this many left-out copies named in the note


def one_copy(
    store: Store, results: list[SearchResult], top: int, notes: list[str]
) -> list[SearchResult]:
    """One chunk of each text found in several files: a copy of the source shipped beside it
    (zod's `deno/lib/` is `src/` again) would otherwise take a second place for every answer.
    The copy kept is a source file's before a test's or a doc's, then the one closest to the
    root (fewest path parts: `src/types.ts`, not `deno/lib/types.ts`), then the better ranked;
    it takes the best place of its copies. The others are left out of this list only, and a
    note names those that would have been among the first `top`: the index keeps them, a
    look-up by name (`:RepoContext definition`) lists each, and a search that finds only one
    of them shows it."""
    hashes = store.chunk_hashes([r.chunk_id for r in results])
    copies: dict[str, list[int]] = {}  # content hash -> places, best first
    for place, res in enumerate(results):
        if res.chunk_id in hashes:
            copies.setdefault(hashes[res.chunk_id], []).append(place)
    moved: dict[int, int] = {}  # the best place of a set of copies -> the place of the one kept
    skipped: set[int] = set()
    left_out: list[tuple[int, int]] = []  # (place left out, place of the copy kept)
    for places in copies.values():
        paths = {results[p].path: p for p in reversed(places)}  # each file's best place
        if len(paths) < 2:
            continue  # one file's own repeated text is no copy
        kept_path, kept = min(
            paths.items(), key=lambda f: (*copy_preference(results[f[1]].role, f[0]), f[1])
        )
        others = [p for p in places if results[p].path != kept_path]
        left_out += [(p, kept) for p in others]
        skipped.update(others)
        if kept != places[0]:
            moved[places[0]] = kept
            skipped.add(kept)
            skipped.discard(places[0])
    if not left_out:
        return results
    for best, kept in moved.items():
        copy = results[best]
        results[kept].placed = f"at the place of its identical copy {copy.path}:{copy.start_line}"
    out = [results[moved.get(p, p)] for p in range(len(results)) if p not in skipped]
    shown = sorted(item for item in left_out if item[0] < top)
    if shown:
        named = ", ".join(
            f"{results[p].path}:{results[p].start_line} (= {results[k].path}:"
            f"{results[k].start_line})"
            for p, k in shown[:COPIES_NAMED]
        )
        more = f" and {len(shown) - COPIES_NAMED} more" if len(shown) > COPIES_NAMED else ""
        notes.append(
            f"left out {len(shown)} identical copies of results shown: {named}{more}; "
            "they stay in the index"
        )
    return out
