"""A monorepo on a laptop: how each cost grows from 10,000 to 100,000 files.

    python bench/monorepo.py [--sizes 10000,30000,100000] [--out bench/results/monorepo.md]

The tree is built from real code: the source distributions the other benches use (Django,
pytest, werkzeug, urllib3, click, jinja, rich, httpx, starlette, requests, marshmallow, attrs;
TypeScript from prosemirror-view, Go from cobra, Lua from penlight), copied under distinct
paths (`services/NN-<project>/...`) until the tree holds the number of files asked for, then
committed to git (one commit, so HEAD exists and the index uses `git ls-files`). Copies are
hard links (no disk); a file changed by the bench is written anew, never through the link.
Copies of one project share contents: the index's vectors are keyed by content hash, so the
embedding figures would be flattered; embedding is therefore not measured here beyond its
rate (bench/results/scale.md: about 55 chunks/s on these cores).

For each size, in a fresh index home:
- `repocontext index --no-embed` in a child process: wall time, peak RSS, index size against
  the source's size. Meanwhile this process runs the definition queries every POLL_S seconds
  through a searcher, as a user would (names_work_since: when each first result defines the
  name asked, and when each equals the finished index's first answer; copies of one project
  count as the same answer). The polls take CPU from the index run;
- a second run with nothing changed;
- search p50/p95 per intent in a long-lived searcher (as in the editor), 10 queries each;
- completion context p50/p95 at 40 cursor places in Django's code (the editor's per-keystroke
  retrieval, `ContextEngine`), vectors absent (the index's state before embedding);
- catching up after 1,000 files changed (appended to, as a pull would) and after a branch
  switch (`git checkout` of a branch where 1,000 other files differ).

`--editor` measures the editor's side instead, in a child process per size, through the
editor's own `Session` on a project never indexed: the index starts (lexical only) as a file
is opened, the prompt is warmed and one key asks for a completion at once. Reported: the time
from opening to the first ghost text (the model loaded cold, the index far from done), the
time until the opened file and the files it imports (by Python's own `ast`) are in the
index (the editor indexes that neighbourhood first), the time until the lexical index is done
in the host, and the host's peak RSS by then.
"""

from __future__ import annotations

import argparse
import os
import platform
import random
import re
import shutil
import subprocess
import sys
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
REPO = HERE.parent
sys.path.insert(0, str(REPO / "src"))
sys.path.insert(0, str(HERE))

from methods_ts import fetch_npm  # noqa: E402
from quality import fetch_deb  # noqa: E402
from scale import RSS_WRAPPER, _child_run  # noqa: E402
from search_sets import fetch_sdist  # noqa: E402
from stats import percentile  # noqa: E402

from repocontext.context.request import CursorRequest  # noqa: E402
from repocontext.service import Repository  # noqa: E402

PROJECTS = ["django==5.2.19", "pytest==8.3.3", "werkzeug==3.1.6", "urllib3==2.6.3",
            "click==8.4.0", "jinja2==3.1.4", "rich==13.9.4", "httpx==0.28.1",
            "starlette==0.41.3", "requests==2.32.3", "marshmallow==3.21.0", "attrs==25.1.0"]  # fmt: skip
OTHER_LANGUAGES = [("golang-github-spf13-cobra-dev", "1.6.1-1"), ("lua-penlight", "1.13.1-3")]
TEXT_SUFFIXES = {".py", ".pyi", ".js", ".ts", ".go", ".lua", ".md", ".rst", ".txt", ".html",
                 ".css", ".toml", ".cfg", ".json", ".yml", ".yaml", ".sh", ".c", ".h"}  # fmt: skip
