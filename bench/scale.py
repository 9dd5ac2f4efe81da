"""Indexing and query cost on Django 5.2.19, each figure beside a naive baseline from the same run.

    python bench/scale.py [--out bench/results/scale.md]

1. Cold index of the sdist with `repocontext index` in a subprocess: wall time, peak RSS,
   database size. Then a second, incremental run on the unchanged tree.
2. The naive baseline of shared/NOTES.md, built in a subprocess over exactly the files our index
   holds: one bare FTS5 table (unicode61), 50-line chunks, one transaction.
3. 200 queries (bench/django_queries.txt, a fixed list) through each of our modalities and
   through the baseline (its query: the query's words OR'ed, BM25 top 50): p50/p95 latency.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import shutil
import subprocess
import sys
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
REPO = HERE.parent
sys.path.insert(0, str(REPO / "src"))
sys.path.insert(0, str(HERE))

from requests_seed import fetch_corpus  # noqa: E402
from stats import percentile  # noqa: E402

from repocontext.service import Repository  # noqa: E402

QUERIES = HERE / "django_queries.txt"
MODALITIES = ("bm25", "trigram", "ast", "vector", "hybrid", "auto")

BASELINE = r"""
import apsw, json, sys, time
db_path, root, files = sys.argv[1], sys.argv[2], json.load(open(sys.argv[3]))
t0 = time.perf_counter()
db = apsw.Connection(db_path)
db.execute("CREATE VIRTUAL TABLE chunks USING fts5(path, body)")
with db:
    for rel in files:
        try:
            text = open(f"{root}/{rel}", encoding="utf-8", errors="replace").read()
        except OSError:
            continue
        lines = text.split("\n")
        for i in range(0, len(lines), 50):
            db.execute("INSERT INTO chunks(path, body) VALUES (?, ?)",
                       (rel, "\n".join(lines[i:i + 50])))
print(time.perf_counter() - t0)
"""


# Runs a module or a script in a child and reports that child's own peak RSS on stderr.
RSS_WRAPPER = r"""
import resource, runpy, sys
kind, target, *rest = sys.argv[1:]
sys.argv = [target, *rest]
try:
    if kind == "module":
        runpy.run_module(target, run_name="__main__")
    else:
        exec(compile(target, "<baseline>", "exec"), {"__name__": "__main__"})
except SystemExit as exc:
    if exc.code:
        raise
# the largest of this process and its children (index workers)
print(max(resource.getrusage(resource.RUSAGE_SELF).ru_maxrss,
          resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss), file=sys.stderr)
