"""A sentence-embedding model: ONNX Runtime for the network, `tokenizers` for the text.

Owns loading (with a clear error for a missing or broken file), batching, pooling and
normalisation, and the model's identity (name, dimensions, hash of the file) that the index
records so that a query is never compared with vectors from another model.
"""

from __future__ import annotations

import hashlib
import json
import os
import threading
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

from ..config import EmbeddingConfig
from ..errors import EmbeddingModelError
from ..locations import models_dir, repocontext_home
from .passage import later_windows
from .runtime import cached_session, onnxruntime

# Characters kept per text before tokenising: max_length tokens rarely need more, and
# tokenising a 3,000-character body only to truncate it wastes time.
_CHARS_PER_TOKEN_CAP = 8


@dataclass(frozen=True)
class ModelIdentity:
    name: str
    dims: int
    file_sha256: str

    def describe(self) -> str:
        if self.file_sha256.startswith("server-"):  # remote.py: no file, a server
            return f"{self.name} ({self.dims} dims, from a server, {self.file_sha256[:13]})"
        return f"{self.name} ({self.dims} dims, sha256 {self.file_sha256[:12]})"

    def key(self) -> str:
        return f"{self.name}|{self.dims}|{self.file_sha256}"


class EmbeddingModel:
    """Load once, then `embed_passages` / `embed_query`; thread-safe."""

    def __init__(self, config: EmbeddingConfig):
        self.config = config = config.resolved()
        model_path = Path(config.model_path) if config.model_path else None
        if model_path is None or not model_path.is_file():
            raise EmbeddingModelError(
                f"the embedding model file {config.model_path or '(none configured)'} is "
                "missing; reinstall repocontext (it ships the default model) or set "
                "[embedding] model_path in the config file"
            )
        tok_path = Path(config.tokenizer_path)
        if not tok_path.is_file():
            raise EmbeddingModelError(
                f"the tokenizer file {tok_path} is missing; set [embedding] tokenizer_path to "
                "the tokenizer.json that belongs to the model"
            )
        from tokenizers import Tokenizer

        try:
            self.tokenizer = Tokenizer.from_file(str(tok_path))
        except Exception as exc:
            raise EmbeddingModelError(
                f"the tokenizer file {tok_path} cannot be read ({exc}); point "
                "[embedding] tokenizer_path at a valid tokenizer.json"
            ) from exc
        self.tokenizer.enable_truncation(max_length=config.max_length)
        self.tokenizer.enable_padding()
        self._model_path = model_path
        # Two sessions, each made when first needed: a single-threaded one for queries (a
        # short text gains little from a second thread, and is embedded while SQLite works on
        # the other core) and one with every core for batches of passages. A command-line
        # search makes only the first. Creating a session spends most of its time optimising
        # the graph (130-250 ms here); the query session loads that optimised graph from the
        # cache instead, its weights mapped from a file of their own (25-40 ms;
        # runtime.cached_session, bench/results/cli_speed.md).
        sha = self._sha256 = file_sha256(model_path)
        self._query_session = self._session(1, _optimized_path(model_path, sha))
        self._passage_session = None
        self.input_names = {i.name for i in self._query_session.get_inputs()}
        self._lock = threading.Lock()
        self._untruncated: Any = None  # _whole_tokenizer
        self.identity = ModelIdentity(config.name, config.dims, sha)
        probe = self._run(["probe"], self._query_session)
        if probe.shape[1] != config.dims:
            raise EmbeddingModelError(
                f"the embedding model {model_path} produces {probe.shape[1]}-dimensional "
                f"vectors but the config says {config.dims}; set [embedding] dims = "
                f"{probe.shape[1]}"
            )

    def _session(self, threads: int, optimized: Path | None = None):
        """A session on `threads` cores. With `optimized` (a cache path): the graph optimised
        once and kept there (runtime.cached_session: trusted only with its stamp, in a private
        folder); a cache that cannot be used falls back to the model itself."""
        ort = onnxruntime()

        def options(level=None, save_to: Path | None = None):
            o = ort.SessionOptions()
            o.intra_op_num_threads = threads
            o.inter_op_num_threads = 1
            o.log_severity_level = 3
            if level is not None:
                o.graph_optimization_level = level
            if save_to is not None:
                o.optimized_model_filepath = str(save_to)
            return o

        if optimized is not None:
            session = cached_session(self._model_path, optimized, self._sha256, options)
            if session is not None:
                return session
        providers = ["CPUExecutionProvider"]
        try:
            return ort.InferenceSession(str(self._model_path), options(), providers)
        except Exception as exc:
            raise EmbeddingModelError(
                f"the embedding model {self._model_path} cannot be loaded "
                f"({type(exc).__name__}); the file is damaged or not an ONNX model: reinstall "
                "it or fix [embedding] model_path"
            ) from exc

    @property
    def session(self):
        """The session for batches of passages (every core; the query session on one core)."""
        if self._passage_session is None:
            with self._lock:
                if self._passage_session is None:
                    threads = self.session_threads()
                    self._passage_session = (
                        self._query_session if threads == 1 else self._session(threads)
                    )
        return self._passage_session

    def embed_query(self, text: str) -> np.ndarray:
        """One query, on the single-threaded session (see __init__)."""
        return self._run([self.config.query_prefix + text], self._query_session)[0]

    def later_windows(self, passage: str, header: str) -> list[str]:
        """The windows of a passage past the tokens this model reads of it (passage.py's
        `later_windows`), at most `[embedding] windows`."""
        most = self.config.windows
        if most <= 0:
            return []
        whole = self._whole_tokenizer()
        cap = (most + 1) * self.config.max_length * _CHARS_PER_TOKEN_CAP
        offsets = whole.encode(passage[:cap], add_special_tokens=False).offsets
        header_width = len(whole.encode(header, add_special_tokens=False).ids)
        width = self.config.max_length - 2  # [CLS] and [SEP]
        return later_windows(passage, header, offsets, width, header_width, most)

    def _whole_tokenizer(self):
        """The tokenizer, not truncated: where each token of a long passage sits."""
        with self._lock:
            if self._untruncated is None:
                from tokenizers import Tokenizer

                whole = Tokenizer.from_str(self.tokenizer.to_str())
                whole.no_truncation()
                whole.no_padding()
                self._untruncated = whole
            return self._untruncated

    def session_threads(self) -> int:
        return self.config.threads or (os.cpu_count() or 1)

    def embed_passages(self, texts: list[str]) -> np.ndarray:
        """One normalised float32 row per text (the caller batches and sorts by length)."""
        if not texts:
            return np.zeros((0, self.config.dims), dtype=np.float32)
        return self._run([self.config.passage_prefix + t for t in texts])

    def _run(self, texts: list[str], session=None) -> np.ndarray:
        cap = self.config.max_length * _CHARS_PER_TOKEN_CAP
        encodings = self.tokenizer.encode_batch([t[:cap] for t in texts])
        ids = np.array([e.ids for e in encodings], dtype=np.int64)
        mask = np.array([e.attention_mask for e in encodings], dtype=np.int64)
        feeds = {"input_ids": ids, "attention_mask": mask}
        if "token_type_ids" in self.input_names:
            feeds["token_type_ids"] = np.zeros_like(ids)
        feeds = {k: v for k, v in feeds.items() if k in self.input_names}
        if session is self._query_session:
            hidden = session.run(None, feeds)[0]  # a run is thread-safe
        else:
            session = self.session
            with self._lock:  # one batch at a time; ORT parallelises inside the run
                hidden = session.run(None, feeds)[0]
        if self.config.pooling == "cls":
            pooled = hidden[:, 0, :]
        else:
            weights = mask[:, :, None].astype(np.float32)
            pooled = (hidden * weights).sum(axis=1) / np.maximum(weights.sum(axis=1), 1e-9)
        norms = np.linalg.norm(pooled, axis=1, keepdims=True)
        return (pooled / np.maximum(norms, 1e-12)).astype(np.float32)


