"""Nothing wrong, nothing stale, nothing leaked: the failures found by probing as a hostile or
careless user, each caused for real (kills, races, checkouts, permissions, a full disk, FIFOs)
and each answered by one line, a repaired index or a refusal to store a secret."""

from __future__ import annotations

import json
import os
import resource
import signal
import stat
import subprocess
import sys
import time
from pathlib import Path

import apsw
import pytest
from conftest import git, run_cli_process
from test_bad_input import _without_root_override, assert_consistent, one_line_error

from repocontext import Repository
from repocontext.context.request import CursorRequest
from repocontext.store import Store

APP = {
    "pkg/__init__.py": "",
    "pkg/util.py": "def helper(x):\n    return x + 1\n",
    "pkg/main.py": "from pkg.util import helper\n\n\ndef run():\n    return helper(1)\n",
}


# --- 1. every phase finishes -------------------------------------------------------------------


def test_a_graph_left_unfinished_by_a_kill_is_finished_by_the_next_run(make_repo, cli):
    root = make_repo(APP)
    repo = Repository(root)
    repo.index()
    with Store(repo.index_file) as store, store.db:
        # what a run killed after its last file but before the graph leaves behind
        store.db.execute("UPDATE refs SET target_path = NULL")
        store.db.execute("DELETE FROM centrality")
        store.db.execute("INSERT OR REPLACE INTO meta VALUES ('graph_pending', '1')")
    status = cli("status", "--root", root, "--json").json()
    assert status["incomplete"] == ["graph"]
    assert "incomplete: graph" in cli("status", "--root", root).out
    report = repo.index()
    assert report.added == report.updated == report.removed == 0  # nothing changed on disk...
    status = cli("status", "--root", root, "--json").json()
    assert status["incomplete"] == [] and status["graph"]["imports_resolved"] > 0  # ...repaired


