"""Where completion context can come from, each source with a prior that says how much its
kind of evidence is worth before the text itself is looked at.

    definition  the definition of a foreign name, found through the file's own import (1.0),
                or by name alone (0.8, shared among same-named definitions: a "twin" in
                another module never beats the real callee); the method after `obj.` in the
                class of obj or the base that defines it (1.0)
    member      the outline of the class an attribute is taken from (0.9); the outline of
                obj's class (0.95) and of its bases (0.8) at `obj.`, or (0.6) once the
                method itself is known
    callgraph   what the enclosing function's callees call, one hop (0.5) or two (0.3)
    bm25/vector the lexical and semantic search over the query (0.4, falling with rank)
    buffer/edit the editor's open buffers and recent edit locations, current text (0.45)
    yank        recently yanked text (0.3)
"""

from __future__ import annotations

import math
import posixpath
import re
from collections.abc import Callable
from dataclasses import dataclass

from ..index.imports import ImportResolver
from ..search.retrievers import BM25Retriever, Query, VectorRetriever
from ..store import ChunkHit, Store
from .cursor import CursorView
from .receivers import Receiver, ReceiverTyper, TypeRef
from .request import CursorRequest
from .trigger import TriggerDecision

PRIOR = {
    "definition": 1.0,
    "member": 0.9,
    "callgraph": 0.5,
    "callgraph2": 0.3,
    "bm25": 0.4,
    "vector": 0.4,
    "buffer": 0.45,
    "edit": 0.45,
    "yank": 0.3,
}
SEARCH_DEPTH = 20
CONFIDENT = 0.9  # a prior at least this high is a definition the structure vouches for
MAX_OUTLINES = 5  # classes outlined at `obj.`: its own and its nearest bases


@dataclass
class Candidate:
    source: str
    prior: float
    hit: ChunkHit | None = None  # from the index
    path: str = ""
    start_line: int = 0
    end_line: int = 0
    text: str | None = None  # for editor-side candidates (buffers, edits, yanks)
    symbol: str | None = None
    why: str = ""
    # a class outline sent for `obj.<prefix>`: members matching the prefix come first
    outline_prefix: str | None = None

    def __post_init__(self):
        if self.hit is not None:
            self.path = self.hit.path
            self.start_line, self.end_line = self.hit.start_line, self.hit.end_line
            self.symbol = self.hit.qualname or self.hit.name

    @property
    def key(self) -> tuple:
        return (self.path, self.start_line, self.end_line)


Lexical = Callable[[str, str], tuple[list[ChunkHit], list[ChunkHit]]]


