"""`:RepoContext definition` against jedi's goto, on Python projects the look-ups were not
written against (click, requests, jinja2).

Tasks: the names jedi reads as uses (not definitions) in a project's source files, sampled
(seed 0, `--per-project` of them); a task is kept when jedi's `goto` (imports followed) names
exactly one definition with a line inside the project, at another place than the use. Ours:
`Repository.definition(word, path, place=...)` with the file's text and the use's place, what
the editor sends. A hit at k: one of our first k results is in jedi's file and its lines hold
jedi's line. Each task is also labelled by what jedi found (a function, a class, a parameter,
a variable, an attribute...) and whether the use is a member after a dot.

`--src DIR`: import repocontext from DIR instead (the baseline, run in the same session:
`git archive <commit> src | tar -x -C /tmp/before`). Needs jedi (`pip install -e '.[bench]'`).

    python bench/lookups.py [--per-project 300] [--only click,requests] [--src DIR] [--out F]
"""

from __future__ import annotations

import argparse
import collections
import os
import platform
import random
import sys
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
REPO = HERE.parent
PROJECTS = {  # name: (sdist, the package's folder in it)
    "click": ("click==8.3.0", "src/click"),
    "requests": ("requests==2.32.3", "src/requests"),
    # not read while the rules were written (bench/results/lookups.md): the check of them
    "jinja2": ("jinja2==3.1.4", "src/jinja2"),
}


def tasks(root: Path, package: str, per_project: int) -> list[dict]:
    """Uses of names and jedi's one definition of each, sampled."""
    import jedi

    project = jedi.Project(str(root), added_sys_path=[str(root / package), str(root / "src")])
    files = sorted((root / package).rglob("*.py"))
    uses = []
    for path in files:
        text = path.read_text(encoding="utf-8")
        script = jedi.Script(text, path=str(path), project=project)
        for name in script.get_names(all_scopes=True, definitions=False, references=True):
            uses.append((path, text, name.line, name.column, name.name))
    random.Random(0).shuffle(uses)
    out = []
    for path, text, line, col, word in uses:
        if len(out) >= per_project:
            break
        script = jedi.Script(text, path=str(path), project=project)
        found = script.goto(line, col, follow_imports=True)
        if len(found) != 1 or found[0].line is None or found[0].module_path is None:
            continue
        target = Path(found[0].module_path)
        if root not in target.parents or (target == path and found[0].line == line):
            continue
        row = text.split("\n")[line - 1]
        out.append(
            {
                "path": str(path.relative_to(root)),
                "text": text,
                "line": line,
                "col": len(row[:col].encode("utf-8")),
                "word": word,
                "want": (str(target.relative_to(root)), found[0].line),
                "kind": found[0].type,
                "member": col > 0 and row[col - 1] == ".",
            }
        )
    return out


def rank(results, want: tuple[str, int]) -> int | None:
    path, line = want
    for i, r in enumerate(results, 1):
        if r.path == path and r.start_line <= line <= r.end_line:
            return i
    return None


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--per-project", type=int, default=300)
    ap.add_argument("--src", help="import repocontext from this folder (the baseline)")
    ap.add_argument("--only", help="these projects, comma-separated")
    ap.add_argument("--out")
    args = ap.parse_args()
    sys.path.insert(0, args.src or str(REPO / "src"))
    import repocontext  # before search_sets, which puts this checkout's src first
    from repocontext import Repository
    from repocontext.search.lookups import BufferPlace

    sys.path.insert(0, str(HERE))
    from search_sets import fetch_sdist

    code = Path(repocontext.__file__).parent.parent

    rows, by_kind = [], collections.defaultdict(lambda: [0, 0, 0])
    started = time.time()
    chosen = args.only.split(",") if args.only else list(PROJECTS)
    for name, (spec, package) in ((n, PROJECTS[n]) for n in chosen):
        root = fetch_sdist(spec)
        os.environ["REPOCONTEXT_HOME"] = str(REPO / ".bench-cache" / f"home-lookups-{name}")
        repo = Repository(root)
        repo.index()  # lexical only: the look-ups read no vectors
        todo = tasks(root, package, args.per_project)
        hits1 = hits3 = 0
        for t in todo:
            place = BufferPlace(t["text"], t["line"], t["col"])
            try:
                results = repo.definition(t["word"], t["path"], place=place).results
            except Exception:  # a refused word (a keyword): a miss
                results = []
            at = rank(results, t["want"])
            key = (t["kind"] + (" (member)" if t["member"] else ""),)
            for k in (key, ("all",)):
                by_kind[k][0] += 1
                by_kind[k][1] += at == 1
                by_kind[k][2] += at is not None and at <= 3
            hits1 += at == 1
            hits3 += at is not None and at <= 3
        rows.append((name, spec, len(todo), hits1, hits3))
    asked = " ".join(
        f"--{key.replace('_', '-')} {value}"
        for key, value in vars(args).items()
        if value and key != "out"
    )
    lines = [
        "# `:RepoContext definition` against jedi's goto",
        "",
        f"Command: `python bench/lookups.py {asked}`  ",
        f"Machine: {platform.machine()}, {os.cpu_count()} cores, Python "
        f"{platform.python_version()}, {time.strftime('%Y-%m-%d %H:%M')}, "
        f"{time.time() - started:.0f} s; repocontext from {code}",
        "",
        "| project | corpus | tasks | first | in the first 3 |",
        "|---|---|---|---|---|",
        *(
            f"| {n} | `{s}` | {t} | {a} ({a / max(t, 1):.0%}) | {b} ({b / max(t, 1):.0%}) |"
            for n, s, t, a, b in rows
        ),  # fmt: skip
        "",
        "| what jedi found | tasks | first | in the first 3 |",
        "|---|---|---|---|",
        *(
            f"| {k[0]} | {v[0]} | {v[1]} ({v[1] / v[0]:.0%}) | {v[2]} ({v[2] / v[0]:.0%}) |"
            for k, v in sorted(by_kind.items(), key=lambda kv: -kv[1][0])
        ),  # fmt: skip
    ]
    text = "\n".join(lines) + "\n"
    print(text)
    if args.out:
        Path(args.out).write_text(text)


if __name__ == "__main__":
    main()
