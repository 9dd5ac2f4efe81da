"""Every thread repocontext starts is started here (doc/architecture.md section 2 lists them).

One place, so that the threads can be counted and named: each has a name the threads table
and a debugger's thread list share, and none is started elsewhere (a grep for
`threading.Thread`, `ThreadPoolExecutor(` or `threading.Timer` over src/ finds this file
only). The standard library only: low layers import it, the indexer's worker processes too.

`Worker` is the engine's single-thread executor (`complete_0`, `context_0`) that can say
whether it has work: whether one has a task running or queued is what "nothing runs after the
user stopped" means, and the editor's tests and `bench/editor.py` wait on that state instead
of on the clock.
"""

from __future__ import annotations

import threading
from collections.abc import Callable
from concurrent.futures import Future, ThreadPoolExecutor
from typing import Any, TypeVar

T = TypeVar("T")


def start_daemon(name: str, target: Callable[..., object], *args: Any) -> threading.Thread:
    """A daemon thread running `target(*args)`, started: daemon, so that a thread still
    building a vocabulary or watching a flag never keeps the editor's host from exiting."""
    thread = threading.Thread(target=target, args=args, daemon=True, name=name)
    thread.start()
    return thread


def start_timer(name: str, seconds: float, action: Callable[[], object]) -> threading.Timer:
    """`action()` after `seconds` on a daemon thread, unless the timer is cancelled first."""
    timer = threading.Timer(seconds, action)
    timer.name = name
    timer.daemon = True
    timer.start()
    return timer


def single_pool(name: str, initializer: Callable[[], object] | None = None) -> ThreadPoolExecutor:
    """An executor with one thread (named `<name>_0`): tasks run one at a time, in order.
    `initializer` runs first in that thread (the index worker lowers its own priority)."""
    return ThreadPoolExecutor(max_workers=1, thread_name_prefix=name, initializer=initializer)


class Worker:
    """One thread, tasks in submission order, and `busy()`: a task queued or running."""

    def __init__(self, name: str) -> None:
        self._executor = single_pool(name)
        self._lock = threading.Lock()
        self._unfinished = 0

    def submit(self, fn: Callable[..., T], *args: Any) -> Future[T]:
        """Queue `fn(*args)`; raises RuntimeError once the worker is shut down. The task counts
        as unfinished until its future's callbacks have run too: a callback that queues more
        work (late context's warming) leaves no moment in which the worker looks idle."""
        future: Future[T] = Future()

        def run() -> None:
            try:
                if not future.set_running_or_notify_cancel():
                    return
                try:
                    result = fn(*args)
                except BaseException as exc:
                    future.set_exception(exc)
                else:
                    future.set_result(result)
            finally:
                self._one_done()

        with self._lock:
            self._unfinished += 1
        try:
            queued = self._executor.submit(run)
        except BaseException:
            self._one_done()
            raise

        def dropped(queued: Future[None]) -> None:
            if queued.cancelled():  # still queued when the worker shut down: `run` never ran
                future.cancel()
                self._one_done()

        queued.add_done_callback(dropped)
        return future

    def busy(self) -> bool:
        with self._lock:
            return self._unfinished > 0

    def shutdown(self, wait: bool = False, cancel_futures: bool = True) -> None:
        self._executor.shutdown(wait=wait, cancel_futures=cancel_futures)

    def _one_done(self) -> None:
        with self._lock:
            self._unfinished -= 1
