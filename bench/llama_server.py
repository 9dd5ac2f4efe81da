"""The llama-server the benchmarks measure or compare against, started and stopped in one place."""

from __future__ import annotations

import contextlib
import signal
import socket
import subprocess
import time
import urllib.request
from collections.abc import Iterator
from pathlib import Path


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


@contextlib.contextmanager
def llama_server(server_bin: str, model: Path, threads: int, extra: list[str]) -> Iterator[int]:
    """A llama-server on a free local port (2,048 tokens of context, one slot, `extra`
    arguments), ready to answer (up to a minute for /health); yields the port."""
    port = free_port()
    args = [server_bin, "-m", str(model), "--host", "127.0.0.1", "--port", str(port),
            "-c", "2048", "-t", str(threads), "-np", "1", *extra]  # fmt: skip
    proc = subprocess.Popen(args, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    try:
        for _ in range(600):
            try:
                with urllib.request.urlopen(f"http://127.0.0.1:{port}/health", timeout=1) as r:
                    if r.status == 200:
                        break
            except OSError:
                time.sleep(0.1)
        yield port
    finally:
        proc.send_signal(signal.SIGTERM)
        proc.wait(timeout=10)
