"""Search on our own labelled sets, per kind of query, with and without the second stage, beside
a naive baseline, in one run.

    python bench/search_sets.py [--out bench/results/search_sets.md] [--only django,bugs]

Sets (written before any result was seen; see git log):
- bench/labelled/django.json and django_more.json on Django 5.2.19;
- bench/labelled/pytest.json on pytest 8.3.3, whose tests live in `testing/`;
- bench/labelled/bugs_*.json: real bug reports from the history of projects that are neither
  measured elsewhere nor in SWE-bench (click, jinja, werkzeug, urllib3, marshmallow, attrs),
  each on the last release that still had the bug; the answers are the functions the fix
  changed. This is the dev set of the function-level answer: it is tuned on; the held-out
  checks are not.

Kinds: identifiers and definitions, plain-language questions, messages pasted without quotes
(placeholders filled in), references and impact questions, and bug reports. A hit, for an
answer that names a symbol, is a result chunk of that symbol (ours) or a 50-line window holding
its definition line (the baseline); for an answer that names only a file, any chunk of the
file. For bug reports, also the SWE-bench localisation figures: file hit@5 and @10 (over
distinct files, in rank order) and function hit@10, from the results and from the
function-level answer (`functions` in `search --json`).

Columns: `ours` is the default search (`auto`, second stage on, at most PER_FILE chunks of a
file); `first stage` the same without the second stage; `all chunks` with no cap per file;
`naive` is BM25 over 50-line windows of the same files (the query's words OR'ed, FTS5's bm25),
the baseline of shared/NOTES.md.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import subprocess
import sys
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
REPO = HERE.parent
sys.path.insert(0, str(REPO / "src"))
sys.path.insert(0, str(HERE))

from stats import percentile  # noqa: E402

from repocontext.search.engine import PER_FILE  # noqa: E402
from repocontext.service import Repository  # noqa: E402

SETS = [
    ("django==5.2.19", ["django.json", "django_more.json"]),
    ("pytest==8.3.3", ["pytest.json"]),
]
BUG_SETS = sorted((HERE / "labelled").glob("bugs_*.json"))
# (label, second stage, chunks per file)
VARIANTS = [("ours", True, PER_FILE), ("first stage", False, PER_FILE), ("all chunks", True, None)]
KIND_OF_INTENT = {"find_definition": "identifier", "find_references": "references",
                  "impact_analysis": "references", "find_similar": "question",
                  "understand_code": "question", "exact_match": "message"}  # fmt: skip
KINDS = ["identifier", "question", "message", "references", "bug_report"]


def fetch_sdist(spec: str) -> Path:
    """The unpacked source distribution of `spec` (name==version), downloaded once."""
    name, _, version = spec.partition("==")
    cache = REPO / ".bench-cache"
    cache.mkdir(exist_ok=True)  # a fresh checkout has none yet
    want = _normal(f"{name}-{version}")
    for folder in cache.iterdir():
        if folder.is_dir() and _normal(folder.name) == want:
            return folder
    fetched = cache / "sdists"
    fetched.mkdir(parents=True, exist_ok=True)
    subprocess.run([sys.executable, "-m", "pip", "download", "-q", "--no-deps", "--no-binary",
                    ":all:", spec, "-d", str(fetched)], check=True)  # fmt: skip
    archive = next(a for a in fetched.glob("*.tar.gz") if _normal(a.name) == want + ".tar.gz")
    listing = subprocess.run(["tar", "-tzf", str(archive)], check=True, capture_output=True,
                             text=True).stdout  # fmt: skip
    subprocess.run(["tar", "-xzf", str(archive), "-C", str(cache)], check=True)
    return cache / listing.split("/", 1)[0]


def _normal(name: str) -> str:
    return name.lower().replace("_", "-")


def own_queries(names: list[str]) -> list[dict]:
    out = []
    for name in names:
        for q in json.loads((HERE / "labelled" / name).read_text())["queries"]:
            out.append({**q, "set": name, "kind": q.get("kind") or KIND_OF_INTENT[q["intent"]]})
    return out


def bug_queries() -> dict[str, list[dict]]:
    """The real bug reports, grouped by the release they are asked on."""
    by_corpus: dict[str, list[dict]] = {}
    for path in BUG_SETS:
        for q in json.loads(path.read_text())["queries"]:
            by_corpus.setdefault(q["corpus"], []).append({**q, "set": path.name})
    return by_corpus


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


def run_set(corpus: Path, home: Path, queries: list[dict]) -> list[dict]:
    home.mkdir(parents=True, exist_ok=True)
    os.environ["REPOCONTEXT_HOME"] = str(home)
    repo = Repository(corpus)
    repo.index()
    repo.embed()
    rows = []
    with repo.open_store() as store:
        naive = naive_index(corpus, list(store.file_states()))
        searcher = repo.searcher(store, cache_vectors=True)
        searcher.search("warm up the model and the vector cache", modality="hybrid")
        for q in queries:
            row = {"query": q["query"], "kind": q["kind"], "set": q["set"], "ranks": {},
                   "functions": {}, "ms": {}}  # fmt: skip
            for label, second, cap in VARIANTS:
                t0 = time.perf_counter()
                resp = searcher.search(
                    q["query"], top=10, per_file=cap, all_chunks=cap is None, second_stage=second
                )
                row["ms"][label] = (time.perf_counter() - t0) * 1000
                results = resp.results
                row["ranks"][label] = first_rank([ours_hit(r, q["answers"]) for r in results])
                row["functions"][label] = first_rank(
                    [ours_hit(f, q["answers"]) for f in resp.functions[:10]]
                )
                if label in ("ours", "first stage"):
                    row[f"file {label}"] = file_rank([r.path for r in results], q["answers"])
                if label == "ours":
                    row["intent"] = f"{resp.intent}/{resp.rule}"
                    row["top"] = [f"{r.path}:{r.symbol}" for r in results[:5]]
                    row["top functions"] = [f"{f.path}:{f.symbol}" for f in resp.functions[:5]]
            lines = def_lines(store, q["answers"])
            windows = naive_search(naive, q["query"])
            row["ranks"]["naive"] = first_rank([naive_hit(w, q["answers"], lines) for w in windows])
            row["naive_file"] = file_rank([w[0] for w in windows], q["answers"])
            rows.append(row)
        searcher.close()
    return rows


def within(rank, k) -> bool:
    return rank is not None and rank <= k


def ratio(rows: list[dict], key, k: int) -> str:
    """Share of rows whose rank under `key` (a function of the row) is within k."""
    return f"{sum(within(key(r), k) for r in rows) / max(1, len(rows)):.2f}"


def render(own: dict[str, list[dict]], bugs: dict[str, list[dict]], command: str) -> str:
    columns = [label for label, _, _ in VARIANTS] + ["naive"]
    lines = [
        "# Search on our own labelled sets, with and without the second stage, beside a naive "
        "baseline",
        "",
        f"Command: `{command}`  ",
        f"Machine: {platform.machine()}, {os.cpu_count()} cores, Python "
        f"{platform.python_version()}, {time.strftime('%Y-%m-%d %H:%M')}  ",
        "Sets: bench/labelled/django.json, django_more.json (Django 5.2.19), pytest.json (pytest "
        "8.3.3, tests in `testing/`), written from the source before any result was seen; "
        "bench/labelled/bugs_*.json, real bug reports from six projects' history (the dev set of "
        "the function-level answer). A hit: the answer's symbol as a result chunk (ours) or a "
        "50-line window holding its definition line (naive); a file-only answer: any chunk of "
        f"the file. `ours`: second stage on, at most {PER_FILE} chunks of a file; `first stage`: "
        "the same without the second stage; `all chunks`: second stage, no cap per file.",
        "",
    ]
    for corpus, rows in own.items():
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
        lines += [""] + _time_lines(rows) + [""]
    if bugs:
        lines += _bug_section(bugs)
    every = [r for rows in own.values() for r in rows]
    real = [r for rows in bugs.values() for r in rows]
    lines += ["## Goals (own sets)", ""]
    for kind, goal in (("message", 0.9), ("question", 0.8)):
        sel = [r for r in every if r["kind"] == kind]
        share = sum(within(r["ranks"]["ours"], 5) for r in sel) / max(1, len(sel))
        before = sum(within(r["ranks"]["first stage"], 5) for r in sel) / max(1, len(sel))
        lines.append(
            f"- {kind}s in the top 5 >= {goal:.0%}: {share:.0%} ({len(sel)} queries; first "
            f"stage only {before:.0%}), **{'met' if share >= goal else 'not met'}**."
        )
    if real:
        share = sum(within(r["functions"]["ours"], 10) for r in real) / len(real)
        lines.append(
            f"- real bug reports, function hit@10 (the function-level answer) >= 0.60: "
            f"{share:.2f} ({len(real)} reports; first stage only "
            f"{ratio(real, lambda r: r['functions']['first stage'], 10)}), "
            f"**{'met' if share >= 0.6 else 'not met'}**."
        )
    lines += ["", "## Every query (first hit's rank; fn: in the function-level answer)", "",
              "| set | kind | query | ours | first stage | all chunks | naive | fn ours "
              "| fn first stage | intent |",
              "|---|---|---|---|---|---|---|---|---|---|"]  # fmt: skip
    for rows in [*own.values(), *bugs.values()]:
        for r in rows:
            q = " ".join(r["query"].split())
            q = (q[:70] + "...") if len(q) > 73 else q
            q = q.replace("|", "\\|")
            cells = [r["ranks"][c] for c in ("ours", "first stage", "all chunks", "naive")]
            cells += [r["functions"]["ours"], r["functions"]["first stage"]]
            lines.append(
                f"| {r['set']} | {r['kind']} | {q} | "
                + " | ".join("-" if x is None else str(x) for x in cells)
                + f" | {r['intent']} |"
            )
    return "\n".join(lines) + "\n"


def _time_lines(rows: list[dict]) -> list[str]:
    out = []
    for label in ("ours", "first stage"):
        ms = [r["ms"][label] for r in rows]
        out.append(f"Query time, {label} (in-process, vectors in memory): p50 "
                   f"{percentile(ms, 50):.1f} ms, p95 {percentile(ms, 95):.1f} ms.  ")  # fmt: skip
    return out


def _bug_section(bugs: dict[str, list[dict]]) -> list[str]:
    """Real bug reports: SWE-bench's localisation figures, per project and in all."""
    lines = [
        "## Real bug reports (dev set)",
        "",
        "file@k: the fix's file among the first k distinct files of the results; function@10: "
        "a changed function among the 10 results; answer@k: among the first k of the "
        "function-level answer (`functions` in `search --json`).",
        "",
        "| corpus | reports | file@5 ours / first / naive | file@10 ours / first / naive "
        "| function@10 ours / first / naive | answer@1/5/10 ours | answer@1/5/10 first stage |",
        "|---|---|---|---|---|---|---|",
    ]
    by_project: dict[str, list[dict]] = {}
    for spec, rows in bugs.items():
        by_project.setdefault(spec.split("==")[0], []).extend(rows)
    groups = [*sorted(by_project.items()), ("all", [r for rows in bugs.values() for r in rows])]
    for name, rows in groups:
        cells = []
        for k in (5, 10):
            cells.append(" / ".join([ratio(rows, lambda r: r["file ours"], k),
                                     ratio(rows, lambda r: r["file first stage"], k),
                                     ratio(rows, lambda r: r["naive_file"], k)]))  # fmt: skip
        cells.append(" / ".join(ratio(rows, lambda r, c=c: r["ranks"][c], 10)
                                for c in ("ours", "first stage", "naive")))  # fmt: skip
        for label in ("ours", "first stage"):
            cells.append(" / ".join(ratio(rows, lambda r, c=label: r["functions"][c], k)
                                    for k in (1, 5, 10)))  # fmt: skip
        lines.append(f"| {name} | {len(rows)} | " + " | ".join(cells) + " |")
    every = [r for rows in bugs.values() for r in rows]
    return lines + [""] + _time_lines(every) + [""]


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--out", default=str(HERE / "results/search_sets.md"))
    ap.add_argument("--dump", help="also write every row as JSON here")
    ap.add_argument("--only", help="comma-separated: django, pytest, bugs (default: all)")
    args = ap.parse_args()
    only = set(args.only.split(",")) if args.only else {"django", "pytest", "bugs"}
    cache = REPO / ".bench-cache"
    own: dict[str, list[dict]] = {}
    for spec, names in SETS:
        name = spec.split("==")[0]
        if name in only:
            rows = run_set(fetch_sdist(spec), cache / f"home-{name}", own_queries(names))
            own[spec.replace("==", " ")] = rows
    bugs: dict[str, list[dict]] = {}
    if "bugs" in only:
        for spec, queries in sorted(bug_queries().items()):
            bugs[spec] = run_set(fetch_sdist(spec), cache / "home-bugs",
                                 [{**q, "kind": "bug_report"} for q in queries])  # fmt: skip
    command = "python bench/search_sets.py" + (f" --only {args.only}" if args.only else "")
    text = render(own, bugs, command)
    Path(args.out).write_text(text)
    if args.dump:
        Path(args.dump).write_text(json.dumps({"own": own, "bugs": bugs}, indent=1))
    print(text)
    return 0


if __name__ == "__main__":
    sys.exit(main())
