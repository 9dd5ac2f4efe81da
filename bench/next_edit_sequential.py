"""The next edit replayed place after place, as a user carries a change through a file.

    python bench/next_edit_sequential.py [--repos ...] [--tuned | --held-out] [--out FILE]

bench/next_edit.py makes a commit's first change and asks once which other places follow.
A user goes on: at each later place of the commit (top to bottom) either the plugin shows the
commit's line there (right: the user takes it with <Tab>, no new request) or the user makes
the change by hand, and that edit asks the engine again, with what it remembers of the edits
before (nextedit/memory.py: a change made twice is a pattern). So each later place is right
when the last answer shown before the user got there proposed it, word for word.

Rows, on the same cases as bench/next_edit.py (its cache of git history):
- once: bench/next_edit.py's measure (the first edit's answer only);
- place after place, no memory: each hand-made edit asked as if it were the first;
- place after place, memory: the engine as the plugin runs it (REPEATED_LOGIT), and the
  other values of that weight (the tuned-on repositories chose it);
- following the plugin: the places as nextedit.lua shows them, one drawn at a time in the
  engine's order (nearest the edit first). The user takes the drawn one with <Tab> <Tab>
  while it is the commit's (a later place, or another change the commit made, word for word),
  and at the first wrong one drawn leaves the chain (the rest of that answer is never seen)
  and makes the topmost change left by hand, which asks again. The rows above read every
  place of an answer as seen and taken in the user's order, top to bottom; this one reads
  what the screen shows.

Wrong: every distinct proposal shown (following the plugin: drawn) at a line the commit did
not change that way (a line it left alone, or changed otherwise), over all the answers of a
case; another change the commit made, word for word, counts as neither. Of the lines changed
otherwise, a proposal that does part of the commit's change there (next_edit.is_step) is a
step: wrong all the same, and counted apart.
"""

from __future__ import annotations

import argparse
import os
import platform
import sys
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from functools import partial
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))

from next_edit import DEFAULT_REPOS, TUNED, cached_cases, git_dir, is_step, label_of  # noqa: E402
from stats import percentile  # noqa: E402

from repocontext.nextedit import propose  # noqa: E402
from repocontext.nextedit.memory import REPEATED_LOGIT, EditMemory  # noqa: E402
from repocontext.nextedit.propose import MIN_CONFIDENCE  # noqa: E402

LOGITS = (1.0, 1.5, 2.0, 3.0)


@dataclass
class Row:
    cases: int = 0
    later: int = 0
    right: int = 0
    wrong: int = 0
    otherwise: int = 0
    steps: int = 0  # of them, a step of the commit's change there (next_edit.is_step)
    asked: int = 0  # edits the user made by hand (each one asks the engine)
    times: list[float] = field(default_factory=list)

    def add(self, other: Row) -> None:
        for name in ("cases", "later", "right", "wrong", "otherwise", "steps", "asked"):
            setattr(self, name, getattr(self, name) + getattr(other, name))
        self.times += other.times

    def cells(self) -> str:
        pct = 100 * self.right / self.later if self.later else float("nan")
        per10 = 10 * self.wrong / self.right if self.right else float("nan")
        apart = 10 * (self.wrong - self.steps) / self.right if self.right else float("nan")
        return (
            f"{self.cases} | {self.later} | {self.right} | {pct:.1f} | {self.wrong} "
            f"| {self.otherwise} | {self.steps} | {per10:.2f} | {apart:.2f} | {self.asked} "
            f"| {percentile(self.times, 50):.1f} | {percentile(self.times, 95):.1f}"
        )


