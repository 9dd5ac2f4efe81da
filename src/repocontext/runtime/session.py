"""One repository at work: its completion engine and the threads that run it.

The editor's one object for a repository: bridge.py keeps a `Session` per root and asks it
for everything (completion, warming, indexing, search, the look-ups, context, status), so
each root has one `Repository`, one kept searcher with its connection, and one index worker.
Its index work is in indexing.py (`BackgroundIndex`), which it owns.

The editor and the command line complete through a `Session`, so both behave the same:

- completions run on one worker thread; a newer request cancels the one before it;
- updates stream to the caller at most about 30 times a second;
- after a suggestion, the suggestion that would follow it, were it accepted, is prepared on
  the same worker (speculation) and lands in the engine's cache, where the next keystroke
  finds it or cancels it. It is generated in the backend's sibling, a KV cache of its own:
  sharing one, the speculative prompt pushed the real next keystroke's prompt out (measured:
  first ghost text p95 214 ms -> 2,141 ms). Where the backend has no sibling (a server), only
  one-line suggestions are speculated upon: they do not move the prompt's window;
- the prompt is warmed before the keystroke that needs it: when a file is opened (which also
  loads the model), when insert mode starts, when the user pauses, and when late context is
  kept, the next prompt is evaluated with nothing generated (`warm`). A real request cancels a
  warming at once; a warming never cancels a real request;
- indexing runs on a worker of its own, and never holds up a completion (indexing.py);
- a session for a file outside any project (`Repository.buffer_only`) completes from the open
  buffers and indexes nothing;
- `:RepoContext search`, definition, references and context read the index through a
  searcher kept for the session and its connection (editor_search.py);
- the next edit (nextedit/, issue 53) is proposed on a worker of its own, so that it never
  waits behind a completion; it reads the other files' places through the same kept
  connection;
- the last latencies and errors, and why the last completion showed nothing (`last_hidden`:
  a gate, an empty answer, the deadline; complete/outcome.py), are kept for status and
  :checkhealth.

Failures become one-line messages (`on_done(None, message)`); nothing raises into the caller.

(About 530 lines: the methods of `Session` share its workers, its cancellation and its kept
searcher; the index worker, which shares none of them, is in indexing.py.)
"""

from __future__ import annotations

import logging
import threading
import time
import traceback
from collections import Counter, deque
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field, replace
from typing import TYPE_CHECKING, Any

from ..complete.backends import Backend
from ..complete.engine import CancelToken, CompletionEngine, Suggestion
from ..complete.outcome import why_hidden
from ..config import GenerationConfig
from ..context.request import ContextPackage, CursorRequest
from ..errors import RepoContextError, redact_url
from ..lang.text import cursor_in
from ..nextedit import EditMemory, NextEditPlace
from ..search.results import SearchResponse
from ..service import Repository
from .editor_search import EditorSearch
from .indexing import BackgroundIndex, Report
from .threads import Worker

if TYPE_CHECKING:
    from ..search.lookups import BufferPlace
    from ..store import Store

log = logging.getLogger(__name__)

UPDATE_INTERVAL = 0.03  # seconds between streamed updates: about 30 a second

OnUpdate = Callable[[str], None]
OnDone = Callable[[Suggestion | None, str | None], None]
OnPlaces = Callable[[list[NextEditPlace] | None, str | None], None]


