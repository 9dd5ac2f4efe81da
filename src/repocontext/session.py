"""One repository at work: its completion engine and the threads that run it.

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
- indexing runs on a worker of its own;
- the last latencies and errors are kept for status and :checkhealth.

Failures become one-line messages (`on_done(None, message)`); nothing raises into the caller.
"""

from __future__ import annotations

import logging
import threading
import time
import traceback
from collections import deque
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from dataclasses import replace

from .complete.backends import Backend
from .complete.engine import CancelToken, CompletionEngine, Suggestion
from .config import GenerationConfig
from .context.request import CursorRequest
from .errors import RepoContextError
from .lang.text import cursor_in
from .service import Repository

log = logging.getLogger(__name__)

UPDATE_INTERVAL = 0.03  # seconds between streamed updates: about 30 a second

OnUpdate = Callable[[str], None]
OnDone = Callable[[Suggestion | None, str | None], None]


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
        self._lock = threading.Lock()
        self._completions = ThreadPoolExecutor(max_workers=1, thread_name_prefix="complete")
        self._indexing = ThreadPoolExecutor(max_workers=1, thread_name_prefix="index")
        self._current: CancelToken | None = None
        self._busy = threading.Event()  # a real completion is running
        self._last_request: CursorRequest | None = None
        self.warming = WarmStats()
        self.evaluated = 0  # prompt tokens evaluated by completions (speculation included)
        self.completions = 0
        self.cancelled = 0  # requests stopped before their end (a newer key, a burst)
        self.latencies: deque[dict] = deque(maxlen=50)
        self.errors: deque[str] = deque(maxlen=20)
        self.last_speculation: Suggestion | None = None

    # --- the engine ----------------------------------------------------------------------------
    @property
    def engine(self) -> CompletionEngine:
        """The completion engine, made on first use (loading the model takes a second)."""
        with self._lock:
            engine = self._engine
            if (
                engine is not None
                and engine.context is not None
                and engine.context.store.replaced()
            ):
                # the index file was replaced (`index --rebuild`): read the new one
                engine.context.store.close()
                engine.context = self.repo.context_engine(engine.backend)
            if self._engine is None:
                self._engine = self.repo.completion_engine(self._backend)
                if self._generation is not None:
                    self._engine.config = self._generation
                self._engine.on_context_kept = self._context_kept
            return self._engine

    @property
    def loaded(self) -> CompletionEngine | None:
        """The engine if it was made already (never loads one)."""
        return self._engine

    # --- completion ----------------------------------------------------------------------------
    def complete(self, request: CursorRequest, on_update: OnUpdate, on_done: OnDone) -> None:
        """Start a completion on the worker; a newer call cancels this one."""
        if self._current is not None:
            self._current.cancel()
        token = self._current = CancelToken()
        self._last_request = request
        self._completions.submit(self._complete, request, token, on_update, on_done)

    def cancel(self) -> None:
        """Stop the completion or warming in flight: the editor's text has moved on (a burst of
        keys, whose next request waits for quiet), and on two cores a stale generation takes
        the CPU from the editor itself (bench/results/editor.md, keystroke cost)."""
        if self._current is not None:
            self._current.cancel()

    def warm(self, request: CursorRequest) -> None:
        """Evaluate the prompt of the next keystroke at this place (loading the model first if
        it is not yet), generating nothing; skipped while a real completion runs."""
        if self._busy.is_set():
            return
        if self._current is not None:
            self._current.cancel()
        token = self._current = CancelToken()
        self._last_request = request
        self._completions.submit(self._warm, request, token)

    def _warm(self, request: CursorRequest, token: CancelToken) -> None:
        if token.cancelled:
            return
        try:
            gen = self.engine.warm(request, cancel=token)
            self.warming.add(
                gen.tokens_evaluated, gen.tokens_reused + gen.tokens_evaluated, gen.eval_seconds
            )
        except RepoContextError as exc:
            self.errors.append(str(exc))
        except Exception as exc:  # never into the editor: noted, as a completion's would be
            log.debug("warming failed:\n%s", traceback.format_exc())
            self.errors.append(f"internal error ({type(exc).__name__}: {exc})")

    def _context_kept(self, path: str) -> None:
        """Late context was kept for `path`: warm the prompt that now starts with it, unless
        the user has moved on (a newer request) or a completion is running."""
        last = self._last_request
        if last is not None and last.file == path and not self._busy.is_set():
            self.warm(replace(last, avoid=None))

    def complete_now(self, request: CursorRequest, mode: str = "parallel") -> Suggestion:
        """A completion on the caller's thread (the command line); errors raise."""
        return self.engine.complete(request, mode=mode)

    def _complete(
        self, request: CursorRequest, token: CancelToken, on_update: OnUpdate, on_done: OnDone
    ) -> None:
        if token.cancelled:
            self.cancelled += 1
            on_done(Suggestion("", status="cancelled"), None)
            return
        self._busy.set()
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
            self._busy.clear()

    def _fail(self, on_done: OnDone, message: str) -> None:
        self.errors.append(message)
        on_done(None, message)

    # --- indexing ------------------------------------------------------------------------------
    def index(
        self, embed: bool, on_progress: Callable[[dict], None], on_done: Callable[[dict], None]
    ) -> None:
        """Bring the index up to date (then the vectors, with `embed`) on the index worker."""
        self._indexing.submit(self._index, embed, on_progress, on_done)

    def _index(self, embed: bool, on_progress, on_done) -> None:
        root = str(self.repo.root)
        last = [0.0]

        def progress(phase: str, done: int, total: int) -> None:
            now = time.monotonic()
            if now - last[0] > 0.5 or done == total:
                last[0] = now
                on_progress({"phase": phase, "done": done, "total": total, "root": root})

        try:
            report = self.repo.index(progress=lambda d, t, _p="": progress("index", d, t))
            out = {
                "root": root,
                "files": report.files,
                "added": report.added,
                "updated": report.updated,
                "removed": report.removed,
                "seconds": round(report.seconds, 2),
            }
            if embed:
                try:
                    out["embedded"] = self.repo.embed(
                        progress=lambda d, t: progress("embed", d, t)
                    ).embedded
                except RepoContextError as exc:
                    out["embed_error"] = str(exc)
            on_done(out)
        except RepoContextError as exc:
            self.errors.append(str(exc))
            on_done({"error": str(exc)})
        except Exception as exc:
            log.debug("index failed:\n%s", traceback.format_exc())
            message = f"internal error ({type(exc).__name__}: {exc})"
            self.errors.append(message)
            on_done({"error": message})

    # --- status --------------------------------------------------------------------------------
    def status(self) -> dict:
        out = self.repo.status()
        lat = sorted(x["total"] for x in self.latencies if x.get("total") is not None)
        out["recent_latency_ms"] = lat[len(lat) // 2] if lat else None
        out["recent_errors"] = list(self.errors)[-5:]
        out["work"] = {
            "completions": self.completions,
            "cancelled": self.cancelled,
            "tokens_evaluated": self.evaluated,
            "warming": self.warming.to_json(),
        }
        cfg = self.repo.config.generation
        out["generation"] = {
            "model": cfg.model_path or "gemma-3-270m (default)",
            "server": cfg.server_url or None,
        }
        return out

    def close(self) -> None:
        if self._engine is not None:
            self._engine.close()
        self._completions.shutdown(wait=False, cancel_futures=True)
        self._indexing.shutdown(wait=False, cancel_futures=True)


class WarmStats:
    """What warming cost and what of it the next keystroke used (for bench/editor.py)."""

    def __init__(self):
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

    def to_json(self) -> dict:
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
