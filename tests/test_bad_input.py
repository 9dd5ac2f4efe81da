"""Bad input: each case completes or refuses with one clear line, and the index stays consistent.

Faults are caused for real: real files, real permissions (a child process that drops to an
unprivileged user when the tests run as root), a real second process holding the lock, a real
SIGKILL in the middle of an index run.
"""

from __future__ import annotations

import os
import shutil
import signal
import subprocess
import sys
import time
from pathlib import Path

import apsw
import pytest
from conftest import git_init, run_cli_process

from repocontext import Repository
from repocontext.store import Store


def one_line_error(result) -> str:
    assert result.code != 0
    assert result.out == ""
    lines = result.err.strip().splitlines()
    assert len(lines) == 1, result.err
    assert lines[0].startswith("repocontext: ")
    assert "Traceback" not in result.err
    return lines[0]


def assert_consistent(repo: Repository) -> None:
    with repo.open_store() as store:
        assert store.db.execute("PRAGMA integrity_check").fetchone() == ("ok",)
        chunk_ids = {r[0] for r in store.db.execute("SELECT id FROM chunks")}
        assert chunk_ids == {r[0] for r in store.db.execute("SELECT rowid FROM chunks_fts")}
        assert chunk_ids == {r[0] for r in store.db.execute("SELECT rowid FROM chunks_tri")}


def test_binary_and_invalid_utf8_files(make_repo, cli):
    root = make_repo(
        {
            "blob.dat2": b"\x00\x01\x02binary",
            # text for its first 4 KB, then an upload's bytes: binary as a whole
            "upload.http": b"POST /upload HTTP/1.1\r\n" * 200 + b"\xd0\xcf\x11\xe0\x00\x00text",
            "latin1.py": "def grüße():\n    return 'café'\n".encode("latin-1"),
            "ok.py": "def fine():\n    pass\n",
        }
    )
    assert cli("index", "--root", root).code == 0
    repo = Repository(root)
    with repo.open_store() as store:
        files = dict(store.db.execute("SELECT path, flags FROM files"))
        assert dict(store.skipped()) == {
            "blob.dat2": "binary (a NUL byte at byte 0)",
            "upload.http": "binary (a NUL byte at byte 4,604)",
        }
    assert files == {"latin1.py": "latin-1", "ok.py": ""}
    out = cli("search", "--root", root, "--json", "--modality", "trigram", "return 'caf").json()
    assert out["results"][0]["path"] == "latin1.py"
    # read as Neovim opens it (Latin-1, its 'fileencodings' fallback): the name the user sees
    # is the name in the index, not `gr\ufffd\ufffde` from lossy UTF-8
    out = cli("search", "--root", root, "--json", "--modality", "ast", "def grüße").json()
    assert [r["symbol"] for r in out["results"]] == ["grüße"]
    assert_consistent(repo)


def test_five_megabyte_single_line_file_is_skipped_and_a_long_line_is_bounded(make_repo, cli):
    root = make_repo(
        {
            "huge.js": "x" * 5_000_000,
            "minified.js": ("var a=1;" * 100_000)[:900_000],
        }
    )
    assert cli("index", "--root", root).code == 0
    repo = Repository(root)
    with repo.open_store() as store:
        assert dict(store.skipped()) == {"huge.js": "larger than 1 MB"}
        longest = store.db.execute("SELECT max(length(text)) FROM chunks").fetchone()[0]
        flags = store.db.execute("SELECT flags FROM files WHERE path='minified.js'").fetchone()
    assert longest <= 2800 and flags == ("minified",)
    assert_consistent(repo)


def test_deeply_nested_file_and_deeply_nested_directories(make_repo, cli):
    deep_dir = "/".join(f"d{i}" for i in range(60))
    root = make_repo(
        {
            "nested.py": "x = "
            + "(" * 30000
            + ")" * 30000
            + "\n\ndef after_nesting():\n    pass\n",
            "nested.json": "[" * 50000 + "]" * 50000,
            f"{deep_dir}/leaf.py": "def deep_leaf():\n    pass\n",
        }
    )
    assert cli("index", "--root", root).code == 0
    found = cli("search", "--root", root, "--json", "--modality", "ast", "deep_leaf").json()
    assert found["results"][0]["path"] == f"{deep_dir}/leaf.py"
    after = cli("search", "--root", root, "--json", "--modality", "ast", "after_nesting").json()
    assert after["results"][0]["path"] == "nested.py"


