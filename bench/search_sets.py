"""Search on our own labelled sets, per kind of query, beside a naive baseline, in one run.

    python bench/search_sets.py [--out bench/results/search_sets.md]

Sets (written from the corpora's source before any result was seen; see git log):
- bench/labelled/django.json and django_more.json on Django 5.2.19;
- bench/labelled/pytest.json on pytest 8.3.3, whose tests live in `testing/`.

Kinds: identifiers and definitions, plain-language questions, messages pasted without quotes
(placeholders filled in), references and impact questions, and bug reports (40-200 words,
some with tracebacks). A hit, for an answer that names a symbol, is a result chunk of that
symbol (ours) or a 50-line window holding its definition line (the baseline); for an answer
that names only a file, any chunk of the file. For bug reports, also the SWE-bench
localisation figures: file hit@5 and @10 (over distinct files, in rank order) and function
hit@10.

Columns: `ours` is the default search (`auto`, at most PER_FILE chunks of a file); then the
same with 1 chunk per file (what search did before), 2, and every chunk; `naive` is BM25 over
50-line windows of the same files (the query's words OR'ed, FTS5's bm25), the baseline of
shared/NOTES.md.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import sys
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
REPO = HERE.parent
sys.path.insert(0, str(REPO / "src"))
sys.path.insert(0, str(HERE))

from requests_seed import fetch_corpus  # noqa: E402
from stats import percentile  # noqa: E402

from repocontext.search.engine import PER_FILE  # noqa: E402
from repocontext.service import Repository  # noqa: E402

SETS = [
    ("django==5.2.19", "5.2.19", ["django.json", "django_more.json"]),
    ("pytest==8.3.3", "8.3.3", ["pytest.json"]),
]
VARIANTS = [("ours", PER_FILE), ("1 per file", 1), ("2 per file", 2), ("all chunks", None)]
KIND_OF_INTENT = {"find_definition": "identifier", "find_references": "references",
                  "impact_analysis": "references", "find_similar": "question",
                  "understand_code": "question", "exact_match": "message"}  # fmt: skip
KINDS = ["identifier", "question", "message", "references", "bug_report"]


def naive_index(root: Path, files: list[str]):
    import apsw

    db = apsw.Connection(":memory:")
    db.execute("CREATE VIRTUAL TABLE w USING fts5(path UNINDEXED, start UNINDEXED, body)")
    with db:
        for rel in files:
            try:
                lines = (root / rel).read_text(encoding="utf-8", errors="replace").split("\n")
            except OSError:
                continue
            for i in range(0, len(lines), 50):
                db.execute(
                    "INSERT INTO w(path, start, body) VALUES (?, ?, ?)",
                    (rel, i + 1, "\n".join(lines[i : i + 50])),
                )
    return db


def naive_search(db, query: str, k: int = 50) -> list[tuple[str, int, int]]:
    words = "".join(c if c.isalnum() or c == "_" else " " for c in query).split()
    if not words:
        return []
    match = " OR ".join('"' + w + '"' for w in dict.fromkeys(words))
    rows = db.execute(
        "SELECT path, start FROM w WHERE w MATCH ? ORDER BY bm25(w) LIMIT ?", (match, k)
    )
    return [(p, s, s + 49) for p, s in rows]


def def_lines(store, answers) -> dict[tuple[str, str], int]:
    """The definition line of each answer's symbol (for the baseline's windows)."""
    out = {}
    for a in answers:
        if a.get("symbol"):
            hits = store.definitions_at([(a["path"], a["symbol"])])
            if hits:
                out[(a["path"], a["symbol"])] = hits[0].start_line
    return out


def ours_hit(r, answers) -> bool:
    for a in answers:
        if r.path != a["path"]:
            continue
        sym = a.get("symbol")
        if sym is None or r.symbol == sym or (r.symbol or "").endswith("." + sym):
            return True
    return False


def naive_hit(window, answers, lines) -> bool:
    path, start, end = window
    for a in answers:
        if path != a["path"]:
            continue
        line = lines.get((a["path"], a.get("symbol")))
        if a.get("symbol") is None or (line is not None and start <= line <= end):
            return True
    return False


def first_rank(flags: list[bool]) -> int | None:
    return next((i for i, f in enumerate(flags, 1) if f), None)


def file_rank(paths: list[str], answers) -> int | None:
    wanted = {a["path"] for a in answers}
    files = list(dict.fromkeys(paths))
    return next((i for i, p in enumerate(files, 1) if p in wanted), None)


def run_set(spec: str, version: str, names: list[str]) -> list[dict]:
    corpus = fetch_corpus(spec, version)
    home = REPO / ".bench-cache" / f"home-{spec.split('==')[0]}"
    home.mkdir(parents=True, exist_ok=True)
    os.environ["REPOCONTEXT_HOME"] = str(home)
    repo = Repository(corpus)
    repo.index()
    repo.embed()
    queries = []
    for name in names:
        for q in json.loads((HERE / "labelled" / name).read_text())["queries"]:
            queries.append({**q, "set": name, "kind": q.get("kind") or KIND_OF_INTENT[q["intent"]]})
    rows = []
    with repo.open_store() as store:
        naive = naive_index(corpus, list(store.file_states()))
        searcher = repo.searcher(store, cache_vectors=True)
        searcher.search("warm up the model and the vector cache", modality="hybrid")
        for q in queries:
            row = {"query": q["query"], "kind": q["kind"], "set": q["set"], "ranks": {}}
            for label, cap in VARIANTS:
                t0 = time.perf_counter()
                resp = searcher.search(q["query"], top=10, per_file=cap, all_chunks=cap is None)
                elapsed = (time.perf_counter() - t0) * 1000
                results = resp.results
                row["ranks"][label] = first_rank([ours_hit(r, q["answers"]) for r in results])
                if label == "ours":
                    row["ms"] = elapsed
                    row["intent"] = f"{resp.intent}/{resp.rule}"
                    row["file"] = file_rank([r.path for r in results], q["answers"])
                    row["top"] = [f"{r.path}:{r.symbol}" for r in results[:5]]
            lines = def_lines(store, q["answers"])
            windows = naive_search(naive, q["query"])
            row["ranks"]["naive"] = first_rank([naive_hit(w, q["answers"], lines) for w in windows])
            row["naive_file"] = file_rank([w[0] for w in windows], q["answers"])
            rows.append(row)
        searcher.close()
    return rows


def within(rank, k) -> bool:
    return rank is not None and rank <= k


def render(all_rows: dict[str, list[dict]], command: str) -> str:
    columns = [label for label, _ in VARIANTS] + ["naive"]
    lines = [
        "# Search on our own labelled sets, per kind of query, beside a naive baseline",
        "",
        f"Command: `{command}`  ",
        f"Machine: {platform.machine()}, {os.cpu_count()} cores, Python "
        f"{platform.python_version()}, {time.strftime('%Y-%m-%d %H:%M')}  ",
        "Sets: bench/labelled/django.json, django_more.json (Django 5.2.19), pytest.json (pytest "
        "8.3.3, tests in `testing/`), written from the source before any result was seen. A hit: "
        "the answer's symbol as a result chunk (ours) or a 50-line window holding its definition "
        "line (naive); a file-only answer: any chunk of the file. `ours` keeps at most "
        f"{PER_FILE} chunks of a file; the other columns vary only that.",
        "",
    ]
    for corpus, rows in all_rows.items():
        lines += [f"## {corpus}", "", "| kind | queries | " + " | ".join(
            f"{c} top-1/5/10" for c in columns) + " |",
            "|---|---|" + "---|" * len(columns)]  # fmt: skip
        for kind in KINDS + ["all"]:
            sel = [r for r in rows if kind == "all" or r["kind"] == kind]
            if not sel:
                continue
            cells = []
            for c in columns:
                ranks = [r["ranks"][c] for r in sel]
                cells.append("/".join(str(sum(within(x, k) for x in ranks)) for k in (1, 5, 10)))
            lines.append(f"| {kind} | {len(sel)} | " + " | ".join(cells) + " |")
        bugs = [r for r in rows if r["kind"] == "bug_report"]
        if bugs:
            n = len(bugs)
            lines += [
                "",
                f"Bug reports ({n}), SWE-bench localisation figures: file hit@5 ours "
                f"{sum(within(r['file'], 5) for r in bugs) / n:.2f}, naive "
                f"{sum(within(r['naive_file'], 5) for r in bugs) / n:.2f}; file hit@10 ours "
                f"{sum(within(r['file'], 10) for r in bugs) / n:.2f}, naive "
                f"{sum(within(r['naive_file'], 10) for r in bugs) / n:.2f}; function hit@10 ours "
                f"{sum(within(r['ranks']['ours'], 10) for r in bugs) / n:.2f}, naive "
                f"{sum(within(r['ranks']['naive'], 10) for r in bugs) / n:.2f}.",
            ]
        ms = [r["ms"] for r in rows]
        lines += ["", f"Query time (ours, in-process, vectors in memory): p50 "
                  f"{percentile(ms, 50):.1f} ms, p95 {percentile(ms, 95):.1f} ms.", ""]  # fmt: skip
    lines += ["## Goals (own sets)", ""]
    every = [r for rows in all_rows.values() for r in rows]
    for kind, goal in (("message", 0.9), ("question", 0.8)):
        sel = [r for r in every if r["kind"] == kind]
        share = sum(within(r["ranks"]["ours"], 5) for r in sel) / max(1, len(sel))
        lines.append(
            f"- {kind}s in the top 5 >= {goal:.0%}: {share:.0%} ({len(sel)} queries), "
            f"**{'met' if share >= goal else 'not met'}**."
        )
    lines += ["", "## Every query (ours: first hit's rank; intent as classified)", "",
              "| set | kind | query | ours | 1 per file | all chunks | naive | intent |",
              "|---|---|---|---|---|---|---|---|"]  # fmt: skip
    for rows in all_rows.values():
        for r in rows:
            q = " ".join(r["query"].split())
            q = (q[:70] + "...") if len(q) > 73 else q
            q = q.replace("|", "\\|")
            cells = [r["ranks"][c] for c in ("ours", "1 per file", "all chunks", "naive")]
            lines.append(
                f"| {r['set']} | {r['kind']} | {q} | "
                + " | ".join("-" if x is None else str(x) for x in cells)
                + f" | {r['intent']} |"
            )
    return "\n".join(lines) + "\n"


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--out", default=str(HERE / "results/search_sets.md"))
    ap.add_argument("--dump", help="also write every row as JSON here")
    args = ap.parse_args()
    all_rows = {}
    for spec, version, names in SETS:
        all_rows[spec.replace("==", " ")] = run_set(spec, version, names)
    text = render(all_rows, "python bench/search_sets.py")
    Path(args.out).write_text(text)
    if args.dump:
        Path(args.dump).write_text(json.dumps(all_rows, indent=1))
    print(text)
    return 0


if __name__ == "__main__":
    sys.exit(main())
