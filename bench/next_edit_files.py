"""The next edit in the other files: the places the index links to the edit, on real history.

    python bench/next_edit_files.py [--repos ...] [--limit N] [--out FILE]

bench/next_edit.py counts the later places in the edited file only; as many again are in
other files (its "other files" column). The engine reaches those through the index
(`propose(..., store=...)`: a renamed definition's references, a changed call's callers;
nextedit/places.py:linked_places). Here each case with a later place in another file is
replayed with the repository indexed as it was before the commit: the tree at the commit's
parent is written into a scratch folder (`git show`, file by file as the history moves from
one case's parent to the next, never run), indexed lexically (`Repository.index`, no
embeddings), and the engine asked with that index after the first change, as the plugin asks.

Right: a proposal in another file at a line the commit changed, with the commit's new line.
Wrong: any other proposal in another file (another change of the commit, word for word,
counts as neither). The edited file's own places are bench/next_edit.py's business.
"""

from __future__ import annotations

import argparse
import os
import platform
import shutil
import subprocess
import sys
import tempfile
import time
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))

from next_edit import _GIT_ENV, DEFAULT_REPOS, TUNED, cached_cases, git, git_dir, tracked  # noqa: E402
from stats import percentile  # noqa: E402

from repocontext import Repository  # noqa: E402
from repocontext.nextedit import explain, propose  # noqa: E402
from repocontext.nextedit.propose import MIN_CONFIDENCE  # noqa: E402

SHOW = False


@dataclass
class Row:
    cases: int = 0
    later: int = 0  # later places in other files
    linked: int = 0  # of them, in a file the engine read (linked to the edit)
    right: int = 0
    wrong: int = 0
    otherwise: int = 0
    by_rule: Counter = field(default_factory=Counter)  # later places by the rule recognised
    right_by_rule: Counter = field(default_factory=Counter)
    times: list[float] = field(default_factory=list)

    def add(self, other: Row) -> None:
        for name in ("cases", "later", "linked", "right", "wrong", "otherwise"):
            setattr(self, name, getattr(self, name) + getattr(other, name))
        self.by_rule.update(other.by_rule)
        self.right_by_rule.update(other.right_by_rule)
        self.times += other.times

    def cells(self) -> str:
        pct = 100 * self.right / self.later if self.later else float("nan")
        per10 = 10 * self.wrong / self.right if self.right else float("nan")
        return (
            f"{self.cases} | {self.later} | {self.linked} | {self.right} | {pct:.1f} "
            f"| {self.wrong} | {self.otherwise} | {per10:.2f} "
            f"| {percentile(self.times, 50):.0f} | {percentile(self.times, 95):.0f}"
        )


class Tree:
    """A scratch folder holding one repository's tracked source at a commit, moved from commit
    to commit by the files that differ."""

    def __init__(self, gd: Path, folder: Path):
        self.gd, self.folder, self.commit = gd, folder, None
        (folder / ".git").mkdir(parents=True, exist_ok=True)  # a project root, nothing in it

    def move_to(self, commit: str) -> None:
        if self.commit is None:
            names = git(self.gd, "ls-tree", "-r", "--name-only", commit).splitlines()
            changed = [("A", n) for n in names]
        else:
            out = git(self.gd, "diff", "--name-status", "--no-renames", self.commit, commit)
            changed = [tuple(line.split("\t", 1)) for line in out.splitlines() if "\t" in line]
        for status, name in changed:
            if not tracked(name):
                continue
            target = self.folder / name
            if status.startswith("D"):
                target.unlink(missing_ok=True)
                continue
            data = subprocess.run(
                ["git", f"--git-dir={self.gd}", "show", f"{commit}:{name}"],
                capture_output=True, env=_GIT_ENV,
            ).stdout  # fmt: skip
            target.parent.mkdir(parents=True, exist_ok=True)
            target.write_bytes(data)
        self.commit = commit