_HASHES: dict[tuple[str, int, int, int, int], str] = {}


def _optimized_path(model_path: Path, sha: str) -> Path:
    """Where the query session's optimised graph is cached: per model file and ORT version."""
    ort = onnxruntime()

    name = f"{model_path.stem}-{sha[:16]}-ort{ort.__version__}.onnx"
    return models_dir() / "embedding" / name


def file_sha256(path: Path) -> str:
    """sha256 of a model file, remembered per (path, size, mtime, ctime, inode) across runs.

    Hashing 23 MB takes tens of milliseconds: too much for every search, so the digest is
    cached in memory and in $REPOCONTEXT_HOME/model-hashes.json. The digest says which model
    made the vectors: a file changed in place with its size and mtime put back (os.utime) has
    another ctime, one put in its place another inode, and either is hashed again.
    """
    st = path.stat()
    key = (str(path.resolve()), st.st_size, st.st_mtime_ns, st.st_ctime_ns, st.st_ino)
    if key in _HASHES:
        return _HASHES[key]
    cache_file = repocontext_home() / "model-hashes.json"
    disk_key = "|".join(map(str, key))
    try:
        st_cache = cache_file.stat()
        # it decides which model made the vectors: trusted only when no one else can write it
        trusted = st_cache.st_uid == os.getuid() and not st_cache.st_mode & 0o022
        cache = json.loads(cache_file.read_text()) if trusted else {}
    except (OSError, ValueError):
        cache = {}
    digest = cache.get(disk_key)
    if digest is None:
        h = hashlib.sha256()
        with open(path, "rb") as fh:
            for block in iter(lambda: fh.read(1 << 20), b""):
                h.update(block)
        digest = h.hexdigest()
        cache[disk_key] = digest
        try:
            cache_file.parent.mkdir(parents=True, exist_ok=True)
            tmp = cache_file.with_suffix(f".tmp{os.getpid()}")
            fd = os.open(tmp, os.O_CREAT | os.O_WRONLY | os.O_TRUNC, 0o600)
            with os.fdopen(fd, "w") as fh:
                os.fchmod(fd, 0o600)  # private whatever the umask, as the index is
                fh.write(json.dumps(cache))
            os.replace(tmp, cache_file)
        except OSError:
            pass  # a read-only home only costs the hash again next time
    _HASHES[key] = digest
    return digest


_MODELS: dict[EmbeddingConfig, EmbeddingModel] = {}
_MODELS_LOCK = threading.Lock()


def load_model(config: EmbeddingConfig) -> EmbeddingModel:
    """The model for `config`, loaded once per process: the local ONNX model, or the server of
    `server_url` (remote.py), which answers to the same calls."""
    with _MODELS_LOCK:
        model = _MODELS.get(config)
        if model is None:
            model = _MODELS[config] = _new_model(config)
        return model


def _new_model(config: EmbeddingConfig) -> EmbeddingModel:
    if config.server_url:
        from .remote import RemoteEmbeddingModel

        # a stand-in that answers to the same calls, not a subclass
        return RemoteEmbeddingModel(config)  # type: ignore[return-value]
    return EmbeddingModel(config)