def test_symlink_loop_and_symlinked_files(make_repo, cli):
    root = make_repo({"pkg/real.py": "def real():\n    pass\n"})
    os.symlink("..", root / "pkg" / "loop")
    os.symlink("real.py", root / "pkg" / "alias.py")
    os.symlink("/nonexistent/target", root / "dangling.py")
    result = cli("index", "--root", root)
    assert result.code == 0, result.err
    repo = Repository(root)
    with repo.open_store() as store:
        assert set(store.file_states()) == {"pkg/real.py"}
        assert dict(store.skipped()) == {
            "dangling.py": "symbolic link",
            "pkg/alias.py": "symbolic link",
            "pkg/loop/": "symbolic link to a folder (not followed: its files are not indexed)",
        }


def test_symlink_loop_inside_git_work_tree(make_repo, cli):
    root = make_repo({"real.py": "def real():\n    pass\n"})
    os.symlink(".", root / "self")
    git_init(root)
    assert cli("index", "--root", root).code == 0


def test_file_deleted_or_changed_during_the_scan(make_repo):
    root = make_repo({f"f{i}.py": f"def f{i}():\n    return {i}\n" for i in range(5)})
    old = time.time() - 60
    for p in root.iterdir():
        os.utime(p, (old, old))
    events = []

    def progress(done, total, path):
        if done == 1:
            events.append(path)
            (root / "f3.py").unlink()  # not read yet: disappears before it is read
            # the file just read changes after it was read, keeping its size
            (root / path).write_text((root / path).read_text().replace("return", "RETURN"))

    repo = Repository(root)
    report = repo.index(progress=progress)
    assert events == ["f0.py"]
    with repo.open_store() as store:
        assert set(store.file_states()) == {"f0.py", "f1.py", "f2.py", "f4.py"}
    assert report.files == 4
    # the next run sees the change made during the first one
    second = repo.index()
    assert second.updated == 1
    with repo.open_store() as store:
        text = store.db.execute(
            "SELECT c.text FROM chunks c JOIN files f ON f.id=c.file_id WHERE f.path='f0.py'"
        ).fetchone()[0]
    assert "RETURN 0" in text
    assert_consistent(repo)


def _without_root_override() -> list[str]:
    """Command prefix that makes file permissions bite even for root (tests may run as root):
    the child keeps uid 0 but loses the capabilities that bypass read permission."""
    if os.geteuid() != 0:
        return []
    setpriv = shutil.which("setpriv")
    if setpriv is None:
        pytest.skip("running as root without setpriv: cannot make a file unreadable")
    return [setpriv, "--bounding-set", "-dac_override,-dac_read_search"]


def test_file_without_read_permission(make_repo, home):
    root = make_repo(
        {"open.py": "def readable():\n    pass\n", "closed.py": "def unreadable():\n    pass\n"}
    )
    (root / "closed.py").chmod(0o000)
    prefix = _without_root_override()
    cmd = [*prefix, sys.executable, "-m", "repocontext.cli"]
    env = {**os.environ, "REPOCONTEXT_HOME": str(home)}
    proc = subprocess.run(
        [*cmd, "index", "--root", str(root), "--quiet"], capture_output=True, text=True, env=env
    )
    assert proc.returncode == 0, proc.stderr
    status = subprocess.run(
        [*cmd, "status", "--root", str(root), "--skipped"], capture_output=True, text=True, env=env
    )
    assert "skipped closed.py: no read permission" in status.stdout
    assert "files: 1 " in status.stdout
    assert (root / "closed.py").stat().st_mode & 0o777 == 0  # untouched


