"""One repository at work: its completion engine and the threads that run it.

About 610 lines, one class: its two workers share the published index handle, the pause that
lets completion take the cores, and the errors both report.

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
- indexing runs on a worker of its own, and never holds up a completion: the first
  suggestion comes from the buffer alone; the engine takes up the index as soon as it exists
  (and its vectors once they are made); embedding stops between batches while completions
  run and goes on once they have been quiet for `EMBED_QUIET` seconds;
- an index that another process (a command-line `index`) is writing is waited for, with
  progress phase "waiting", and then used: never reported as an error;
- a session for a file outside any project (`Repository.buffer_only`) completes from the open
  buffers and indexes nothing;
- `:RepoContext search` asks a searcher kept for the session (editor_search.py);
- the last latencies and errors, and why the last completion showed nothing (`last_hidden`:
  a gate, an empty answer, the deadline; complete/outcome.py), are kept for status and
  :checkhealth.

Failures become one-line messages (`on_done(None, message)`); nothing raises into the caller.
"""

from __future__ import annotations

import logging
import os
import threading
import time
import traceback
from collections import Counter, deque
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field, replace
from typing import Any, TypeVar

from .complete.backends import Backend
from .complete.engine import CancelToken, CompletionEngine, Suggestion
from .complete.outcome import why_hidden
from .config import GenerationConfig
from .context.request import CursorRequest
from .editor_search import EditorSearch
from .errors import IndexBusy, RepoContextError, redact_url
from .lang.text import cursor_in
from .runtime.threads import Worker, single_pool
from .search.results import SearchResponse
from .service import Repository
from .store import index_writer

log = logging.getLogger(__name__)

UPDATE_INTERVAL = 0.03  # seconds between streamed updates: about 30 a second
PROGRESS_INTERVAL = 0.5  # seconds between progress reports of one phase
EMBED_QUIET = 0.3  # seconds without completion work before embedding takes the cores again
# Passages per embedding batch in the editor: a completion that starts during a batch shares
# the cores until the batch ends (about 0.3 s for 8 here, 1.2 s for the configured 32, at the
# same throughput; bench/results/first_ghost.md)
EDITOR_EMBED_BATCH = 8
WRITER_WAIT = 30 * 60.0  # seconds to wait for another process's index run, at most

