"""How likely a line of the repository is the line being typed: the fit behind `LINE_FIT` and
the threshold `LINE_SURE` of complete/steering/lines.py (LineSource), on dev repositories only
(none of bench/savings.py's rich, prosemirror-view or cobra).

    python bench/line_odds.py [--lines 1500] [--engine-lines 120] [--out bench/results/line_odds.md]

Part 1, the fit (text only, no model): in each dev repository (Python: click 8.4.0, jinja2 3.1.4,
requests 2.32.3, django 5.2.19; Go: gin, logrus, chi; TypeScript: zod, immer, zustand, at the
commits of bench/labelled), `--lines` source lines drawn (seeded; 15-60 characters stripped, not
a comment or a string's start, no test file), each typed character by character from its
second: at each prefix, the stripped lines of the repository's other files that begin with it
and go on (context/lines.py's rule, MAX_SCAN included) are counted, and the most written one is
taken. A logistic regression of "it is the line typed" on log2(its count), its share of the
count of every line that begins so, and min(characters typed, 40) / 10 gives LINE_FIT; the table
shows its calibration.

Part 2, the threshold (the real engine, the default model): `--engine-lines` lines of requests
and of click, typed to the prefixes 2, 4, 7, 10, 14, 19 and 25 characters in the product's
CompletionEngine (sequential, no deadline, `line_bias` off), the index built: at each prefix the
model's first line against the most written line the engine's own look-up gives
(`_line_candidates`). Where they disagree, which one is the line typed, by the fitted
likelihood: the line is worth following from where it is right more often than the model.
"""

from __future__ import annotations

import argparse
import bisect
import collections
import math
import os
import platform
import random
import sys
import time
from dataclasses import replace
from pathlib import Path

import numpy as np

HERE = Path(__file__).resolve().parent
REPO = HERE.parent
sys.path.insert(0, str(REPO / "src"))
sys.path.insert(0, str(HERE))

from search_sets import corpus_root  # noqa: E402

from repocontext.context.lines import MAX_CHARS, MAX_SCAN, MIN_CHARS  # noqa: E402

DEV = [  # (spec, folder of the sources, extension)
    ("click==8.4.0", "src", ".py"),
    ("jinja2==3.1.4", "src", ".py"),
    ("requests==2.32.3", "src", ".py"),
    ("django==5.2.19", "django", ".py"),
    ("github:gin-gonic/gin@75ccf94d605a05fe24817fc2f166f6f2959d5cea", ".", ".go"),
    ("github:sirupsen/logrus@d40e25cd45ed9c6b2b66e6b97573a0413e4c23bd", ".", ".go"),
    ("github:go-chi/chi@9b9fb55def404397748a9fc7e044efe9db1d618e", ".", ".go"),
    ("github:colinhacks/zod@e7a9b9b3033991be6b4225f1be21da39c250bbb0", "src", ".ts"),
    ("github:immerjs/immer@fa671e55ee9bd42ae08cc239102b665a23958237", "src", ".ts"),
    ("github:pmndrs/zustand@5408e012ccd5785b7a0e564b0fbdc8b555ecdb47", "src", ".ts"),
]
ENGINE_DEV = ("requests==2.32.3", "click==8.4.0")
PREFIXES = (2, 4, 7, 10, 14, 19, 25)
SKIP_START = ("#", '"', "'", "@", "/", "*", "`")


def is_test(path: Path) -> bool:
    name = path.name
    return (
        name.startswith("test") or name.endswith("_test.go") or ".test." in name
        or ".spec." in name or "tests" in path.parts or "test" in path.parts
        or "__tests__" in path.parts or name.endswith(".d.ts")
    )  # fmt: skip


def source_files(root: Path, ext: str) -> dict[str, list[str]]:
    out = {}
    for path in sorted(root.rglob(f"*{ext}")):
        if is_test(path.relative_to(root)) or "node_modules" in path.parts or "docs" in path.parts:
            continue
        out[path.relative_to(root).as_posix()] = path.read_text(errors="ignore").split("\n")
    return out


def typed_lines(files: dict[str, list[str]]) -> list[tuple[str, int, str]]:
    return [
        (path, i, line)
        for path, lines in files.items()
        for i, line in enumerate(lines, 1)
        if 15 <= len(line.strip()) <= 60 and not line.strip().startswith(SKIP_START)
    ]


def fit_rows(files: dict[str, list[str]], n: int, rng: random.Random) -> list[tuple]:
    """(log2 count, share, chars / 10, right) at each prefix of `n` lines drawn."""
    where: dict[str, collections.Counter] = collections.defaultdict(collections.Counter)
    for path, lines in files.items():
        for line in lines:
            s = line.strip()
            if MIN_CHARS <= len(s) <= MAX_CHARS:
                where[s][path] += 1
    ordered = sorted(where)
    plan = typed_lines(files)
    rows = []
    for path, _, line in rng.sample(plan, min(n, len(plan))):
        s = line.strip()
        for k in range(2, len(s)):
            prefix = s[:k]
            lo = bisect.bisect_left(ordered, prefix)
            hi = bisect.bisect_left(ordered, prefix + "\U0010ffff", lo)
            if hi - lo > MAX_SCAN:
                continue
            found = []
            for text in ordered[lo:hi]:
                count = sum(c for p, c in where[text].items() if p != path)
                if len(text) > k and count:
                    found.append((count, text))
            if not found:
                continue
            count, text = max(found, key=lambda ct: (ct[0], -len(ct[1])))
            share = count / sum(c for c, _ in found)
            rows.append((math.log2(count), share, min(k, 40) / 10, text == s))
    return rows


