"""Completion context for one cursor: decide, gather, check against what the user sees, pack.

The engine behind `repocontext context`, `:RepoContext context` and every completion. Its
promise is the smallest set of snippets that lets the model write the right thing, and none
of them stale:

- an open buffer's text wins over the index (a snippet is re-cut from the buffer);
- a file changed on disk since it was indexed is re-read and re-cut, or dropped if gone;
- after a branch switch (HEAD moved) the index is brought up to date before it is used.
"""

from __future__ import annotations

import re
import time
from collections import Counter, OrderedDict
from dataclasses import replace
from pathlib import Path

from ..config import DEFAULT_CONTEXT_BUDGET
from ..index import secrets
from ..index.imports import ImportResolver
from ..index.indexer import catch_up
from ..index.reading import MAX_FILE_BYTES, RefusedFile, read_in_root, source_text, stat_in_root
from ..index.roles import file_role
from ..lang.chunking import analyze_file
from ..lang.languages import language_for
from ..locations import relative_path
from ..search.retrievers import VectorRetriever
from ..store import Store
from .candidate import Candidate
from .candidates import LexicalHits, gather, lexical_search
from .cursor import BufferAnalyses, CursorView
from .lines import RepositoryLines, counted_lines
from .packing import TokenCounter, estimate_tokens, pack, score
from .receivers import Receiver, ReceiverTyper, TypeRef
from .request import ContextPackage, CursorRequest, RepositoryNames
from .trigger import decide

QUERY_CHARS = 1000  # about 256 tokens of code before the cursor
QUERY_TERMS = 12
LEXICAL_CACHE = 32
MAX_MEMBER_NAMES = 200  # names after `obj.` given to the decoder (ContextPackage.receiver)
_IDENT = re.compile(r"[A-Za-z_][A-Za-z0-9_]{2,}")


