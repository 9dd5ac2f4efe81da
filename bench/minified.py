"""What one minified line costs an index run (issue 31, item 3): chunks, index bytes, peak RSS.

    python bench/minified.py [--functions 1500 12000] [--baseline REV]
        [--out bench/results/minified.md]

For each size, a tree of one JavaScript file: `functions` top-level functions on one line (as
a minifier writes them). `repocontext index --no-embed` runs on it in a process of its own
(peak RSS from the kernel), then `status --json` gives the chunks and the index's bytes. The
same is run with the code of `--baseline` (a git revision, checked out to a temporary
worktree), in the same run, for sizes up to `--baseline-max` functions (beyond, the old code's
memory would take the machine down) and within `--limit` seconds.
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


def minified_js(functions: int) -> str:
    """The same file as tests/test_trust.py:minified_js."""
    body = ";".join(
        f"function f{i}(a,b){{var c=a*{i}+b;return c>{i}?f{max(i - 1, 0)}(c,b):c}}"
        for i in range(functions)
    )
    return body + ";\n"


def run_index(src: Path, root: Path, home: Path, limit: float) -> dict:
    env = {**os.environ, "REPOCONTEXT_HOME": str(home), "PYTHONPATH": str(src)}
    code = "import sys; from repocontext.cli import main; sys.exit(main(sys.argv[1:]))"
    t0 = time.perf_counter()
    try:  # /usr/bin/time: the peak RSS of this one process
        done = subprocess.run(["/usr/bin/time", "-f", "peak_kb=%M", sys.executable, "-c", code,
                               "index", "--no-embed", "--root", str(root)], env=env,
                              capture_output=True, text=True, timeout=limit)  # fmt: skip
    except subprocess.TimeoutExpired:
        return {"error": f"not finished in {limit:.0f} s"}
    seconds = time.perf_counter() - t0
    peak_kb = [int(w[8:]) for w in done.stderr.split() if w.startswith("peak_kb=")]
    if done.returncode != 0:
        return {"error": done.stderr.strip().splitlines()[-2][:120]}
    status = subprocess.run([sys.executable, "-c", code, "status", "--json", "--root",
                             str(root)], env=env, capture_output=True, text=True)  # fmt: skip
    info = json.loads(status.stdout)
    return {
        "seconds": seconds,
        "chunks": info["chunks"],
        "index_bytes": info["index_bytes"],
        "peak_mb": peak_kb[-1] / 1024 if peak_kb else None,
    }


def main() -> int:
    parser = argparse.ArgumentParser()
    parser.add_argument("--functions", type=int, nargs="+", default=[1500, 12000])
    parser.add_argument("--baseline", default="96e0fa5")
    parser.add_argument("--limit", type=float, default=300)
    # the old code's memory grows with symbols x line length (a 950 KB line reached 23.6 GB):
    # past this size it would take the machine down, so it is not run
    parser.add_argument("--baseline-max", type=int, default=2000)
    parser.add_argument("--out", default=str(HERE / "results" / "minified.md"))
    args = parser.parse_args()
    rows = []
    with tempfile.TemporaryDirectory() as tmp:
        tmp = Path(tmp)
        old = tmp / "baseline"
        subprocess.run(["git", "-C", str(REPO), "worktree", "add", "--detach", str(old),
                        args.baseline], check=True, capture_output=True)  # fmt: skip
        try:
            for n in args.functions:
                root = tmp / f"site-{n}"
                root.mkdir()
                text = minified_js(n)
                (root / "app.min.js").write_text(text)
                codes = [("this change", REPO / "src")]
                if n <= args.baseline_max:
                    codes.insert(0, (args.baseline, old / "src"))
                for label, src in codes:
                    home = tmp / f"home-{n}-{label.replace(' ', '-')}"
                    result = run_index(src, root, home, args.limit)
                    rows.append((n, len(text), label, result))
                    print(n, label, result, flush=True)
        finally:
            subprocess.run(["git", "-C", str(REPO), "worktree", "remove", "--force", str(old)],
                           capture_output=True)  # fmt: skip
    lines = [
        "# One minified line: what an index run costs",
        "",
        f"`python bench/minified.py --functions {' '.join(map(str, args.functions))} "
        f"--baseline {args.baseline}` on {time.strftime('%Y-%m-%d')}, {platform.machine()}, "
        f"{os.cpu_count()} cores, Python {platform.python_version()}; both codes in the same "
        "run, one process each. A file of `functions` top-level JavaScript functions on one "
        "line.",
        "",
        "| functions | file bytes | code | seconds | chunks | index bytes | index / file | peak RSS MB |",
        "|---|---|---|---|---|---|---|---|",
    ]
    for n, size, label, r in rows:
        if "error" in r:
            lines.append(f"| {n} | {size:,} | {label} | {r['error']} | | | | |")
            continue
        peak = f"{r['peak_mb']:.0f}" if r["peak_mb"] else "?"
        lines.append(
            f"| {n} | {size:,} | {label} | {r['seconds']:.1f} | {r['chunks']:,} | "
            f"{r['index_bytes']:,} | {r['index_bytes'] / size:.1f}x | {peak} |"
        )
    Path(args.out).write_text("\n".join(lines) + "\n")
    print(Path(args.out).read_text())
    return 0


if __name__ == "__main__":
    sys.exit(main())
