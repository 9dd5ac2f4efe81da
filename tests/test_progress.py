"""Progress and quiet: the command line's percentages, and an editor that opens while a
command-line `index` runs (it waits for that run and reports no error).

Real processes: the other writer is a second Python process holding the real lock file; the
terminal is a real pseudo-terminal.
"""

from __future__ import annotations

import io
import os
import pty
import re
import select
import subprocess
import sys
import threading

from conftest import REPO_ROOT

from repocontext import Repository
from repocontext.cli.index import _Progress
from repocontext.runtime.session import Session
from repocontext.store import index_writer

APP = {
    "pkg/a.py": "def alpha(x):\n    return x + 1\n",
    "pkg/b.py": "from pkg.a import alpha\n\n\ndef beta(y):\n    return alpha(y) * 2\n",
}
WAIT = 120


def test_log_lines_are_percentages_and_only_for_a_long_phase():
    out = io.StringIO()  # not a terminal: a log
    quick = _Progress("indexing", stream=out)  # ends well before its first line is due
    for done in range(1, 11):
        quick(done, 10)
    assert out.getvalue() == ""
    slow = _Progress("embedding", stream=out, after=0.0, every=3600.0)
    for done in range(0, 101, 10):
        slow(done, 100)
    slow(100, 100)  # a repeated end prints nothing more
    assert out.getvalue().splitlines() == [
        "repocontext: embedding 0% (0 of 100)",
        "repocontext: embedding 100% (100 of 100)",
    ]


def run_in_terminal(*args: str, env: dict) -> str:
    """`repocontext ARGS` with its stderr on a pseudo-terminal; what it wrote there."""
    master, slave = pty.openpty()
    proc = subprocess.Popen(
        [sys.executable, "-m", "repocontext.cli", *args],
        stdout=subprocess.DEVNULL,
        stderr=slave,
        env=env,
    )
    os.close(slave)
    chunks = []
    while True:
        ready, _, _ = select.select([master], [], [], WAIT)
        if not ready:
            break
        try:
            data = os.read(master, 4096)
        except OSError:  # the child closed the terminal
            break
        if not data:
            break
        chunks.append(data)
    os.close(master)
    assert proc.wait(WAIT) == 0
    return b"".join(chunks).decode("utf-8", "replace")


def test_index_shows_a_percentage_for_each_phase_on_a_terminal(make_repo):
    root = make_repo(APP)
    env = {**os.environ, "PYTHONPATH": str(REPO_ROOT / "src")}
    shown = run_in_terminal("index", "--root", str(root), env=env)
    assert re.search(r"indexing +100% \(2/2\)", shown), shown
    assert re.search(r"embedding +0% \(0/\d+\)", shown), shown
    assert re.search(r"embedding +100% \((\d+)/\1\)", shown), shown
    # then the source passages are read past the model's first window
    windows = r"later windows of long definitions +"
    assert re.search(windows + r"100% \((\d+)/\1\)", shown), shown
    assert shown.index("embedding 100%") < shown.index("later windows"), shown
    quiet = run_in_terminal("index", "--root", str(root), "--rebuild", "--quiet", env=env)
    assert "%" not in quiet


HOLD = """
import sys
from repocontext.service import Repository
from repocontext.store import Store
repo = Repository(sys.argv[1])
with Store(repo.index_file) as store, store.write_lock():
    print("locked", flush=True)
    sys.stdin.readline()
"""


def test_the_editor_waits_for_a_command_line_index_and_reports_no_error(make_repo):
    root = make_repo(APP)
    repo = Repository(root)
    holder = subprocess.Popen(
        [sys.executable, "-c", HOLD, str(root)],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        text=True,
        env={**os.environ, "PYTHONPATH": str(REPO_ROOT / "src")},
    )
    try:
        assert holder.stdout.readline() == "locked\n"
        assert index_writer(repo.index_file) == holder.pid
        session = Session(repo)
        waiting = threading.Event()
        progress: list[dict] = []
        done = threading.Event()
        reports: list[dict] = []

        def on_progress(report: dict) -> None:
            progress.append(report)
            if report["phase"] == "waiting":
                waiting.set()

        session.index(False, on_progress, lambda r: (reports.append(r), done.set()))
        assert waiting.wait(WAIT)
        first = next(p for p in progress if p["phase"] == "waiting")
        assert first["pid"] == holder.pid and first["percent"] is None
        assert first["message"] == f"waiting for another index (pid {holder.pid})"
        assert not done.is_set()
        holder.stdin.write("\n")  # the other run ends
        holder.stdin.flush()
        assert holder.wait(WAIT) == 0
        assert done.wait(WAIT)
        (report,) = reports
        assert "error" not in report, report
        assert report["indexed_by"] == f"another process (pid {holder.pid})"
        assert report["files"] == 2
        assert index_writer(repo.index_file) is None
        assert session.status()["recent_errors"] == []
        session.close()
    finally:
        if holder.poll() is None:
            holder.kill()
            holder.wait()


def test_the_editors_index_and_embedding_run_at_a_lower_cpu_priority(make_repo):
    """On a large tree the background index takes minutes of every core: its thread (and what
    it starts) has a higher nice value than the editor's threads, so completions go first."""
    repo = Repository(make_repo(APP))
    session = Session(repo)
    seen: list[tuple[int, int]] = []
    done = threading.Event()

    def on_done(report: dict) -> None:
        seen.append((os.getpriority(os.PRIO_PROCESS, threading.get_native_id()), report["files"]))
        done.set()

    try:
        session.index(False, lambda r: None, on_done)
        assert done.wait(WAIT)
    finally:
        session.close()
    ((nice, files),) = seen
    assert files == 2
    assert nice > os.getpriority(os.PRIO_PROCESS, threading.get_native_id())
