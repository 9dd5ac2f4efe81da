"""Whether the number of results asked for changes the first ones, and what each `top` scores.

    python bench/search_depth.py [--only mux,zod] [--tops 10,20,60]

Each labelled query (bench/labelled/, the corpora and indexes of search_sets.py) is searched
once per `--tops` value, as shipped with no second stage. Reported: per language, the top-5
hits per 25 queries (each repository's share times 25, averaged, as search_sets.py) among the
first ten results at each `top`; the queries whose first results differ between two `top`s
(a shorter list must be the start of a longer one); and how many searches needed a deeper
pass (engine.py `after_the_first`). The editor asks for 20, the command line for 10.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent / "src"))
sys.path.insert(0, str(HERE))

import search_sets as ss  # noqa: E402

from repocontext.search import engine  # noqa: E402


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--only", help="repositories, comma-separated (default: every one)")
    parser.add_argument("--tops", default="10,20,60", help="the `top` values, comma-separated")
    args = parser.parse_args()
    tops = sorted(int(t) for t in args.tops.split(","))
    deeper = {"passes": 0}
    merge = engine.after_the_first

    def counted(*a):
        deeper["passes"] += 1
        return merge(*a)

    engine.after_the_first = counted
    repos = ss.load_repositories(set(args.only.split(",")) if args.only else None)
    shares: dict[str, dict[int, list[float]]] = {}
    differ: list[str] = []
    searches = 0
    for repo, entry in repos.items():
        hits = {t: 0 for t in tops}
        count = 0
        for spec, queries in entry["corpora"].items():
            corpus = ss.Corpus(spec)
            for q in queries:
                lists = {}
                for top in tops:
                    results = corpus.searcher.search(
                        q["query"], top=top, second_stage=False
                    ).results
                    searches += 1
                    lists[top] = [r.chunk_id for r in results]
                    first = ss.first_rank([ss.ours_hit(r, q["answers"]) for r in results[:10]])
                    hits[top] += first is not None and first <= 5
                for short, long in zip(tops, tops[1:]):
                    if lists[long][: len(lists[short])] != lists[short]:
                        differ.append(
                            f"{repo}: {' '.join(q['query'].split())[:70]} ({short} vs {long})"
                        )
                count += 1
            corpus.close()
        for top in tops:
            shares.setdefault(entry["language"], {}).setdefault(top, []).append(hits[top] / count)
    print("| language | " + " | ".join(f"top-5 per 25 at top {t}" for t in tops) + " |")
    print("|---|" + "---|" * len(tops))
    for lang, by_top in shares.items():
        cells = [f"{25 * sum(v) / len(v):.2f}" for v in by_top.values()]
        print(f"| {lang} | " + " | ".join(cells) + " |")
    print(f"\nqueries whose first results differ between two tops: {len(differ)}")
    for line in differ:
        print(f"- {line}")
    print(f"searches: {searches}; with a deeper pass: {deeper['passes']}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
