"""Whether the model can choose among the repository's lines: a probe for issue 48, on the
reads bench/line_ceiling.py dumped (the same lines of rich, prosemirror-view and cobra).

    python bench/line_ceiling.py --dump PATH
    python bench/line_chooser.py --dump PATH [--out FILE]

At each prefix of bench/line_ceiling.py's reads, the lines of the repository's other files that
begin as the typed one (text only, bench/quality.py's source files: the 16 most written, as
`_line_candidates` keeps them) are scored by the default model: the log-probability of the
whole line (indentation, the line, its newline) after the 64 lines above it, in a plain
llama.cpp context (no retrieved context, no healing). The model's own first line at that
prefix (from the dump: the engine with the line source off) is scored the same way. The
chooser shows the best-scored candidate, with `alpha` times the log of how often it is
written added to its score, where it scores above the model's own line, and the model's line
otherwise. Saved as bench/line_ceiling.py counts it (the line typist at the seven prefixes).

A probe of what a chooser could take, not the product: it evaluates every candidate at a key
(up to 17 lines of about 15 tokens after the prompt), which the editor's per-key budget does
not allow as it is. Read it with its flaw (bench/results/line_ceiling.md, eleventh session):
the model's own line is the engine's, scored under this plain prompt, not the prompt it was
written with, and where the engine showed nothing it scores minus infinity; most of what the
chooser takes here is those keys. Built into the engine it lost to the shipped line source.
"""

from __future__ import annotations

import argparse
import bisect
import collections
import json
import math
import os
import platform
import sys
import time
from pathlib import Path

import numpy as np

HERE = Path(__file__).resolve().parent
REPO = HERE.parent
sys.path.insert(0, str(REPO / "src"))
sys.path.insert(0, str(HERE))

from line_ceiling import PREFIXES  # noqa: E402
from quality import fetch, source_files  # noqa: E402
from savings import CORPORA  # noqa: E402

from repocontext.complete.models import default_model_path  # noqa: E402
from repocontext.context.lines import MAX_CHARS, MAX_SCAN, MIN_CHARS  # noqa: E402

CANDIDATES = 16
ALPHAS = (0.0, 1.0)


def counted(root: Path, corpus) -> tuple[dict[str, collections.Counter], list[str]]:
    """Each stripped line of the repository's source files: in which files, how often."""
    where: dict[str, collections.Counter] = collections.defaultdict(collections.Counter)
    for rel in source_files(root, corpus):
        for line in (root / rel).read_text(errors="replace").split("\n"):
            stripped = line.strip()
            if MIN_CHARS <= len(stripped) <= MAX_CHARS:
                where[stripped][rel] += 1
    return where, sorted(where)


def candidates(where, ordered, typed: str, path: str) -> list[tuple[int, str]]:
    """(count in the other files, line) of the lines that begin with `typed` and go on."""
    lo = bisect.bisect_left(ordered, typed)
    hi = bisect.bisect_left(ordered, typed + "\U0010ffff", lo)
    if hi - lo > MAX_SCAN:
        return []
    found = []
    for text in ordered[lo:hi]:
        count = sum(n for f, n in where[text].items() if f != path)
        if len(text) > len(typed) and count:
            found.append((count, text))
    return sorted(found, key=lambda ct: (-ct[0], len(ct[1])))[:CANDIDATES]


class LineScorer:
    """The model's log-probability of whole lines after one prompt, the prompt evaluated
    once."""

    def __init__(self) -> None:
        from llama_cpp import Llama

        self.llm = Llama(
            model_path=str(default_model_path()), n_ctx=2048, logits_all=True, verbose=False
        )
        self.start = 0
        self.kept: dict[str, float] = {}
        self.indent = ""

    def prompt(self, text: str, indent: str) -> None:
        tokens = self.llm.tokenize(text.encode(), add_bos=True)[-1500:]
        self.llm.reset()
        self.llm.eval(tokens)
        self.start, self.kept, self.indent = self.llm.n_tokens, {}, indent

    def score(self, line: str) -> float:
        if line not in self.kept:
            tokens = self.llm.tokenize((self.indent + line + "\n").encode(), add_bos=False)
            self.llm.n_tokens = self.start
            self.llm.eval(tokens)
            total = 0.0
            for i, token in enumerate(tokens):
                logits = self.llm.scores[self.start - 1 + i]
                top = float(logits.max())
                total += float(logits[token]) - top - math.log(np.exp(logits - top).sum())
            self.kept[line] = total
        return self.kept[line]


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--dump", required=True, help="bench/line_ceiling.py's --dump")
    ap.add_argument("--out", default=None, help="append the table to this file")
    args = ap.parse_args()
    reads = json.loads(Path(args.dump).read_text())
    scorer = LineScorer()
    started = time.strftime("%Y-%m-%d %H:%M UTC", time.gmtime())
    columns = ["model", "shipped", *(f"chooser, alpha {a:g}" for a in ALPHAS)]
    table = []
    for name, places in reads.items():
        corpus = CORPORA[name]
        root = fetch(corpus)
        where, ordered = counted(root, corpus)
        saved = collections.Counter()
        chars = 0
        for place in places:
            full = place["text"]
            stripped = full.strip()
            chars += len(stripped)
            lines = (root / place["path"]).read_text(errors="replace").split("\n")
            above = lines[max(0, place["line"] - 65) : place["line"] - 1]
            scorer.prompt("\n".join(above) + "\n", full[: len(full) - len(full.lstrip())])
            taken: set[str] = set()
            for k, read in zip(PREFIXES, place["reads"]):
                typed, model = stripped[:k], read["model"]
                shown = {"model": model, "shipped": read["shipped"]}
                found = candidates(where, ordered, typed, place["path"])
                for alpha in ALPHAS:
                    shown[f"chooser, alpha {alpha:g}"] = model
                    if not found:
                        continue
                    count, best = max(
                        found, key=lambda ct, a=alpha: scorer.score(ct[1]) + a * math.log(ct[0])
                    )
                    own = scorer.score(typed + model) if model else -math.inf
                    if scorer.score(best) + alpha * math.log(count) > own:
                        shown[f"chooser, alpha {alpha:g}"] = best[k:]
                for column, text in shown.items():
                    if column not in taken and text and text == read["truth"]:
                        taken.add(column)
                        saved[column] += len(read["truth"]) - 1
        print(f"{corpus.name}: {dict(saved)} of {chars}", file=sys.stderr, flush=True)
        table.append((corpus.name, chars, saved))
    text = [
        "",
        "## Can the model choose among the lines? (bench/line_chooser.py)",
        "",
        f"Command: `python bench/line_chooser.py --dump {args.dump}`  ",
        f"Machine: {platform.system()} {platform.machine()}, {os.cpu_count()} cores, Python "
        f"{platform.python_version()}, {started}  ",
        "Method: the docstring of bench/line_chooser.py (saved keys over characters, the line "
        "typist at the seven prefixes, as above).",
        "",
        "| repository | " + " | ".join(columns) + " |",
        "|---|" + "---|" * len(columns),
    ]
    for label, chars, saved in table:
        text.append(f"| {label} | " + " | ".join(f"{saved[c] / chars:.1%}" for c in columns) + " |")
    if args.out:
        with open(args.out, "a") as out:
            out.write("\n".join(text) + "\n")
    print("\n".join(text))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
