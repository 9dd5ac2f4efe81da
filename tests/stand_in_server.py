"""A stand-in llama-server for the terminal tests and the benches that drive a real Neovim:
the same HTTP answers a llama-server gives (`/props`, `/tokenize`, a streamed `/completion`),
each completion's text chosen by the caller, so the screen shows what the test expects.

Not a fake of the plugin: the plugin's own server backend talks to it over loopback HTTP,
exactly as to llama-server.
"""

from __future__ import annotations

import http.server
import json
import sys
import threading
import time
from collections.abc import Callable

# the text one completion request (its JSON body) is answered with
Answer = Callable[[dict], str]


class _Server(http.server.ThreadingHTTPServer):
    def handle_error(self, request, client_address) -> None:
        if isinstance(sys.exc_info()[1], ConnectionError):
            return  # the client hung up (an editor's host ending): nothing went wrong here
        super().handle_error(request, client_address)


class StandInServer:
    """A llama-server on a free loopback port (`url`) that completes each request with
    `answer(request)`; `sure`: the tokens come with probability 1 (no confidence gate hides
    them), else with none said; `props_delay`: seconds each `/props` waits, as a server still
    loading its model does."""

    def __init__(self, answer: Answer, *, sure: bool = False, props_delay: float = 0.0):
        class Handler(http.server.BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def log_message(self, *args):
                pass

            def _send(self, body: bytes, kind: str = "application/json") -> None:
                self.send_response(200)
                self.send_header("Content-Type", kind)
                self.send_header("Content-Length", str(len(body)))
                self.end_headers()
                self.wfile.write(body)

            def do_GET(self):
                time.sleep(props_delay)
                props = {"default_generation_settings": {"n_ctx": 2048}, "model_path": "m.gguf"}
                self._send(json.dumps(props).encode())

            def do_POST(self):
                length = int(self.headers.get("Content-Length", 0))
                asked = json.loads(self.rfile.read(length) or b"{}")
                if self.path.startswith("/tokenize"):
                    return self._send(b'{"tokens": []}')
                first: dict = {"content": answer(asked), "stop": False}
                if sure:
                    first["completion_probabilities"] = [{"logprob": 0.0}]
                events = [first, {"content": "", "stop": True}]
                self._send("".join(f"data: {json.dumps(e)}\n\n" for e in events).encode(),
                           "text/event-stream")  # fmt: skip

        self.httpd = _Server(("127.0.0.1", 0), Handler)
        self.httpd.daemon_threads = True
        self.url = f"http://127.0.0.1:{self.httpd.server_address[1]}"
        threading.Thread(target=self.httpd.serve_forever, daemon=True).start()

    def close(self) -> None:
        self.httpd.shutdown()
        self.httpd.server_close()
