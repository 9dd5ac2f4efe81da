"""Embeddings from a server: any OpenAI-compatible `/v1/embeddings` endpoint (llama-server
with `--embedding`, Ollama, vLLM, TEI), for a team that runs one or a repository too large
to embed on a laptop.

It stands where the local model stands (`identity`, `config`, `embed_query`,
`embed_passages`), so the index treats it the same way: the vectors are recorded with the
model's name, its dimensions and, in place of a file's hash, what the server says it serves.
Vectors of another model, local or remote, are dropped before any of these are written
(store/vectors.py), and a query is never compared with them (search/retrievers.py).

Nothing is sent anywhere unless `[embedding] server_url` is set. Texts go in batches of
`batch_size` through the one HTTP client (endpoint.py: kept connections, each reply bounded
in size and within `server_timeout_s`); a request is tried `RETRIES` more times after a
connection error or a 5xx answer, with a growing pause, but not after a reply that was too
slow or too large: the same server would only make the user wait that long again.
"""

from __future__ import annotations

import hashlib
import time

import numpy as np

from ..config import EmbeddingConfig
from ..endpoint import Endpoint
from ..errors import EmbeddingModelError
from .model import _CHARS_PER_TOKEN_CAP, ModelIdentity

RETRIES = 2
BACKOFF_S = 0.5


class RemoteEmbeddingModel:
    """`embed_query` / `embed_passages` through `config.server_url`; thread-safe (the
    endpoint's pool gives each thread its own connection)."""

    def __init__(self, config: EmbeddingConfig):
        self.config = config
        base = config.server_url.rstrip("/")
        if not base.endswith("/v1"):  # the OpenAI API's paths, with or without it in the URL
            base += "/v1"
        self.endpoint = Endpoint(
            base, "[embedding] server_url", EmbeddingModelError, config.server_timeout_s
        )
        self.shown = self.endpoint.shown  # what a message may show: no credentials
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

    def later_windows(self, passage: str, header: str) -> list[str]:
        """None: a server's model reads as much of a passage as it reads, and its tokens are
        not known here to cut windows by."""
        return []

    def embed_passages(self, texts: list[str]) -> np.ndarray:
        if not texts:
            return np.zeros((0, self.config.dims), dtype=np.float32)
        return self._embed([self.config.passage_prefix + t for t in texts])

    def session_threads(self) -> int:
        return 1  # the server does the work

    # --- HTTP -------------------------------------------------------------------------------
    def _served_model(self) -> str:
        """The model the server reports (`/v1/models`), or "" when it does not say."""
        try:
            data = self._request("GET", "/models", None)
        except EmbeddingModelError as exc:
            if getattr(exc, "kind", None) in ("too_slow", "too_big"):
                raise  # a server that misbehaves here will with the embeddings too
            return ""
        models = data.get("data") or data.get("models") or []
        if models and isinstance(models, list) and isinstance(models[0], dict):
            return str(models[0].get("id") or models[0].get("model") or models[0].get("name"))
        return ""

    def _embed(self, texts: list[str]) -> np.ndarray:
        cap = self.config.max_length * _CHARS_PER_TOKEN_CAP
        payload = {"model": self.config.name, "input": [t[:cap] or " " for t in texts]}
        data = self._request("POST", "/embeddings", payload)
        try:
            rows = sorted(data["data"], key=lambda d: d.get("index", 0))
            matrix = np.array([r["embedding"] for r in rows], dtype=np.float32)
        except (KeyError, TypeError, ValueError, AttributeError) as exc:
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
        last = ""
        for attempt in range(RETRIES + 1):
            if attempt:
                time.sleep(BACKOFF_S * attempt)
            try:
                answer = self.endpoint.json(method, path, payload)
            except EmbeddingModelError as exc:
                kind, status = getattr(exc, "kind", None), getattr(exc, "status", 0)
                if kind == "not_answering" or (kind == "refused" and status >= 500):
                    last = getattr(exc, "detail", "") or f"HTTP {status}"
                    continue
                raise
            if not isinstance(answer, dict):
                raise EmbeddingModelError(
                    f"the embedding server at {self.shown} answered {path} with "
                    f"{type(answer).__name__}, not an object; is it an OpenAI-compatible "
                    "/v1/embeddings endpoint?"
                )
            return answer
        raise EmbeddingModelError(
            f"the embedding server at {self.shown} did not answer {path} "
            f"({last}, {RETRIES + 1} tries); start it, or clear [embedding] server_url to use "
            "the local model"
        )
