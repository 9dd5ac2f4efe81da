"""Our own labelled queries (bench/labelled/django.json) on Django 5.2.19: intent classifier
accuracy per intent and top-5 hit rate of the default search, beside single retrievers.

    python bench/labelled_set.py [--out bench/results/labelled_set.md]

Reuses the embedded index that bench/scale.py leaves in .bench-cache/home-django, or builds one.
The set was committed before any search result on it was looked at (see git log).
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import sys
import time
from collections import defaultdict
from pathlib import Path

HERE = Path(__file__).resolve().parent
REPO = HERE.parent
sys.path.insert(0, str(REPO / "src"))
sys.path.insert(0, str(HERE))

from requests_seed import fetch_corpus  # noqa: E402

from repocontext.search.engine import PER_FILE  # noqa: E402
from repocontext.search.intent import classify  # noqa: E402
from repocontext.service import Repository  # noqa: E402

SET = HERE / "labelled" / "django.json"
COLUMNS = [("auto", "auto"), ("bm25", "bm25"), ("vector", "vector"), ("hybrid", "hybrid")]


def hit(result, answers) -> bool:
    for a in answers:
        if result.path != a["path"]:
            continue
        sym = a.get("symbol")
        if sym is None or result.symbol == sym or (result.symbol or "").endswith("." + sym):
            return True
    return False


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--out", default=str(HERE / "results/labelled_set.md"))
    args = ap.parse_args()
    data = json.loads(SET.read_text())
    corpus = fetch_corpus("django==5.2.19", "5.2.19")
    home = REPO / ".bench-cache" / "home-django"
    home.mkdir(parents=True, exist_ok=True)
    os.environ["REPOCONTEXT_HOME"] = str(home)
    repo = Repository(corpus)
    repo.index()
    repo.embed()
    rows = []
    with repo.open_store() as store:
        searcher = repo.searcher(store, cache_vectors=True)
        for q in data["queries"]:
            got = classify(q["query"])
            row = {
                "query": q["query"],
                "want": q["intent"],
                "got": got.name,
                "confidence": got.confidence,
            }
            for col, modality in COLUMNS:
                resp = searcher.search(q["query"], top=5, modality=modality)
                row[col] = next(
                    (i for i, r in enumerate(resp.results, 1) if hit(r, q["answers"])), None
                )
            rows.append(row)
    by_intent: dict[str, list[dict]] = defaultdict(list)
    for row in rows:
        by_intent[row["want"]].append(row)
    out = [
        "# Own labelled set: intent accuracy and top-5 hit rate on Django 5.2.19",
        "",
        "Command: `python bench/labelled_set.py`  ",
        f"Machine: {platform.machine()}, {os.cpu_count()} cores, Python "
        f"{platform.python_version()}, {time.strftime('%Y-%m-%d %H:%M')}  ",
        f"Set: bench/labelled/django.json, {len(rows)} queries over six intents, written before "
        f"any result was seen. `auto` is the default search (at most {PER_FILE} chunks per file, "
        "top 5); the "
        "other columns are single modalities, top 5.",
        "",
        "| intent | queries | classifier accuracy | auto top-5 | bm25 top-5 | vector top-5 "
        "| hybrid top-5 |",
        "|---|---|---|---|---|---|---|",
    ]
    totals = defaultdict(int)
    for intent in (
        "find_definition",
        "find_references",
        "understand_code",
        "find_similar",
        "impact_analysis",
        "exact_match",
    ):
        group = by_intent.get(intent, [])
        n = len(group)
        acc = sum(r["got"] == intent for r in group)
        cells = [sum(r[c] is not None for r in group) for c, _ in COLUMNS]
        totals["n"] += n
        totals["acc"] += acc
        for (c, _), v in zip(COLUMNS, cells):
            totals[c] += v
        out.append(
            f"| {intent} | {n} | {acc}/{n} | " + " | ".join(f"{v}/{n}" for v in cells) + " |"
        )
    n = totals["n"]
    out.append(
        f"| **all** | {n} | {totals['acc']}/{n} | "
        + " | ".join(f"{totals[c]}/{n}" for c, _ in COLUMNS)
        + " |"
    )
    out += [
        "",
        "## Per query",
        "",
        "| query | intent wanted | classified | auto | bm25 | vector | hybrid |",
        "|---|---|---|---|---|---|---|",
    ]
    for r in rows:
        cells = " | ".join("-" if r[c] is None else str(r[c]) for c, _ in COLUMNS)
        out.append(
            f"| {r['query'].replace('|', '/')} | {r['want']} | {r['got']} "
            f"({r['confidence']:.2f}) | {cells} |"
        )
    text = "\n".join(out) + "\n"
    Path(args.out).write_text(text)
    print(text)
    return 0


if __name__ == "__main__":
    sys.exit(main())
