"""Where the answers of the labelled queries that miss the top five stand, and what is above them.

    python bench/search_misses.py --only chi,cobra [--kinds question,bug_report] [--show 12]
                                  [--out misses.md]

For each query of the chosen repositories (bench/labelled/, the corpora of search_sets.py, its
indexes in .bench-cache) whose first answer is not in the default search's top five: its rank
among the first 50 with no cap per file and with the cap (a chunk the cap drops is gone from
every page, not moved down), each retriever's rank of the answer, and the fused first `--show`
results with their ranks, factors and contributions. The search is the code as it ships, no
second stage. Every session reading issue 52's misses wrote this script again in /tmp; here it
is once, with the bench's own definition of a hit (search_sets.ours_hit).
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent / "src"))
sys.path.insert(0, str(HERE))

import search_sets as ss  # noqa: E402

DEPTH = 50


def ranks_of(results, answers) -> list[int]:
    return [i + 1 for i, r in enumerate(results) if ss.ours_hit(r, answers)]


def describe(corpus: ss.Corpus, repo: str, q: dict, show: int) -> list[str]:
    """One miss, as markdown lines."""
    search = corpus.searcher.search
    whole = search(q["query"], top=DEPTH, all_chunks=True, second_stage=False).results
    capped = search(q["query"], top=DEPTH, second_stage=False).results
    answers = q["answers"]
    where, where_capped = ranks_of(whole, answers), ranks_of(capped, answers)
    names = ", ".join(a.get("symbol") or a["path"] for a in answers)
    text = " ".join(q["query"].split())
    lines = [
        f"### {repo} {q['kind']}: {text[:100]}{'…' if len(text) > 100 else ''}",
        "",
        f"Answers: {names}. First {DEPTH}, no cap: {where[:3] or 'none'}; "
        f"with the cap: {where_capped[:3] or 'none'}.",
    ]
    if where:
        hit = whole[where[0] - 1]
        found = {k: v for k, v in hit.ranks.items() if v is not None}
        lines.append(f"The answer's ranks by retriever: {found or 'none'}; factors {hit.factors}.")
    lines += ["", "| # | chunk | score | ranks | factors |", "|---|---|---|---|---|"]
    for i, r in enumerate(whole[:show]):
        mark = "**" if ss.ours_hit(r, answers) else ""
        ranks = {k: v for k, v in r.ranks.items() if v is not None}
        lines.append(
            f"| {i + 1} | {mark}{r.path}:{r.symbol}{mark} | {r.score:.4f} | {ranks} | {r.factors} |"
        )
    return lines + [""]


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--only", required=True, help="comma-separated repositories")
    ap.add_argument("--kinds", default="question,bug_report", help="comma-separated query kinds")
    ap.add_argument("--show", type=int, default=12, help="fused results listed per miss")
    ap.add_argument("--out", help="write the markdown here (default: standard output)")
    args = ap.parse_args()
    kinds = set(args.kinds.split(","))
    repos = ss.load_repositories(set(args.only.split(",")))
    if missing := ss.missing_corpora(repos):
        print("missing corpora; fetch them first:\n" + "\n".join(missing), file=sys.stderr)
        return 1
    out = ["# Labelled queries out of the top five, and what ranks above their answers", ""]
    for repo, entry in repos.items():
        for spec, queries in entry["corpora"].items():
            corpus = ss.Corpus(spec)
            try:
                for q in queries:
                    rank = corpus.measure(q)["rank"]
                    if q["kind"] in kinds and not (rank and rank <= 5):
                        out += describe(corpus, repo, q, args.show)
            finally:
                corpus.close()
    text = "\n".join(out)
    if args.out:
        Path(args.out).write_text(text + "\n")
    else:
        print(text)
    return 0


if __name__ == "__main__":
    sys.exit(main())