def logistic(rows: list[tuple]) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    x = np.array([r[:3] for r in rows], dtype=float)
    y = np.array([r[3] for r in rows], dtype=float)
    a = np.c_[np.ones(len(x)), x]
    w = np.zeros(a.shape[1])
    for _ in range(3000):
        p = 1 / (1 + np.exp(-a @ w))
        w -= a.T @ (p - y) / len(y)
    return w, 1 / (1 + np.exp(-a @ w)), y


def engine_rows(spec: str, n: int, rng: random.Random) -> list[dict]:
    """At each prefix of `n` lines: the model's first line, the line the engine's look-up
    gives, its count and share, and the truth."""
    from repocontext.complete.cache import SuggestionCache
    from repocontext.config import GenerationConfig
    from repocontext.context.request import CursorRequest
    from repocontext.service import Repository

    root = corpus_root(spec)
    os.environ["REPOCONTEXT_HOME"] = str(REPO / ".bench-cache" / "home-line-odds")
    repo = Repository(root)
    repo.index()
    engine = repo.completion_engine()
    engine.config = replace(GenerationConfig(), hard_deadline_ms=10**6, line_bias=False)
    files = source_files(root / "src", ".py")
    out = []
    for path, line, full in rng.sample(typed_lines(files), n):
        path = f"src/{path}"
        lines = (root / path).read_text(errors="ignore").split("\n")
        indent = len(full) - len(full.lstrip())
        s = full.strip()
        engine.cache = SuggestionCache()
        engine.last_context.clear()
        for k in PREFIXES:
            if k >= len(s):
                break
            typed = full[: indent + k]
            buf = "\n".join(lines[: line - 1] + [typed] + lines[line:])
            request = CursorRequest(path, line, len(typed.encode()), buf)
            sug = engine.complete(request, mode="sequential")
            if engine.repository_lines is None and engine.context is not None:
                engine.repository_lines = engine.context.repository_lines()
            found = [(t, c) for t, c in engine._line_candidates(path, typed) if t]
            others = sum(c for t, c in engine._line_candidates(path, typed) if not t)
            row = {"k": k, "model": sug.suggestion.split("\n")[0].rstrip(), "truth": s[k:]}
            if found:
                top, count = max(found, key=lambda tc: (tc[1], -len(tc[0])))
                row.update(line=top[k:], count=count,
                           share=count / (sum(c for _, c in found) + others))  # fmt: skip
            out.append(row)
    engine.close()
    return out


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--lines", type=int, default=1500)
    ap.add_argument("--engine-lines", type=int, default=120)
    ap.add_argument("--out", default=str(HERE / "results/line_odds.md"))
    args = ap.parse_args()
    started = time.strftime("%Y-%m-%d %H:%M UTC", time.gmtime())
    rows: list[tuple] = []
    for spec, folder, ext in DEV:
        rows += fit_rows(
            source_files(corpus_root(spec) / folder, ext), args.lines, random.Random(1)
        )
        print(f"{spec}: {len(rows)} prefixes so far", file=sys.stderr)
    w, p, y = logistic(rows)
    text = [
        "# How likely a line of the repository is the line typed (LineSource's fit and threshold)",
        "",
        f"Command: `python bench/line_odds.py --lines {args.lines} --engine-lines "
        f"{args.engine_lines}`  ",
        f"Machine: {platform.system()} {platform.machine()}, {os.cpu_count()} cores, Python "
        f"{platform.python_version()}, {started}  ",
        "Method: the docstring of bench/line_odds.py. Dev repositories only.",
        "",
        f"## The fit ({len(y)} prefixes; the most written line was the one typed at "
        f"{y.mean():.1%} of them)",
        "",
        "LINE_FIT (bias, per doubling of the count, per unit of share, per 10 characters): "
        f"({w[0]:.3f}, {w[1]:.3f}, {w[2]:.3f}, {w[3]:.3f})",
        "",
        "| predicted | prefixes | the line was the one typed |",
        "|---|---|---|",
    ]
    for lo, hi in ((0, 0.1), (0.1, 0.3), (0.3, 0.5), (0.5, 0.7), (0.7, 0.9), (0.9, 1.01)):
        m = (p >= lo) & (p < hi)
        text.append(
            f"| {lo:.1f}-{min(hi, 1):.1f} | {m.sum()} | {y[m].mean() if m.sum() else 0:.0%} |"
        )
    if args.engine_lines:
        from repocontext.complete.steering import line_odds

        text += [
            "",
            f"## Where the model and the line disagree ({', '.join(ENGINE_DEV)}, "
            f"{args.engine_lines} lines each)",
            "",
            "| likelihood (shipped LINE_FIT) | prefixes | the line right | the model right | "
            "the model showed nothing |",
            "|---|---|---|---|---|",
        ]
        bins: dict[float, list[int]] = collections.defaultdict(lambda: [0, 0, 0, 0])
        for spec in ENGINE_DEV:
            for r in engine_rows(spec, args.engine_lines, random.Random(5)):
                if "line" not in r or r["line"] == r["model"]:
                    continue
                odds = line_odds(r["count"], r["share"], r["k"])
                b = bins[min(int(odds * 10), 9) / 10]
                b[0] += 1
                b[1] += r["line"] == r["truth"]
                b[2] += r["model"] == r["truth"]
                b[3] += r["model"] == ""
        for lo in sorted(bins):
            n, line, model, empty = bins[lo]
            text.append(f"| {lo:.1f}-{lo + 0.1:.1f} | {n} | {line} | {model} | {empty} |")
    Path(args.out).write_text("\n".join(text) + "\n")
    print("\n".join(text))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
