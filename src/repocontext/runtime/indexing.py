"""The editor's index work for one repository, beside its completions (a `Session` owns one).

Out of session.py (issue 51) along the seam the two share: the index worker (`index_0`)
writes the index and publishes a handle on it to the completion engine, and pauses its
embedding while completions run. So it is given a way to read the session's engine (never to
make one) and is told when completion work begins and ends; the rest is its own.

- indexing runs on a worker of its own, at a lower CPU priority, and never holds up a
  completion: the first suggestion comes from the buffer alone; the engine takes up the index
  as soon as it exists (and its vectors once they are made);
- embedding stops between batches while completions run and goes on once they have been
  quiet for `EMBED_QUIET` seconds;
- an index that another process (a command-line `index`) is writing is waited for, with
  progress phase "waiting", and then used: never reported as an error;
- a buffer-only session (`Repository.buffer_only`) indexes nothing.
"""

from __future__ import annotations

import logging
import os
import threading
import time
import traceback
from collections import deque
from collections.abc import Callable, Sequence
from typing import Any, TypeVar

from ..complete.engine import CompletionEngine
from ..errors import IndexBusy, RepoContextError
from ..service import Repository
from ..store import index_writer
from .threads import single_pool

log = logging.getLogger(__name__)

PROGRESS_INTERVAL = 0.5  # seconds between progress reports of one phase
EMBED_QUIET = 0.3  # seconds without completion work before embedding takes the cores again
# Passages per embedding batch in the editor: a completion that starts during a batch shares
# the cores until the batch ends (about 0.3 s for 8 here, 1.2 s for the configured 32, at the
# same throughput; bench/results/first_ghost.md)
EDITOR_EMBED_BATCH = 8
WRITER_WAIT = 30 * 60.0  # seconds to wait for another process's index run, at most
BACKGROUND_NICE = 10  # the index worker thread's niceness: indexing and embedding yield

Report = dict[str, Any]  # a progress report, an index report, a status (JSON for the editor)
Progress = Callable[..., None]  # progress(phase, done, total, **extra)
T = TypeVar("T")


class BackgroundIndex:
    def __init__(
        self,
        repo: Repository,
        engine: Callable[[], CompletionEngine | None],
        errors: deque[str],
    ) -> None:
        """`engine()`: the session's engine if it was made, else None (never makes one);
        `errors`: the session's recent errors, which index failures join."""
        self.repo = repo
        self._engine = engine
        self._errors = errors
        # Publishing the index handle (`publish`): by the index worker after each step, and by
        # the completion worker when the session makes the engine (it assigns its engine under
        # this lock too). Held while an index is opened (which may load the embedding model),
        # so never on the editor's thread nor per key.
        self.publishing = threading.Lock()
        self._queue_lock = threading.Lock()  # `_republish_queued`: the engine's context thread
        self._republish_queued = False  # a publication asked for by a build (`republish`)
        self._worker = single_pool("index", initializer=_background_priority)
        # completion work (a completion or a warming) running, and when the last one ended:
        # the embedder's pause waits on these
        self._activity = threading.Condition()
        self._working = 0
        self._quiet_since = time.monotonic()
        self._closing = threading.Event()

    # --- sharing the cores -----------------------------------------------------------------------
    def begin_work(self) -> None:
        """Completion work (a completion or a warming) starts: embedding waits."""
        with self._activity:
            self._working += 1

    def end_work(self) -> None:
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
        """Queue `_index` on the index worker (see Session.index for the reports)."""
        self._worker.submit(self._index, embed, on_progress, on_done, first)

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
        self.publish()  # the index as it is, while it is brought up to date

        def progress(phase: str, done: int, total: int, **extra: Any) -> None:
            engine = self._engine()
            if phase == "index" and engine is not None and engine.context is None:
                self.publish()  # a first index: its first files serve meanwhile
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
            self.publish()  # a first index done, or a file rebuilt: the next build has it
            if embed:
                try:
                    embedded, other = self._unlocked(
                        lambda: self.repo.embed(
                            progress=lambda d, t: progress("embed", d, t),
                            windows_progress=lambda d, t: progress("windows", d, t),
                            pause=self._yield_cores,
                            batch_size=min(
                                EDITOR_EMBED_BATCH, self.repo.config.embedding.batch_size
                            ),
                        ),
                        progress,
                    )
                    writer = writer or other
                    out["embedded"] = embedded.embedded if embedded is not None else 0
                    self.publish(vectors=True)
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
            self._errors.append(str(exc))
            on_done({"error": str(exc)})
        except Exception as exc:
            log.debug("index failed:\n%s", traceback.format_exc())
            message = f"internal error ({type(exc).__name__}: {exc})"
            self._errors.append(message)
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
        self.publish()  # what the other run wrote so far is used meanwhile
        return {
            "root": root,
            "busy": True,
            "note": f"{_another(writer)} is still indexing {root}; its index is used as it grows",
        }

    # --- the engine's handle on the index --------------------------------------------------------
    def publish(self, vectors: bool = False) -> None:
        """Give the engine (if made) a handle on the index as it is now: one when it has none
        and the index exists (a first index, partly written or done), a new one when the file
        was replaced (`index --rebuild`, here or by another process) or, with `vectors`, when
        vectors were made after the handle was opened without them. New rows need nothing: the
        handle reads them. An index that cannot be opened (damaged, foreign, too new) leaves
        the engine working from the buffers, said once in the errors; the next index step
        tries again."""
        with self.publishing:
            engine = self._engine()
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
                if str(exc) not in self._errors:
                    self._errors.append(str(exc))
                return
            if handle is not None:
                engine.use_index(handle)

    def republish(self) -> None:
        """A build found the index file replaced: the index worker publishes the new one (once
        its current step is done; a step publishes anyway)."""
        with self._queue_lock:
            if self._republish_queued:
                return
            self._republish_queued = True

        def publish() -> None:
            with self._queue_lock:
                self._republish_queued = False
            self.publish()

        try:
            self._worker.submit(publish)
        except RuntimeError:
            pass  # the session is closing

    def close(self) -> None:
        """Stop waiting (for another writer, for the cores) and drop what is queued; a step
        already running ends at its next pause."""
        self._closing.set()
        with self._activity:
            self._activity.notify_all()  # an embedding paused for completions stops waiting
        self._worker.shutdown(wait=False, cancel_futures=True)


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