QUERIES = {
    "definition": ["def get_object_or_404", "class ModelAdmin", "slugify", "make_password",
                   "class Paginator", "def parse_header", "HTTPResponse", "class FixtureDef",
                   "def urlize", "class Rule"],
    "exact string": ['"CSRF verification failed"', '"is not a valid UUID"',
                     '"The SECRET_KEY setting must not be empty"', '"Invalid HTTP_HOST header"',
                     '"DID NOT RAISE"', '"Invalid block tag"', '"Reverse for"',
                     '"Cannot resolve keyword"', '"No module named"', '"bad escape"'],
    "question": ["how are passwords hashed and checked", "how does the CSRF middleware validate "
                 "the token", "how are signed values verified", "how does pagination count pages",
                 "how are fixtures torn down after a test", "how are cookies parsed from a "
                 "header", "how does the template engine find a template file",
                 "how are redirects followed", "how is a multipart body parsed",
                 "how are retries counted for a request"],
    "references": ["who calls get_user_model", "usages of render_to_string",
                   "references to reverse_lazy", "who calls full_clean", "who calls slugify",
                   "usages of get_connection", "who calls make_password",
                   "references to force_str", "who calls urlize", "usages of escape"],
}  # fmt: skip


def source_files() -> list[tuple[Path, str]]:
    """(file, path under its project) for every text file of the projects."""
    out = []
    roots = [fetch_sdist(spec) for spec in PROJECTS]
    roots.append(fetch_npm("prosemirror-view", "1.33.8"))
    roots += [fetch_deb(*package) for package in OTHER_LANGUAGES]
    for root in roots:
        for path in sorted(root.rglob("*")):
            if path.is_file() and path.suffix in TEXT_SUFFIXES:
                out.append((path, f"{root.name}/{path.relative_to(root)}"))
    return out


def build_tree(root: Path, size: int, files: list[tuple[Path, str]]) -> int:
    """`size` files (hard links) under root/services/NN-project/, committed; source bytes."""
    if root.exists():
        shutil.rmtree(root)
    root.mkdir(parents=True)
    total = 0
    n = 0
    copy = 0
    while n < size:
        for src, rel in files:
            if n >= size:
                break
            dest = root / "services" / f"{copy:02d}" / rel
            dest.parent.mkdir(parents=True, exist_ok=True)
            os.link(src, dest)
            total += src.stat().st_size
            n += 1
        copy += 1
    git(root, "init", "-q", "-b", "main")
    git(root, "add", "-A")
    git(root, "commit", "-q", "-m", "tree")
    return total


def git(root: Path, *args: str) -> str:
    env = {**os.environ, "GIT_AUTHOR_NAME": "b", "GIT_AUTHOR_EMAIL": "b@b",
           "GIT_COMMITTER_NAME": "b", "GIT_COMMITTER_EMAIL": "b@b"}  # fmt: skip
    return subprocess.run(["git", "-C", str(root), *args], check=True, capture_output=True,
                          text=True, env=env).stdout  # fmt: skip


def rewrite(path: Path, extra: str) -> None:
    """Append to a file without touching the other hard links to it."""
    text = path.read_text(encoding="utf-8", errors="replace")
    path.unlink()
    path.write_text(text + extra, encoding="utf-8")


def pick_python(root: Path, count: int, seed: int) -> list[Path]:
    paths = sorted(root.glob("services/*/django-5.2.19/django/**/*.py"))
    paths += sorted(root.glob("services/*/pytest-8.3.3/src/**/*.py"))
    return random.Random(seed).sample(paths, min(count, len(paths)))


