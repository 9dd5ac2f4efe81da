"""A server that misbehaves cannot run the tool away (issue 49, items 1-2): an endless
stream, a 1 GB body and a server that drips a byte a second each end in one clear line within
the configured time, the process stays small, and the editor keeps taking keys meanwhile.

The servers are real sockets on 127.0.0.1 that speak just enough HTTP to be taken for a
llama-server or an OpenAI-compatible one (its /props, /tokenize, /v1/models answered
properly) and misbehave where the answer comes: the embeddings or the completion.
"""

from __future__ import annotations

import json
import os
import socket
import subprocess
import sys
import threading
import time

import pynvim
import pytest
from conftest import REPO_ROOT, write_tree
from test_nvim import NVIM, wait_for

from repocontext.complete.backends import Control
from repocontext.complete.backends.http import LlamaServerBackend, OpenAICompletionsBackend
from repocontext.endpoint import MAX_REPLY_BYTES
from repocontext.errors import GenerationError

PROJECT = {"app/money.py": "def add(a, b):\n    return a + b\n\n\ndef total(items):\n"}
GB = 2**30
# what each misbehaviour sends once the headers of a 200 are out (`drip` sends the headers too
# a byte a second: per-read time-outs never fire for it)
BEHAVIOURS = ("endless_stream", "gigabyte_body", "drip")


class HostileServer:
    """Answers the questions asked at start-up as a real server would; the answer itself
    (embeddings, a completion) misbehaves as `behaviour` says. `connections` counts the
    answers it began, `open` those still being sent."""

    def __init__(self, behaviour: str):
        self.behaviour = behaviour
        self.sock = socket.socket()
        self.sock.bind(("127.0.0.1", 0))
        self.sock.listen(16)
        self.url = f"http://127.0.0.1:{self.sock.getsockname()[1]}"
        self.connections = 0
        self.open = 0
        self.stop = threading.Event()
        threading.Thread(target=self._accept, daemon=True).start()

    def close(self) -> None:
        self.stop.set()
        self.sock.close()

    def _accept(self) -> None:
        while not self.stop.is_set():
            try:
                conn, _ = self.sock.accept()
            except OSError:
                return
            threading.Thread(target=self._serve, args=(conn,), daemon=True).start()

    def _serve(self, conn: socket.socket) -> None:
        with conn:
            try:
                while not self.stop.is_set():
                    request = self._request(conn)
                    if request is None:
                        return
                    method, path = request
                    small = self._small_answer(method, path)
                    if small is not None:
                        body = json.dumps(small).encode()
                        conn.sendall(
                            b"HTTP/1.1 200 OK\r\nContent-Type: application/json\r\n"
                            b"Content-Length: %d\r\n\r\n%s" % (len(body), body)
                        )
                        continue
                    self.connections += 1
                    self.open += 1
                    try:
                        getattr(self, self.behaviour)(conn)
                    finally:
                        self.open -= 1
                    return
            except OSError:
                return

    def _request(self, conn: socket.socket) -> tuple[str, str] | None:
        data = b""
        while b"\r\n\r\n" not in data:
            chunk = conn.recv(65536)
            if not chunk:
                return None
            data += chunk
        head, _, rest = data.partition(b"\r\n\r\n")
        lines = head.decode("latin-1").split("\r\n")
        length = next(
            (int(h.split(":", 1)[1]) for h in lines if h.lower().startswith("content-length")), 0
        )
        while len(rest) < length:
            rest += conn.recv(65536)
        method, path, _ = lines[0].split(" ", 2)
        return method, path.split("?")[0]

    @staticmethod
    def _small_answer(method: str, path: str) -> dict | None:
        if path == "/props":
            return {"default_generation_settings": {"n_ctx": 2048}, "model_path": "x.gguf"}
        if path == "/tokenize":
            return {"tokens": []}
        if path in ("/v1/models", "/models"):
            return {"object": "list", "data": [{"id": "hostile"}]}
        return None

    def endless_stream(self, conn: socket.socket) -> None:
        """A 200 whose chunked body never ends: events with nothing in them, as fast as the
        socket takes them."""
        conn.sendall(
            b"HTTP/1.1 200 OK\r\nContent-Type: text/event-stream\r\n"
            b"Transfer-Encoding: chunked\r\n\r\n"
        )
        event = b'data: {"content": "", "choices": [{"text": ""}]}\n\n' * 200
        chunk = b"%x\r\n%s\r\n" % (len(event), event)
        while not self.stop.is_set():
            conn.sendall(chunk)

    def gigabyte_body(self, conn: socket.socket) -> None:
        conn.sendall(b"HTTP/1.1 200 OK\r\nContent-Length: %d\r\n\r\n" % GB)
        block, sent = b"[" + b"0.5," * 16383 + b"1", 0
        while sent < GB and not self.stop.is_set():
            conn.sendall(block)
            sent += len(block)

    def drip(self, conn: socket.socket) -> None:
        answer = b"HTTP/1.1 200 OK\r\nContent-Length: 100000\r\n\r\n" + b"x" * 100_000
        for byte in answer:
            if self.stop.wait(1.0):
                return
            conn.sendall(bytes([byte]))


