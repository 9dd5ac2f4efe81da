"""What a generation model costs on this machine, as `repocontext models --measure` reports it,
repeated for medians: the figures behind `:help repocontext-models`.

    python bench/models.py [--runs 5] [--model GGUF ...] [--out bench/results/models.md]

Each run loads the model as the editor does (complete/catalog.py:measure), evaluates a typical
prompt (this package's complete/engine.py around a cursor, prefix_lines before it and
suffix_lines after it, in the model's layout) and times: the load, the first token at a new
place (the whole prompt evaluated), the first token after one more key (the KV cache kept) and
the time per generated token. Without --model: the default model. Runs alternate between the
models given, so that a drift of the shared machine falls on each alike.
"""

from __future__ import annotations

import argparse
import os
import platform
import sys
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
REPO = HERE.parent
sys.path.insert(0, str(REPO / "src"))
sys.path.insert(0, str(HERE))

from stats import percentile  # noqa: E402

from repocontext.complete.catalog import describe, measure  # noqa: E402
from repocontext.complete.models import default_model_path  # noqa: E402
from repocontext.config import GenerationConfig  # noqa: E402

KEYS = (
    "load_s",
    "prompt_tokens",
    "new_place_first_token_ms",
    "next_key_first_token_ms",
    "ms_per_token",
)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--runs", type=int, default=5)
    ap.add_argument("--model", action="append", default=[], help="a GGUF (default: the default)")
    ap.add_argument("--out", default=str(HERE / "results" / "models.md"))
    args = ap.parse_args()
    paths = [Path(p) for p in args.model] or [default_model_path()]
    config = GenerationConfig()
    runs: dict[Path, list[dict[str, float]]] = {p: [] for p in paths}
    started = time.strftime("%Y-%m-%d %H:%M UTC", time.gmtime())
    for i in range(args.runs):
        for path in paths:
            runs[path].append(measure(path, config))
            print(f"run {i + 1}/{args.runs} {path.name}: {runs[path][-1]}", flush=True)
    lines = [
        "# What a generation model costs here (`repocontext models --measure`)",
        "",
        f"`python bench/models.py --runs {args.runs}` on {platform.machine()}, "
        f"{os.cpu_count()} cores, Python {platform.python_version()}, {started}; the "
        "machine is shared, so these are medians (and the spread, min-max) of "
        f"{args.runs} runs, each loading the model again. Settings: the defaults "
        f"(n_ctx {config.n_ctx}, prefix_lines {config.prefix_lines}, suffix_lines "
        f"{config.suffix_lines}, max_tokens {config.max_tokens}).",
        "",
        "| model | size | layout | load s | prompt tokens | first token at a new place, ms "
        "| first token after one more key, ms | ms a token |",
        "|---|---|---|---|---|---|---|---|",
    ]
    for path, results in runs.items():
        entry = describe(path.name, "bench", path)
        cells = []
        for key in KEYS:
            values = sorted(r[key] for r in results)
            median = percentile(values, 50)
            cells.append(
                f"{median:.0f}"
                if key == "prompt_tokens"
                else f"{median:.2f} ({values[0]:.2f}-{values[-1]:.2f})"
                if key == "load_s"
                else f"{median:.0f} ({values[0]:.0f}-{values[-1]:.0f})"
            )
        layout = f"{entry.layout} (FIM)" if entry.fim else f"{entry.layout} (no FIM)"
        size = f"{entry.size_bytes / 2**20:.0f} MB"
        lines.append(f"| {path.name} | {size} | {layout} | " + " | ".join(cells) + " |")
    lines += [
        "",
        "The first token at a new place is what the first key there costs without a warming"
        " (the editor warms the place when you arrive, so a key usually pays the second"
        " column); larger models scale with the weights read per token, about the file"
        " size (`:help repocontext-models`).",
    ]
    Path(args.out).write_text("\n".join(lines) + "\n", encoding="utf-8")
    print("\n".join(lines))


if __name__ == "__main__":
    main()