def test_file_name_that_is_not_utf8(tmp_path, cli):
    root = tmp_path / "repo"
    root.mkdir()
    (root / "good.py").write_text("def good():\n    pass\n")
    bad = os.path.join(os.fsencode(root), b"caf\xe9.py")
    with open(bad, "wb") as fh:
        fh.write(b"def cafe():\n    pass\n")
    assert cli("index", "--root", root).code == 0
    status = cli("status", "--root", root, "--skipped")
    # shown as git shows it (core.quotePath): the byte itself, in octal, in quotes
    assert 'skipped "caf\\351.py": file name is not valid UTF-8' in status.out
    git_init(root)
    assert cli("index", "--root", root).code == 0
    assert os.path.exists(bad)


def test_root_that_does_not_exist_or_is_not_a_directory(tmp_path, cli):
    missing = one_line_error(cli("index", "--root", tmp_path / "nope"))
    assert "does not exist" in missing and "--root" in missing
    (tmp_path / "file.txt").write_text("x")
    not_dir = one_line_error(cli("search", "--root", tmp_path / "file.txt", "x"))
    assert "is not a directory" in not_dir


def test_search_before_index_says_what_to_do(make_repo, cli):
    root = make_repo({"a.py": "x = 1\n"})
    assert "run `repocontext index" in one_line_error(cli("search", "--root", root, "x"))


@pytest.mark.parametrize(("suffix", "command"), [(".open.lock", "search"), (".lock", "index")])
def test_a_lock_file_that_cannot_be_opened_is_one_line_and_loses_nothing(
    make_repo, cli, suffix, command
):
    """The locks taken while the index is opened (against `--rebuild` renaming it) and while
    it is written live in files beside it: a folder in their place is one line naming it,
    and the index is intact."""
    root = make_repo({"a.py": "def alpha():\n    pass\n"})
    assert cli("index", "--root", root).code == 0
    repo = Repository(root)
    lock = Path(str(repo.index_file) + suffix)
    lock.unlink(missing_ok=True)
    lock.mkdir()
    args = ["--root", root] + (["alpha"] if command == "search" else [])
    line = one_line_error(cli(command, *args))
    assert "lock file" in line and str(lock) in line
    lock.rmdir()
    assert (
        cli("search", "--root", root, "--json", "alpha").json()["results"][0]["symbol"] == "alpha"
    )
    assert_consistent(repo)


def test_corrupted_index_refuses_then_rebuild_sets_it_aside(make_repo, cli):
    root = make_repo({"a.py": "def alpha():\n    pass\n" * 50})
    assert cli("index", "--root", root).code == 0
    repo = Repository(root)
    data = bytearray(repo.index_file.read_bytes())
    data[200:] = b"\xff" * (len(data) - 200)  # keep the SQLite header, destroy the pages
    repo.index_file.write_bytes(bytes(data))
    for suffix in ("-wal", "-shm"):
        Path(str(repo.index_file) + suffix).unlink(missing_ok=True)
    line = one_line_error(cli("search", "--root", root, "alpha"))
    assert "damaged" in line and "repocontext index --rebuild" in line
    assert cli("index", "--root", root, "--rebuild").code == 0
    aside = list(repo.index_file.parent.glob(repo.index_file.name + ".old-*"))
    assert len(aside) == 1 and aside[0].read_bytes() == bytes(data)
    out = cli("search", "--root", root, "--json", "alpha").json()
    assert out["results"][0]["symbol"] == "alpha"


@pytest.mark.parametrize("kind", ["text", "sqlite"])
def test_foreign_file_at_the_index_path_is_never_touched(make_repo, cli, kind):
    root = make_repo({"a.py": "x = 1\n"})
    path = Repository(root).index_file
    path.parent.mkdir(parents=True, exist_ok=True)
    if kind == "text":
        path.write_text("my own notes, not an index\n")
    else:
        conn = apsw.Connection(str(path))
        conn.execute("CREATE TABLE mine(x); INSERT INTO mine VALUES (42);")
        conn.close()
    before = path.read_bytes()
    line = one_line_error(cli("index", "--root", root))
    assert "not a repocontext index" in line or "did not write" in line
    assert "left untouched" in line
    assert path.read_bytes() == before


