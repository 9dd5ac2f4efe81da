"""What the freshness check costs a search on an unchanged tree (issue 21, item 2).

    python bench/freshness.py [--runs 15] [--out bench/results/cli_speed.md]
        [--corpus LABEL=ROOT ...]

Before each search the index is compared with the working tree (index/fresh.py: a stat per
indexed file and per watched folder). For each corpus, on an index already up to date: the
check alone, in process (median of `runs` after one warm-up); and `repocontext search` on the
command line with the check and without it (the same command with `tree_changed` replaced by
`False`), alternated in the same run. Default corpora: a checkout of this repository's HEAD
(git) and Django 5.2.19 from the bench cache (a plain tree, walked), if present.

Writes its section at the end of cli_speed.md, replacing an older one.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import subprocess
import sys
import tempfile
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
REPO = HERE.parent
sys.path.insert(0, str(REPO / "src"))
sys.path.insert(0, str(HERE))

from stats import percentile  # noqa: E402

from repocontext.index.fresh import TREE_STAMP, tree_changed  # noqa: E402
from repocontext.index.scan import tree_moved  # noqa: E402
from repocontext.service import Repository  # noqa: E402

SECTION = "## Freshness check before a search (unchanged tree)"
NO_CHECK = (
    "import sys, repocontext.service as s; s.tree_changed = lambda root, store: False; "
    "from repocontext.cli import main; sys.exit(main(sys.argv[1:]))"
)


def measure(label: str, root: Path, home: Path, query: str, runs: int) -> tuple:
    env = {**os.environ, "PYTHONPATH": str(REPO / "src"), "REPOCONTEXT_HOME": str(home)}
    os.environ["REPOCONTEXT_HOME"] = str(home)
    repo = Repository(root)
    repo.index()
    repo.search(query)  # leaves the stamp, if an older index had none
    with repo.open_store() as store:
        files = len(store.file_stats())
        folders = len(json.loads(store.get_meta(TREE_STAMP))["folders"])
        check = []
        for i in range(runs + 1):
            t0 = time.perf_counter()
            changed = tree_moved(root, store) or tree_changed(root, store)
            if i:
                check.append((time.perf_counter() - t0) * 1000)
            assert not changed, f"{label}: the tree changed during the measurement"
    py = sys.executable
    args = ["search", "--root", str(root), query]
    commands = [[py, "-m", "repocontext.cli", *args], [py, "-c", NO_CHECK, *args]]
    times: list[list[float]] = [[], []]
    for cmd in commands:
        subprocess.run(cmd, env=env, capture_output=True, check=True)  # warm the disk cache
    for _ in range(runs):
        for cmd, out in zip(commands, times):
            t0 = time.perf_counter()
            subprocess.run(cmd, env=env, capture_output=True, check=True)
            out.append((time.perf_counter() - t0) * 1000)
    with_check, without = times
    return label, query, files, folders, check, without, with_check


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--runs", type=int, default=15)
    ap.add_argument("--out", default=str(HERE / "results/cli_speed.md"))
    ap.add_argument("--corpus", action="append", default=[], help="LABEL=ROOT (repeatable)")
    args = ap.parse_args()
    rows = []
    with tempfile.TemporaryDirectory() as tmp:
        home = Path(tmp) / "home"
        corpora = [(*c.split("=", 1), home) for c in args.corpus]
        if not corpora:
            checkout = Path(tmp) / "repocontext"
            subprocess.run(
                ["git", "clone", "-q", "--no-hardlinks", str(REPO), str(checkout)], check=True
            )
            time.sleep(2.5)  # older than the window in which a time is not trusted
            corpora.append(("repocontext (this repository, HEAD; git)", str(checkout), home))
            django = REPO / ".bench-cache" / "django-5.2.19"
            if django.is_dir():  # the index cli_speed.py leaves, brought up to date
                label = "Django 5.2.19 (plain tree, walked)"
                corpora.append((label, str(django), REPO / ".bench-cache" / "home-django"))
        for label, root, home in corpora:
            query = "def get_object_or_404" if "django" in root.lower() else "def scan"
            rows.append(measure(label, Path(root).resolve(), Path(home), query, args.runs))
    lines = [
        SECTION,
        "",
        f"Command: `python bench/freshness.py --runs {args.runs}`  ",
        f"Machine: {platform.machine()}, {os.cpu_count()} cores, Python "
        f"{platform.python_version()}, {time.strftime('%Y-%m-%d %H:%M')} (shared machine)  ",
        "Index up to date, warm disk. *check*: `tree_moved` + `tree_changed` in process (a stat "
        "per indexed file and watched folder); *search*: `repocontext search QUERY` wall time, "
        "without the check (patched out) and with it, alternated in the same run.",
        "",
        "| corpus | files / folders | check ms | search without ms | search with ms | "
        "check / search without | with / without |",
        "|---|---|---|---|---|---|---|",
    ]
    for label, query, files, folders, check, without, with_check in rows:
        c, w0, w1 = (percentile(x, 50) for x in (check, without, with_check))
        lines.append(
            f"| {label}: `{query}` | {files} / {folders} | {c:.1f} | {w0:.0f} | {w1:.0f} | "
            f"{c / w0:.2f} | {w1 / w0:.2f} |"
        )
    lines += [
        "",
        "The check also stats each file skipped for its content (on Django, 1,301 .mo "
        "catalogues and the like). A search that finds a change runs the incremental indexer "
        "first: that cost is the changed files' and the scan's, not measured here.",
        "",
    ]
    section = "\n".join(lines)
    out = Path(args.out)
    text = out.read_text() if out.exists() else ""
    head = text.split(SECTION, 1)[0].rstrip("\n")
    out.write_text((head + "\n\n" if head else "") + section)
    print(section)
    return 0


if __name__ == "__main__":
    sys.exit(main())
