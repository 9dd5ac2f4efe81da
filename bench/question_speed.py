"""Time to answer a plain-language question in the editor, on a Django-sized index, stage by stage.

    python bench/question_speed.py [--runs 3] [--out bench/results/question_speed.md]

The editor's searcher lives as long as Neovim (editor_search.py): its models are loaded and
its vectors are in memory, so what a `:RepoContext` question costs is the search itself. This
asks every plain-language question of bench/labelled/django*.json (Django 5.2.19, 45,750
chunks; the index search_sets.py builds) `runs` times, the editor's way with the second stage
on and off and the command line's way (in-process), alternated in the same run after one
warm-up pass, and reports p50/p95 of the total and of each stage (the engine's own
`timings_ms`): the query's embedding, each retriever, the second stage.
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

from search_sets import OWN_CORPUS, corpus_root, load_repositories  # noqa: E402
from stats import percentile  # noqa: E402

from repocontext.runtime.editor_search import EditorSearch  # noqa: E402
from repocontext.service import Repository  # noqa: E402

GOAL_P95_MS = 60


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--runs", type=int, default=3)
    ap.add_argument("--out", default=str(HERE / "results/question_speed.md"))
    args = ap.parse_args()
    spec = OWN_CORPUS["django.json"]
    questions = [
        q["query"]
        for queries in load_repositories({"django"})["django"]["corpora"].values()
        for q in queries
        if q["kind"] == "question"
    ]
    root = corpus_root(spec)
    home = REPO / ".bench-cache" / "home-django"
    home.mkdir(parents=True, exist_ok=True)
    os.environ["REPOCONTEXT_HOME"] = str(home)
    # the second stage is off by default: this process loads it, to measure it on demand
    rerank_on = REPO / ".bench-cache" / "rerank-on.toml"
    rerank_on.write_text("[search]\nrerank = true\n")
    os.environ["REPOCONTEXT_CONFIG"] = str(rerank_on)
    repo = Repository(root)
    repo.index()
    repo.embed()
    modes = ("Repository.search", "editor", "editor, second stage", "editor, search alone")
    times: dict[str, list[float]] = {m: [] for m in modes}
    stages: dict[str, dict[str, list[float]]] = {m: {} for m in modes}
    editor = EditorSearch(repo)
    for q in questions:  # warm-up: models loaded, vectors in memory, pages cached
        editor.search(q, top=20, second_stage=True)
        repo.search(q, top=20, second_stage=False)
    kept = editor._searcher()[1]  # the kept searcher itself, without the tree check beside it
    for _ in range(args.runs):
        for q in questions:
            for mode in modes:
                t0 = time.perf_counter()
                if mode == "Repository.search":  # the command line's, in-process
                    resp = repo.search(q, top=20, second_stage=False)
                elif mode == "editor, search alone":
                    resp = kept.search(q, top=20, second_stage=False)
                else:
                    resp = editor.search(q, top=20, second_stage=mode == "editor, second stage")
                times[mode].append((time.perf_counter() - t0) * 1000)
                for stage, ms in resp.timings_ms.items():
                    if stage != "total":
                        stages[mode].setdefault(stage, []).append(ms)
    editor.close()
    lines = [
        "# A plain-language question in the editor, on Django 5.2.19: time by stage",
        "",
        f"Command: `python bench/question_speed.py --runs {args.runs}`  ",
        f"Machine: {platform.machine()}, {os.cpu_count()} cores, Python "
        f"{platform.python_version()}, {time.strftime('%Y-%m-%d %H:%M')} (shared machine)  ",
        f"{len(questions)} questions x {args.runs} runs, the three ways alternated.",
        "",
        "`Repository.search`: the command line's search in-process (models already loaded): a "
        "searcher made per question after the freshness check (index/fresh.py), vectors read by "
        "sqlite-vec; `editor`: what `:RepoContext search` calls (editor_search.py: the searcher "
        "kept for the session, vectors in memory, the tree checked beside the search); `editor, "
        "second stage`: the same with `[search] rerank = true`; `editor, search alone`: the "
        "kept searcher without the tree check (the check's share is the difference).",
        "",
        "| stage | " + " | ".join(f"{m}: p50 ms | {m}: p95 ms" for m in modes) + " |",
        "|---|" + "---|---|" * len(modes),
        _row("total", [times[m] for m in modes]),
    ]
    for stage in sorted(set().union(*(stages[m] for m in modes))):
        lines.append(_row(stage, [stages[m].get(stage, []) for m in modes]))
    p95 = {m: percentile(times[m], 95) for m in modes}
    share = sum(stages["editor, second stage"].get("rerank", [])) / max(
        1e-9, sum(times["editor, second stage"])
    )
    lines += [""]
    for mode in modes:
        met = "met" if p95[mode] <= GOAL_P95_MS else "not met"
        lines.append(f"- question p95 <= {GOAL_P95_MS} ms, {mode}: {p95[mode]:.0f} ms, **{met}**.")
    lines += [
        f"- the second stage's share of the editor's time when it is on: {share:.0%}.",
        "",
    ]
    text = "\n".join(lines)
    Path(args.out).write_text(text)
    print(text)
    return 0


def _row(name: str, columns: list[list[float]]) -> str:
    cells = [f"{percentile(v, p):.1f}" if v else "-" for v in columns for p in (50, 95)]
    return f"| {name} | " + " | ".join(cells) + " |"


if __name__ == "__main__":
    sys.exit(main())
