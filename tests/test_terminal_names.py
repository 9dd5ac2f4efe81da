"""What the command line prints to a terminal holds no byte a terminal acts on, whatever the
names in the tree or the words of a server; and each name still reads as itself.

A file name may hold any byte but NUL and "/": the tree here is made of real files with
ESC sequences (OSC 52's clipboard write, a screen clear, a window title), CR, LF, DEL, a C1
control, bidirectional controls and bytes that are not UTF-8 in their names, in a real git
work tree, and the real CLI runs in its own process. The server is a real HTTP server on
loopback whose error holds NUL, CR, LF and ESC.
"""

from __future__ import annotations

import http.server
import json
import os
import re
import subprocess
import sys
import threading
from pathlib import Path

import pytest
from conftest import git_init

from repocontext.terminal import from_printable

REPOCONTEXT = str(Path(sys.executable).parent / "repocontext")

# Indexed: each defines its own function, so a search names the file by its symbol.
INDEXED = {
    "osc52": b"osc\x1b]52;c;aGVsbG8=\x07.py",
    "clear": b"clear\x1b[2J\x1b[H.py",
    "title": b"title\x1b]0;owned\x07.py",
    "cr": b"cr\rspoof.py",
    "lf": b"lf\n   9. fake.py:1-2  fake (function).py",
    "rtl": "rtl\u202eyp.exe.py".encode(),
    "isolate": "iso\u2067late\u2069.py".encode(),
    "c1": "csi\u009b2J.py".encode(),
    "delete": b"del\x7f.py",
    "tab": b"tab\t.py",
    "quoted": b'"quoted".py',
    "plain": b"plain_name.py",
}
# Skipped, and listed by `status --skipped` with their names.
NOT_UTF8 = [b"bad\xff.py", b"bad\xfe.py", b"esc\x1b[2J\xff.py"]
BINARY = b"bin\x1b]52;c;eA==\x07.py"
LOOKALIKE = b'"bad\\377.py"'  # UTF-8, and reads as the quoted form of bad\xff.py
TOO_LARGE = b"big\r\x1b[2J.py"


def make_hostile_tree(base: Path) -> Path:
    root = base / "repo\x1b]0;window title\x07"  # the root's own name is printed too
    root.mkdir()
    broot = os.fsencode(root)
    calls = []
    for key, name in INDEXED.items():
        write(broot, name, f"def target_{key}(x):\n    return x\n".encode())
        calls.append(f"    y = target_{key}(y)\n")
    write(broot, b"main.py", ("def run(y):\n" + "".join(calls) + "    return y\n").encode())
    for name in NOT_UTF8:
        write(broot, name, b"def hidden():\n    return 0\n")
    write(broot, BINARY, b"\0\1\2" * 100)
    write(broot, LOOKALIKE, b"\0\1\2" * 100)
    write(broot, TOO_LARGE, b"")
    os.truncate(os.path.join(broot, TOO_LARGE), 3_000_000)  # over the 1 MB cap, not read
    git_init(root)
    return root


def write(root: bytes, name: bytes, content: bytes) -> None:
    fd = os.open(os.path.join(root, name), os.O_WRONLY | os.O_CREAT, 0o644)
    try:
        os.write(fd, content)
    finally:
        os.close(fd)


def run(*args, env: dict | None = None) -> subprocess.CompletedProcess[bytes]:
    """The real CLI, its output as the bytes a terminal would get."""
    return subprocess.run(
        [REPOCONTEXT, *map(str, args)],
        capture_output=True,
        timeout=300,
        stdin=subprocess.DEVNULL,
        env=env,
    )


def assert_terminal_safe(output: bytes) -> str:
    """No byte a terminal acts on: no C0 but the line ends, no DEL, no C1, no bidirectional
    control; valid UTF-8."""
    bad = sorted({b for b in output if (b < 0x20 and b != 0x0A) or b == 0x7F})
    assert not bad, (bad, output)
    text = output.decode("utf-8")  # strict: no byte that is not UTF-8
    odd = re.findall("[\x80-\x9f\u061c\u200e\u200f\u2028\u2029\u202a-\u202e\u2066-\u2069]", text)
    assert not odd, (odd, text)
    return text


@pytest.fixture(scope="module")
def hostile(tmp_path_factory):
    base = tmp_path_factory.mktemp("names")
    env = {**os.environ, "REPOCONTEXT_HOME": str(base / "home")}
    root = make_hostile_tree(base)
    done = run("index", "--no-embed", "--root", root, env=env)
    assert done.returncode == 0, done.stderr
    return root, env, done


def test_index_output_is_safe(hostile):
    root, _, done = hostile
    assert_terminal_safe(done.stdout)
    assert_terminal_safe(done.stderr)
    assert f'indexed "{root.parent}/repo\\033]0;window title\\a" in' in done.stdout.decode()