@dataclass
class Replay:
    """A case being replayed: the file's lines as the user has them now, the commit's line at
    each later place, the wrong proposals counted so far."""

    case: object
    row: Row
    here: list  # the later places in the edited file, top to bottom
    lines: list[str]
    memory: EditMemory | None
    old_lines: list[str] = field(default_factory=list)
    expected: dict[int, str] = field(default_factory=dict)
    seen_wrong: set[tuple[int, str]] = field(default_factory=set)

    @classmethod
    def start(cls, case, before: str, row: Row, memory: EditMemory | None) -> Replay | None:
        first = case.places[0]
        here = sorted((p for p in case.places[1:] if p.path == first.path), key=lambda p: p.line)
        lines = before.split("\n")
        if not here or lines[first.line - 1] != first.old:
            return None
        row.cases += 1
        row.later += len(here)
        expected = {p.line: p.new.rstrip() for p in here}
        return cls(case, row, here, lines, memory, list(lines), expected)

    @property
    def path(self) -> str:
        return self.case.places[0].path

    def by_hand(self, place, logit: float, threshold: float) -> list:
        """The user makes the change at `place`; the engine's answer (this file's places)."""
        text = "\n".join(self.lines)
        self.lines[place.line - 1] = place.new
        started = time.perf_counter()
        shown = propose(
            text, "\n".join(self.lines), self.path, memory=self.memory,
            repeated_logit=logit, min_confidence=threshold,
        )  # fmt: skip
        self.row.times.append((time.perf_counter() - started) * 1000)
        self.row.asked += 1
        return [p for p in shown if p.path == self.path]

    def label(self, prop) -> str:
        """right (a later place, word for word), other (another change of the commit, word
        for word: neither) or wrong."""
        kind = label_of(self.case, self.old_lines, self.expected, prop.line, prop.new_line)
        return kind if kind in ("right", "other") else "wrong"

    def wrong(self, prop) -> None:
        """A wrong proposal shown: counted once per case (line and text)."""
        if (prop.line, prop.new_line) in self.seen_wrong:
            return
        self.seen_wrong.add((prop.line, prop.new_line))
        changed = self.case.changed.get((self.path, prop.line))
        self.row.wrong += 1
        if changed is not None:
            self.row.otherwise += 1
            self.row.steps += is_step(self.old_lines[prop.line - 1], prop.new_line, changed)


def replay(case, before: str, row: Row, *, once: bool, logit: float | None, threshold: float):
    """One case: the first change, then each later place of its file top to bottom."""
    r = Replay.start(case, before, row, EditMemory() if logit is not None else None)
    if r is None:
        return

    def ask(place) -> list:
        shown = r.by_hand(place, logit or 0.0, threshold)
        for prop in shown:
            if r.label(prop) == "wrong":
                r.wrong(prop)
        return shown

    shown = ask(case.places[0])
    for place in r.here:
        hit = any(p.line == place.line and p.new_line.rstrip() == place.new.rstrip() for p in shown)
        if hit:
            row.right += 1
            r.lines[place.line - 1] = place.new  # taken with <Tab>: no request
        elif once:
            r.lines[place.line - 1] = place.new
        else:
            shown = ask(place)


