"""Embedding throughput: the local ONNX model against a real llama-server with `--embedding`,
on the same chunks, in one run.

    python bench/remote_embed.py --server PATH/TO/llama-server [--chunks 256]
        [--out bench/results/remote_embedding.md]

The chunks are the passages `repocontext index` would embed for the requests 2.32.3 sdist
(source first, as the indexer orders them). The server runs gemma-3-270m (the generation
model, the only GGUF installed with repocontext) with mean pooling, on this machine's two
cores and bound to 127.0.0.1: a team's server would run a real embedding model on its own
hardware, so the figure here is the cost of the protocol and of a 270M model, not a forecast.
Both are asked in batches of 32.
"""

from __future__ import annotations

import argparse
import os
import platform
import sys
import time
from dataclasses import replace
from pathlib import Path

HERE = Path(__file__).resolve().parent
REPO = HERE.parent
sys.path.insert(0, str(REPO / "src"))
sys.path.insert(0, str(HERE))

from llama_server import llama_server  # noqa: E402
from search_sets import fetch_sdist  # noqa: E402

from repocontext.complete.cpu import Machine  # noqa: E402
from repocontext.complete.models import default_model_path  # noqa: E402
from repocontext.config import EmbeddingConfig  # noqa: E402
from repocontext.embed.model import EmbeddingModel  # noqa: E402
from repocontext.embed.passage import passage_text  # noqa: E402
from repocontext.embed.remote import RemoteEmbeddingModel  # noqa: E402
from repocontext.service import Repository  # noqa: E402


def passages(n: int) -> list[str]:
    root = fetch_sdist("requests==2.32.3")
    home = REPO / ".bench-cache" / "home-requests"
    home.mkdir(parents=True, exist_ok=True)
    os.environ["REPOCONTEXT_HOME"] = str(home)
    repo = Repository(root)
    repo.index()
    with repo.open_store() as store:
        rows = store.db.execute(
            "SELECT f.path, c.qualname, c.kind, c.signature, c.doc, c.text FROM chunks c "
            "JOIN files f ON f.id = c.file_id ORDER BY f.role = 'source' DESC, f.path, "
            "c.start_line LIMIT ?",
            (n,),
        ).fetchall()
    return [passage_text(*r) for r in rows]


def rate(model, texts: list[str], batch: int = 32) -> tuple[float, float]:
    """(chunks per second, seconds) for embedding `texts` in batches."""
    model.embed_passages(texts[:batch])  # warm up
    t0 = time.perf_counter()
    for i in range(0, len(texts), batch):
        model.embed_passages(texts[i : i + batch])
    seconds = time.perf_counter() - t0
    return len(texts) / seconds, seconds


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--server", required=True, help="a llama-server binary")
    ap.add_argument("--chunks", type=int, default=256)
    ap.add_argument("--out", default=str(HERE / "results/remote_embedding.md"))
    args = ap.parse_args()
    texts = passages(args.chunks)
    local = EmbeddingModel(EmbeddingConfig().resolved())
    extra = ["--embedding", "--pooling", "mean", *Machine.current().extra_buffers().server_args()]
    with llama_server(args.server, default_model_path(), os.cpu_count() or 1, extra) as port:
        remote = RemoteEmbeddingModel(
            replace(EmbeddingConfig(), name="gemma-270m-mean", dims=640,
                    server_url=f"http://127.0.0.1:{port}")
        )  # fmt: skip
        rows = [("local ONNX, all-MiniLM-L6-v2 int8 (384 dims, 128 tokens)", *rate(local, texts)),
                ("llama-server --embedding, gemma-3-270m Q4_K_M mean-pooled (640 dims)",
                 *rate(remote, texts))]  # fmt: skip
    lines = [
        "# Embedding throughput: the local model against an OpenAI-compatible server",
        "",
        f"Command: `python bench/remote_embed.py --server llama-server --chunks {args.chunks}`  ",
        f"Machine: {platform.machine()}, {os.cpu_count()} cores, Python "
        f"{platform.python_version()}, {time.strftime('%Y-%m-%d %H:%M')}; the server on the "
        "same two cores, on 127.0.0.1  ",
        f"{len(texts)} passages of requests 2.32.3 (what `index` embeds), batches of 32.",
        "",
        "| embedder | chunks/s | seconds |",
        "|---|---|---|",
        *[f"| {name} | {r:.1f} | {s:.1f} |" for name, r, s in rows],
        "",
        f"Ratio server / local: {rows[1][1] / rows[0][1]:.2f}. The server here is a 270M "
        "generative model on the laptop's own cores, with each passage cut at "
        f"{EmbeddingConfig().max_length * 8} characters as for the local model: a team's server "
        "runs an embedding model on its own hardware, and the laptop's cores stay free.",
        "",
    ]
    Path(args.out).write_text("\n".join(lines))
    print("\n".join(lines))
    return 0


if __name__ == "__main__":
    sys.exit(main())