def lexical_search(store: Store, vector: VectorRetriever | None) -> Lexical:
    """BM25 and vector hits for a query (what `gather` asks when the structure is silent)."""

    def search(query: str, scope: str) -> tuple[list[ChunkHit], list[ChunkHit]]:
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
    found_member = any(c.source == "definition" for c in typed)
    if found_member:
        # the member after the dot is found through obj's class: no look-up by name alone
        decision = TriggerDecision(
            decision.retrieve,
            decision.reasons,
            decision.skip_reason,
            [n for n in decision.foreign if n != receiver.member],
        )
    out += _definitions(
        store, view, decision, resolver, scope, skip={receiver.member} if found_member else set()
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


def receiver_candidates(
    store: Store, typer: ReceiverTyper, receiver: Receiver, view: CursorView
) -> list[Candidate]:
    """At `obj.` the outline of obj's class and of its bases, members ranked by how likely
    they are wanted; once the member is typed or called, its definition, from the class or
    the base that defines it."""
    name = receiver.member
    modules = [t for t in receiver.types if t.module]
    types = [t for t in receiver.types if not t.module][:4]
    if modules and name and not types:
        return _module_member(store, typer, modules[0], name)
    if not types:
        return []
    guess = 0.8 if types[0].guessed else 1.0
    how = " (by its name)" if types[0].guessed else ""
    member = next((m for m in (typer.member(t, name) for t in types) if m), None) if name else None
    if name and member is None and not typer.members_starting(types[0], name, 1):
        return []  # nothing of that name in the class: the type is likely wrong, say nothing
    wanted: list[tuple[str, str, float, str]] = []
    if member is not None and member.function is not None:
        owner = member.owner
        wanted.append(
            (
                member.function.path or owner.path,
                f"{owner.qualname}.{name}",
                PRIOR["definition"] * guess,
                f"{name} of {types[0].name}{how}"
                + (f", inherited from {owner.name}" if owner != types[0] else ""),
            )
        )
    elif name:
        for m in typer.members_starting(types[0], name, 3):
            wanted.append(
                (
                    m.function.path or m.owner.path,
                    f"{m.owner.qualname}.{m.name}",
                    0.9 * guess,
                    f"{m.name} of {types[0].name}{how}, starts with {name}",
                )
            )
    # The classes to outline: the receiver's and its bases, nearest first (after `super()`
    # every base); the one that defines the method the cursor is in (an override calling
    # what it overrides) or the member being called goes first.
    lineage = list(dict.fromkeys(c for t in types for c in typer.lineage(t)))[:MAX_OUTLINES]
    members = [m for t in types for m in typer.all_members(t)]
    members = list({m.name: m for m in reversed(members)}.values())[::-1]
    usage = store.graph.centrality([m.name for m in members])
    likely = _likely_members(view, receiver)
    focus = (
        member.owner
        if member is not None
        else next((m.owner for m in members if likely.get(m.name, 0) >= 100), None)
    )
    if focus in lineage:
        lineage.remove(focus)
        lineage.insert(0, focus)
    outlines = [
        (
            cls.path,
            cls.qualname,
            guess * max(0.4, (0.6 if wanted else 0.95) - 0.1 * i),
            f"members of {cls.name}{how}" + (f", a base of {types[0].name}" if i else ""),
        )
        for i, cls in enumerate(lineage)
    ]
    hits: dict[tuple[str, str | None], ChunkHit] = {}
    for h in store.definitions_at([(p, q) for p, q, _, _ in wanted + outlines]):
        hits.setdefault((h.path, h.qualname), h)  # a long method's first window: its signature
    out = [
        Candidate("definition", prior, hits[(p, q)], why=why)
        for p, q, prior, why in wanted
        if (p, q) in hits
    ]
    for (path, qualname, prior, why), cls in zip(outlines, lineage):
        hit = hits.get((path, qualname))
        if hit is None:
            continue
        own = [m for m in members if m.owner == cls and m.function.signature]
        own.sort(
            key=lambda m: (
                not m.name.startswith(name) if name else False,
                -likely.get(m.name, 0),
                m.name.startswith("_"),
                -usage.get(m.name, 0),
                m.name,
            )
        )
        out.append(_outline(typer, hit, own, prior, why, name))
    return out


def _module_member(
    store: Store, typer: ReceiverTyper, module: TypeRef, name: str
) -> list[Candidate]:
    """`mod.Name`: the class or function of that name in the module (or one it passes on)."""
    found = [r for r in typer.in_module(module, name) if not r.module and r.qualname]
    hits = store.definitions_at([(r.path, r.qualname) for r in found[:2]])
    return [
        Candidate(
            "definition",
            PRIOR["definition"],
            h,
            why=f"{name}, from {posixpath.basename(module.path)}",
        )
        for h in hits
    ]


def _likely_members(view: CursorView, receiver: Receiver) -> dict[str, int]:
    """How strongly this buffer suggests each member name: used on the same receiver elsewhere
    in it (`self.query.` -> the names after `self.query.` in the file), called in it at all,
    and, after `super().` or `self.`, the name of the method the cursor is in (an override
    calling what it overrides)."""
    text = "\n".join(view.lines)
    receiver_text = r"\s*\.\s*".join(
        re.escape(n) + (r"\(\s*\)" if c else "") for n, c in receiver.chain
    )
    weights: dict[str, int] = {}
    for r, _ in view.analysis.references:
        if r.kind == "call":
            weights[r.name] = max(weights.get(r.name, 0), 1)
    for m in re.finditer(rf"(?<![\w.]){receiver_text}\s*\.\s*([A-Za-z_]\w*)", text):
        weights[m.group(1)] = weights.get(m.group(1), 1) + 3
    if view.enclosing and receiver.chain[0][0] in ("super", "self", "this"):
        weights[view.enclosing.rsplit(".", 1)[-1]] = 100
    return weights


def _outline(
    typer: ReceiverTyper, hit: ChunkHit, members: list, prior: float, why: str, prefix: str
) -> Candidate:
    """A class's header (from its file as it is now: the signature and the first line of its
    docstring) and its members, most wanted first, each on one line."""
    lines = (typer.read(hit.path) or "").split("\n")[hit.start_line - 1 : hit.end_line]
    header = _header(lines)
    first = header[0] if header else ""
    indent = first[: len(first) - len(first.lstrip())] + "    "
    body = [f"{indent}{_clip(m.function.signature)} ..." for m in members]
    return Candidate(
        "member",
        prior,
        path=hit.path,
        start_line=hit.start_line,
        end_line=hit.end_line,
        text="\n".join(header + body),
        symbol=hit.qualname,
        why=why,
        outline_prefix=prefix,
    )


MAX_HEADER_LINES = 12
MAX_SIGNATURE_CHARS = 160


def _header(lines: list[str]) -> list[str]:
    """The definition's own lines up to its body, then one line of its docstring; a Go struct
    or interface keeps its fields (its body is what it declares)."""
    out: list[str] = []
    for i, line in enumerate(lines[:MAX_HEADER_LINES]):
        out.append(line)
        if line.rstrip().endswith(("struct {", "interface {")):
            return lines[:MAX_HEADER_LINES]
        if not line.rstrip().endswith((":", "{")):
            continue
        rest = lines[i + 1 :]
        first = rest[0].strip() if rest else ""
        indent = rest[0][: len(rest[0]) - len(rest[0].lstrip())] if rest else ""
        for quote in ('"""', "'''"):
            if first.startswith(quote):
                text = first[3:] if first[3:].strip() or len(rest) < 2 else rest[1].strip()
                out.append(f"{indent}{quote}{text.replace(quote, '').strip()}{quote}")
                break
        else:
            if first.startswith(("//", "#", "/*", "*")):
                out.append(rest[0])
        break
    return out


def _clip(signature: str) -> str:
    return (
        signature
        if len(signature) <= MAX_SIGNATURE_CHARS
        else (signature[:MAX_SIGNATURE_CHARS].rstrip() + "...")
    )


def _definitions(
    store, view, decision, resolver, scope, skip: set[str] = frozenset()
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
