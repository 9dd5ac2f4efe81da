"""How much the repository's lines can add to the model's first line, and how much of it the
line source (`[generation] line_bias`) already takes: a ceiling for issue 48 on bench/savings.py's
own lines, with no editor and no deadline.

    python bench/line_ceiling.py [--repos python,typescript,go] [--lines 40] [--seed 17]
        [--out bench/results/line_ceiling.md] [--dump PATH]

The lines are bench/savings.py's plan (the same seed, the same 40 real lines a repository of
rich, prosemirror-view and cobra, indexed and embedded as there). Each line is typed to the
prefixes 2, 4, 7, 10, 14, 19 and 25 characters (of the stripped line; the rest of the file as it
is) and the product's CompletionEngine is asked in sequence (no deadline, at most 32 tokens,
the suggestion cache emptied), twice: with the line source off and as shipped. At each prefix
the engine's own look-up (`_line_candidates`) gives the most written line of the other files
and its likelihood (`line_odds`).

Saved, as bench/savings.py's line typist counts it but at those prefixes only: a line is
taken at the first prefix whose first line is exactly the rest (`len(rest) - 1` keys saved),
over the lines' characters. Columns: the model with the line source off; the shipped engine;
the most written line alone where its likelihood is at least LINE_SURE; that line where so
and the model elsewhere (a hard override at the shipped threshold); a perfect chooser
between the model (line source off) and that line, at each prefix (the most any way of
following the line could take); the same chooser with every candidate line (any of the lines
that begin so, not only the most written one). `--dump` keeps every prefix's reads (JSON).
"""

from __future__ import annotations

import argparse
import json
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

from quality import fetch, source_files  # noqa: E402
from savings import CORPORA, HOME, line_plan  # noqa: E402

PREFIXES = (2, 4, 7, 10, 14, 19, 25)
COLUMNS = ("model", "shipped", "line", "override", "chooser", "any line")


def ask(engine, path: str, number: int, lines: list[str], typed: str, line_bias: bool) -> str:
    """The engine's first line at `typed`, the cursor at its end."""
    from repocontext.complete.cache import SuggestionCache
    from repocontext.context.request import CursorRequest

    engine.config = replace(engine.config, line_bias=line_bias)
    engine.cache = SuggestionCache()
    engine.last_context.clear()
    buffer = "\n".join(lines[: number - 1] + [typed] + lines[number:])
    request = CursorRequest(path, number, len(typed.encode()), buffer)
    return engine.complete(request, mode="sequential").suggestion.split("\n")[0].rstrip()


def read_line(engine, place: dict, lines: list[str]) -> list[dict]:
    """At each prefix of one planned line: the truth, both first lines, the top line and its
    likelihood, and whether any candidate is the line."""
    from repocontext.complete.steering import line_odds

    full = place["text"]
    indent = len(full) - len(full.lstrip())
    stripped = full.strip()
    out = []
    for k in PREFIXES:
        if k >= len(stripped):
            break
        typed = full[: indent + k]
        row = {
            "truth": stripped[k:],
            "model": ask(engine, place["path"], place["line"], lines, typed, False),
            "shipped": ask(engine, place["path"], place["line"], lines, typed, True),
        }
        if engine.repository_lines is None and engine.context is not None:
            engine.repository_lines = engine.context.repository_lines()
        found = engine._line_candidates(place["path"], typed)
        texts = [(text, count) for text, count in found if text]
        if texts:
            top, count = max(texts, key=lambda tc: (tc[1], -len(tc[0])))
            row["line"] = top[k:]
            row["odds"] = line_odds(count, count / sum(c for _, c in found), k)
            row["any"] = any(text == stripped for text, _ in texts)
        out.append(row)
    return out


def saved(rows: list[dict], column: str) -> int:
    """Keys the line typist saves on one line: accept-line at the first right prefix."""
    from repocontext.complete.steering.lines import LINE_SURE

    for row in rows:
        line_right = row.get("line") == row["truth"] and row.get("odds", 0) >= LINE_SURE
        right_model = row["model"] == row["truth"]
        right = {
            "model": right_model,
            "shipped": row["shipped"] == row["truth"],
            "line": line_right,
            "override": line_right if row.get("odds", 0) >= LINE_SURE else right_model,
            "chooser": right_model or line_right,
            "any line": right_model or row.get("any", False),
        }[column]
        if right and row["truth"]:
            return len(row["truth"]) - 1
    return 0


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--repos", default="python,typescript,go")
    ap.add_argument("--lines", type=int, default=40)
    ap.add_argument("--seed", type=int, default=17)
    ap.add_argument("--out", default=str(HERE / "results/line_ceiling.md"))
    ap.add_argument("--dump", help="a JSON file for every prefix's reads")
    args = ap.parse_args()
    os.environ["REPOCONTEXT_HOME"] = str(HOME)
    from repocontext.service import Repository

    started = time.strftime("%Y-%m-%d %H:%M UTC", time.gmtime())
    t0 = time.perf_counter()
    table, totals = [], {c: 0 for c in ("chars", *COLUMNS)}
    reads: dict[str, list] = {}
    for name in args.repos.split(","):
        corpus = CORPORA[name]
        root = fetch(corpus)
        repo = Repository(root)
        repo.index()
        repo.embed()
        engine = repo.completion_engine()
        engine.config = replace(engine.config, hard_deadline_ms=10**6, max_tokens=32)
        plan = line_plan(root, source_files(root, corpus), corpus.language,
                         random.Random(f"{args.seed}-{name}"), args.lines)  # fmt: skip
        counts = {c: 0 for c in ("chars", *COLUMNS)}
        for place in plan:
            lines = (root / place["path"]).read_text(errors="replace").split("\n")
            rows = read_line(engine, place, lines)
            reads.setdefault(name, []).append({**place, "reads": rows})
            counts["chars"] += len(place["text"].strip())
            for column in COLUMNS:
                counts[column] += saved(rows, column)
        engine.close()
        print(f"{corpus.name}: {counts}", file=sys.stderr, flush=True)
        table.append((corpus.name, counts))
        for key, value in counts.items():
            totals[key] += value
    table.append(("all", totals))
    if args.dump:
        Path(args.dump).write_text(json.dumps(reads))

    def cells(counts: dict) -> str:
        return " | ".join(f"{counts[c] / counts['chars']:.1%}" for c in COLUMNS)

    text = [
        "# What the repository's lines can add to the first line (issue 48's ceiling)",
        "",
        f"Command: `python bench/line_ceiling.py --repos {args.repos} --lines {args.lines} "
        f"--seed {args.seed}`  ",
        f"Machine: {platform.system()} {platform.machine()}, {os.cpu_count()} cores, Python "
        f"{platform.python_version()}, {started}, {(time.perf_counter() - t0) / 60:.0f} min  ",
        "Method: the docstring of bench/line_ceiling.py (bench/savings.py's lines, the engine "
        "in sequence at 7 prefixes a line, saved as its line typist counts).",
        "",
        "| repository | characters | model (line source off) | shipped | the line alone | "
        "the line where sure, else the model | model or the line (a perfect chooser) | "
        "model or any candidate line |",
        "|---|---|---|---|---|---|---|---|",
    ]
    text += [f"| {label} | {counts['chars']} | {cells(counts)} |" for label, counts in table]
    Path(args.out).write_text("\n".join(text) + "\n")
    print("\n".join(text))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
