"""What a context block that comes in before the cached window costs (issue 20).

    python bench/kv_move.py [--places 6] [--out bench/results/latency.md]

At `places` places in src/repocontext/runtime/session.py: the 45-line window is evaluated, then a
6-line context block from src/repocontext/service.py is put before it (what late context
does to the prompt), and the prompt is answered twice, alternating: from that cache, where
complete/backends/llamacpp/ moves the cached window behind the new block (`reuse_plan`, `park`), and
from an empty cache. Reports tokens evaluated, seconds (8 tokens generated in each), and
whether the 8 tokens are the same (a moved run keeps what it computed while attending to the
text it followed before). Writes its section at the end of latency.md, replacing an older one.
"""

from __future__ import annotations

import argparse
import os
import platform
import statistics
import sys
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
REPO = HERE.parent
sys.path.insert(0, str(REPO / "src"))

from repocontext.complete.backends import Control  # noqa: E402
from repocontext.complete.backends.llamacpp import LlamaCppBackend  # noqa: E402
from repocontext.complete.models import default_model_path  # noqa: E402

TITLE = "## A context block before the cached window (bench/kv_move.py)"


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--places", type=int, default=6)
    ap.add_argument("--out", default=str(HERE / "results" / "latency.md"))
    args = ap.parse_args()
    backend = LlamaCppBackend(str(default_model_path()), n_ctx=4096)
    window_src = (REPO / "src/repocontext/runtime/session.py").read_text().split("\n")
    context_src = (REPO / "src/repocontext/service.py").read_text().split("\n")
    rows, moved_s, fresh_s, same = [], [], [], 0
    for k in range(args.places):
        window = "\n".join(window_src[60 + k * 40 : 105 + k * 40])
        block = "# service.py\n" + "\n".join(context_src[100 + k * 20 : 106 + k * 20]) + "\n"
        backend.reset()
        backend.generate(window, Control(max_tokens=0))
        t0 = time.perf_counter()
        moved = backend.generate(block + window, Control(max_tokens=8))
        moved_s.append(time.perf_counter() - t0)
        backend.reset()
        t0 = time.perf_counter()
        fresh = backend.generate(block + window, Control(max_tokens=8))
        fresh_s.append(time.perf_counter() - t0)
        same += moved.text == fresh.text
        rows.append(
            f"| {k + 1} | {moved.tokens_evaluated} | {moved.tokens_reused} | "
            f"{fresh.tokens_evaluated} | {moved_s[-1]:.2f} | {fresh_s[-1]:.2f} | "
            f"{'yes' if moved.text == fresh.text else 'no'} |"
        )
    section = "\n".join(
        [
            TITLE,
            "",
            f"`python bench/kv_move.py --places {args.places}` on {platform.machine()}, "
            f"{os.cpu_count()} CPUs, gemma-3-270m Q4_K_M, {time.strftime('%Y-%m-%d')}.",
            "",
            "| place | evaluated (moved) | reused | evaluated (empty cache) | s (moved) "
            "| s (empty cache) | same 8 tokens |",
            "|---|---|---|---|---|---|---|",
            *rows,
            "",
            f"Median {statistics.median(moved_s):.2f} s with the window moved against "
            f"{statistics.median(fresh_s):.2f} s from an empty cache "
            f"({statistics.median(moved_s) / statistics.median(fresh_s):.2f}x); the same 8 "
            f"tokens at {same} of {args.places} places.",
            "",
        ]
    )
    out = Path(args.out)
    text = out.read_text() if out.exists() else ""
    if TITLE in text:
        text = text[: text.index(TITLE)].rstrip() + "\n"
    out.write_text(text.rstrip() + "\n\n" + section)
    print(section)


if __name__ == "__main__":
    main()