OnUpdate = Callable[[str], None]
OnDone = Callable[[Suggestion | None, str | None], None]
Report = dict[str, Any]  # a progress report, an index report, a status (JSON for the editor)
Progress = Callable[..., None]  # progress(phase, done, total, **extra)
T = TypeVar("T")


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
        # Publishing the index handle (`_publish_index`): by the index worker after each step,
        # and by the completion worker when it makes the engine. Held while an index is opened
        # (which may load the embedding model), so never on the editor's thread nor per key.
        self._publishing = threading.Lock()
        self._republish_queued = False  # a publication asked for by a build (`_republish`)
        self._completions = Worker("complete")
        self._indexing = single_pool("index", initializer=_background_priority)
        self._current: _Work | None = None
        self._pending_warm: CursorRequest | None = None
        self._last_request: CursorRequest | None = None
        # completion work (a completion or a warming) running, and when the last one ended:
        # the embedder's pause waits on these
        self._activity = threading.Condition()
        self._working = 0
        self._quiet_since = time.monotonic()
        self._closing = threading.Event()
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
            on_index_replaced=self._republish,
            use_repository=self.repo.config.context.use_repository,
        )
        with self._publishing:
            if self._engine is None:
                self._engine = engine
        self._publish_index()
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
        self._begin_work()
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
            self._end_work()

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
        self._begin_work()
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
            self._end_work()

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

    # --- sharing the cores -----------------------------------------------------------------------
    def _begin_work(self) -> None:
        with self._activity:
            self._working += 1

    def _end_work(self) -> None:
        with self._activity:
            self._working -= 1
            self._quiet_since = time.monotonic()
            self._activity.notify_all()

    def _yield_cores(self) -> None:
        """The embedder's pause (between batches): return once no completion work has run for
        EMBED_QUIET seconds. A batch takes every core; run beside a completion, it made the
        first ghost text of a new project 5 to 7 times slower on two cores
        (bench/results/first_ghost.md). While the user types (a request every few hundred
        milliseconds) embedding waits; in a pause it goes on."""
        with self._activity:
            while True:
                if self._closing.is_set():
                    raise _Closed  # what is embedded so far is kept (a batch per transaction)
                if self._working:
                    self._activity.wait(1.0)
                    continue
                left = self._quiet_since + EMBED_QUIET - time.monotonic()
                if left <= 0:
                    return
                self._activity.wait(left)

    # --- indexing ------------------------------------------------------------------------------
    def index(
        self,
        embed: bool,
        on_progress: Callable[[Report], None],
        on_done: Callable[[Report], None],
        first: Sequence[str] = (),
    ) -> None:
        """Bring the index up to date (then the vectors, with `embed`) on the index worker.

        `on_progress` gets {"phase": "index" | "embed" | "waiting", "done", "total", "percent",
        "root"} at most twice a second per phase (and at each phase's start and end); "waiting"
        adds "pid" and "message" ("waiting for another index (pid N)") while another process
        writes this index. `on_done` gets the report: {"root", "files", "added", "updated",
        "removed", "seconds"} and "embedded" (or "embed_error"); "indexed_by": "another
        process (pid N)" when one was waited for; {"root", "busy": true, "note"} if it still
        runs after WRITER_WAIT seconds; {"root": None, "project": false, "note"} for a
        buffer-only session (nothing indexed, no error); {"error": message} otherwise.
        `first`: the open files (relative paths), whose neighbourhood is indexed first."""
        self._indexing.submit(self._index, embed, on_progress, on_done, first)

    def _index(
        self,
        embed: bool,
        on_progress: Callable[[Report], None],
        on_done: Callable[[Report], None],
        first: Sequence[str] = (),
    ) -> None:
        if not self.repo.project:
            on_done({"root": None, "project": False, "note": self.repo.note})
            return
        root = str(self.repo.root)
        last: dict[str, Any] = {"phase": "", "at": 0.0}
        self._publish_index()  # the index as it is, while it is brought up to date

        def progress(phase: str, done: int, total: int, **extra: Any) -> None:
            engine = self._engine
            if phase == "index" and engine is not None and engine.context is None:
                self._publish_index()  # a first index: its first files serve meanwhile
            now = time.monotonic()
            if phase != last["phase"] or now - last["at"] > PROGRESS_INTERVAL or done == total:
                last.update(phase=phase, at=now)
                percent = None if phase == "waiting" else _percent(done, total)
                report = {"phase": phase, "done": done, "total": total, "percent": percent}
                on_progress({**report, "root": root, **extra})

        try:

            def index_progress(done: int, total: int, _path: str = "") -> None:
                progress("index", done, total)

            report, writer = self._unlocked(
                lambda: self.repo.index(progress=index_progress, first=first), progress
            )
            if report is None:
                on_done(self._still_busy(root, writer))
                return
            out = {
                "root": root,
                "files": report.files,
                "added": report.added,
                "updated": report.updated,
                "removed": report.removed,
                "seconds": round(report.seconds, 2),
            }
            self._publish_index()  # a first index done, or a file rebuilt: the next build has it
            if embed:
                try:
                    embedded, other = self._unlocked(
                        lambda: self.repo.embed(
                            progress=lambda d, t: progress("embed", d, t),
                            pause=self._yield_cores,
                            batch_size=min(
                                EDITOR_EMBED_BATCH, self.repo.config.embedding.batch_size
                            ),
                        ),
                        progress,
                    )
                    writer = writer or other
                    out["embedded"] = embedded.embedded if embedded is not None else 0
                    self._publish_index(vectors=True)
                except RepoContextError as exc:
                    out["embed_error"] = str(exc)
            if writer is not None:
                out["indexed_by"] = (
                    f"another process (pid {writer})" if writer else "another process"
                )
            on_done(out)
        except _Closed:
            return  # the session closes: no one waits for the report
        except RepoContextError as exc:
            self.errors.append(str(exc))
            on_done({"error": str(exc)})
        except Exception as exc:
            log.debug("index failed:\n%s", traceback.format_exc())
            message = f"internal error ({type(exc).__name__}: {exc})"
            self.errors.append(message)
            on_done({"error": message})

    def _unlocked(
        self, step: Callable[[], T], progress: Progress, wait: float = WRITER_WAIT
    ) -> tuple[T | None, int | None]:
        """`step()` once no other process writes the index: (its result, None), or (its
        result, pid) after waiting for that process (0: its pid is unknown), or (None, pid)
        when it still writes after `wait` seconds or the session closes. The other run's
        index is read meanwhile: completions are not held up."""
        deadline = time.monotonic() + wait
        writer: int | None = None
        while True:
            try:
                return step(), writer
            except IndexBusy as exc:
                writer = exc.pid or writer or 0
            delay = 0.1
            while True:
                holder = index_writer(self.repo.index_file)
                if holder is None:
                    break  # free (or SQLite was busy for a moment): try again
                writer = holder or writer
                progress(
                    "waiting",
                    0,
                    0,
                    pid=writer or None,
                    message=f"waiting for {_another(writer)}",
                )
                if self._closing.wait(min(delay, max(0.0, deadline - time.monotonic()))):
                    return None, writer
                if time.monotonic() >= deadline:
                    return None, writer
                delay = min(delay * 2, 5.0)
            if self._closing.is_set() or time.monotonic() >= deadline:
                return None, writer
            self._closing.wait(0.05)  # a moment, so SQLite's own busy state can clear

    def _still_busy(self, root: str, writer: int | None) -> Report:
        self._publish_index()  # what the other run wrote so far is used meanwhile
        return {
            "root": root,
            "busy": True,
            "note": f"{_another(writer)} is still indexing {root}; its index is used as it grows",
        }

    def _publish_index(self, vectors: bool = False) -> None:
        """Give the engine (if made) a handle on the index as it is now: one when it has none
        and the index exists (a first index, partly written or done), a new one when the file
        was replaced (`index --rebuild`, here or by another process) or, with `vectors`, when
        vectors were made after the handle was opened without them. New rows need nothing: the
        handle reads them. An index that cannot be opened (damaged, foreign, too new) leaves
        the engine working from the buffers, said once in the errors; the next index step
        tries again."""
        with self._publishing:
            engine = self._engine
            if engine is None or not self.repo.project or not self.repo.index_file.exists():
                return
            current = engine.context
            if (
                current is not None
                and not current.store.replaced()
                and not (vectors and current.vector is None)
            ):
                return
            try:
                handle = self.repo.context_engine(engine.backend)
            except RepoContextError as exc:
                self._note_error(str(exc))
                return
            if handle is not None:
                engine.use_index(handle)

    def _republish(self) -> None:
        """A build found the index file replaced: the index worker publishes the new one (once
        its current step is done; a step publishes anyway)."""
        with self._lock:
            if self._republish_queued:
                return
            self._republish_queued = True

        def publish() -> None:
            with self._lock:
                self._republish_queued = False
            self._publish_index()

        try:
            self._indexing.submit(publish)
        except RuntimeError:
            pass  # the session is closing

    def _note_error(self, message: str) -> None:
        if message not in self.errors:
            self.errors.append(message)

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

    def search(self, query: str, **options: Any) -> SearchResponse:
        """A `:RepoContext search`, on the session's kept searcher (editor_search.py)."""
        with self._lock:
            if self._closing.is_set():
                raise RepoContextError(
                    "the editor's session is closing; ask again after it restarts"
                )
            if self._search is None:
                self._search = EditorSearch(self.repo)
            search = self._search
        return search.search(query, **options)

    def close(self) -> None:
        self._closing.set()
        with self._lock:  # after this, a question is refused (search): no searcher is left open
            search, self._search = self._search, None
        if search is not None:
            search.close()
        with self._activity:
            self._activity.notify_all()  # an embedding paused for completions stops waiting
        if self._engine is not None:
            self._engine.close()
        self._completions.shutdown(wait=False, cancel_futures=True)
        self._indexing.shutdown(wait=False, cancel_futures=True)


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


BACKGROUND_NICE = 10  # the index worker thread's niceness: indexing and embedding yield


def _background_priority() -> None:
    """In the index worker thread: a lower CPU priority for it alone (Linux keeps a nice value
    per thread), inherited by what it starts: the indexer's worker processes and the
    embedding model's thread pool. On a 100,000-file tree the index takes minutes of both
    cores, and the completion thread must not queue behind it."""
    try:
        os.setpriority(os.PRIO_PROCESS, threading.get_native_id(), BACKGROUND_NICE)
    except (AttributeError, OSError):
        pass  # not Linux-like: the embedder still pauses while completions run


def _percent(done: int, total: int) -> int:
    return 100 if total <= 0 else min(100, done * 100 // total)


class _Closed(Exception):
    """The session closes while an embedding waits for the cores: it stops there."""


def _another(pid: int | None) -> str:
    return f"another index (pid {pid})" if pid else "another index"


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