def test_search_prints_every_name_escaped_and_each_reads_back_as_itself(hostile):
    root, env, _ = hostile
    done = run("search", "--root", root, "--top", "50", "--modality", "bm25", "target", env=env)
    assert done.returncode == 0, done.stderr
    text = assert_terminal_safe(done.stdout)
    assert_terminal_safe(done.stderr)
    shown = {}
    for line in text.splitlines():
        m = re.fullmatch(r"\s+\d+\. (.*):\d+-\d+  target_(\w+) \(function\)", line)
        if m:
            shown[m.group(2)] = m.group(1)
    assert set(shown) == set(INDEXED), text
    for key, name in INDEXED.items():
        assert from_printable(shown[key]) == os.fsdecode(name), (key, shown[key])
    assert len(set(shown.values())) == len(shown)  # no two names print alike
    assert shown["plain"] == "plain_name.py"  # a plain name is printed as it is
    assert shown["rtl"] == '"rtl\\342\\200\\256yp.exe.py"'  # as git quotes it
    assert shown["cr"] == '"cr\\rspoof.py"'
    # the file lines (the name alone, above its results) are escaped the same way
    lines = set(text.splitlines())
    assert all(s in lines for s in shown.values())
    # and --json gives the names themselves
    found = json.loads(run("search", "--root", root, "--top", "50", "--modality", "bm25",
                           "--json", "target", env=env).stdout)  # fmt: skip
    by_symbol = {r["symbol"]: r["path"] for r in found["results"]}
    for key, name in INDEXED.items():
        assert by_symbol[f"target_{key}"] == name.decode("utf-8")


def test_explained_search_is_safe(hostile):
    root, env, _ = hostile
    done = run("search", "--root", root, "--explain", "--top", "50", "target", env=env)
    assert done.returncode == 0, done.stderr
    assert_terminal_safe(done.stdout)
    assert_terminal_safe(done.stderr)


def test_status_lists_skipped_names_escaped_and_distinct(hostile):
    root, env, _ = hostile
    done = run("status", "--root", root, "--skipped", env=env)
    assert done.returncode == 0, done.stderr
    text = assert_terminal_safe(done.stdout)
    listed = {}
    for line in text.splitlines():
        m = re.fullmatch(r"  skipped (.*): (file name is not valid UTF-8|binary.*|larger.*)", line)
        if m:
            listed[m.group(1)] = m.group(2)
    names = {from_printable(shown): shown for shown in listed}
    for name in [*NOT_UTF8, BINARY, LOOKALIKE, TOO_LARGE]:
        assert os.fsdecode(name) in names, (name, listed)
    assert len(listed) == len(NOT_UTF8) + 3  # two different names never print the same
    assert names[os.fsdecode(b"bad\xff.py")] == '"bad\\377.py"'
    # --json: the names themselves; a name that is not UTF-8 (JSON has no string for it)
    # in the quoted form, which gives its bytes back
    skipped = json.loads(run("status", "--root", root, "--skipped", "--json", env=env).stdout)
    paths = [s["path"] for s in skipped["skipped_files"]]
    assert BINARY.decode() in paths and TOO_LARGE.decode() in paths
    for name in NOT_UTF8:
        assert os.fsdecode(name) in {from_printable(p) for p in paths}, paths


def test_context_prints_snippet_paths_escaped(hostile):
    root, env, _ = hostile
    lines = (root / "main.py").read_text().splitlines()
    line = next(i for i, text in enumerate(lines, 1) if "target_rtl(" in text)
    col = lines[line - 1].index("(") + 1
    done = run("context", "--root", root, "--file", "main.py", "--line", line, "--col", col,
               env=env)  # fmt: skip
    assert done.returncode == 0, done.stderr
    text = assert_terminal_safe(done.stdout)
    assert '"rtl\\342\\200\\256yp.exe.py":1-2  target_rtl' in text, text
    as_json = json.loads(run("context", "--root", root, "--file", "main.py", "--line", line,
                             "--col", col, "--json", env=env).stdout)  # fmt: skip
    assert INDEXED["rtl"].decode() in {s["path"] for s in as_json["snippets"]}


# --- a server's words in an error line ------------------------------------------------------

HOSTILE_WORDS = "model\x00 not loaded\r\nrepocontext: all fine\x1b]52;c;eA==\x07\u202e"


class _Refusing(http.server.BaseHTTPRequestHandler):
    def _refuse(self):
        body = json.dumps({"error": {"message": HOSTILE_WORDS}}).encode()
        self.send_response(400)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    do_GET = do_POST = _refuse

    def log_message(self, *args):
        pass


def test_a_servers_error_is_one_safe_line(tmp_path):
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), _Refusing)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    try:
        home = tmp_path / "home"
        home.mkdir()
        (home / "config.toml").write_text(
            f'[embedding]\nserver_url = "http://127.0.0.1:{server.server_address[1]}"\n'
        )
        root = tmp_path / "repo"
        root.mkdir()
        (root / "a.py").write_text("def a():\n    return 1\n")
        git_init(root)
        env = {**os.environ, "REPOCONTEXT_HOME": str(home)}
        done = run("index", "--quiet", "--root", root, env=env)
    finally:
        server.shutdown()
        server.server_close()
    assert done.returncode == 1, (done.stdout, done.stderr)
    text = assert_terminal_safe(done.stderr)
    assert text.count("\n") == 1 and text.startswith("repocontext: "), text
    # what the server said is still there to read, escaped
    assert "\\000 not loaded\\r\\nrepocontext: all fine\\033]52;c;eA==\\a" in text, text
