"""Gathering completion context: every source's candidates for one cursor (definitions,
class outlines, the call graph, BM25 and vectors, buffers, edits and yanks). What each kind
of evidence is worth, and why, is in candidate.py with the priors."""

from __future__ import annotations

import math
import posixpath
from collections.abc import Callable

from ..index.imports import ImportResolver
from ..search.retrievers import BM25Retriever, Query, VectorRetriever
from ..store import ChunkHit, Store
from .candidate import CONFIDENT, PRIOR, Candidate
from .cursor import CursorView
from .members import receiver_candidates
from .receivers import Receiver, ReceiverTyper
from .request import CursorRequest
from .trigger import TriggerDecision

SEARCH_DEPTH = 20


LexicalHits = tuple[list[ChunkHit], list[ChunkHit]]  # (BM25 hits, vector hits)
Lexical = Callable[[str, str], LexicalHits]


def lexical_search(store: Store, vector: VectorRetriever | None) -> Lexical:
    """BM25 and vector hits for a query (what `gather` asks when the structure is silent)."""

    def search(query: str, scope: str) -> LexicalHits:
        q = Query(query, SEARCH_DEPTH, scope)
        words = BM25Retriever(store).search(q).hits
        meaning = vector.search(q).hits if vector is not None else []
        return words, meaning

    return search


def gather(
    store: Store,
    view: CursorView,
    decision: TriggerDecision,
    request: CursorRequest,
    query: str,
    resolver: ImportResolver,
    lexical: Lexical,
    include_tests: bool,
    receiver: Receiver | None = None,
    typer: ReceiverTyper | None = None,
) -> list[Candidate]:
    scope = "all" if include_tests else "src"
    out: list[Candidate] = []
    typed = receiver_candidates(store, typer, receiver, view) if typer and receiver else []
    out += typed
    found_member = receiver is not None and any(c.source == "definition" for c in typed)
    if found_member and receiver is not None:
        # the member after the dot is found through obj's class: no look-up by name alone
        decision = TriggerDecision(
            decision.retrieve,
            decision.reasons,
            decision.skip_reason,
            [n for n in decision.foreign if n != receiver.member],
        )
    out += _definitions(
        store,
        view,
        decision,
        resolver,
        scope,
        skip={receiver.member} if found_member and receiver is not None else set(),
    )
    out += _members(store, view, resolver)
    if any(c.prior >= CONFIDENT and c.path != view.path for c in out):
        # The structure answered (an import or the receiver's class named the definition):
        # what the enclosing function calls and what merely shares words would only crowd it
        # and cost tokens (measured in bench/results/methods.md: the irrelevant share).
        return [c for c in out + _editor(view, request) if c.path != view.path]
    out += _callgraph(store, view, scope)
    if query.strip():
        words, meaning = lexical(query, scope)
        for rank, hit in enumerate(words):
            out.append(
                Candidate(
                    "bm25",
                    PRIOR["bm25"] * (1 - rank / (2 * SEARCH_DEPTH)),
                    hit,
                    why=f"BM25 #{rank + 1}",
                )
            )
        for rank, hit in enumerate(meaning):
            out.append(
                Candidate(
                    "vector",
                    PRIOR["vector"] * (1 - rank / (2 * SEARCH_DEPTH)),
                    hit,
                    why=f"vector #{rank + 1}",
                )
            )
    out += _editor(view, request)
    return [c for c in out if c.path != view.path]