def test_index_written_by_a_newer_version(make_repo, cli):
    root = make_repo({"a.py": "x = 1\n"})
    assert cli("index", "--root", root).code == 0
    path = Repository(root).index_file
    conn = apsw.Connection(str(path))
    conn.execute("PRAGMA user_version=99")
    conn.close()
    assert "newer repocontext" in one_line_error(cli("search", "--root", root, "x"))


def test_two_index_runs_at_once(make_repo):
    root = make_repo({"a.py": "def a():\n    pass\n"})
    repo = Repository(root)
    repo.index()
    with Store(repo.index_file) as store, store.write_lock():
        proc = run_cli_process("index", "--root", root)
    assert proc.returncode == 1
    assert proc.stderr.strip().count("\n") == 0
    assert f"(pid {os.getpid()})" in proc.stderr and "wait for it" in proc.stderr
    # and once the lock is free, the second run goes through
    assert run_cli_process("index", "--root", root).returncode == 0


# A process that kills itself (SIGKILL: no cleanup, no atexit) once its index or embedding
# run reports N done and has committed something: argv is the phase, the root and N.
KILLED_AT = """
import os, signal, sys
from repocontext import Repository
from repocontext.store import Store

phase, root, n = sys.argv[1], sys.argv[2], int(sys.argv[3])


def committed():
    table = "files" if phase == "index" else "embeddings"
    try:
        with Store(repo.index_file, create=False) as store:
            return store.db.execute(f"SELECT count(*) FROM {table}").fetchone()[0] > 0
    except Exception:  # not written yet
        return False


def progress(done, total, *_):
    if done >= n and committed():
        os.kill(os.getpid(), signal.SIGKILL)


repo = Repository(root)
if phase == "index":
    repo.index(progress=progress)
else:
    repo.embed(progress=progress)
"""


def test_index_run_killed_midway_leaves_a_usable_index_and_the_next_run_completes(tmp_path):
    root = tmp_path / "big"
    for i in range(1500):
        d = root / f"pkg{i // 50}"
        d.mkdir(parents=True, exist_ok=True)
        body = "\n".join(f"def func_{i}_{j}(x):\n    return x + {j}\n" for j in range(40))
        (d / f"mod{i}.py").write_text(body)
    repo = Repository(root)
    # killed for real, at a point of its own run (half the files read), not when a poll
    # happens to catch it: no race to lose
    proc = subprocess.run([sys.executable, "-c", KILLED_AT, "index", str(root), "750"], timeout=300)
    assert proc.returncode == -signal.SIGKILL
    assert_consistent(repo)  # what was committed is whole
    report = repo.index()
    assert report.files == 1500
    assert_consistent(repo)
    with repo.open_store() as store:
        assert (
            store.db.execute("SELECT count(*) FROM chunks WHERE name LIKE 'func_%'").fetchone()[0]
            == 1500 * 40
        )


def test_bad_arguments_are_one_line(make_repo, cli):
    root = make_repo({"a.py": "x = 1\n"})
    cli("index", "--root", root)
    assert "query is empty" in one_line_error(cli("search", "--root", root, "   "))
    assert "--top" in one_line_error(cli("search", "--root", root, "--top", "0", "x"))
    bad = one_line_error(cli("search", "--root", root, "--modality", "psychic", "x"))
    assert "psychic" in bad


@pytest.mark.parametrize(
    "query", ["!!! ??? ...", "x" * 10_000, "зачем нужен этот код", 'NEAR("a" b) OR AND *']
)
def test_odd_queries_give_a_result_or_a_clear_note(make_repo, cli, query):
    root = make_repo({"a.py": "def a():\n    pass\n"})
    cli("index", "--root", root)
    result = cli("search", "--root", root, "--json", query)
    assert result.code == 0, result.err
    out = result.json()
    # a result, or a note that says why there is none (never an empty answer and silence)
    assert out["results"] or out["notes"], out