def run_repo(repo: str, limit: int | None, scratch: Path) -> Row:
    gd = git_dir(repo)
    row = Row()
    tree = Tree(gd, scratch / repo)
    cases = [
        case
        for case, _ in cached_cases(repo, gd, None)
        if any(p.path != case.places[0].path for p in case.places[1:])
    ][:limit]
    for case in cases:
        first = case.places[0]
        parent = git(gd, "rev-parse", f"{case.commit}^").strip()
        tree.move_to(parent)
        before = (tree.folder / first.path).read_text(errors="replace")
        lines = before.split("\n")
        if first.line > len(lines) or lines[first.line - 1] != first.old:
            continue
        lines[first.line - 1] = first.new
        after = "\n".join(lines)
        repository = Repository(tree.folder)
        repository.index()
        store = repository.open_store()
        try:
            started = time.perf_counter()
            found = propose(
                before,
                after,
                first.path,
                store=store,
                root=tree.folder,
                min_confidence=MIN_CONFIDENCE,
            )
            row.times.append((time.perf_counter() - started) * 1000)
        finally:
            store.close()
        rep = explain(before, after, first.path)
        rule = rep.rule if rep is not None else "none"
        elsewhere = [p for p in case.places[1:] if p.path != first.path]
        expected = {(p.path, p.line): p.new.rstrip() for p in elsewhere}
        read = {p.path for p in found if p.path != first.path}
        row.cases += 1
        row.later += len(elsewhere)
        row.linked += sum(1 for p in elsewhere if p.path in read)
        row.by_rule[rule] += len(elsewhere)
        for prop in found:
            if prop.path == first.path:
                continue
            where = (prop.path, prop.line)
            if expected.get(where) == prop.new_line.rstrip():
                row.right += 1
                row.right_by_rule[rule] += 1
            elif where in case.changed and prop.new_line.strip() in case.changed[where]:
                continue
            else:
                row.wrong += 1
                row.otherwise += where in case.changed
                if SHOW:
                    print(f"  wrong {case.commit[:10]} {rule} {prop.confidence} {first.path}: "
                          f"{first.old.strip()} -> {first.new.strip()}\n    {prop.path}:{prop.line}: "
                          f"{prop.new_line.strip()}", file=sys.stderr)  # fmt: skip
    return row


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--repos", default=",".join(DEFAULT_REPOS))
    parser.add_argument("--limit", type=int, default=None, help="cases per repository")
    parser.add_argument("--out", default=None)
    parser.add_argument("--show", action="store_true", help="each wrong proposal on stderr")
    args = parser.parse_args()
    global SHOW
    SHOW = args.show
    os.nice(5)
    scratch = Path(tempfile.mkdtemp(prefix="next-edit-files-"))
    os.environ["REPOCONTEXT_HOME"] = str(scratch / "home")  # the indexes go with the scratch
    rows: dict[str, Row] = {}
    try:
        for repo in args.repos.split(","):
            rows[repo] = run_repo(repo, args.limit, scratch)
            print(repo, rows[repo].cells(), file=sys.stderr)
    finally:
        shutil.rmtree(scratch, ignore_errors=True)
    report = render(rows, args)
    print(report)
    if args.out:
        Path(args.out).write_text(report)


HEAD = (
    "| repository | cases | later places in other files | in a file the engine read "
    "| right | right % | wrong | of them changed otherwise | wrong per 10 right "
    "| ms p50 | ms p95 |\n|---|---|---|---|---|---|---|---|---|---|---|"
)


def render(rows: dict[str, Row], args) -> str:
    command = "python bench/next_edit_files.py"
    if args.repos != ",".join(DEFAULT_REPOS):
        command += f" --repos {args.repos}"
    if args.limit:
        command += f" --limit {args.limit}"
    tuned, held, total = Row(), Row(), Row()
    for repo, row in rows.items():
        (tuned if repo in TUNED else held).add(row)
        total.add(row)
    out = [
        f"Command: `{command}`  ",
        f"Machine: {platform.machine()}, {os.cpu_count()} cores, Python "
        f"{platform.python_version()}, {time.strftime('%Y-%m-%d %H:%M')}; shown threshold "
        f"{MIN_CONFIDENCE}; ms: the engine's call with the index (reading the linked files)",
        "",
        HEAD,
    ]
    for name, row in [*rows.items(), ("tuned on (" + ", ".join(TUNED) + ")", tuned),
                      ("held out (the rest)", held), ("total", total)]:  # fmt: skip
        out.append(f"| {name} | {row.cells()} |")
    out += ["", "Later places in other files by the rule that recognised the first change "
            "(all repositories): places, of them right", "",
            "| rule | later places | right |", "|---|---|---|"]  # fmt: skip
    for rule, n in total.by_rule.most_common():
        out.append(f"| {rule} | {n} | {total.right_by_rule[rule]} |")
    return "\n".join(out) + "\n"


if __name__ == "__main__":
    main()