@pytest.fixture(params=BEHAVIOURS)
def hostile(request):
    server = HostileServer(request.param)
    yield server
    server.close()


# `repocontext ARGS` in a child whose peak memory is reported on the last line of stdout
PEAK_RSS = (
    "import resource, subprocess, sys\n"
    "p = subprocess.run([sys.executable, '-m', 'repocontext.cli', *sys.argv[1:]],"
    " capture_output=True, text=True)\n"
    "sys.stderr.write(p.stderr); sys.stdout.write(p.stdout)\n"
    "print(resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss * 1024)\n"
    "sys.exit(p.returncode)\n"
)


def cli_with_peak(*args: str, home) -> tuple[subprocess.CompletedProcess, int, float]:
    """(the finished process, its peak RSS in bytes, its seconds)."""
    t0 = time.monotonic()
    proc = subprocess.run(
        [sys.executable, "-c", PEAK_RSS, *map(str, args)],
        capture_output=True,
        text=True,
        timeout=600,
        env={**os.environ, "REPOCONTEXT_HOME": str(home)},
    )
    return proc, int(proc.stdout.strip().splitlines()[-1]), time.monotonic() - t0


def one_line(err: str) -> str:
    lines = err.strip().splitlines()
    assert len(lines) == 1, err
    assert "Traceback" not in err
    return lines[0]


def test_an_embedding_server_that_misbehaves_ends_the_index_in_one_line(hostile, tmp_path, home):
    root = write_tree(tmp_path / "project", PROJECT)
    config = home / "config.toml"
    # the baseline: the same command against an address where nothing listens
    config.write_text(f'[embedding]\nserver_url = "http://127.0.0.1:{free_port()}"\n')
    base, base_peak, _ = cli_with_peak("index", "--root", root, "--quiet", home=home)
    assert base.returncode == 1 and "did not answer" in one_line(base.stderr)

    config.write_text(f'[embedding]\nserver_url = "{hostile.url}"\nserver_timeout_s = 3\n')
    proc, peak, seconds = cli_with_peak("index", "--root", root, "--quiet", home=home)
    assert proc.returncode == 1
    line = one_line(proc.stderr)
    assert hostile.url in line
    if hostile.behaviour == "drip":
        assert "did not finish its reply to /embeddings within 3 s" in line
        # a slow reply is not tried again: the same server would only make the user wait again
        assert hostile.connections == 1
    else:
        assert f"sent more than {MAX_REPLY_BYTES // 2**20} MiB" in line
    # ended by its own limits, not by ours: the drip alone would take 28 hours
    assert seconds < 120
    assert peak - base_peak < 500 * 2**20, (peak, base_peak)
    # the lexical index was written before the embeddings were asked for: search answers
    config.write_text("")
    found = subprocess.run(
        [sys.executable, "-m", "repocontext.cli", "search", "--root", root, "def total"],
        capture_output=True,
        text=True,
        env={**os.environ, "REPOCONTEXT_HOME": str(home)},
    )
    assert "app/money.py" in found.stdout


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


