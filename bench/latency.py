"""Completion latency with the default model (gemma-3-270m Q4_K_M) on this machine, in one run.

    python bench/latency.py [--tasks N] [--server PATH/TO/llama-server] [--out ...]

1. Cross-file tasks (bench/xfile.py's set A on requests), three rows: (a) local only, (b)
   retrieve then generate, (c) generate at once and inject context when ready. p50/p95 of time
   to first token and to a complete suggestion, tokens evaluated per request, llama.cpp's own
   share of the time, and first-line exact match / edit similarity (difflib ratio) against the
   real code.
2. Typing sessions: real lines of requests typed character by character (100 keystrokes), the
   engine asked after each one: tokens re-evaluated per keystroke, the share served without a
   new generation (typing through a shown suggestion), keystroke to first visible token and to
   a complete suggestion.
3. The peer a user would pick instead, in the same run when `--server` names a llama-server
   binary: the same model behind llama-server with --cache-reuse 256 and cache_prompt, asked for
   a 16-token continuation after each keystroke of the same sessions.
"""

from __future__ import annotations

import argparse
import difflib
import json
import os
import platform
import random
import sys
import time
import urllib.request
from pathlib import Path

HERE = Path(__file__).resolve().parent
REPO = HERE.parent
sys.path.insert(0, str(REPO / "src"))
sys.path.insert(0, str(HERE))

from llama_server import llama_server  # noqa: E402
from requests_seed import fetch_corpus  # noqa: E402
from stats import percentile as pct  # noqa: E402
from xfile import build_tasks  # noqa: E402

from repocontext.complete.cpu import Machine  # noqa: E402
from repocontext.context.request import CursorRequest  # noqa: E402
from repocontext.service import Repository  # noqa: E402

SESSION_FILES = [
    ("src/requests/sessions.py", 6),
    ("src/requests/utils.py", 6),
    ("src/requests/models.py", 6),
]


def first_line(text: str) -> str:
    return text.split("\n", 1)[0].strip()


def run_tasks(engine, tasks, corpus: Path, modes=("local", "sequential", "parallel")) -> dict:
    rows = {}
    for mode in modes:
        engine.cache = type(engine.cache)()  # no type-through between rows
        engine.last_context.clear()
        res = []
        for t in tasks:
            truth = (corpus / t.path).read_text().split("\n")[t.line - 1]
            truth_rest = truth.encode()[t.col :].decode("utf-8", "ignore")
            s = engine.complete(CursorRequest(t.path, t.line, t.col, t.text), mode=mode)
            guess = first_line(s.suggestion)
            res.append(
                {
                    "first": s.timings_ms["first_token"],
                    "total": s.timings_ms["total"],
                    "llama": s.timings_ms.get("llama", 0.0),
                    "evaluated": s.tokens_evaluated,
                    "em": guess == truth_rest.strip(),
                    "es": difflib.SequenceMatcher(None, guess, truth_rest.strip()).ratio(),
                    "injected": s.context_injected,
                }
            )
        rows[mode] = res
    return rows


def run_moves(engine, corpus: Path, path: str = "src/requests/sessions.py") -> dict:
    """Moving down a file: at every 12th line from 60 to 420, the first 6 characters of the
    real line typed; the prompt's window slides by 16 lines now and then, which is where
    moving cached runs (instead of evaluating them again) pays."""
    engine.cache = type(engine.cache)()
    engine.last_context.clear()
    engine.backend.reset()
    lines = (corpus / path).read_text().split("\n")
    evaluated, first_key, em, n = [], [], 0, 0
    for line in range(60, min(len(lines), 420), 12):
        full = lines[line - 1]
        indent = len(full) - len(full.lstrip())
        if len(full.strip()) < 8:
            continue
        n += 1
        for k in range(indent + 1, indent + 7):
            typed = full[:k]
            buf = "\n".join(lines[: line - 1] + [typed] + lines[line:])
            s = engine.complete(CursorRequest(path, line, len(typed.encode()), buf))
            evaluated.append(s.tokens_evaluated)
            if k == indent + 1:
                first_key.append(s.tokens_evaluated)
        em += first_line(s.suggestion) == full[indent + 6 :].strip()
    return {"evaluated": evaluated, "first_key": first_key, "em": em, "places": n}


def typing_sessions(corpus: Path, rng: random.Random, keystrokes: int = 100):
    """(path, line, full line text) of real lines to type, about `keystrokes` characters."""
    out, total = [], 0
    for path, count in SESSION_FILES:
        lines = (corpus / path).read_text().split("\n")
        candidates = [
            i
            for i, ln in enumerate(lines, 1)
            if 20 <= len(ln.strip()) <= 40 and not ln.strip().startswith(("#", '"'))
        ]
        for i in rng.sample(candidates, count):
            out.append((path, i, lines[i - 1]))
            total += len(lines[i - 1].strip())
            if total >= keystrokes:
                return out
    return out


