"""What steering the decoder costs per keystroke: CPU and latency with each source on and off.

    python bench/steering_cost.py [--keystrokes 100] [--rounds 2] [--out ...]

Real lines of requests 2.32.3 (bench/latency.py's typing sessions, seeded) typed character by
character into the product's CompletionEngine (mode parallel, the index built, the default
config but the steering), the engine asked after each key, as the editor asks. Rows: every
source on, none, and each of members, lines, scope, calls and copy off alone (the others on). The rows take turns
line by line (the order rotated each line, `--rounds` passes over the lines), so that the
machine's drift falls on every row alike; each row keeps its own suggestion cache, and the
KV cache is the one model's (a row's first key on a line finds the line as the row before
left it, as every row does in turn). Per key: CPU seconds of the whole process (the context
thread and llama.cpp's threads included), engine time to the first token and to the whole
suggestion, tokens generated. Medians and p95 over the keys a model answered (cache hits left
out), and the ratio of each row's CPU per key to the none row's.
"""

from __future__ import annotations

import argparse
import os
import platform
import random
import sys
import time
from dataclasses import replace
from pathlib import Path

HERE = Path(__file__).resolve().parent
REPO = HERE.parent
sys.path.insert(0, str(REPO / "src"))
sys.path.insert(0, str(HERE))

from latency import typing_sessions  # noqa: E402
from requests_seed import fetch_corpus  # noqa: E402
from stats import percentile as pct  # noqa: E402

from repocontext.complete.cache import SuggestionCache  # noqa: E402
from repocontext.config import GenerationConfig  # noqa: E402
from repocontext.context.request import CursorRequest  # noqa: E402
from repocontext.service import Repository  # noqa: E402

SOURCE_OPTIONS = {"members": "member_bias", "lines": "line_bias", "scope": "scope_bias",
                  "calls": "call_bias", "copy": "copy_bias"}  # fmt: skip
ALL_ON = {option: True for option in SOURCE_OPTIONS.values()}
ROWS = {
    "all on": ALL_ON,
    "none": {option: False for option in SOURCE_OPTIONS.values()},
    **{f"no {name}": {**ALL_ON, option: False} for name, option in SOURCE_OPTIONS.items()},
}


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--keystrokes", type=int, default=100)
    ap.add_argument("--rounds", type=int, default=2)
    ap.add_argument("--out", default=str(HERE / "results/steering_cost.md"))
    args = ap.parse_args()
    os.environ["REPOCONTEXT_HOME"] = str(REPO / ".bench-cache" / "home-steering-cost")
    corpus = fetch_corpus("requests==2.32.3", "2.32.3")
    repo = Repository(corpus)
    repo.index()
    engine = repo.completion_engine()
    engine.backend.vocabulary(wait=True)
    sessions = typing_sessions(corpus, random.Random(7), args.keystrokes)
    caches = {row: SuggestionCache() for row in ROWS}
    keys: dict[str, list[dict]] = {row: [] for row in ROWS}
    names = list(ROWS)
    turn = 0
    for _ in range(args.rounds):
        for path, line, full in sessions:
            lines = (corpus / path).read_text().split("\n")
            indent = len(full) - len(full.lstrip())
            order = names[turn % len(names) :] + names[: turn % len(names)]
            turn += 1
            for row in order:
                engine.config = replace(GenerationConfig(), **ROWS[row])
                engine.cache = caches[row]
                engine.last_context.clear()
                for k in range(indent + 1, len(full) + 1):
                    typed = full[:k]
                    buf = "\n".join(lines[: line - 1] + [typed] + lines[line:])
                    cpu0 = time.process_time()
                    s = engine.complete(CursorRequest(path, line, len(typed.encode()), buf))
                    while engine.busy():  # the context build of this key, on its thread
                        time.sleep(0.001)
                    if s.source != "model":
                        continue
                    keys[row].append({
                        "cpu": time.process_time() - cpu0,
                        "first": s.timings_ms["first_token"] or s.timings_ms["total"],
                        "total": s.timings_ms["total"],
                        "generated": s.tokens_generated,
                    })  # fmt: skip
        print(f"round done: {sum(len(v) for v in keys.values())} keys", file=sys.stderr)
    engine.close()
    text = render(keys, args)
    Path(args.out).write_text(text)
    print(text)
    return 0


def render(keys: dict[str, list[dict]], args) -> str:
    command = ("python bench/steering_cost.py " + " ".join(sys.argv[1:])).strip()
    base = keys["none"]
    base_cpu = pct([k["cpu"] for k in base], 50) if base else float("nan")
    out = [
        "# What steering the decoder costs per keystroke (requests, typed key by key)",
        "",
        f"Command: `{command}`  ",
        f"Machine: {platform.system()} {platform.machine()}, {os.cpu_count()} cores, Python "
        f"{platform.python_version()}, {time.strftime('%Y-%m-%d %H:%M UTC', time.gmtime())}; "
        f"load average at the end {os.getloadavg()[0]:.2f}  ",
        "Method: the docstring of bench/steering_cost.py. Keys a model answered (cache hits "
        "left out).",
        "",
        "| row | keys | CPU ms per key, p50 / p95 | CPU p50 against none | first token ms, "
        "p50 / p95 | whole suggestion ms, p50 / p95 | tokens generated, mean |",
        "|---|---|---|---|---|---|---|",
    ]
    for row, ks in keys.items():
        if not ks:
            continue
        cpu = [k["cpu"] * 1000 for k in ks]
        first = [k["first"] for k in ks]
        total = [k["total"] for k in ks]
        gen = sum(k["generated"] for k in ks) / len(ks)
        out.append(
            f"| {row} | {len(ks)} | {pct(cpu, 50):.0f} / {pct(cpu, 95):.0f} | "
            f"{pct(cpu, 50) / (base_cpu * 1000):.2f}x | {pct(first, 50):.0f} / "
            f"{pct(first, 95):.0f} | {pct(total, 50):.0f} / {pct(total, 95):.0f} | {gen:.1f} |"
        )
    return "\n".join(out) + "\n"


if __name__ == "__main__":
    sys.exit(main())