@pytest.mark.parametrize("backend_of", [LlamaServerBackend, OpenAICompletionsBackend])
def test_a_generation_server_that_misbehaves_ends_the_answer_by_its_time(hostile, backend_of):
    """The backend's time-out (2 s here) bounds the whole answer, whatever the key's own
    deadline (the editor tests set it far off); too much is refused in one line."""
    backend = backend_of(hostile.url, timeout=2.0)
    control = Control(max_tokens=16, deadline=time.monotonic() + 10**6)
    t0 = time.monotonic()
    try:
        status = backend.generate("def add(a, b):\n    return ", control).status
    except GenerationError as exc:
        status = str(exc)
        assert "\n" not in status and hostile.url in status
    seconds = time.monotonic() - t0
    if hostile.behaviour == "gigabyte_body":
        assert "sent more than" in status or "sent a line over" in status
    elif hostile.behaviour == "endless_stream":
        # whichever limit it reaches first, by the machine's speed: the time, or the size
        assert status == "deadline" or "sent more than" in status, status
    else:  # the drip: an answer that ran out of time
        assert status == "deadline"
    assert seconds < 60  # the drip's headers alone would take 40 s; the stream never ends


def test_the_editor_keeps_taking_keys_while_the_server_misbehaves(tmp_path, home):
    """A real Neovim with the plugin, its generation server the endless stream: the keys
    typed reach the buffer as they would without the plugin, and the host answers a status
    request while its server is still streaming."""
    server = HostileServer("endless_stream")
    root = write_tree(tmp_path / "project", PROJECT)
    # no key's deadline ends the answer: only the endpoint's own bound can
    (home / "config.toml").write_text(
        f'[generation]\nserver_url = "{server.url}"\nhard_deadline_ms = 1000000000\n'
    )
    init = tmp_path / "init.lua"
    init.write_text(
        f"vim.opt.runtimepath:prepend({str(REPO_ROOT)!r})\n"
        f"vim.g.python3_host_prog = {sys.executable!r}\n"
        "vim.o.swapfile = false\n"
        "require('repocontext').setup({ debounce_ms = 10, notify_progress = false,"
        " index_on_open = false })\n"
        "require('repocontext.probe').start()\n"
    )
    environ = {
        **os.environ,
        "REPOCONTEXT_HOME": str(home),
        "NVIM_RPLUGIN_MANIFEST": str(tmp_path / "rplugin.vim"),
        "XDG_CONFIG_HOME": str(tmp_path / "config"),
        "XDG_DATA_HOME": str(tmp_path / "data"),
        "XDG_STATE_HOME": str(tmp_path / "state"),
    }
    subprocess.run(
        [NVIM, "--headless", "-u", str(init), "-i", "NONE", "-c", "UpdateRemotePlugins",
         "-c", "qa!"],
        env=environ, check=True, capture_output=True, timeout=120,
    )  # fmt: skip
    saved = {k: os.environ.get(k) for k in environ}
    os.environ.update(environ)
    nvim = pynvim.attach("child", argv=[NVIM, "--embed", "--headless", "-u", str(init)])
    try:
        nvim.command(f"cd {root}")
        nvim.command(f"edit {root / 'app/money.py'}")
        nvim.current.window.cursor = (5, 0)
        nvim.input("A<CR>return sum(items)")
        # the host took the request and its server is streaming at it
        wait_for(nvim, "return require('repocontext.probe').counts.requests > 0", 60)
        deadline = time.monotonic() + 60
        while server.connections == 0 and time.monotonic() < deadline:
            time.sleep(0.05)
        assert server.connections >= 1
        # more keys, while the stream runs: each lands as typed
        nvim.input("  # done")
        wait_for(nvim, "return vim.api.nvim_get_current_line() == '    return sum(items)  # done'")
        assert nvim.api.get_mode()["mode"] == "i"
        # the Python host still answers (a request beside the stuck answer)
        nvim.exec_lua("""
          _G.s = nil
          require('repocontext').request('status', { path = vim.api.nvim_buf_get_name(0) },
            function(s) _G.s = s end)
        """)
        assert wait_for(nvim, "return _G.s ~= nil", 30)
        # still in insert mode, no key to cancel it: the endless answer is given up (its
        # connection closed) by the endpoint's own bound
        deadline = time.monotonic() + 60
        while server.open and time.monotonic() < deadline:
            time.sleep(0.1)
        assert server.open == 0
        nvim.input("<Esc>")
        wait_for(nvim, "return vim.fn.mode() == 'n'")
        assert nvim.current.buffer[:] == [
            "def add(a, b):",
            "    return a + b",
            "",
            "",
            "def total(items):",
            "    return sum(items)  # done",
        ]
    finally:
        try:
            nvim.quit("qa!")
        except Exception:
            pass
        nvim.close()
        server.close()
        for k, v in saved.items():
            if v is None:
                os.environ.pop(k, None)
            else:
                os.environ[k] = v