class ContextEngine:
    """A handle on one opened index: its store and vector retriever are fixed when it is made,
    and its caches (buffers, imports, receiver types, lexical hits) are only touched by its
    builds. An index that changes shape (rebuilt, vectors made) gets a new handle, published
    by the session (`CompletionEngine.use_index`); new rows are read through the same one."""

    def __init__(
        self,
        root: Path,
        store: Store,
        vector: VectorRetriever | None = None,
        count_tokens: TokenCounter = estimate_tokens,
        default_budget: int = DEFAULT_CONTEXT_BUDGET,
    ):
        self.root = root
        self.store = store
        self.vector = vector
        self.count_tokens = count_tokens
        self.default_budget = default_budget
        self._resolver: tuple[str | None, ImportResolver] | None = None
        self._typer: ReceiverTyper | None = None
        self._buffers = BufferAnalyses()
        self._lexical: OrderedDict[tuple[str, str, str | None], LexicalHits] = OrderedDict()
        self._names: tuple[str | None, RepositoryNames] | None = None
        self._lines = RepositoryLines()
        self._lines_version: str | None = None

    def close(self) -> None:
        """Close the index (the completion engine does it on the context thread, after the
        last build that reads this handle: `CompletionEngine.use_index`)."""
        self.store.close()

    def repository_names(self) -> RepositoryNames:
        """The source files' defined names and definition heads, kept while the index's
        `indexed_at` stays the same (about 20 ms for requests, once)."""
        version = self.store.get_meta("indexed_at")
        if self._names is not None and self._names[0] == version:
            return self._names[1]
        heads: dict[str, list[tuple[str, str | None, bool]]] = {}
        for name, qualname, head, path in self.store.definition_heads():
            constructor = qualname.endswith(".__init__") or qualname.endswith(".constructor")
            key = qualname.rsplit(".", 2)[-2] if constructor and "." in qualname else name
            heads.setdefault(key, []).append((head, language_for(path), constructor))
        found = RepositoryNames(
            frozenset(heads),
            {k: tuple(v) for k, v in heads.items()},
            tuple(sorted(name.encode("utf-8") for name in heads)),
        )
        self._names = (version, found)
        return found

    def repository_lines(self) -> RepositoryLines:
        """The source files' lines for the completion to copy (context/lines.py), brought up
        to date when the index's `indexed_at` changed: only the files whose content hash
        changed are read again (rich: about 0.2 s once, then a saved file's own lines)."""
        version = self.store.get_meta("indexed_at")
        if version == self._lines_version:
            return self._lines
        hashes = self.store.source_hashes()
        have = self._lines.hashes()
        stale = [p for p, h in hashes.items() if have.get(p) != h]
        chunks: dict[str, list[tuple[int, int, str]]] = {p: [] for p in stale}
        for path, start, end, text in self.store.source_chunks_of(stale):
            chunks[path].append((start, end, text))
        changed: dict[str, tuple[str, Counter[str]] | None] = {
            p: (hashes[p], counted_lines(chunks[p])) for p in stale
        }
        changed.update({p: None for p in have if p not in hashes})
        self._lines = self._lines.updated(changed)
        self._lines_version = version
        return self._lines

    def build(
        self, request: CursorRequest, top1_probability: float | None = None
    ) -> ContextPackage:
        started = time.perf_counter()
        budget = self.default_budget if request.budget is None else request.budget
        if request.budget is None:
            request = replace(request, budget=budget)
        timings: dict[str, float] = {}
        path = relative_path(self.root, request.file)
        text = request.text
        if text is None:
            text = request.open_buffers.get(path)
        if text is None:
            text = _read(self.root, path) or ""
        view = CursorView.of(path, text, request.line, request.col, self._buffers)
        receiver, foreign_classes = self._receiver(view, request, text)
        decision = decide(view, top1_probability, receiver, foreign_classes)
        receiver_json = (
            None
            if receiver is None
            else {
                "expression": ".".join(n + ("()" if c else "") for n, c in receiver.chain),
                "types": [f"{t.path}:{t.qualname}" for t in receiver.types],
                "line": view.line,
                "col": view.receiver_col,
                "member": receiver.member,
                "members": self._member_names(receiver),
            }
        )
        timings["trigger"] = _ms(started)
        package = ContextPackage(
            file=path,
            line=view.line,
            col=request.col,
            retrieved=False,
            skip_reason=decision.skip_reason,
            snippets=[],
            tokens=0,
            budget=budget,
            timings_ms=timings,
            reasons=decision.reasons,
            receiver=receiver_json,
        )
        if not decision.retrieve:
            timings["total"] = _ms(started)
            return package
        self._follow_head()
        t0 = time.perf_counter()
        recent = _IDENT.findall(view.prefix_text(QUERY_CHARS // 2))[::-1][:30]  # nearest first
        query_idents = list(
            dict.fromkeys(
                decision.foreign + ([view.callee] if view.callee else []) + view.near + recent
            )
        )
        # The search query is short on purpose: names the code needs first, then the words of
        # the last lines; an OR of 40 common identifiers costs tens of milliseconds on a large
        # index and mostly adds noise.
        # The word being typed is left out: it is looked up by prefix, and without it the
        # query stays the same while a word is typed, so its results are reused.
        query = " ".join(
            [w for w in query_idents if not view.scope.is_builtin(w) and w != view.partial][
                :QUERY_TERMS
            ]
        )
        package.query = query
        include_tests = file_role(path) == "test"
        candidates = gather(
            self.store,
            view,
            decision,
            request,
            query,
            self._imports(),
            self._cached_lexical,
            include_tests,
            receiver,
            self._typer,
        )
        timings["candidates"] = _ms(t0)
        t0 = time.perf_counter()
        current = [(c, t) for c in candidates if (t := self._current_text(c, request)) is not None]
        timings["consistency"] = _ms(t0)
        t0 = time.perf_counter()
        ranked = score(current, set(query_idents))
        package.snippets = pack(ranked, budget, self.count_tokens)
        package.tokens = sum(s.tokens for s in package.snippets)
        package.retrieved = True
        if not package.snippets:
            package.skip_reason = (
                "nothing relevant enough was found" if budget > 0 else "the budget is 0"
            )
        timings["pack"] = _ms(t0)
        timings["total"] = _ms(started)
        return package

    def _member_names(self, receiver: Receiver) -> list[str]:
        """What the object before the dot has, when its class and all its bases are in the
        index ([] otherwise, and for a module's names: a module's top level is not typed)."""
        classes = [t for t in receiver.types if not t.module][:4]
        if self._typer is None or not classes:
            return []
        names: list[str] = []
        for t in classes:
            found, complete = self._typer.member_names(t)
            if not complete:
                return []
            names.extend(found)
        return list(dict.fromkeys(names))[:MAX_MEMBER_NAMES]

    def _receiver(
        self, view: CursorView, request: CursorRequest, text: str
    ) -> tuple[Receiver | None, list[str]]:
        """The object before the cursor's dot, typed; and which of its classes (its own and its
        bases) live in other files."""
        if not view.receiver_chain:
            return None, []
        facts = view.facts()
        if facts is None:
            return None, []
        typer = self._receiver_typer()

        def read(rel: str) -> str | None:
            if rel == view.path:
                return text
            buffer = request.open_buffers.get(rel)
            return buffer if buffer is not None else _read(self.root, rel)

        typer.files.read = read
        receiver = typer.receiver(
            view.path, facts, view.receiver_chain, view.member, view.enclosing, view.line
        )
        if not receiver.types and request.receiver_location:
            # the engine's own reading found nothing; the language server's answer
            hit = self.store.class_at(*request.receiver_location)
            if hit is not None and hit.qualname:
                receiver.types = [TypeRef(hit.path, hit.qualname)]
        foreign = [
            f"{c.qualname} ({c.path})"
            for ref in receiver.types
            if not ref.module
            for c in typer.lineage(ref)
            if c.path != view.path
        ]
        return receiver, list(dict.fromkeys(foreign))

    def _cached_lexical(self, query: str, scope: str) -> LexicalHits:
        """BM25 and vector hits, kept for the last few queries of this index (tens of
        milliseconds on a large repository, asked again at each keystroke of a word)."""
        key = (query, scope, self.store.get_meta("indexed_at"))
        if key in self._lexical:
            self._lexical.move_to_end(key)
            return self._lexical[key]
        found = lexical_search(self.store, self.vector)(query, scope)
        self._lexical[key] = found
        if len(self._lexical) > LEXICAL_CACHE:
            self._lexical.popitem(last=False)
        return found

    def _receiver_typer(self) -> ReceiverTyper:
        imports = self._imports()
        if self._typer is None or self._typer.imports is not imports:
            self._typer = ReceiverTyper(self.store, imports, lambda rel: None)
        return self._typer

    # --- consistency -----------------------------------------------------------------------------
    def _current_text(self, cand: Candidate, request: CursorRequest) -> str | None:
        """The candidate's text as the user sees it now (a secret in it removed), or None if
        it no longer exists."""
        text = self._current_text_raw(cand, request)
        if text is None:
            return None
        redacted, _ = secrets.redact(text, cand.path)
        return redacted  # None: a private key block: never sent

    def _current_text_raw(self, cand: Candidate, request: CursorRequest) -> str | None:
        if cand.hit is None:
            return cand.text
        buffer = request.open_buffers.get(cand.path)
        if buffer is not None:
            return self._recut(cand, buffer)
        state = self.store.file_state(cand.path)
        try:
            st = stat_in_root(self.root, cand.path)
        except (OSError, RefusedFile):
            return None  # deleted since it was indexed, or no longer a plain file of the tree
        if state is None or state.size != st.st_size or state.mtime_ns != st.st_mtime_ns:
            disk = _read(self.root, cand.path)
            return None if disk is None else self._recut(cand, disk)
        return self.store.chunk_texts([cand.hit.chunk_id]).get(cand.hit.chunk_id)

    def _recut(self, cand: Candidate, text: str) -> str | None:
        """Find the candidate's symbol in the current text; update its lines; None if gone."""
        hit = cand.hit
        assert hit is not None  # only an indexed candidate is re-cut
        chunks = analyze_file(text, language_for(cand.path), references=False).chunks
        same = [
            c for c in chunks if cand.symbol and c.qualname == cand.symbol and c.kind == hit.kind
        ]
        if not same and not cand.symbol:
            same = [c for c in chunks if c.start_line <= cand.start_line <= c.end_line]
        if not same:
            return None
        best = min(same, key=lambda c: abs(c.start_line - cand.start_line))
        cand.start_line, cand.end_line = best.start_line, best.end_line
        return best.text

    def _follow_head(self) -> None:
        """After a branch switch, bring the index up to date before trusting it."""
        if catch_up(self.root, self.store):
            self._resolver = None

    def _imports(self) -> ImportResolver:
        stamp = self.store.get_meta("indexed_at")
        if self._resolver is None or self._resolver[0] != stamp:
            self._resolver = (stamp, ImportResolver(sorted(self.store.file_states())))
        return self._resolver[1]


def _read(root: Path, rel: str) -> str | None:
    """A file of the tree as the index reads it: a regular file, no link on the way, capped."""
    try:
        data = read_in_root(root, rel, MAX_FILE_BYTES)
    except (OSError, RefusedFile):
        return None
    return None if len(data) > MAX_FILE_BYTES else source_text(data)[0]


def _ms(t0: float) -> float:
    return (time.perf_counter() - t0) * 1000