"""


def _child_run(kind: str, target: str, args: list[str], env: dict) -> tuple[float, float, str]:
    """Wall seconds, peak RSS (MB) and stdout of a child process."""
    t0 = time.perf_counter()
    proc = subprocess.run(
        [sys.executable, "-c", RSS_WRAPPER, kind, target, *args],
        capture_output=True,
        text=True,
        env=env,
    )
    wall = time.perf_counter() - t0
    if proc.returncode:
        raise SystemExit(f"child failed: {proc.stderr}")
    peak_kb = int(proc.stderr.strip().splitlines()[-1])
    return wall, peak_kb / 1024, proc.stdout


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--out", default=str(HERE / "results/scale.md"))
    args = ap.parse_args()
    corpus = fetch_corpus("django==5.2.19", "5.2.19")
    queries = [q for q in QUERIES.read_text().splitlines() if q.strip() and not q.startswith("#")]
    # A fixed home under .bench-cache/, emptied first (a cold index), kept afterwards so that
    # bench/labelled_set.py can reuse the embedded Django index.
    home = str(REPO / ".bench-cache" / "home-django")
    shutil.rmtree(home, ignore_errors=True)
    os.makedirs(home)
    env = {**os.environ, "REPOCONTEXT_HOME": home}
    os.environ["REPOCONTEXT_HOME"] = home
    env["PYTHONPATH"] = str(REPO / "src")
    index_args = ["index", "--root", str(corpus), "--quiet", "--no-embed"]
    ours_wall, ours_rss, _ = _child_run("module", "repocontext.cli", index_args, env)
    again_wall, _, _ = _child_run("module", "repocontext.cli", index_args, env)
    repo = Repository(corpus)
    lexical_bytes = repo.index_file.stat().st_size
    # Embedding, in this process: source first, then docs, then tests.
    embed = repo.embed()
    src_seconds, src_chunks = embed.milestones["source"]
    db_bytes = repo.index_file.stat().st_size
    with repo.open_store() as store:
        stats = store.stats()
        files = [p for p in store.file_states()]

    files_json = Path(home) / "files.json"
    files_json.write_text(json.dumps(files))
    base_db = Path(home) / "baseline.sqlite"
    base_wall, base_rss, _ = _child_run(
        "script", BASELINE, [str(base_db), str(corpus), str(files_json)], env
    )
    base_bytes = base_db.stat().st_size

    import apsw

    base = apsw.Connection(str(base_db))
    lat: dict[str, list[float]] = {}
    for q in queries:
        words = [w for w in "".join(c if c.isalnum() or c == "_" else " " for c in q).split()]
        if words:
            match = " OR ".join('"' + w.replace('"', '""') + '"' for w in words)
            t0 = time.perf_counter()
            base.execute(
                "SELECT rowid, bm25(chunks) FROM chunks WHERE chunks MATCH ? "
                "ORDER BY bm25(chunks) LIMIT 50",
                (match,),
            ).fetchall()
            lat.setdefault("baseline bm25", []).append((time.perf_counter() - t0) * 1000)
    with repo.open_store() as store:
        searcher = repo.searcher(store, cache_vectors=True)  # long-lived, as in the editor
        searcher.search("warm up the model and the vector cache", modality="hybrid")
        for modality in MODALITIES:
            for q in queries:
                t0 = time.perf_counter()
                searcher.search(q, top=10, modality=modality)
                lat.setdefault(modality, []).append((time.perf_counter() - t0) * 1000)

    b50, b95 = percentile(lat["baseline bm25"], 50), percentile(lat["baseline bm25"], 95)
    lines = [
        "# Scale: Django 5.2.19 sdist",
        "",
        "Command: `python bench/scale.py`  ",
        f"Machine: {platform.machine()}, {os.cpu_count()} cores, Python "
        f"{platform.python_version()}, {time.strftime('%Y-%m-%d %H:%M')} (shared machine: "
        "compare ratios, not absolute times)  ",
        f"Index: {stats['files']} files ({stats['skipped']} skipped), {stats['chunks']} chunks, "
        f"{stats['symbols']} symbols. Baseline: the same {len(files)} files, bare FTS5, "
        "50-line chunks.",
        "",
        "## Indexing",
        "",
        "| | ours | baseline | ratio (goal <= 5x) |",
        "|---|---|---|---|",
        f"| cold index, wall | {ours_wall:.2f} s | {base_wall:.2f} s | "
        f"{ours_wall / base_wall:.2f}x |",
        f"| peak RSS, largest process | {ours_rss:.0f} MB | {base_rss:.0f} MB | "
        f"{ours_rss / base_rss:.2f}x |",
        f"| database size, lexical + graph | {lexical_bytes / 1e6:.1f} MB | "
        f"{base_bytes / 1e6:.1f} MB | {lexical_bytes / base_bytes:.2f}x |",
        f"| database size with vectors | {db_bytes / 1e6:.1f} MB | | |",
        f"| second run, nothing changed | {again_wall:.2f} s | | |",
        "",
        "Wall times include Python start-up of the child process (about 0.1 s).",
        "",
        "## Embedding (default model, all-MiniLM-L6-v2 int8, 128 tokens, batches of 32)",
        "",
        "| | figure |",
        "|---|---|",
        f"| chunk contents embedded | {embed.embedded} |",
        f"| throughput | {embed.embedded / embed.seconds:.1f} chunks/s |",
        f"| time until every non-test source chunk has a vector (goal <= 600 s) | "
        f"{src_seconds:.0f} s ({src_chunks} chunks) |",
        f"| time until every chunk has a vector | {embed.seconds:.0f} s |",
        "",
        f"## Queries ({len(queries)} from bench/django_queries.txt)",
        "",
        "Vector, hybrid and auto include embedding the query; vectors are held in memory by "
        "the long-lived searcher (as in the editor).",
        "",
        "| modality | p50 ms | p95 ms | p95 / baseline p95 |",
        "|---|---|---|---|",
        f"| baseline bm25 (top 50) | {b50:.2f} | {b95:.2f} | 1.00 |",
    ]
    for modality in MODALITIES:
        v = lat[modality]
        lines.append(
            f"| {modality} (top 10, full search path) | {percentile(v, 50):.2f} | "
            f"{percentile(v, 95):.2f} | {percentile(v, 95) / b95:.2f} |"
        )
    lines.append("")
    bm25_ratio = percentile(lat["bm25"], 95) / b95
    lines.append("## Goals")
    lines.append("")
    lines.append(
        f"- Cold indexing within 5x of the baseline: {ours_wall / base_wall:.1f}x, "
        f"**{'met' if ours_wall <= 5 * base_wall else 'not met'}**."
    )
    lines.append(
        f"- BM25 p95 within 2x of the baseline's: {bm25_ratio:.2f}x, "
        f"**{'met' if bm25_ratio <= 2 else 'not met'}**."
    )
    auto95 = percentile(lat["auto"], 95)
    lines.append(
        f"- Auto p95 at most 25 ms, query embedding included: {auto95:.1f} ms, "
        f"**{'met' if auto95 <= 25 else 'not met'}**."
    )
    lines.append(
        f"- Vectors cover every non-test source chunk within 10 minutes: "
        f"{src_seconds:.0f} s, **{'met' if src_seconds <= 600 else 'not met'}**."
    )
    text = "\n".join(lines) + "\n"
    Path(args.out).write_text(text)
    print(text)
    return 0


if __name__ == "__main__":
    sys.exit(main())