class Session:
    def __init__(
        self,
        repo: Repository,
        backend: Backend | None = None,
        generation: GenerationConfig | None = None,
    ):
        """`backend` and `generation` replace the configured model and settings (tests)."""
        self.repo = repo
        self._backend = backend
        self._generation = generation
        self._engine: CompletionEngine | None = None
        # told {"state": "loading", "what"} before the engine's model is loaded or its server
        # first asked, and {"state": "ready"} after: the editor's sign that it is starting
        self.on_loading: Callable[[Report], None] | None = None
        self._search: EditorSearch | None = None  # `:RepoContext search`, made on first use
        # One lock for the request state that three threads share (the editor's, the worker,
        # the context thread): the work submitted last (`_current`), the warming waiting for a
        # real completion and the last request. Held for a few assignments only.
        self._lock = threading.Lock()
        self._completions = Worker("complete")
        self._next_edits = Worker("next-edit")
        # the edits asked about lately, for all the session's buffers: a change made again
        # further on is being carried through (nextedit/memory.py)
        self._edit_memory = EditMemory()
        self._current: _Work | None = None
        self._pending_warm: CursorRequest | None = None
        self._last_request: CursorRequest | None = None
        self._closing = threading.Event()  # set by `close`: a search is refused after it
        self.warming = WarmStats()
        self.evaluated = 0  # prompt tokens evaluated by completions (speculation included)
        self.completions = 0
        self.cancelled = 0  # requests stopped before their end (a newer key, a burst)
        # what became of finished model suggestions: "shown", "nothing" (the model had
        # nothing), or the gate that hid or cut one ("confidence-drop", "syntax-cut", ...)
        self.outcomes: Counter[str] = Counter()
        # why the last completion showed nothing ({"code", "reason", "at"}), kept until one
        # shows something: the screen alone cannot tell a gate from a model with nothing
        self.last_hidden: Report | None = None
        self.latencies: deque[Report] = deque(maxlen=50)
        self.errors: deque[str] = deque(maxlen=20)
        self.last_speculation: Suggestion | None = None
        # the index worker, and the publication of the index to the engine (indexing.py)
        self._indexing = BackgroundIndex(repo, lambda: self._engine, self.errors)

    # --- the engine ----------------------------------------------------------------------------
    @property
    def engine(self) -> CompletionEngine:
        """The completion engine, made on first use (loading the model takes a second), on the
        completion worker (or the command line's thread), with the index as it is then; the
        model loads outside any lock. After that a plain read: the index worker publishes."""
        engine = self._engine
        if engine is not None:
            return engine
        announce = self.on_loading if self._backend is None else None
        if announce is not None:
            url = self.repo.config.generation.server_url
            announce(
                {"state": "loading", "what": "asking its server" if url else "loading the model"}
            )
        try:
            backend = self._backend or self.repo.generation_backend()
        finally:
            if announce is not None:
                announce({"state": "ready"})
        engine = CompletionEngine(
            backend,
            None,
            self._generation or self.repo.config.generation,
            on_context_kept=self._context_kept,
            on_context_error=self._note_error,
            on_index_replaced=self._indexing.republish,
            use_repository=self.repo.config.context.use_repository,
        )
        with self._indexing.publishing:
            if self._engine is None:
                self._engine = engine
        self._indexing.publish()
        return self._engine

    @property
    def loaded(self) -> CompletionEngine | None:
        """The engine if it was made already (never loads one)."""
        return self._engine

    # --- completion ----------------------------------------------------------------------------
    def complete(self, request: CursorRequest, on_update: OnUpdate, on_done: OnDone) -> None:
        """Start a completion on the worker; a newer call cancels this one."""
        work = _Work("complete", request)
        with self._lock:
            if self._current is not None:
                self._current.token.cancel()
            self._current = work
            self._pending_warm = None  # this request evaluates the prompt here anyway
            self._last_request = request
        self._completions.submit(self._complete, work, on_update, on_done)

    def cancel(self) -> None:
        """Stop the completion or warming in flight, the speculation after it and a warming
        waiting for it: the editor's text has moved on (a burst of keys, whose next request
        waits for quiet) or the user left the place (<Esc>, another buffer). On two cores a
        stale generation takes the CPU from the editor itself (bench/results/editor.md), and
        work after the user stopped is waste. Late context kept afterwards warms nothing."""
        with self._lock:
            self._pending_warm = None
            self._last_request = None
            if self._current is not None:
                self._current.token.abandon()

    def warm(self, request: CursorRequest) -> None:
        """Evaluate the prompt of the next keystroke at this place (loading the model first if
        it is not yet), generating nothing. It never cancels a real completion: while one is
        queued or runs, the warming waits and runs after it, unless a newer request comes
        first (the editor warms from its own thread, late context from the context thread)."""
        with self._lock:
            current = self._current
            if current is not None and current.kind == "complete" and not current.finished:
                self._pending_warm = request
                return
            if current is not None:
                current.token.cancel()  # an older warming: this place is newer
            work = self._current = _Work("warm", request)
            self._last_request = request
        self._completions.submit(self._warm, work)

    def _warm(self, work: _Work) -> None:
        if work.token.cancelled:
            return
        self._indexing.begin_work()
        try:
            gen = self.engine.warm(work.request, cancel=work.token)
            self.warming.add(
                gen.tokens_evaluated, gen.tokens_reused + gen.tokens_evaluated, gen.eval_seconds
            )
        except RepoContextError as exc:
            self.errors.append(str(exc))
        except Exception as exc:  # never into the editor: noted, as a completion's would be
            log.debug("warming failed:\n%s", traceback.format_exc())
            self.errors.append(f"internal error ({type(exc).__name__}: {exc})")
        finally:
            self._indexing.end_work()

    def _context_kept(self, path: str) -> None:
        """Late context was kept for `path`: warm the prompt that now starts with it (after
        the completion in flight, if one is), unless the user has moved on or left."""
        with self._lock:
            last = self._last_request
        if last is not None and last.file == path:
            self.warm(replace(last, avoid=None))

    def complete_now(self, request: CursorRequest, mode: str = "parallel") -> Suggestion:
        """A completion on the caller's thread (the command line); errors raise."""
        return self.engine.complete(request, mode=mode)

    def _complete(self, work: _Work, on_update: OnUpdate, on_done: OnDone) -> None:
        try:
            if work.token.cancelled:
                self.cancelled += 1
                on_done(Suggestion("", status="cancelled"), None)
                return
            self._run_completion(work.request, work.token, on_update, on_done)
        finally:
            with self._lock:
                work.finished = True
                newest = self._current is work  # nothing newer came
                pending, self._pending_warm = self._pending_warm, None
            if pending is not None and newest:
                self.warm(pending)

    def _run_completion(
        self, request: CursorRequest, token: CancelToken, on_update: OnUpdate, on_done: OnDone
    ) -> None:
        self._indexing.begin_work()
        try:
            engine = self.engine
            last = [0.0]

            def update(text: str) -> None:
                now = time.monotonic()
                if now - last[0] > UPDATE_INTERVAL and not token.cancelled:
                    last[0] = now
                    on_update(text)

            result = engine.complete(request, cancel=token, on_update=update)
            self.warming.used(result.tokens_reused)
            self.completions += 1
            self.cancelled += result.status == "cancelled"
            if result.status != "cancelled" and result.source == "model":
                self.outcomes[result.gate or ("shown" if result.suggestion else "nothing")] += 1
            if result.status != "cancelled" and request.avoid is None:  # not a second candidate
                hidden = self.hidden_reason(result)
                self.last_hidden = (
                    None
                    if hidden is None
                    else {"code": hidden["code"], "reason": hidden["reason"], "at": time.time()}
                )
            self.evaluated += result.tokens_evaluated
            self.latencies.append(
                {
                    "total": result.timings_ms.get("total"),
                    "first_token": result.timings_ms.get("first_token"),
                    "source": result.source,
                }
            )
            on_done(result, None)
            own_cache = engine.backend.sibling() is not engine.backend
            if (
                result.suggestion
                and (own_cache or "\n" not in result.suggestion)
                and not token.cancelled
                and request.avoid is None
            ):
                self.last_speculation = engine.complete(
                    accepted(request, result.suggestion), cancel=token, speculative=True
                )
                self.evaluated += self.last_speculation.tokens_evaluated
        except RepoContextError as exc:
            self._fail(on_done, str(exc))
        except Exception as exc:  # an engine bug reaches the caller as a message, not a trace
            log.debug("completion failed:\n%s", traceback.format_exc())
            self._fail(on_done, f"internal error ({type(exc).__name__}: {exc})")
        finally:
            self._indexing.end_work()

    def hidden_reason(self, result: Suggestion) -> Report | None:
        """Why `result` shows nothing ({"code", "reason", "short"}: complete/outcome.py), judged
        with the settings the engine made it with; None when it shows something."""
        engine = self._engine
        config = engine.config if engine is not None else self.repo.config.generation
        reason = why_hidden(result, config)
        return reason.to_json() if reason is not None else None

    def _fail(self, on_done: OnDone, message: str) -> None:
        self.errors.append(message)
        on_done(None, message)

    def _note_error(self, message: str) -> None:
        if message not in self.errors:
            self.errors.append(message)

    # --- indexing ------------------------------------------------------------------------------
    def index(
        self,
        embed: bool,
        on_progress: Callable[[Report], None],
        on_done: Callable[[Report], None],
        first: Sequence[str] = (),
    ) -> None:
        """Bring the index up to date (then the vectors, with `embed`) on the index worker.

        `on_progress` gets {"phase": "index" | "embed" | "windows" | "waiting", "done", "total",
        "percent", "root"} at most twice a second per phase (and at each phase's start and end;
        "windows": source passages looked at for their later windows, after "embed"); "waiting"
        adds "pid" and "message" ("waiting for another index (pid N)") while another process
        writes this index. `on_done` gets the report: {"root", "files", "added", "updated",
        "removed", "seconds"} and "embedded" (or "embed_error"); "indexed_by": "another
        process (pid N)" when one was waited for; {"root", "busy": true, "note"} if it still
        runs after `indexing.WRITER_WAIT` seconds; {"root": None, "project": false, "note"}
        for a buffer-only session (nothing indexed, no error); {"error": message} otherwise.
        `first`: the open files (relative paths), whose neighbourhood is indexed first."""
        self._indexing.index(embed, on_progress, on_done, first)

    # --- status --------------------------------------------------------------------------------
    def status(self) -> Report:
        out = self.repo.status()
        lat = sorted(x["total"] for x in self.latencies if x.get("total") is not None)
        out["recent_latency_ms"] = lat[len(lat) // 2] if lat else None
        out["recent_errors"] = list(self.errors)[-5:]
        out["work"] = {
            "completions": self.completions,
            "cancelled": self.cancelled,
            "tokens_evaluated": self.evaluated,
            "warming": self.warming.to_json(),
            "suggestions": dict(self.outcomes),
            "last_hidden": self.last_hidden,
            "running": self.running(),
        }
        cfg = self.repo.config.generation
        out["generation"] = {
            "model": cfg.model_path or "gemma-3-270m (default)",
            "server": redact_url(cfg.server_url) or None,
        }
        return out

    def running(self) -> bool:
        """Is completion work queued or running: a completion, a warming, a context build?
        False means nothing more happens for the editor until it asks again. (A warming kept
        in `_pending_warm` waits for a completion that is itself queued or running.)"""
        engine = self._engine
        return self._completions.busy() or (engine is not None and engine.busy())

    # --- :RepoContext's look-ups, on the kept searcher and its connection (editor_search.py) ---
    def search(self, query: str, **options: Any) -> SearchResponse:
        """A `:RepoContext search`."""
        return self._kept_search().search(query, **options)

    def definition(
        self, word: str, path: str | None = None, place: BufferPlace | None = None
    ) -> SearchResponse:
        """`:RepoContext definition`: `Repository.definition` on the kept connection."""
        return self._kept_search().reading(
            lambda store: self.repo.definition(word, path, store=store, place=place)
        )

    def references(
        self, word: str, path: str | None = None, place: BufferPlace | None = None
    ) -> SearchResponse:
        """`:RepoContext references`: `Repository.references` on the kept connection."""
        return self._kept_search().reading(
            lambda store: self.repo.references(word, path, store=store, place=place)
        )

    def context(self, request: CursorRequest) -> ContextPackage:
        """`:RepoContext context`: `Repository.context` on the kept connection."""
        return self._kept_search().reading(lambda store: self.repo.context(request, store=store))

    # --- the next edit (nextedit/) -------------------------------------------------------------
    def next_edit(
        self,
        before: str,
        after: str,
        path: str,
        buffers: dict[str, str],
        on_done: OnPlaces,
        **options: Any,
    ) -> None:
        """The next places for the edit that turned `before` into `after` (`path` and the
        keys of `buffers`, the other unsaved buffers, root-relative), on the next-edit worker:
        a completion in flight never holds it up, and it never holds the editor's thread.
        `on_done(places, None)`, or `(None, message)`; `options` go to `nextedit.propose`
        (min_confidence)."""
        self._next_edits.submit(self._next_edit, before, after, path, buffers, on_done, options)

    def next_edit_places(
        self, before: str, after: str, path: str, buffers: dict[str, str], **options: Any
    ) -> list[NextEditPlace]:
        """`nextedit.propose` with the kept connection, so that the files the index links to
        the edited name follow the buffer's places. Not brought up to date first: the places
        are read from the buffers and files as they are now, and a stale index only misses a
        file. Without an index (none yet, or a file in no project): the buffer's places."""
        from ..nextedit import propose

        def places(store: Store | None) -> list[NextEditPlace]:
            return propose(
                before, after, path, store=store, root=self.repo.root, buffers=buffers,
                memory=self._edit_memory, **options,
            )  # fmt: skip

        if not self.repo.project or not self.repo.index_file.exists():
            return places(None)
        try:
            return self._kept_search().reading(places)
        except RepoContextError as exc:  # an index that cannot be read: the buffer still can
            self._note_error(str(exc))
            return places(None)

    def _next_edit(
        self,
        before: str,
        after: str,
        path: str,
        buffers: dict[str, str],
        on_done: OnPlaces,
        options: dict[str, Any],
    ) -> None:
        try:
            found = self.next_edit_places(before, after, path, buffers, **options)
        except Exception as exc:  # an engine bug reaches the editor as a message, not a trace
            log.debug("next edit failed:\n%s", traceback.format_exc())
            self._fail_places(on_done, f"next edit: internal error ({type(exc).__name__}: {exc})")
            return
        on_done(found, None)

    def _fail_places(self, on_done: OnPlaces, message: str) -> None:
        self.errors.append(message)
        on_done(None, message)

    def _kept_search(self) -> EditorSearch:
        with self._lock:
            if self._closing.is_set():
                raise RepoContextError(
                    "the editor's session is closing; ask again after it restarts"
                )
            if self._search is None:
                self._search = EditorSearch(self.repo)
            return self._search

    def close(self) -> None:
        self._closing.set()
        self._indexing.close()  # ends its waits: another writer, an embedding paused for us
        with self._lock:  # after this, a question is refused (search): no searcher is left open
            search, self._search = self._search, None
        if search is not None:
            search.close()
        if self._engine is not None:
            self._engine.close()
        self._completions.shutdown(wait=False, cancel_futures=True)
        self._next_edits.shutdown(wait=False, cancel_futures=True)


@dataclass
class _Work:
    """What the completion worker was asked for: a keystroke's completion or a warming (which
    never cancels the former), its request, and the token that stops it."""

    kind: str  # "complete" | "warm"
    request: CursorRequest
    token: CancelToken = field(default_factory=CancelToken)
    finished: bool = False  # a completion and its speculation are done (set under the lock)


class WarmStats:
    """What warming cost and what of it the next keystroke used (for bench/editor.py)."""

    def __init__(self) -> None:
        self.count = 0
        self.evaluated = 0  # tokens evaluated by warmings
        self.seconds = 0.0
        self.wasted = 0  # of those, tokens the next real request did not find in the cache
        self._pending: tuple[int, int] | None = None  # (evaluated, prompt length) of the last

    def add(self, evaluated: int, prompt_tokens: int, seconds: float) -> None:
        if self._pending is not None:  # two warmings in a row: the first was never used
            self.wasted += self._pending[0]
        self.count += 1
        self.evaluated += evaluated
        self.seconds += seconds
        self._pending = (evaluated, prompt_tokens)

    def used(self, reused: int) -> None:
        """The next real request found `reused` tokens of its prompt in the cache."""
        if self._pending is None:
            return
        evaluated, length = self._pending
        self.wasted += min(evaluated, max(0, length - reused))
        self._pending = None

    def to_json(self) -> Report:
        return {
            "count": self.count,
            "evaluated": self.evaluated,
            "wasted": self.wasted,
            "seconds": round(self.seconds, 3),
        }


def accepted(request: CursorRequest, suggestion: str) -> CursorRequest:
    """The request the editor would send once `suggestion` is accepted at the cursor."""
    lines = (request.text or "").split("\n")  # every line, so the text comes back the same
    line, col = cursor_in(lines, request.line, request.col)
    current = lines[line - 1]
    inserted = (current[:col] + suggestion).split("\n")
    new_lines = lines[: line - 1] + inserted[:-1] + [inserted[-1] + current[col:]] + lines[line:]
    return replace(
        request,
        line=line + len(inserted) - 1,
        col=len(inserted[-1].encode("utf-8")),
        text="\n".join(new_lines),
    )