def measure(size: int, files, work: Path) -> dict:
    root = work / f"tree-{size}"
    home = work / f"home-{size}"
    shutil.rmtree(home, ignore_errors=True)
    home.mkdir(parents=True)
    t0 = time.perf_counter()
    source_bytes = build_tree(root, size, files)
    built = time.perf_counter() - t0
    env = {**os.environ, "REPOCONTEXT_HOME": str(home), "PYTHONPATH": str(REPO / "src")}
    os.environ["REPOCONTEXT_HOME"] = str(home)
    args = ["index", "--root", str(root), "--no-embed", "--quiet"]
    repo = Repository(root)
    wall, rss, polls = index_while_searching(repo, args, env)
    again, _, _ = _child_run("module", "repocontext.cli", args, env)
    row = {"size": size, "tree_seconds": built, "index_seconds": wall, "index_rss_mb": rss,
           "again_seconds": again, "source_mb": source_bytes / 1e6,
           "index_mb": repo.index_file.stat().st_size / 1e6}  # fmt: skip
    with repo.open_store() as store:
        row["files"] = store.stats()["files"]
        searcher = repo.searcher(store)
        final = {q: top_answer(searcher.search(q)) for q in QUERIES["definition"]}
        searcher.close()
    names = names_work_since(polls, final, wall)
    row["names_seconds"], row["names_same_seconds"] = names["defined"], names["same"]
    row["names_queries"] = names["queries"]
    row["names_polls"] = len(polls)
    with repo.open_store() as store:
        searcher = repo.searcher(store, cache_vectors=True)
        for intent, queries in QUERIES.items():
            searcher.search(queries[0])  # warm
            times = []
            for q in queries:
                t = time.perf_counter()
                searcher.search(q)
                times.append((time.perf_counter() - t) * 1000)
            row[f"search {intent}"] = (percentile(times, 50), percentile(times, 95))
        searcher.close()
    row["context"] = context_times(repo, root)
    # a pull: 1,000 files changed
    for path in pick_python(root, 1000, seed=1):
        rewrite(path, "\n\ndef bench_added_function():\n    return 1\n")
    row["pull_seconds"], _, _ = _child_run("module", "repocontext.cli", args, env)
    git(root, "commit", "-q", "-am", "pull")
    # a branch switch: another 1,000 files differ on the other branch
    git(root, "checkout", "-q", "-b", "feature")
    for path in pick_python(root, 1000, seed=2):
        rewrite(path, "\n\ndef bench_feature_function():\n    return 2\n")
    git(root, "commit", "-q", "-am", "feature")
    git(root, "checkout", "-q", "main")
    _child_run("module", "repocontext.cli", args, env)  # the index follows main
    git(root, "checkout", "-q", "feature")
    row["switch_seconds"], _, _ = _child_run("module", "repocontext.cli", args, env)
    return row


POLL_S = 10.0  # seconds between two rounds of definition searches during the cold index


def index_while_searching(repo: Repository, args: list[str], env: dict):
    """The cold index in a child process (wall seconds, peak RSS in MB) while this process
    runs the definition queries every POLL_S, as a user would: [(seconds, {query: answer})]."""
    t0 = time.perf_counter()
    proc = subprocess.Popen([sys.executable, "-c", RSS_WRAPPER, "module", "repocontext.cli",
                             *args], stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                            env=env)  # fmt: skip
    polls = []
    while proc.poll() is None:
        time.sleep(POLL_S)
        try:
            with repo.open_store() as store:
                searcher = repo.searcher(store)
                answers = {q: top_answer(searcher.search(q)) for q in QUERIES["definition"]}
                searcher.close()
        except Exception:  # no index file yet, or its schema not written yet
            continue
        polls.append((time.perf_counter() - t0, answers))
    out, err = proc.communicate()
    wall = time.perf_counter() - t0
    if proc.returncode:
        raise SystemExit(f"index failed: {err}")
    return wall, int(err.strip().splitlines()[-1]) / 1024, polls


def top_answer(response) -> tuple[str, str | None] | None:
    """The first result as (path inside its copy, symbol): copies are the same answer."""
    if not response.results:
        return None
    first = response.results[0]
    return re.sub(r"^services/\d+/", "", first.path), first.symbol


def names_work_since(polls, final: dict, wall: float) -> dict:
    """When search by name works during the cold index, over the definition queries whose
    finished answer defines the name asked (a query answered otherwise, for a name the tree
    does not define, cannot count):
    - "defined": the first poll from which each query's first result defines that name (any
      of its definitions: the tree holds copies and look-alikes), and kept doing so;
    - "same": the first poll from which each gave the finished index's own first answer.
    The index's own end where no poll before it did."""
    named = {q for q, a in final.items() if a and _defines(a, q)}
    out = {"queries": len(named)}
    for key, ok in (("defined", lambda q, a: bool(a) and _defines(a, q)),
                    ("same", lambda q, a: a == final[q])):  # fmt: skip
        since = wall
        for seconds, answers in reversed(polls):
            if not all(ok(q, answers.get(q)) for q in named):
                break
            since = seconds
        out[key] = since
    return out


