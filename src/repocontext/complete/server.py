"""A llama-server reached over HTTP, for models that do not fit in this process or run on
another machine."""

from __future__ import annotations

import json
import math
import time

from ..errors import GenerationError
from .backends import Control, Generation, TokenCounts, advance
from .templates import TEMPLATES


class LlamaServerBackend:
    """A llama-server reached over HTTP (`/completion` with `cache_prompt`), for models that do
    not fit in-process or run on another machine. The server keeps its own KV cache."""

    name = "llama-server"

    def __init__(self, url: str, template: str = "auto", timeout: float = 10.0):
        self.url = url.rstrip("/")
        self.timeout = timeout
        props = self._get("/props")
        self.n_ctx = int(props.get("default_generation_settings", {}).get("n_ctx", 4096))
        self.metadata = {"general.name": str(props.get("model_path", ""))}
        self.template = TEMPLATES[template] if template != "auto" else TEMPLATES["plain"]
        self._counts = TokenCounts(
            lambda text: len(self._post("/tokenize", {"content": text}).get("tokens", []))
        )

    def count_tokens(self, text: str) -> int:
        return self._counts(text)

    def sibling(self) -> LlamaServerBackend:
        """The server keeps one cache per slot: speculation shares this one."""
        return self

    def describe(self) -> dict:
        return {"server": self.url, "model": self.metadata["general.name"]}

    def generate(self, prompt: str, control: Control) -> Generation:
        import http.client
        import urllib.parse

        out = Generation()
        parts = urllib.parse.urlsplit(self.url)
        remaining = max(0.05, min(self.timeout, control.deadline - time.monotonic()))
        conn = http.client.HTTPConnection(parts.hostname, parts.port or 80, timeout=remaining)
        payload = {
            "prompt": prompt,
            "n_predict": control.max_tokens,
            "stream": True,
            "cache_prompt": True,
            "temperature": 0,
            "top_k": 1,
            "n_probs": 1,  # each token's probability: the confidence gate's input
            "stop": list(self.template.eot),
        }
        if control.avoid:
            # the server cannot ban a token for the first step only: it is banned throughout
            first = self._post("/tokenize", {"content": control.avoid}).get("tokens", [])[:1]
            payload["logit_bias"] = [[first[0], False]] if first else []
        body = json.dumps(payload)
        text = full = ""  # `full`: not cut by the stop rules
        try:
            conn.request("POST", "/completion", body, {"Content-Type": "application/json"})
            resp = conn.getresponse()
            if resp.status != 200:
                raise GenerationError(f"the llama-server at {self.url} answered {resp.status}")
            for raw in resp:
                if control.cancelled():
                    out.status = "cancelled"
                    break
                if time.monotonic() > control.deadline:
                    out.status = "deadline"
                    break
                line = raw.decode("utf-8", "replace").strip()
                if not line.startswith("data:"):
                    continue
                data = json.loads(line[5:])
                piece = data.get("content", "")
                if piece:
                    if out.first_token_at is None:
                        out.first_token_at = time.monotonic()
                    out.tokens_generated += 1
                    control.token(len(full), len(full) + len(piece), _logprob(data))
                    full += piece
                    text, stop = advance(text + piece, control)
                    if stop:
                        break
                if data.get("stop"):
                    timings = data.get("timings", {})
                    out.tokens_evaluated = int(timings.get("prompt_n", 0))
                    break
        except (OSError, http.client.HTTPException) as exc:
            if isinstance(exc, TimeoutError) or "timed out" in str(exc):
                out.status = "deadline"
            else:
                raise GenerationError(
                    f"the llama-server at {self.url} is not answering ({exc}); "
                    "start it or fix [generation] server_url"
                ) from exc
        finally:
            conn.close()
        out.text = text
        return out

    def _get(self, path: str) -> dict:
        return self._request("GET", path, None)

    def _post(self, path: str, payload: dict) -> dict:
        return self._request("POST", path, payload)

    def _request(self, method: str, path: str, payload: dict | None) -> dict:
        import urllib.error
        import urllib.request

        data = json.dumps(payload).encode() if payload is not None else None
        req = urllib.request.Request(
            self.url + path, data=data, method=method, headers={"Content-Type": "application/json"}
        )
        try:
            with urllib.request.urlopen(req, timeout=self.timeout) as resp:
                return json.loads(resp.read() or b"{}")
        except (urllib.error.URLError, OSError, ValueError) as exc:
            raise GenerationError(
                f"the llama-server at {self.url} is not answering ({exc}); "
                "start it or fix [generation] server_url"
            ) from exc


def _logprob(data: dict) -> float:
    """The streamed token's log-probability: llama-server sends `logprob` (newer) or `prob`
    (older) under `completion_probabilities`; nan when it sends neither."""
    probs = data.get("completion_probabilities") or [{}]
    first = probs[0] if isinstance(probs, list) and probs else {}
    if "logprob" in first:
        return float(first["logprob"])
    for alt in first.get("probs", []):  # older servers: the top candidates with their `prob`
        if alt.get("tok_str") == first.get("content") and alt.get("prob", 0) > 0:
            return math.log(alt["prob"])
    return math.nan