def follow(case, before: str, row: Row, *, logit: float, threshold: float):
    """One case as the plugin shows it: one place drawn at a time, in the engine's order. The
    user takes the drawn place with <Tab> <Tab> while it is the commit's (one of its later
    places, or another change it made word for word), and leaves the chain at the first wrong
    one drawn (a wrong one counted, the rest of the list never seen); then makes the topmost
    change left by hand, which asks the engine again."""
    r = Replay.start(case, before, row, EditMemory())
    if r is None:
        return
    left = {p.line: p for p in r.here}
    shown = r.by_hand(case.places[0], logit, threshold)
    while True:
        for prop in shown:
            kind = r.label(prop)
            if kind == "wrong":
                r.wrong(prop)
                break
            r.lines[prop.line - 1] = prop.new_line  # taken with <Tab> <Tab>: no request
            if kind == "right" and left.pop(prop.line, None) is not None:
                row.right += 1
        if not left:
            return
        shown = r.by_hand(left.pop(min(left)), logit, threshold)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--repos", default=",".join(DEFAULT_REPOS))
    parser.add_argument("--tuned", action="store_true", help="the tuned-on repositories only")
    parser.add_argument("--held-out", action="store_true", help="the held-out ones only")
    parser.add_argument("--logits", default=",".join(map(str, LOGITS)))
    parser.add_argument("--threshold", type=float, default=MIN_CONFIDENCE)
    parser.add_argument("--out", default=None)
    args = parser.parse_args()
    if args.tuned:
        args.repos = ",".join(TUNED)
    elif args.held_out:
        args.repos = ",".join(r for r in DEFAULT_REPOS if r not in TUNED)
    os.nice(5)
    repos = args.repos.split(",")
    cases = {repo: cached_cases(repo, git_dir(repo), None) for repo in repos}
    th = args.threshold
    variants: list[tuple[str, Callable]] = [
        ("once (bench/next_edit.py)", partial(replay, once=True, logit=None, threshold=th)),
        ("place after place, no memory", partial(replay, once=False, logit=None, threshold=th)),
    ]
    logits = [float(x) for x in args.logits.split(",")]
    for logit in logits:
        shipped = " (shipped)" if logit == REPEATED_LOGIT else ""
        variants.append((f"place after place, memory, +{logit:g} log-odds{shipped}",
                         partial(replay, once=False, logit=logit, threshold=th)))  # fmt: skip
    for logit in logits:
        shipped = " (shipped)" if logit == REPEATED_LOGIT else ""
        variants.append((f"following the plugin, memory, +{logit:g} log-odds{shipped}",
                         partial(follow, logit=logit, threshold=th)))  # fmt: skip
    table: dict[str, dict[str, Row]] = {}
    for label, run in variants:
        rows = table[label] = {}
        for repo in repos:
            row = rows[repo] = Row()
            for case, before in cases[repo]:
                if before is not None:
                    run(case, before, row)
        tuned, held = _sums(rows)
        print(f"{label}: tuned {tuned.cells()} | held {held.cells()}", file=sys.stderr)
    report = render(table, repos, args)
    print(report)
    if args.out:
        Path(args.out).write_text(report)


def _sums(rows: dict[str, Row]) -> tuple[Row, Row]:
    tuned, held = Row(), Row()
    for repo, row in rows.items():
        (tuned if repo in TUNED else held).add(row)
    return tuned, held


HEAD = (
    "| replay | cases | later places | right | right % | wrong | of them changed otherwise "
    "| of those a step of the commit's change | wrong per 10 right | the same, steps apart "
    "| edits by hand | ms p50 | ms p95 |\n"
    "|---|---|---|---|---|---|---|---|---|---|---|---|---|"
)


def render(table: dict[str, dict[str, Row]], repos: list[str], args) -> str:
    command = "python bench/next_edit_sequential.py"
    if args.repos != ",".join(DEFAULT_REPOS):
        command += f" --repos {args.repos}"
    out = [
        f"Command: `{command}`  ",
        f"Machine: {platform.machine()}, {os.cpu_count()} cores, Python "
        f"{platform.python_version()}, {time.strftime('%Y-%m-%d %H:%M')}; shown threshold "
        f"{args.threshold}",
        "",
    ]
    for title, pick in (("Tuned on (" + ", ".join(TUNED) + ")", 0), ("Held out", 1)):
        out += ["", f"### {title}", "", HEAD]
        for label, rows in table.items():
            out.append(f"| {label} | {_sums(rows)[pick].cells()} |")
    for shipped in [label for label in table if "(shipped)" in label]:
        how = shipped.split(",")[0]
        out += [
            "",
            f"### Each repository, the engine as shipped, {how}",
            "",
            HEAD.replace("replay", "repository"),
        ]
        for repo in repos:
            out.append(f"| {repo} | {table[shipped][repo].cells()} |")
    return "\n".join(out) + "\n"


if __name__ == "__main__":
    main()