def run_typing(engine, corpus: Path, sessions) -> dict:
    engine.cache = type(engine.cache)()
    engine.last_context.clear()
    res = []
    for path, line, full in sessions:
        lines = (corpus / path).read_text().split("\n")
        indent = len(full) - len(full.lstrip())
        for k in range(indent + 1, len(full) + 1):
            typed = full[:k]
            buf = "\n".join(lines[: line - 1] + [typed] + lines[line:])
            t0 = time.perf_counter()
            s = engine.complete(CursorRequest(path, line, len(typed.encode()), buf))
            res.append(
                {
                    "first": s.timings_ms["first_token"]
                    if s.source == "model"
                    else (time.perf_counter() - t0) * 1000,
                    "total": (time.perf_counter() - t0) * 1000,
                    "evaluated": s.tokens_evaluated,
                    "cached": s.source == "cache",
                }
            )
    return res


def run_peer(server_bin: str, model: Path, corpus: Path, sessions, threads: int) -> list[dict]:
    extra = ["--cache-reuse", "256", *Machine.current().extra_buffers().server_args()]
    with llama_server(server_bin, model, threads, extra) as port:
        url = f"http://127.0.0.1:{port}"
        res = []
        for path, line, full in sessions:
            lines = (corpus / path).read_text().split("\n")
            start = max(0, line - 1 - 48)
            indent = len(full) - len(full.lstrip())
            for k in range(indent + 1, len(full) + 1):
                prompt = "\n".join(lines[start : line - 1] + [full[:k]])
                body = json.dumps(
                    {
                        "prompt": prompt,
                        "n_predict": 16,
                        "cache_prompt": True,
                        "temperature": 0,
                        "top_k": 1,
                    }
                ).encode()
                t0 = time.perf_counter()
                req = urllib.request.Request(
                    url + "/completion", body, {"Content-Type": "application/json"}
                )
                with urllib.request.urlopen(req, timeout=60) as r:
                    data = json.loads(r.read())
                res.append(
                    {
                        "total": (time.perf_counter() - t0) * 1000,
                        "evaluated": data.get("timings", {}).get("prompt_n", 0),
                    }
                )
        return res


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--tasks", type=int, default=30)
    ap.add_argument("--server", help="a llama-server binary, to measure the peer in this run")
    ap.add_argument("--out", default=str(HERE / "results/latency.md"))
    args = ap.parse_args()
    corpus = fetch_corpus("requests==2.32.3", "2.32.3")
    os.environ["REPOCONTEXT_HOME"] = str(REPO / ".bench-cache" / "home-requests")
    repo = Repository(corpus)
    repo.index()
    repo.embed()
    rng = random.Random(0)
    with repo.open_store() as store:
        tasks = [t for t in build_tasks(corpus, store, args.tasks, rng) if t.kind == "A"]
    engine = repo.completion_engine()
    threads = os.cpu_count() or 1
    model = Path(engine.backend.model_path)
    engine.complete(
        CursorRequest(tasks[0].path, tasks[0].line, tasks[0].col, tasks[0].text), mode="local"
    )  # load and warm up
    rows = run_tasks(engine, tasks, corpus)
    sessions = typing_sessions(corpus, random.Random(1))
    typing = run_typing(engine, corpus, sessions)
    # the same with and without moving cached runs (llama-server's cache reuse, in-process)
    reuse = engine.backend.cache_reuse
    shifting = {}
    for on in (True, False):
        engine.backend.cache_reuse = reuse if on else 0
        shifting[on] = {
            "moves": run_moves(engine, corpus),
            "tasks": run_tasks(engine, tasks, corpus, modes=("parallel",)),
        }
    engine.backend.cache_reuse = reuse
    engine.close()
    peer = run_peer(args.server, model, corpus, sessions, threads) if args.server else None

    out = [
        "# Completion latency (default model, gemma-3-270m Q4_K_M, in-process llama.cpp)",
        "",
        f"Command: `python bench/latency.py {' '.join(sys.argv[1:])}`  ",
        f"Machine: {platform.machine()}, {threads} threads, Python {platform.python_version()}, "
        f"{time.strftime('%Y-%m-%d %H:%M')} (shared: compare rows, not absolute times)",
        "",
        f"## Cross-file tasks ({len(tasks)} call sites of requests, cursor after the callee's name)",
        "",
        "| row | first token p50 / p95 ms | complete p50 / p95 ms | tokens evaluated (mean) "
        "| llama.cpp share of time | context in prompt | first-line exact match | edit "
        "similarity |",
        "|---|---|---|---|---|---|---|---|",
    ]
    labels = {
        "local": "(a) local only",
        "sequential": "(b) retrieve, then generate",
        "parallel": "(c) parallel, inject when ready",
    }
    for mode in ("local", "sequential", "parallel"):
        r = rows[mode]
        share = sum(x["llama"] for x in r) / max(1e-9, sum(x["total"] for x in r))
        out.append(
            f"| {labels[mode]} | {pct([x['first'] for x in r], 50):.0f} / "
            f"{pct([x['first'] for x in r], 95):.0f} | {pct([x['total'] for x in r], 50):.0f} / "
            f"{pct([x['total'] for x in r], 95):.0f} | "
            f"{sum(x['evaluated'] for x in r) / len(r):.0f} | {100 * share:.0f}% | "
            f"{sum(x['injected'] for x in r)}/{len(r)} | "
            f"{sum(x['em'] for x in r)}/{len(r)} | {sum(x['es'] for x in r) / len(r):.2f} |"
        )
    n = len(typing)
    served = sum(x["cached"] for x in typing)
    out += [
        "",
        f"## Typing sessions ({n} keystrokes over {len(sessions)} real lines)",
        "",
        "| | ours | peer: llama-server --cache-reuse 256, 16 tokens |",
        "|---|---|---|",
        f"| tokens re-evaluated per keystroke, mean | "
        f"{sum(x['evaluated'] for x in typing) / n:.1f} | "
        + (f"{sum(x['evaluated'] for x in peer) / len(peer):.1f} |" if peer else "not run |"),
        f"| keystrokes served without a new generation | {served}/{n} | 0 |",
        f"| keystroke to first visible token p50 / p95 ms | {pct([x['first'] for x in typing], 50):.0f}"
        f" / {pct([x['first'] for x in typing], 95):.0f} | (not streamed) |",
        f"| keystroke to complete suggestion p50 / p95 ms | {pct([x['total'] for x in typing], 50):.0f}"
        f" / {pct([x['total'] for x in typing], 95):.0f} | "
        + (
            f"{pct([x['total'] for x in peer], 50):.0f} / {pct([x['total'] for x in peer], 95):.0f} |"
            if peer
            else "not run |"
        ),
        "",
        "## Moving cached runs instead of evaluating them again (`[generation] cache_reuse`)",
        "",
        "Moving down requests' sessions.py (the first 6 characters of every 12th line typed, so "
        "the prompt's window slides), and the cross-file tasks of row (c), with the cache "
        "reuse on (runs of 16 tokens or more moved) and off (the common prefix only).",
        "",
        "| | moved | prefix only |",
        "|---|---|---|",
    ]
    mv_on, mv_off = shifting[True]["moves"], shifting[False]["moves"]
    tk_on, tk_off = shifting[True]["tasks"]["parallel"], shifting[False]["tasks"]["parallel"]
    out += [
        f"| moving down: tokens evaluated per keystroke, mean | "
        f"{sum(mv_on['evaluated']) / len(mv_on['evaluated']):.1f} | "
        f"{sum(mv_off['evaluated']) / len(mv_off['evaluated']):.1f} |",
        f"| moving down: at the first keystroke of a new place, mean | "
        f"{sum(mv_on['first_key']) / len(mv_on['first_key']):.1f} | "
        f"{sum(mv_off['first_key']) / len(mv_off['first_key']):.1f} |",
        f"| moving down: first-line exact match after 6 characters | {mv_on['em']}/"
        f"{mv_on['places']} | {mv_off['em']}/{mv_off['places']} |",
        f"| cross-file tasks (c): tokens evaluated, mean | "
        f"{sum(x['evaluated'] for x in tk_on) / len(tk_on):.0f} | "
        f"{sum(x['evaluated'] for x in tk_off) / len(tk_off):.0f} |",
        f"| cross-file tasks (c): first-line exact match | {sum(x['em'] for x in tk_on)}/"
        f"{len(tk_on)} | {sum(x['em'] for x in tk_off)}/{len(tk_off)} |",
        "",
        "## Goals",
        "",
    ]
    a_first = pct([x["first"] for x in rows["local"]], 50)
    c_first = pct([x["first"] for x in rows["parallel"]], 50)
    first_vis = pct([x["first"] for x in typing], 50)
    total_p50 = pct([x["total"] for x in typing], 50)
    overhead = 1 - sum(x["llama"] for x in rows["parallel"]) / sum(
        x["total"] for x in rows["parallel"]
    )
    out.append(
        f"- (c)'s first token within 10% of (a)'s (p50): {c_first:.0f} vs {a_first:.0f} ms, "
        f"**{'met' if c_first <= 1.1 * a_first else 'not met'}**."
    )
    out.append(
        f"- Keystroke to first visible token p50 <= 60 ms: {first_vis:.0f} ms, "
        f"**{'met' if first_vis <= 60 else 'not met'}**."
    )
    if peer:
        peer_p50 = pct([x["total"] for x in peer], 50)
        out.append(
            f"- Keystroke to complete suggestion p50 <= 0.8x the peer's: {total_p50:.0f} vs "
            f"{peer_p50:.0f} ms ({total_p50 / peer_p50:.2f}x), "
            f"**{'met' if total_p50 <= 0.8 * peer_p50 else 'not met'}**."
        )
    else:
        out.append(
            "- Keystroke to complete suggestion vs the peer: not measured in this run "
            "(no --server)."
        )
    out.append(
        f"- Overhead outside llama.cpp's compute <= 10% (row c): {100 * overhead:.0f}%, "
        f"**{'met' if overhead <= 0.10 else 'not met'}**."
    )
    text = "\n".join(out) + "\n"
    Path(args.out).write_text(text)
    print(text)
    return 0


if __name__ == "__main__":
    sys.exit(main())
