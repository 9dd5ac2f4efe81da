"""Embeddings from a server: any OpenAI-compatible `/v1/embeddings` endpoint (llama-server
with `--embedding`, Ollama, vLLM, TEI), for a team that runs one or a repository too large
to embed on a laptop.

It stands where the local model stands (`identity`, `config`, `embed_query`,
`embed_passages`), so the index treats it the same way: the vectors are recorded with the
model's name, its dimensions and, in place of a file's hash, what the server says it serves.
Vectors of another model, local or remote, are dropped before any of these are written
(store/vectors.py), and a query is never compared with them (search/retrievers.py).

Nothing is sent anywhere unless `[embedding] server_url` is set. Texts go in batches of
`batch_size`; each request has `server_timeout_s` and is tried `RETRIES` more times after a
connection error, a timeout or a 5xx answer, with a growing pause.
"""

from __future__ import annotations

import base64
import hashlib
import http.client
import json
import time
import urllib.parse

import numpy as np

from ..config import EmbeddingConfig
from ..errors import EmbeddingModelError, redact_secrets, redact_url
from .model import _CHARS_PER_TOKEN_CAP, ModelIdentity

RETRIES = 2
BACKOFF_S = 0.5


class RemoteEmbeddingModel:
    """`embed_query` / `embed_passages` through `config.server_url`; thread-safe (one
    connection per request)."""

    def __init__(self, config: EmbeddingConfig):
        self.config = config
        self.shown = redact_url(config.server_url)  # what a message may show: no credentials
        try:
            url = urllib.parse.urlsplit(config.server_url)
            _ = url.port  # a ValueError for a port that is no number
        except ValueError:
            url = None
        if url is None or url.scheme not in ("http", "https") or not url.hostname:
            raise EmbeddingModelError(
                f"[embedding] server_url is {self.shown!r}; give an http:// or "
                "https:// address, such as http://127.0.0.1:8080"
            )
        self._url = url
        self._host: str = url.hostname  # checked above: never empty
        self._base = url.path.rstrip("/")
        self._headers = {"Content-Type": "application/json"}
        if url.username is not None:  # sent as HTTP basic auth (they were dropped before)
            user = urllib.parse.unquote(url.username)
            login = f"{user}:{urllib.parse.unquote(url.password or '')}".encode()
            self._headers["Authorization"] = "Basic " + base64.b64encode(login).decode()
        served = self._served_model()
        probe = self._embed(["probe"])
        dims = probe.shape[1]
        if dims != config.dims:
            raise EmbeddingModelError(
                f"the embedding server at {self.shown} returns {dims}-dimensional "
                f"vectors but the config says {config.dims}; set [embedding] dims = {dims}"
            )
        # in place of a model file's hash: the server's address and what it serves (its
        # address without a password: the identity goes into exported indexes, and the same
        # server behind another login serves the same vectors)
        digest = hashlib.sha256(f"{self.shown}|{served}".encode()).hexdigest()
        self.identity = ModelIdentity(config.name, dims, f"server-{digest}")
        self.served = served

    def embed_query(self, text: str) -> np.ndarray:
        return self._embed([self.config.query_prefix + text])[0]

    def embed_passages(self, texts: list[str]) -> np.ndarray:
        if not texts:
            return np.zeros((0, self.config.dims), dtype=np.float32)
        return self._embed([self.config.passage_prefix + t for t in texts])

    def session_threads(self) -> int:
        return 1  # the server does the work

    # --- HTTP -------------------------------------------------------------------------------
    def _quoted(self, text: str) -> str:
        """What the server or the OS said, fit for a message: no credential of ours in it."""
        return redact_secrets(text, self.config.server_url)

    def _served_model(self) -> str:
        """The model the server reports (`/v1/models`), or "" when it does not say."""
        try:
            data = self._request("GET", "/v1/models", None)
        except EmbeddingModelError:
            return ""
        models = data.get("data") or data.get("models") or []
        if models and isinstance(models[0], dict):
            return str(models[0].get("id") or models[0].get("model") or models[0].get("name"))
        return ""

    def _embed(self, texts: list[str]) -> np.ndarray:
        cap = self.config.max_length * _CHARS_PER_TOKEN_CAP
        payload = {"model": self.config.name, "input": [t[:cap] or " " for t in texts]}
        data = self._request("POST", "/v1/embeddings", payload)
        try:
            rows = sorted(data["data"], key=lambda d: d.get("index", 0))
            matrix = np.array([r["embedding"] for r in rows], dtype=np.float32)
        except (KeyError, TypeError, ValueError) as exc:
            raise EmbeddingModelError(
                f"the embedding server at {self.shown} answered without "
                f"embeddings ({exc!r}); is it an OpenAI-compatible /v1/embeddings endpoint "
                "(llama-server needs --embedding)?"
            ) from None
        if matrix.ndim != 2 or len(matrix) != len(texts):
            raise EmbeddingModelError(
                f"the embedding server at {self.shown} returned {len(matrix)} "
                f"vectors for {len(texts)} texts"
            )
        norms = np.linalg.norm(matrix, axis=1, keepdims=True)
        return matrix / np.maximum(norms, 1e-12)

    def _request(self, method: str, path: str, payload: dict | None) -> dict:
        body = json.dumps(payload).encode() if payload is not None else None
        last = ""
        for attempt in range(RETRIES + 1):
            if attempt:
                time.sleep(BACKOFF_S * attempt)
            conn_class = (
                http.client.HTTPSConnection
                if self._url.scheme == "https"
                else http.client.HTTPConnection
            )
            conn = conn_class(self._host, self._url.port, timeout=self.config.server_timeout_s)
            try:
                conn.request(method, self._base + path, body, self._headers)
                resp = conn.getresponse()
                text = resp.read()
                if resp.status >= 500:
                    last = f"HTTP {resp.status}"
                    continue
                if resp.status != 200:
                    raise EmbeddingModelError(
                        f"the embedding server at {self.shown} refused {path} "
                        f"(HTTP {resp.status}: {self._quoted(text[:200].decode(errors='replace'))})"
                    )
                return json.loads(text)
            except (OSError, http.client.HTTPException) as exc:
                last = self._quoted(str(exc)) or type(exc).__name__
            except ValueError as exc:
                raise EmbeddingModelError(
                    f"the embedding server at {self.shown} answered {path} with "
                    f"something that is not JSON ({exc})"
                ) from None
            finally:
                conn.close()
        raise EmbeddingModelError(
            f"the embedding server at {self.shown} did not answer {path} "
            f"({last}, {RETRIES + 1} tries); start it, or clear [embedding] server_url to use "
            "the local model"
        )
