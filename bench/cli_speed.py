"""Wall time of one `repocontext search` on the command line, warm disk, beside bare Python.

    python bench/cli_speed.py [--runs 15] [--out bench/results/cli_speed.md]

On the requests 2.32.3 and Django 5.2.19 indexes the other benches leave (built here if
missing): a definition (`def ...`, answered from the symbol table), an exact string, and a
plain-language question (the embedding model is loaded and run), and the same question with
the second stage's cross-encoder (`[search] rerank = true`; off by default since issue 36).
Each command is run `runs` times after one warm-up; medians and p90 are reported, with
`python -c pass` and `python -c "import repocontext.cli"` from the same interpreter as the
floor.
"""

from __future__ import annotations

import argparse
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

from requests_seed import fetch_corpus  # noqa: E402
from stats import percentile  # noqa: E402

from repocontext.service import Repository  # noqa: E402

CORPORA = [
    ("requests 2.32.3", "requests==2.32.3", "2.32.3", "home-requests",
     ["def get_netrc_auth", '"Invalid URL"', "how are redirects handled"]),
    ("Django 5.2.19", "django==5.2.19", "5.2.19", "home-django",
     ["def get_object_or_404", '"CSRF verification failed"',
      "how are passwords hashed and checked"]),
]  # fmt: skip
GOALS = {0: 150, 2: 500}  # query index -> goal in ms (a definition, a question)


def timed(cmd: list[str], env: dict, runs: int) -> list[float]:
    subprocess.run(cmd, env=env, capture_output=True, check=True)  # warm the disk cache
    out = []
    for _ in range(runs):
        t0 = time.perf_counter()
        subprocess.run(cmd, env=env, capture_output=True, check=True)
        out.append((time.perf_counter() - t0) * 1000)
    return out


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--runs", type=int, default=15)
    ap.add_argument("--out", default=str(HERE / "results/cli_speed.md"))
    args = ap.parse_args()
    py = sys.executable
    # As an installed package runs: its bytecode compiled once and kept (this machine's
    # environment sets PYTHONDONTWRITEBYTECODE, which made every run compile ~50 modules).
    env = {k: v for k, v in os.environ.items() if k != "PYTHONDONTWRITEBYTECODE"}
    env |= {
        "PYTHONPATH": str(REPO / "src"),
        "PYTHONPYCACHEPREFIX": str(REPO / ".bench-cache" / "pycache"),
    }
    rows = [
        ("python -c pass", timed([py, "-c", "pass"], env, args.runs)),
        ("python -c 'import repocontext.cli'",
         timed([py, "-c", "import repocontext.cli"], env, args.runs)),
    ]  # fmt: skip
    goals = []
    for label, spec, version, home_name, queries in CORPORA:
        root = fetch_corpus(spec, version)
        home = REPO / ".bench-cache" / home_name
        home.mkdir(parents=True, exist_ok=True)
        env["REPOCONTEXT_HOME"] = str(home)
        os.environ["REPOCONTEXT_HOME"] = str(home)
        repo = Repository(root)
        repo.index()
        repo.embed()
        for i, q in enumerate(queries):
            cmd = [py, "-m", "repocontext.cli", "search", "--root", str(root), q]
            times = timed(cmd, env, args.runs)
            rows.append((f"{label}: `search {q}`", times))
            if i == 2:  # the question again, with the second stage (off by default)
                on = home / "rerank.toml"
                on.write_text("[search]\nrerank = true\n")
                reread = timed(cmd, {**env, "REPOCONTEXT_CONFIG": str(on)}, args.runs)
                rows.append((f"{label}: `search {q}`, second stage on", reread))
            if i in GOALS:
                med = percentile(times, 50)
                goals.append(
                    f"- {label}, `{q}`: median {med:.0f} ms, goal <= {GOALS[i]} ms: "
                    f"**{'met' if med <= GOALS[i] else 'not met'}**."
                )
    lines = [
        "# One `repocontext search` on the command line: wall time",
        "",
        f"Command: `python bench/cli_speed.py --runs {args.runs}`  ",
        f"Machine: {platform.machine()}, {os.cpu_count()} cores, Python "
        f"{platform.python_version()}, {time.strftime('%Y-%m-%d %H:%M')} (shared machine: the "
        "Python floor is measured in the same run)  ",
        "Each command run once to warm the disk cache (and write its bytecode, as an installed "
        "package has it), then timed; the index is up to date.",
        "",
        "| command | median ms | p90 ms |",
        "|---|---|---|",
    ]
    for label, times in rows:
        lines.append(f"| {label} | {percentile(times, 50):.0f} | {percentile(times, 90):.0f} |")
    lines += ["", "## Goals (warm disk)", "", *goals, ""]
    text = "\n".join(lines)
    out = Path(args.out)
    kept = "## Freshness check"  # bench/freshness.py's section: kept as it was
    if out.exists() and kept in out.read_text():
        text += "\n" + kept + out.read_text().split(kept, 1)[1]
    out.write_text(text)
    print(text)
    return 0


if __name__ == "__main__":
    sys.exit(main())
