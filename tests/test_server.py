"""The llama-server backend against a real llama-server (built by scripts/llama-server.sh),
bound to 127.0.0.1, serving the default model."""

from __future__ import annotations

import os
import socket
import subprocess
import time
import urllib.request
from dataclasses import replace

import pytest

from repocontext.complete.backends import Control
from repocontext.complete.cpu import Machine
from repocontext.complete.engine import CompletionEngine
from repocontext.complete.models import default_model_path
from repocontext.complete.server import LlamaServerBackend
from repocontext.config import GenerationConfig
from repocontext.context.request import CursorRequest
from repocontext.errors import GenerationError

SERVER = os.environ.get("REPOCONTEXT_LLAMA_SERVER")
pytestmark = pytest.mark.skipif(
    not SERVER, reason="set REPOCONTEXT_LLAMA_SERVER (scripts/test builds and sets it)"
)


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def start_llama_server(*extra: str) -> tuple[subprocess.Popen, str]:
    """A real llama-server serving the default model on 127.0.0.1, healthy, with `extra`
    arguments; (its process, its URL)."""
    assert os.access(SERVER, os.X_OK), f"{SERVER} is not an executable llama-server"
    port = free_port()
    proc = subprocess.Popen(
        [SERVER, "-m", str(default_model_path()), "--host", "127.0.0.1", "--port", str(port),
         "-c", "2048", "-np", "1", *extra,
         # the AMX guard: --no-repack where llama.cpp's AMX path crashes
         *Machine.current().extra_buffers().server_args()],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )  # fmt: skip
    url = f"http://127.0.0.1:{port}"
    deadline = time.time() + 120
    while time.time() < deadline:
        try:
            with urllib.request.urlopen(url + "/health", timeout=1) as r:
                if r.status == 200:
                    return proc, url
        except OSError:
            time.sleep(0.2)
    proc.kill()
    pytest.fail(f"llama-server {' '.join(extra)} did not become healthy in 120 s")


@pytest.fixture(scope="module")
def server():
    proc, url = start_llama_server("--cache-reuse", "256")
    yield proc, url
    proc.terminate()
    proc.wait(timeout=10)


def test_server_backend_streams_a_completion(server):
    _, url = server
    backend = LlamaServerBackend(url)
    seen = []
    gen = backend.generate("def add(a, b):\n    return", Control(max_tokens=8, emit=seen.append))
    assert gen.status == "ok" and gen.text and gen.tokens_generated > 0
    assert seen and seen[-1] == gen.text
    assert backend.count_tokens("def add(a, b):") > 3


def test_engine_on_the_server_backend_uses_the_same_prompt_and_stop_rules(server):
    _, url = server
    # never cut by the deadline: a loaded machine took over 2 s for the first answer
    config = replace(GenerationConfig(), hard_deadline_ms=1_000_000_000)
    engine = CompletionEngine(LlamaServerBackend(url), None, config)
    text = "def add(a, b):\n    return a +"
    s = engine.complete(CursorRequest("m.py", 2, len("    return a +"), text), mode="local")
    assert s.status in ("ok", "empty") and "\n" not in s.suggestion.strip("\n")


def test_a_server_that_went_down_is_a_clear_error(server):
    proc, url = server
    backend = LlamaServerBackend(url)
    proc.terminate()
    proc.wait(timeout=10)
    with pytest.raises(GenerationError, match="is not answering"):
        backend.generate("x = ", Control(max_tokens=4))