def _definitions(
    store, view, decision, resolver, scope, skip: set[str] | frozenset[str] = frozenset()
) -> list[Candidate]:
    names = [n for n in decision.foreign if n not in skip]
    if view.callee and view.callee not in names and view.callee not in skip:
        names.append(view.callee)
    out: list[Candidate] = []
    base_homes = _base_class_homes(view, resolver)
    for name in names:
        module = view.scope.imported.get(name)
        home = resolver.resolve(view.path, module, view.language) if module else None
        if (
            home is None
            and base_homes
            and name in (view.partial, view.callee)
            and ((view.attr_base or view.callee_base) in ("self", "cls", "this", "super"))
        ):
            # `self.name`: a method this class inherits from a base imported from elsewhere
            hits = [h for h in store.symbols_named([name], 40, scope) if h.path in base_homes]
            for hit in hits:
                out.append(
                    Candidate(
                        "definition",
                        PRIOR["definition"],
                        hit,
                        why=f"{name}, inherited from {base_homes[hit.path]}",
                    )
                )
            if hits:
                continue
        hits = store.symbols_named([name], 20, scope)
        exact = [h for h in hits if h.name == name or (h.qualname or "").endswith("." + name)]
        if not exact and name == view.partial:
            exact = store.symbols_with_prefix(name, 5, scope)
        resolved = [
            h
            for h in exact
            if home and (h.path == home or home.endswith("/") and h.path.startswith(home))
        ]
        for hit in resolved:
            out.append(
                Candidate(
                    "definition",
                    PRIOR["definition"],
                    hit,
                    why=f"definition of {name}, imported from {module}",
                )
            )
        if resolved:
            continue  # the import says which one: same-named twins elsewhere are noise
        for hit in exact:
            share = 0.8 / math.sqrt(len(exact))
            out.append(
                Candidate(
                    "definition",
                    share * _proximity(view.path, hit.path),
                    hit,
                    why=f"a definition named {name}",
                )
            )
    return out


def _base_class_homes(view: CursorView, resolver: ImportResolver) -> dict[str, str]:
    """Files of the imported base classes of the class around the cursor: path -> base name."""
    if not view.enclosing or "." not in view.enclosing:
        return {}
    cls = view.enclosing.rsplit(".", 1)[0]
    index = next((i for i, c in enumerate(view.analysis.chunks) if c.qualname == cls), None)
    if index is None:
        return {}
    homes: dict[str, str] = {}
    for ref, owner in view.analysis.references:
        if ref.kind == "inherit" and owner == index and ref.name in view.scope.imported:
            home = resolver.resolve(view.path, view.scope.imported[ref.name], view.language)
            if home:
                homes[home] = ref.name
    return homes


def _members(store, view, resolver) -> list[Candidate]:
    """For `obj.` where obj was made by `SomeClass(...)`: SomeClass's outline."""
    base = view.attr_base or view.callee_base
    if not base:
        return []
    cls = view.scope.assigned_from.get(base, base)
    module = view.scope.imported.get(cls)
    home = resolver.resolve(view.path, module, view.language) if module else None
    hits = store.members_of([cls], [home] if home else None, 5)
    return [Candidate("member", PRIOR["member"], h, why=f"members of {cls}") for h in hits]


def _callgraph(store, view, scope) -> list[Candidate]:
    """Definitions the enclosing function calls (one hop) and what those call (two hops)."""
    called = [n for n in view.called_in_enclosing() if view.scope.is_foreign(n)][:10]
    if not called:
        return []
    first = [h for h in store.symbols_named(called, 20, scope) if h.path != view.path]
    out = [
        Candidate("callgraph", PRIOR["callgraph"], h, why="called by the enclosing function")
        for h in first
    ]
    second_names = store.graph.called_names([h.chunk_id for h in first])[:10]
    for h in store.symbols_named(second_names, 10, scope):
        out.append(Candidate("callgraph2", PRIOR["callgraph2"], h, why="two calls away"))
    return out


def _editor(view: CursorView, request: CursorRequest) -> list[Candidate]:
    out: list[Candidate] = []
    for path, line in request.recent_edits[-5:]:
        text = request.open_buffers.get(path)
        if text is None or path == view.path:
            continue
        lines = text.split("\n")
        start, end = max(1, line - 5), min(len(lines), line + 5)
        out.append(
            Candidate(
                "edit",
                PRIOR["edit"],
                path=path,
                start_line=start,
                end_line=end,
                text="\n".join(lines[start - 1 : end]),
                why="recently edited",
            )
        )
    for text in request.yanks[-3:]:
        if text.strip():
            n = text.count("\n") + 1
            out.append(
                Candidate(
                    "yank",
                    PRIOR["yank"],
                    path="<yank>",
                    start_line=1,
                    end_line=n,
                    text=text,
                    why="recently yanked",
                )
            )
    return out


def _proximity(a: str, b: str) -> float:
    """1.0 in the same directory, falling with each directory apart (never below 0.7)."""
    da, db = posixpath.dirname(a).split("/"), posixpath.dirname(b).split("/")
    shared = 0
    for x, y in zip(da, db):
        if x != y:
            break
        shared += 1
    apart = (len(da) - shared) + (len(db) - shared)
    return max(0.7, 1.0 - 0.05 * apart)