def _defines(answer: tuple, query: str) -> bool:
    return (answer[1] or "").split(".")[-1] == query.split()[-1]


def context_times(repo: Repository, root: Path) -> tuple[float, float]:
    """The per-keystroke retrieval at 40 places of Django's code, in one long-lived engine."""
    from repocontext.context.engine import ContextEngine

    places = []
    for path in pick_python(root, 40, seed=3):
        lines = path.read_text(encoding="utf-8", errors="replace").split("\n")
        code = [i for i, line in enumerate(lines) if line.strip() and i > 5]
        if code:
            i = random.Random(str(path)).choice(code)
            places.append((path, i + 1, len(lines[i])))
    times = []
    with repo.open_store() as store:
        engine = ContextEngine(root, store, None)
        for path, line, col in places:
            rel = str(path.relative_to(root))
            request = CursorRequest(rel, line, col, text=path.read_text(errors="replace"))
            t = time.perf_counter()
            engine.build(request)
            times.append((time.perf_counter() - t) * 1000)
    return percentile(times[1:], 50), percentile(times[1:], 95)


def editor_trial(root: Path, result: Path) -> None:
    """In a child process: open a file of a never-indexed tree as the editor does."""
    import json
    import resource
    import threading

    from repocontext.runtime.session import Session

    os.environ["REPOCONTEXT_HOME"] = str(result.parent / "home")
    path = pick_python(root, 1, seed=4)[0]
    rel = str(path.relative_to(root))
    lines = path.read_text(encoding="utf-8", errors="replace").split("\n")
    line = next(i for i in range(len(lines) // 2, len(lines)) if lines[i].strip()) + 1
    typed = lines[line - 1][: max(1, len(lines[line - 1]) // 2)]
    text = "\n".join(lines[: line - 1] + [typed] + lines[line:])
    request = CursorRequest(rel, line, len(typed.encode()), text=text)
    times: dict = {}
    shown, indexed = threading.Event(), threading.Event()
    t0 = time.monotonic()
    session = Session(Repository(root))

    def on_indexed(report: dict) -> None:
        times["indexed_s"] = time.monotonic() - t0
        times["index_report"] = {k: report.get(k) for k in ("files", "error", "busy")}
        indexed.set()

    def on_update(text: str) -> None:
        if text and not shown.is_set():
            times["first_ghost_s"] = time.monotonic() - t0
            shown.set()

    def on_done(suggestion, error) -> None:
        if error is None and suggestion.suggestion:
            on_update(suggestion.suggestion)
        elif error is not None:
            times.setdefault("error", str(error))
            shown.set()

    wanted = [rel, *imported_paths(root, rel)]
    times["neighbourhood_files"] = len(wanted)

    def watch_neighbourhood() -> None:
        repo = Repository(root)
        while not indexed.is_set():
            time.sleep(0.5)
            try:
                with repo.open_store() as store:
                    if store.paths_present(wanted) == set(wanted):
                        times["neighbourhood_s"] = time.monotonic() - t0
                        return
            except Exception:  # the index file or its schema not made yet
                continue

    threading.Thread(target=watch_neighbourhood, daemon=True).start()
    session.index(False, lambda p: None, on_indexed, first=[rel])
    session.warm(request)
    session.complete(request, on_update, on_done)
    shown.wait(600)
    times["rss_at_ghost_mb"] = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    indexed.wait(3600)
    times["host_peak_rss_mb"] = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    result.write_text(json.dumps(times))
    os._exit(0)  # the session's threads are not waited for


def imported_paths(root: Path, rel: str) -> list[str]:
    """The files of its own project that a Python file imports, by Python's own `ast` (not
    by the indexer's resolver): what its completions need first."""
    import ast

    parts = rel.split("/")
    project = "/".join(parts[:3])  # services/NN/<project>
    package = "/".join(parts[3:-1])
    tree = ast.parse((root / rel).read_text(encoding="utf-8", errors="replace"))
    modules = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            modules += [a.name for a in node.names]
        elif isinstance(node, ast.ImportFrom):
            base = package.split("/") if node.level else []
            base = base[: len(base) - (node.level - 1)] if node.level > 1 else base
            module = "/".join(base + (node.module.split(".") if node.module else []))
            modules.append(module.replace("/", "."))
            modules += [f"{module.replace('/', '.')}.{a.name}" for a in node.names]
    out = []
    for module in dict.fromkeys(m for m in modules if m):
        for candidate in (f"{project}/{module.replace('.', '/')}.py",
                          f"{project}/{module.replace('.', '/')}/__init__.py"):  # fmt: skip
            if (root / candidate).is_file() and candidate not in out:
                out.append(candidate)
    return out


def editor_rows(sizes: list[int], files, work: Path) -> list[dict]:
    import json

    rows = []
    for size in sizes:
        root = work / f"tree-{size}"
        build_tree(root, size, files)
        out = work / f"editor-{size}"
        shutil.rmtree(out, ignore_errors=True)
        out.mkdir(parents=True)
        result = out / "result.json"
        env = {**os.environ, "PYTHONPATH": str(REPO / "src")}
        subprocess.run([sys.executable, __file__, "--editor-trial", str(root), "--result",
                        str(result)], check=True, env=env, timeout=4000)  # fmt: skip
        rows.append({"size": size, **json.loads(result.read_text())})
        print(rows[-1], flush=True)
        shutil.rmtree(root, ignore_errors=True)
        shutil.rmtree(out, ignore_errors=True)
    return rows


def render_editor(rows: list[dict], command: str) -> str:
    sizes = [r["size"] for r in rows]
    lines = [
        "## The editor on a never-indexed tree",
        "",
        f"Command: `{command}`  ",
        f"Machine: {platform.machine()}, {os.cpu_count()} cores, "
        f"{time.strftime('%Y-%m-%d %H:%M')}. The editor's `Session` in a child process: the "
        "index (lexical) starts as the file is opened, the prompt is warmed, one key asks at "
        "once; the model loads cold.",
        "",
        "| | " + " | ".join(f"{s:,} files" for s in sizes) + " |",
        "|---|" + "---|" * len(sizes),
    ]
    for label, key, fmt in EDITOR_ROWS:
        cells = (fmt.format(r.get(key, float("nan"))) for r in rows)
        lines.append(f"| {label} | " + " | ".join(cells) + " |")
    lines.append("")
    return "\n".join(lines)


EDITOR_ROWS = [
    ("first ghost text after opening the file, s", "first_ghost_s", "{:.1f}"),
    ("the opened file and the files it imports indexed, s", "neighbourhood_s", "{:.1f}"),
    ("lexical index done in the editor's host, s", "indexed_s", "{:.0f}"),
    ("host RSS at the first ghost text, MB", "rss_at_ghost_mb", "{:.0f}"),
    ("host peak RSS by the end of the index, MB", "host_peak_rss_mb", "{:.0f}"),
]


def render(rows: list[dict], command: str) -> str:
    sizes = [r["size"] for r in rows]
    head = "| | " + " | ".join(f"{s:,} files" for s in sizes) + " | growth, last / first "
    head += "per file |"
    lines = [
        "# A monorepo on a laptop: 10,000 to 100,000 files",
        "",
        f"Command: `{command}`  ",
        f"Machine: {platform.machine()}, {os.cpu_count()} cores, Python "
        f"{platform.python_version()}, {time.strftime('%Y-%m-%d %H:%M')} (shared machine)  ",
        "Tree: real projects' source distributions copied under distinct paths (see the "
        "script's docstring), one git commit. Index: `repocontext index --no-embed`.",
        "",
        head,
        "|---|" + "---|" * (len(sizes) + 1),
    ]

    def line(label, values, per_file=True, fmt="{:.1f}"):
        cells = [fmt.format(v) for v in values]
        first, last = values[0], values[-1]
        growth = ""
        if per_file and first:
            growth = f"{(last / sizes[-1]) / (first / sizes[0]):.2f}"
        elif first:
            growth = f"{last / first:.2f}"
        lines.append(f"| {label} | " + " | ".join(cells) + f" | {growth} |")

    line("files indexed", [r["files"] for r in rows], fmt="{:,}")
    line("time until search by name finds a definition of each name (cold index), s",
         [r["names_seconds"] for r in rows])  # fmt: skip
    line("time until it gives the finished index's own first answer, s",
         [r["names_same_seconds"] for r in rows])  # fmt: skip
    line("lexical index, cold, s", [r["index_seconds"] for r in rows])
    line("indexer peak RSS, MB", [r["index_rss_mb"] for r in rows], fmt="{:.0f}")
    line("source, MB", [r["source_mb"] for r in rows], fmt="{:.0f}")
    line("index (lexical, symbols, graph), MB", [r["index_mb"] for r in rows], fmt="{:.0f}")
    lines.append(
        "| index / source | "
        + " | ".join(f"{r['index_mb'] / r['source_mb']:.2f}" for r in rows)
        + " | |"
    )
    line("second run, nothing changed, s", [r["again_seconds"] for r in rows])
    for intent in QUERIES:
        line(f"search p95, {intent}, ms", [r[f"search {intent}"][1] for r in rows],
             per_file=False)  # fmt: skip
    line("context p95 while typing, ms", [r["context"][1] for r in rows], per_file=False)
    line("catch-up after 1,000 changed files, s", [r["pull_seconds"] for r in rows],
         per_file=False)  # fmt: skip
    line("catch-up after a branch switch (1,000 files differ), s",
         [r["switch_seconds"] for r in rows], per_file=False)  # fmt: skip
    lines += [
        "",
        "Growth: (last / its files) / (first / its files) for costs that scale with the tree "
        "(1.00 is linear, above it worse than linear); for per-query and per-change costs, "
        "last / first.  ",
        "Search by name: polled every {:.0f} s; the definition queries whose finished answer "
        "defines the name asked: {}. The cold index ran with those polls beside it.".format(
            POLL_S, " / ".join(str(r["names_queries"]) for r in rows)
        ),
        "",
    ]
    return "\n".join(lines)


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--sizes", default="10000,30000,100000")
    ap.add_argument("--work", default=str(REPO / ".bench-cache" / "monorepo"))
    ap.add_argument("--out", default=str(HERE / "results/monorepo.md"))
    ap.add_argument("--editor", action="store_true", help="the editor's rows, appended to --out")
    ap.add_argument("--editor-trial", help=argparse.SUPPRESS)
    ap.add_argument("--result", help=argparse.SUPPRESS)
    args = ap.parse_args()
    if args.editor_trial:
        editor_trial(Path(args.editor_trial), Path(args.result))
        return 0
    files = source_files()
    work = Path(args.work)
    if args.editor:
        sizes = [int(s) for s in args.sizes.split(",")]
        text = render_editor(editor_rows(sizes, files, work), "python bench/monorepo.py --editor")
        out = Path(args.out)
        kept = out.read_text().split("## The editor on a never-indexed tree")[0]
        out.write_text(kept.rstrip("\n") + "\n\n" + text)
        print(text)
        return 0
    rows = []
    for size in [int(s) for s in args.sizes.split(",")]:
        rows.append(measure(size, files, work))
        print(rows[-1], flush=True)
        shutil.rmtree(work / f"tree-{size}", ignore_errors=True)
    command = "python bench/monorepo.py" + (
        f" --sizes {args.sizes}" if args.sizes != "10000,30000,100000" else ""
    )
    text = render(rows, command)
    Path(args.out).write_text(text)
    print(text)
    return 0


if __name__ == "__main__":
    sys.exit(main())