def test_index_check_finds_garbage_written_inside_the_file(make_repo, cli):
    root = make_repo(APP)
    assert cli("index", "--root", root, "--no-embed", "--check").code == 0
    repo = Repository(root)
    with open(repo.index_file, "r+b") as fh:  # scribble over the middle of the file
        size = os.path.getsize(repo.index_file)
        fh.seek(size // 2)
        fh.write(os.urandom(4096))
    result = cli("index", "--root", root, "--no-embed", "--check")
    assert result.code != 0
    assert "damaged" in result.err or "problem" in result.err
    assert "Traceback" not in result.err


# --- 2. workers die with their parent ----------------------------------------------------------


def _children(pid: int) -> list[int]:
    out = []
    for entry in os.listdir("/proc"):
        if entry.isdigit():
            try:
                with open(f"/proc/{entry}/stat") as fh:
                    fields = fh.read().rsplit(")", 1)[1].split()
            except OSError:
                continue
            if int(fields[1]) == pid:
                out.append(int(entry))
    return out


@pytest.mark.parametrize("sig", [signal.SIGKILL, signal.SIGTERM])
def test_workers_do_not_outlive_an_index_run_killed_alone(tmp_path, sig):
    root = tmp_path / "big"
    for i in range(700):
        d = root / f"pkg{i // 50}"
        d.mkdir(parents=True, exist_ok=True)
        (d / f"mod{i}.py").write_text(
            "\n".join(f"def func_{i}_{j}(x):\n    return x + {j}\n" for j in range(120))
        )
    proc = subprocess.Popen(
        [sys.executable, "-m", "repocontext.cli", "index", "--root", str(root), "--no-embed"],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
    )
    workers: list[int] = []
    deadline = time.time() + 60
    while time.time() < deadline and proc.poll() is None and len(workers) < 2:
        workers = _children(proc.pid)
        time.sleep(0.02)
    assert proc.poll() is None and len(workers) >= 2, "the index run never started its workers"
    proc.send_signal(sig)  # the parent alone, as a shell's kill or an editor's job stop does
    proc.wait(timeout=30)
    deadline = time.time() + 10
    alive = workers
    while alive and time.time() < deadline:
        alive = [w for w in workers if Path(f"/proc/{w}").exists() and not _zombie(w)]
        time.sleep(0.1)
    assert not alive, f"workers {alive} outlived their parent"
    # and nothing holds the parent's output open: reading it to the end returns
    assert proc.stdout.read() is not None and proc.stderr.read() is not None


def _zombie(pid: int) -> bool:
    try:
        with open(f"/proc/{pid}/stat") as fh:
            return fh.read().rsplit(")", 1)[1].split()[0] == "Z"
    except OSError:
        return True


# --- 3. the first run races nothing -------------------------------------------------------------


def test_first_runs_racing_on_a_new_index_never_fail_inside(make_repo, home):
    root = make_repo(APP)
    env = {**os.environ, "REPOCONTEXT_HOME": str(home)}
    cmd = [sys.executable, "-m", "repocontext.cli"]
    index_path = Repository(root).index_file
    for _ in range(40):
        for leftover in index_path.parent.glob(index_path.name + "*"):
            leftover.unlink()
        procs = [
            subprocess.Popen([*cmd, "index", "--root", str(root), "--no-embed", "--quiet"], env=env,
                             stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True),
            subprocess.Popen([*cmd, "index", "--root", str(root), "--no-embed", "--quiet"], env=env,
                             stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True),
            subprocess.Popen([*cmd, "status", "--root", str(root)], env=env,
                             stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True),
        ]  # fmt: skip
        for p in procs:
            _, err = p.communicate(timeout=120)
            assert p.returncode in (0, 1), err  # 70 would be an internal error
            assert "internal error" not in err and "Traceback" not in err
            if p.returncode == 1:  # a clear line; "busy" when a loaded machine outwaits the lock
                assert "is updating this index" in err or "is busy; try again" in err, err
    assert_consistent(Repository(root))


# --- 4. nothing stale after the tree moves ------------------------------------------------------


def test_search_catches_up_after_a_checkout(make_repo, cli):
    root = make_repo({"net/auth.py": "def get_netrc_auth(url):\n    return None\n"}, git=True)
    assert cli("index", "--root", root, "--no-embed").code == 0
    git(root, "checkout", "-q", "-b", "renamed")
    (root / "net/auth.py").write_text("def get_credentials(url):\n    return None\n")
    git(root, "commit", "-q", "-am", "rename")
    old = cli("search", "--root", root, "--json", "def get_netrc_auth").json()
    assert not any(r["symbol"] == "get_netrc_auth" for r in old["results"])
    new = cli("search", "--root", root, "--json", "def get_credentials").json()
    assert new["results"][0]["symbol"] == "get_credentials"


def test_a_running_editor_reads_the_new_index_after_a_rebuild(make_repo):
    from repocontext.runtime.session import Session

    root = make_repo(APP)
    repo = Repository(root)
    repo.index()
    session = Session(repo, backend=_NoModel())
    engine = session.engine
    first = engine.context.store
    Repository(root).index(rebuild=True)  # another process sets the file aside
    assert first.replaced()
    # the next keystroke's context build finds it out; the index worker opens the new file,
    # and the old one is closed on the context thread, after that build
    request = CursorRequest("pkg/util.py", 1, 0, "")
    engine._pool.submit(engine._build, request).result()
    deadline = time.monotonic() + 60
    while engine.context.store is first and time.monotonic() < deadline:
        time.sleep(0.02)
    assert engine.context.store is not first and not engine.context.store.replaced()
    engine._pool.submit(lambda: None).result()  # the queued close has run
    with pytest.raises(apsw.ConnectionClosedError):
        first.db.execute("SELECT 1")
    session.close()


class _NoModel:
    """The model is not what these tests are about: a backend that never generates."""

    name, n_ctx = "none", 2048

    def __init__(self):
        from repocontext.complete.templates import TEMPLATES

        self.template = TEMPLATES["plain"]

    def count_tokens(self, text: str) -> int:
        return len(text) // 4

    def sibling(self):
        return self

    def describe(self) -> dict:
        return {}


# --- 5. special files and deep trees ------------------------------------------------------------


def test_a_fifo_or_a_file_outside_the_root_is_refused_at_once(make_repo, tmp_path):
    root = make_repo(APP)
    run_cli_process("index", "--root", root, "--no-embed")
    os.mkfifo(root / "pkg" / "fifo.py")
    for bad, says in (
        ("pkg/fifo.py", "not a regular file"),
        ("/etc/passwd", "outside the repository root"),
        ("../elsewhere.py", "outside the repository root"),
        ("pkg/missing.py", "does not exist; pass --stdin"),
    ):
        proc = run_cli_process(
            "context", "--root", root, "--file", bad, "--line", "1", "--col", "0", timeout=30
        )
        assert proc.returncode == 1 and says in proc.stderr, (bad, proc.stderr)
        assert proc.stderr.count("\n") == 1


def test_a_tree_a_thousand_directories_deep_is_indexed(tmp_path, cli):
    root = tmp_path / "deep"
    path = root
    root.mkdir()
    for i in range(1000):  # one level at a time: os.makedirs recurses once per level
        path = path / f"d{i % 10}"
        path.mkdir()
    (path / "leaf.py").write_text("def deepest():\n    pass\n")
    (root / "top.py").write_text("def top():\n    pass\n")
    try:
        result = cli("index", "--root", root, "--no-embed")
        assert result.code == 0, result.err
        found = cli("search", "--root", root, "--json", "--modality", "ast", "deepest").json()
        assert found["results"] and found["results"][0]["symbol"] == "deepest"
    finally:
        subprocess.run(["rm", "-rf", str(root)], check=True)  # pytest's clean-up would recurse


# --- 6. one line for every failure -------------------------------------------------------------


def test_every_bad_argument_is_one_line(make_repo, cli, home, monkeypatch):
    root = make_repo(APP)
    assert cli("index", "--root", root, "--no-embed").code == 0
    assert cli("search", "--root", root, "--json", "--top", "500", "helper").code == 0
    assert "--top is 820" in one_line_error(cli("search", "--root", root, "--top", "820", "x"))
    huge = one_line_error(cli("search", "--root", root, "--top", "99999999999999999999", "x"))
    assert "--top" in huge
    col = one_line_error(
        cli("context", "--root", root, "--file", "pkg/main.py", "--line", "1", "--col", "-7")
    )
    assert "--col is -7" in col
    line = one_line_error(
        cli("context", "--root", root, "--file", "pkg/main.py", "--line", "0", "--col", "0")
    )
    assert "--line is 0" in line
    monkeypatch.setenv("REPOCONTEXT_CONFIG", str(home / "missing.toml"))
    assert "REPOCONTEXT_CONFIG is set to" in one_line_error(cli("search", "--root", root, "x"))


def test_invalid_utf8_on_standard_input_is_one_line(make_repo):
    root = make_repo(APP)
    run_cli_process("index", "--root", root, "--no-embed")
    proc = subprocess.run(
        [sys.executable, "-m", "repocontext.cli", "context", "--root", str(root), "--file",
         "pkg/main.py", "--line", "1", "--col", "0", "--stdin"],
        input=b"def f():\n    return '\xff\xfe'\n", capture_output=True,
    )  # fmt: skip
    assert proc.returncode == 1
    assert b"standard input is not UTF-8" in proc.stderr and proc.stderr.count(b"\n") == 1


def _one_line(proc: subprocess.CompletedProcess, code: int) -> str:
    """The one line a refused command printed, after checking it was only that."""
    err = proc.stderr if isinstance(proc.stderr, str) else proc.stderr.decode()
    assert proc.returncode == code, err
    assert not proc.stdout and err.count("\n") == 1 and err.startswith("repocontext: "), err
    assert "Traceback" not in err and "internal error" not in err
    return err.strip()


def test_a_query_that_is_not_utf8_is_one_line_on_an_index_with_vectors(make_repo):
    root = make_repo(APP)
    assert run_cli_process("index", "--root", root, "--quiet").returncode == 0  # with vectors
    assert Repository(root).status()["vectors"]["embedded"] > 0
    for query, where in (
        (b"helper \xff\xfe plus", "byte 0xff at character 8"),
        (b"\xe9t\xe9", "byte 0xe9 at character 1"),  # Latin-1, from a terminal in that locale
    ):
        proc = subprocess.run(
            [sys.executable, "-m", "repocontext.cli", "search", "--root", str(root), query],
            capture_output=True,
        )
        line = _one_line(proc, 1)
        assert f"the query is not UTF-8 text ({where}); type it again as UTF-8" in line


def test_context_and_complete_on_a_symlink_loop_are_one_line(make_repo):
    root = make_repo(APP)
    run_cli_process("index", "--root", root, "--no-embed")
    (root / "loop.py").symlink_to("loop.py")
    (root / "looped").symlink_to("looped")  # a folder on the way that loops
    for command in ("context", "complete"):
        for file in ("loop.py", "looped/main.py"):
            proc = run_cli_process(
                command, "--root", root, "--file", file, "--line", "1", "--col", "0", timeout=60
            )
            line = _one_line(proc, 1)
            assert f"--file {file} is a symlink loop" in line, line
            assert "pass a real file of the repository" in line


def test_a_cursor_past_the_end_or_an_absurd_budget_is_refused_with_what_is_allowed(make_repo):
    """Nothing is clamped in silence: a cursor past the end of the text is refused with the
    text's real size (exit 1), a number outside its range is a usage error (exit 2)."""
    root = make_repo(APP)  # pkg/main.py: 5 lines, the last "    return helper(1)" (20 bytes)
    run_cli_process("index", "--root", root, "--no-embed")

    def context(*args, stdin=None):
        return run_cli_process(
            "context", "--root", root, "--file", "pkg/main.py", *args, input=stdin, timeout=60
        )

    says = {
        ("--line", "99999", "--col", "0"): (
            1, "--line is 99999 but pkg/main.py has 5 lines; pass a line from 1 to 5"),
        ("--line", "6", "--col", "0"): (  # the final newline ends line 5, as in Neovim
            1, "--line is 6 but pkg/main.py has 5 lines; pass a line from 1 to 5"),
        ("--line", "5", "--col", "99999"): (
            1, "--col is 99999 but line 5 of pkg/main.py is 20 bytes long; pass a column "
               "from 0 to 20"),
        ("--line", "5", "--col", "20", "--budget", "0"): (
            2, "--budget is 0; ask for 1 to 1048576 tokens"),
        ("--line", "5", "--col", "20", "--budget", str(10**12)): (
            2, f"--budget is {10**12}; ask for 1 to 1048576 tokens"),
        ("--line", "0", "--col", "0"): (2, "--line is 0; lines count from 1"),
        ("--line", "1", "--col", "-1"): (2, "--col is -1; columns count from 0"),
    }  # fmt: skip
    for args, (code, message) in says.items():
        assert message in _one_line(context(*args), code), args
    # unsaved text on standard input is measured, not the file on disk
    line = _one_line(context("--line", "3", "--col", "0", "--stdin", stdin="x = 1\ny = 2\n"), 1)
    assert "--line is 3 but standard input has 2 lines; pass a line from 1 to 2" in line
    # the edges themselves are places for the cursor, and the largest budget is taken
    ok = context("--line", "5", "--col", "20", "--budget", "1048576", "--json")
    assert ok.returncode == 0, ok.stderr
    out = json.loads(ok.stdout)
    assert (out["line"], out["col"], out["budget"]) == (5, 20, 1048576)
    assert context("--line", "1", "--col", "0", "--stdin", stdin="").returncode == 0
    # `complete` takes the same cursor: refused before any model is loaded
    proc = run_cli_process(
        "complete", "--root", root, "--file", "pkg/main.py", "--line", "9", "--col", "0",
        timeout=60,
    )  # fmt: skip
    assert "--line is 9 but pkg/main.py has 5 lines" in _one_line(proc, 1)


def test_an_unwritable_home_and_a_read_only_index(make_repo, tmp_path):
    root = make_repo(APP)
    home = tmp_path / "home"
    home.mkdir()
    prefix = _without_root_override()
    env = {**os.environ, "REPOCONTEXT_HOME": str(home)}
    cmd = [*prefix, sys.executable, "-m", "repocontext.cli"]
    home.chmod(0o500)
    try:
        proc = subprocess.run([*cmd, "index", "--root", str(root), "--no-embed"], env=env,
                              capture_output=True, text=True)  # fmt: skip
        assert proc.returncode == 1 and proc.stderr.count("\n") == 1, proc.stderr
        assert "REPOCONTEXT_HOME" in proc.stderr
    finally:
        home.chmod(0o700)
    subprocess.run([*cmd, "index", "--root", str(root), "--no-embed"], env=env, check=True,
                   capture_output=True)  # fmt: skip
    index = Repository(root, None).index_file.name
    indexes = home / "indexes"
    (indexes / index).chmod(0o400)
    indexes.chmod(0o500)
    try:
        found = subprocess.run([*cmd, "search", "--root", str(root), "--json", "helper"], env=env,
                               capture_output=True, text=True)  # fmt: skip
        assert found.returncode == 0, found.stderr  # searching needs no write
        assert '"helper"' in found.stdout
        refused = subprocess.run([*cmd, "index", "--root", str(root), "--no-embed"], env=env,
                                 capture_output=True, text=True)  # fmt: skip
        assert refused.returncode == 1 and "read-only" in refused.stderr
        assert refused.stderr.count("\n") == 1
    finally:
        indexes.chmod(0o700)
        (indexes / index).chmod(0o600)


def test_a_full_disk_is_one_line_and_the_index_stays_whole(tmp_path, home):
    """The disk is "full" for real: the run's file size limit (RLIMIT_FSIZE) is set under what
    the index needs, so SQLite's writes fail as on a full disk."""
    root = tmp_path / "big"
    for i in range(200):
        (root / f"p{i // 20}").mkdir(parents=True, exist_ok=True)
        (root / f"p{i // 20}" / f"m{i}.py").write_text(
            "\n".join(f"def f_{i}_{j}():\n    return {j}\n" for j in range(80))
        )

    def limit():
        signal.signal(signal.SIGXFSZ, signal.SIG_IGN)
        resource.setrlimit(resource.RLIMIT_FSIZE, (400_000, 400_000))

    proc = subprocess.run(
        [sys.executable, "-m", "repocontext.cli", "index", "--root", str(root), "--no-embed"],
        capture_output=True, text=True, preexec_fn=limit,
        env={**os.environ, "REPOCONTEXT_HOME": str(home)},
    )  # fmt: skip
    assert proc.returncode == 1, proc.stderr
    last = proc.stderr.strip().splitlines()[-1]
    assert "full" in last or "cannot be written" in last or "failed" in last, proc.stderr
    assert "Traceback" not in proc.stderr and "internal error" not in proc.stderr
    # what was committed is whole, and a run with room completes it
    repo = Repository(root)
    assert repo.index().files == 200
    assert_consistent(repo)


# --- 7. secrets ----------------------------------------------------------------------------------

SECRETS = {
    "src/app.py": (
        "import boto3\n\n"
        'AWS_ACCESS_KEY_ID = "AKIAIOSFODNN7EXAMPLE"\n'
        'aws_secret_access_key = "wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY"\n'
        'GITHUB_TOKEN = "ghp_abcdefghijklmnopqrstuvwxyz0123456789"\n\n\n'
        "def client():\n    return boto3.client('s3')\n"
    ),
    "config/prod.env": "DATABASE_URL=postgres://admin:hunter2@db/prod\n",
    ".npmrc": "//registry.npmjs.org/:_authToken=npm_abcdefghijklmnopqrstuvwxyz0123456789\n",
    ".pypirc": "[pypi]\nusername = __token__\npassword = pypi-AgEIcHlwaS5vcmcCJGVhbXBsZQ\n",
    ".git-credentials": "https://user:ghp_abcdefghijklmnopqrstuvwxyz0123456789@github.com\n",
    ".docker/config.json": '{"auths": {"registry": {"auth": "dXNlcjpwYXNzd29yZA=="}}}\n',
    "infra/terraform.tfvars": 'db_password = "s3cr3t-Pa55"\n',
    "infra/kubeconfig": "apiVersion: v1\nusers:\n- name: admin\n  user:\n    token: abc\n",
    "keys/service-account.json": '{"type": "service_account", "private_key": "..."}\n',
    "deploy/deploy_key.txt": "-----BEGIN OPENSSH PRIVATE KEY-----\nb3BlbnNzaC1rZXktdjEAAAAA\n"
    "-----END OPENSSH PRIVATE KEY-----\n",
    "src/ok.py": "def fine():\n    return 'no secret here'\n",
}


def test_secrets_are_never_stored_searched_or_sent(make_repo, cli):
    root = make_repo(SECRETS)
    assert cli("index", "--root", root, "--no-embed").code == 0
    for needle in (
        "AKIAIOSFODNN7EXAMPLE",
        "wJalrXUtnFEMI",
        "ghp_abcdef",
        "hunter2",
        "BEGIN OPENSSH",
    ):
        found = cli("search", "--root", root, "--json", "--modality", "trigram", needle).json()
        assert found["results"] == [], needle
    repo = Repository(root)
    with repo.open_store() as store:
        paths = {r[0] for r in store.db.execute("SELECT path FROM files")}
        skipped = dict(store.skipped())
        texts = " ".join(r[0] for r in store.db.execute("SELECT text FROM chunks"))
    assert paths == {"src/app.py", "src/ok.py"}
    assert "AKIA" not in texts and "ghp_" not in texts and "<secret removed>" in texts
    for name in SECRETS:
        if name not in ("src/app.py", "src/ok.py"):
            assert name in skipped, name
    assert skipped["deploy/deploy_key.txt"].startswith("holds a private key")
    assert any(k.startswith("src/app.py:3") and "AWS Access Key" in v for k, v in skipped.items())
    # the rest of the file is still there, and context never carries the secret either
    assert "def client" in texts
    buffer = "from src.app import client\n\nclient("
    package = repo.context(CursorRequest("src/use.py", 3, 7, buffer, 1024))
    assert all("AKIA" not in s.text and "ghp_" not in s.text for s in package.snippets)
    # a second run keeps the notes of what was removed from files it does not read again
    repo.index()
    with repo.open_store() as store:
        assert any(k.startswith("src/app.py:") for k, _ in store.skipped())


def test_the_fast_secret_prefilter_looks_at_exactly_the_lines_the_pattern_flags():
    """The indexer finds candidate lines by literals in the lowercased text (index/secrets.py);
    over real code, every secret of SECRETS, and mixed-case and Unicode lines, that must pick
    the same lines as the case-insensitive pattern run on every line."""
    from repocontext.index import secrets

    sources = [
        p.read_text(encoding="utf-8") for p in Path(secrets.__file__).parents[1].rglob("*.py")
    ]
    sources += list(SECRETS.values())
    sources.append(
        "x = 1\nİstanbul = 'ß'\nAPI-KEY = 'v'\nurl = 'HTTPS://u:P@host'\n\nSG.abc\nPassWd=1"
    )
    for text in sources:
        lines = text.split("\n")
        pattern = secrets._WORTH_A_LOOK
        want = [i for i, line in enumerate(lines) if len(line) <= 2000 and pattern.search(line)]
        assert secrets._lines_worth_a_look(text) == want


# --- 8. private by default ------------------------------------------------------------------------


@pytest.mark.parametrize("umask", [0o022, 0o000])
def test_index_files_are_private_whatever_the_umask(make_repo, tmp_path, umask):
    root = make_repo(APP)
    home = tmp_path / f"home{umask}"
    env = {**os.environ, "REPOCONTEXT_HOME": str(home)}

    def set_umask():
        os.umask(umask)

    subprocess.run([sys.executable, "-m", "repocontext.cli", "index", "--root", str(root),
                    "--no-embed"], env=env, check=True, capture_output=True,
                   preexec_fn=set_umask)  # fmt: skip
    indexes = home / "indexes"
    assert stat.S_IMODE(indexes.stat().st_mode) == 0o700
    for f in indexes.iterdir():
        assert stat.S_IMODE(f.stat().st_mode) == 0o600, f


def test_the_model_hash_cache_is_private_and_a_writable_one_is_not_trusted(tmp_path, monkeypatch):
    """model-hashes.json decides which model made the vectors: under umask 000 in a home
    another user could write, it is still 0600, and a copy others can write is ignored."""
    from repocontext.embed import model

    home = tmp_path / "shared-home"
    home.mkdir(mode=0o777)
    os.chmod(home, 0o777)
    monkeypatch.setenv("REPOCONTEXT_HOME", str(home))
    weights = tmp_path / "model.onnx"
    weights.write_bytes(b"weights")
    old = os.umask(0)
    try:
        digest = model.file_sha256(weights)
    finally:
        os.umask(old)
    cache = home / "model-hashes.json"
    assert stat.S_IMODE(cache.stat().st_mode) == 0o600
    # another user forges the digest in a file anyone may write: it is not believed
    forged = {k: "0" * 64 for k in json.loads(cache.read_text())}
    cache.write_text(json.dumps(forged))
    os.chmod(cache, 0o666)
    model._HASHES.clear()
    assert model.file_sha256(weights) == digest


# --- 9. huge buffers: sent once, then patched (the patching itself: tests/test_nvim.py) ---------


def test_a_patch_the_engine_cannot_place_asks_the_editor_for_the_whole_buffer(make_repo):
    from repocontext.bridge import EditorService

    root = make_repo(APP)
    service = EditorService()
    replies = []
    req = {"id": 1, "changedtick": 9, "bufnr": 3, "path": str(root / "pkg/main.py"), "line": 1,
           "col": 0, "version": 5, "patch": {"base": 4, "hunks": []}}  # fmt: skip
    service.complete(req, replies.append, replies.append)  # (as after the host restarted)
    assert replies == [{"id": 1, "changedtick": 9, "bufnr": 3, "alternative": False,
                        "status": "error", "error": "buffer resent", "resend": True,
                        "suggestion": ""}]  # fmt: skip
    service.close()


def _token(
    prefix: str, n: int, alphabet: str = "aB3dE5gH7jK9mN1pQ2rS4tU6vW8xY0z", tail: str = ""
) -> str:
    return prefix + (alphabet * (n // len(alphabet) + 1))[:n] + tail


# tokens in each vendor's published shape (gitleaks' rules), none of them real
VENDOR_TOKENS = {
    "openai-api-key": _token("sk-proj-", 74, tail="T3BlbkFJ" + _token("", 74)),
    "gcp-api-key": _token("AIza", 35),
    "github-fine-grained-pat": _token("github_pat_11", 80),
    "anthropic-api-key": _token("sk-ant-api03-", 93, tail="AA"),
    "huggingface-access-token": _token("hf_", 34, alphabet="abcdefghijklmnopqrstuvwxyzABCDEFGH"),
}
IN_FILES = {
    "web/config.js": 'const key = "{}";\n',
    "deploy/run.sh": "export TOKEN={}\n",
    ".github/workflows/ci.yml": "env:\n  token: {}\n",
    "pyproject.toml": 'github_token = "{}"\n',
    "src/settings.py": 'API = "{}"\n',
}


@pytest.mark.parametrize("rule", sorted(VENDOR_TOKENS))
def test_current_vendor_tokens_are_removed_in_every_file_type(make_repo, cli, rule):
    token = VENDOR_TOKENS[rule]
    files = {path: text.format(token) for path, text in IN_FILES.items()}
    files["src/ok.py"] = "def fine():\n    return 'no secret here'\n"
    root = make_repo(files)
    assert cli("index", "--root", root, "--no-embed").code == 0
    for piece in (token, token[:12], token[-12:]):
        found = cli("search", "--root", root, "--json", "--modality", "trigram", piece).json()
        assert found["results"] == [], (rule, piece)
    repo = Repository(root)
    with repo.open_store() as store:
        texts = " ".join(r[0] for r in store.db.execute("SELECT text FROM chunks"))
        notes = dict(store.skipped())
    assert token[-12:] not in texts and "def fine" in texts
    assert sum(rule in why for why in notes.values()) >= 1
