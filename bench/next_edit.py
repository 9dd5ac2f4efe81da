"""The next edit (issue 53), measured on real history: commits that make the same replacement
at two or more places.

    python bench/next_edit.py [--repos spf13+cobra,colinhacks+zod,...] [--out FILE]

Cases come from the git history of the mirrors under /work/.mirror/ (read with `git log -p`
and `git show`; nothing of those repositories is run). In each commit's diff, every hunk whose
removed and added lines are as many is read line by line; a line's change is what differs
between its tokens' common start and common end (`count` → `total`, `(a, b)` → `(a, b, c)`),
with spacing ignored. A change holding a letter or a digit that the commit makes on two or
more lines is a multi-place replacement; a commit's largest one is its case. Commits of more
than MAX_FILES files (formatting sweeps, vendored copies) and paths under vendor/, dist/ or
node_modules/ are left out.

For each case the file is taken as it was before the commit, its FIRST changed line only is
replaced by the commit's new line, and the engine (repocontext.nextedit.propose, in-process,
not through Neovim) is asked for the next places. Each later place of the case in that file
is right when a proposal names its line and the exact new line; a proposal the commit did not
make is wrong: at a line the commit left alone, or at a line it changed in another way
(counted apart as "changed otherwise"); a proposal that is another line change of the same
commit counts as neither. Later places in other files need the repository's index at that
commit: they are counted, out of scope here.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import os
import pickle
import platform
import re
import subprocess
import sys
import time
from collections import defaultdict
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path

HERE = Path(__file__).resolve().parent
REPO = HERE.parent
# NEXT_EDIT_SRC: another engine's src/ (a `git archive` of an older commit), to compare
sys.path.insert(0, os.environ.get("NEXT_EDIT_SRC", str(REPO / "src")))
sys.path.insert(0, str(HERE))

from stats import percentile  # noqa: E402

from repocontext.lang.languages import EXTENSIONS, language_for  # noqa: E402
from repocontext.nextedit import explain, propose  # noqa: E402
from repocontext.nextedit.propose import MAX_PLACES as MAX_SHOWN  # noqa: E402
from repocontext.nextedit.propose import MIN_CONFIDENCE  # noqa: E402
from repocontext.nextedit.syntax import Syntax  # noqa: E402

MIRRORS = Path("/work/.mirror")
# tuned on (thresholds and confidences chosen looking at these); the others are held out
TUNED = ("spf13+cobra", "colinhacks+zod", "gin-gonic+gin")
# held out too (seventh session): a language the score's fit never saw
PYTHON = ("pallets+click", "python-attrs+attrs", "encode+httpx")
DEFAULT_REPOS = (
    "spf13+cobra",
    "colinhacks+zod",
    "gin-gonic+gin",
    "go-chi+chi",
    "sirupsen+logrus",
    "gorilla+mux",
    "tj+commander.js",
    "expressjs+express",
    "immerjs+immer",
    "pmndrs+zustand",
    *PYTHON,
)
LANGUAGES = {"go", "javascript", "typescript", "tsx", "python"}
MAX_FILES = 30
SHOW = False
SHOW_ALL = False
DUMP = None  # --dump: every proposal's features and label, one JSON line each
MAX_PLACES = 200
EVERY = 10**6  # propose's limit here: all places, cut per threshold as the plugin cuts
SKIP = re.compile(r"(^|/)(vendor|dist|node_modules|third_party)/|\.min\.js$")
_TOKEN = re.compile(r"""[A-Za-z_$][\w$]*|\d[\w.]*|"(?:\\.|[^"\\])*"?|'(?:\\.|[^'\\])*'?|\S""")
_HUNK = re.compile(r"^@@ -(\d+)(?:,(\d+))? \+(\d+)(?:,(\d+))? @@")
_GIT_ENV = {
    **os.environ,
    "GIT_CONFIG_NOSYSTEM": "1",
    "GIT_CONFIG_GLOBAL": os.devnull,
    "GIT_PAGER": "cat",
    "GIT_TERMINAL_PROMPT": "0",
}


@dataclass
class Hunk:
    path: str
    old_start: int
    removed: list[str] = field(default_factory=list)
    added: list[str] = field(default_factory=list)


@dataclass(frozen=True)
class Place:
    path: str
    line: int  # 1-based, in the file before the commit
    old: str
    new: str


@dataclass
class Case:
    repo: str
    commit: str
    key: tuple
    places: list[Place]
    changed: dict[tuple[str, int], set[str]]  # (path, old line) → new lines of its hunk


@dataclass
class Tally:
    """One repository's cases: every proposal with its confidence, rule and label (right,
    wrong, otherwise: wrong at a line the commit changed in another way, step: such a wrong
    that does part of the commit's change there (is_step), other: another change the commit
    made), so that any threshold can be read from it."""

    commits: int = 0
    later: int = 0  # later places in the edited file
    in_text: int = 0  # of them, in a comment or a string (never proposed, by design)
    other_files: int = 0  # later places in other files (out of scope here)
    times: list[float] = field(default_factory=list)
    later_by_rule: dict[str, int] = field(default_factory=lambda: defaultdict(int))
    # each case's proposals in the engine's order, whatever their confidence: (confidence,
    # rule, label); at a threshold the plugin shows the first MAX_SHOWN of those above it
    ranked: list[list[tuple[float, str, str]]] = field(default_factory=list)

    def add(self, other: Tally) -> None:
        for name in ("commits", "later", "in_text", "other_files"):
            setattr(self, name, getattr(self, name) + getattr(other, name))
        self.times += other.times
        self.ranked += other.ranked
        for rule, n in other.later_by_rule.items():
            self.later_by_rule[rule] += n

    def shown(self, threshold: float) -> Iterator[list[tuple[float, str, str]]]:
        """Each case's proposals the plugin shows at this threshold (propose's own cut: the
        first MAX_SHOWN of those as sure as it, nearest first)."""
        for ranked in self.ranked:
            yield [p for p in ranked if p[0] >= threshold][:MAX_SHOWN]

    def count(self, label: str, threshold: float, rule: str | None = None) -> int:
        return sum(
            1
            for shown in self.shown(threshold)
            for _, r, lab in shown
            if lab == label and (rule is None or r == rule)
        )

    def next_right(self, threshold: float) -> tuple[float, int]:
        """The share of cases whose first shown proposal is right (the one the user sees
        first), and how many cases show a wrong one first."""
        right = wrong = 0
        for ranked in self.shown(threshold):
            shown = [label for _, _, label in ranked if label != "other"]
            if shown and shown[0] == "right":
                right += 1
            elif shown:
                wrong += 1
        return (100 * right / len(self.ranked) if self.ranked else float("nan")), wrong

    def scores(self, threshold: float) -> tuple[int, int, int, float, float]:
        """right, wrong, of them otherwise, right %, wrong per 10 right (a step counts as
        wrong here: the issue's measure)."""
        right = self.count("right", threshold)
        steps = self.count("step", threshold)
        otherwise = self.count("otherwise", threshold) + steps
        wrong = self.count("wrong", threshold) + otherwise
        pct = 100 * right / self.later if self.later else float("nan")
        per10 = 10 * wrong / right if right else float("nan")
        return right, wrong, otherwise, pct, per10

    def steps_apart(self, threshold: float) -> tuple[int, float]:
        """The wrong ones that are steps of the commit's change, and wrong per 10 right
        without them."""
        right, wrong, _, _, _ = self.scores(threshold)
        steps = self.count("step", threshold)
        return steps, (10 * (wrong - steps) / right if right else float("nan"))


def git_dir(name: str) -> Path:
    """The shallowest folder of the mirror with HEAD and objects/."""
    found = [
        Path(root)
        for root, dirs, files in os.walk(MIRRORS / name)
        if "HEAD" in files and "objects" in dirs
    ]
    if not found:
        raise SystemExit(f"no git directory under {MIRRORS / name}")
    return min(found, key=lambda p: len(p.parts))


def git(gd: Path, *args: str) -> str:
    out = subprocess.run(
        ["git", f"--git-dir={gd}", "-c", "core.quotePath=false", *args],
        capture_output=True, env=_GIT_ENV, check=True,
    )  # fmt: skip
    return out.stdout.decode("utf-8", "replace")


def tracked(path: str) -> bool:
    suffix = os.path.splitext(path)[1].lower()
    return EXTENSIONS.get(suffix) in LANGUAGES and not SKIP.search(path)


def commits_with_hunks(gd: Path):
    """(commit, parent, hunks) for every non-merge commit, newest first."""
    proc = subprocess.Popen(
        ["git", f"--git-dir={gd}", "-c", "core.quotePath=false", "log", "--no-merges",
         "--format=%x00%H %P", "-p", "--unified=0", "--no-color", "--no-ext-diff",
         "--no-textconv", "--no-renames"],
        stdout=subprocess.PIPE, env=_GIT_ENV,
    )  # fmt: skip
    assert proc.stdout is not None
    commit, parent, hunks, path, hunk = "", "", [], None, None
    for raw in proc.stdout:
        line = raw.decode("utf-8", "replace").rstrip("\n")
        if line.startswith("\x00"):
            if commit:
                yield commit, parent, hunks
            ids = line[1:].split()
            commit, parent = ids[0], (ids[1] if len(ids) > 1 else "")
            hunks, path, hunk = [], None, None
        elif line.startswith("diff --git "):
            path, hunk = None, None
        elif line.startswith("+++ "):
            target = line[4:]
            path = target[2:] if target.startswith("b/") else None
        elif line.startswith("--- "):
            continue
        elif line.startswith("@@"):
            m = _HUNK.match(line)
            if m and path is not None:
                hunk = Hunk(path, int(m.group(1)))
                hunks.append(hunk)
        elif hunk is not None and line[:1] == "-":
            hunk.removed.append(line[1:])
        elif hunk is not None and line[:1] == "+":
            hunk.added.append(line[1:])
    if commit:
        yield commit, parent, hunks
    proc.wait()


def change_key(old: str, new: str) -> tuple | None:
    """What differs between two versions of a line, as token texts; None: spacing only, or
    no letter or digit in it."""
    a, b = _TOKEN.findall(old), _TOKEN.findall(new)
    p = 0
    while p < min(len(a), len(b)) and a[p] == b[p]:
        p += 1
    s = 0
    while s < min(len(a), len(b)) - p and a[len(a) - 1 - s] == b[len(b) - 1 - s]:
        s += 1
    old_mid, new_mid = tuple(a[p : len(a) - s]), tuple(b[p : len(b) - s])
    if old_mid == new_mid or not re.search(r"\w", "".join(old_mid + new_mid)):
        return None
    return old_mid, new_mid


def _distance(a: list[str], b: list[str]) -> int:
    """Token edit distance (insert, delete, replace: one each)."""
    prev = list(range(len(b) + 1))
    for i, x in enumerate(a, 1):
        cur = [i]
        for j, y in enumerate(b, 1):
            cur.append(min(prev[j] + 1, cur[j - 1] + 1, prev[j - 1] + (x != y)))
        prev = cur
    return prev[-1]


def is_step(old: str, proposed: str, news: set[str]) -> bool:
    """Whether a proposal at a line the commit changed otherwise does part of the commit's
    change there: it lies on a shortest token path from the old line to the commit's new
    one (the hunk's added lines nearest the old one), so taking it leaves less to type, and
    nothing to undo (`ctx.data` → `data` where the commit wrote `return data as number`)."""
    a, p = _TOKEN.findall(old), _TOKEN.findall(proposed)
    if a == p or not news:
        return False
    far = {n: _distance(a, _TOKEN.findall(n)) for n in news}
    nearest = min(far.values())
    step = _distance(a, p)
    return any(step + _distance(p, _TOKEN.findall(n)) == d for n, d in far.items() if d == nearest)


def label_of(
    case: Case, before_lines: list[str], expected: dict[int, str], line: int, new_line: str
) -> str:
    """A proposal of the edited file at `line` (`expected`: each later place's line, its new
    text): right, other (another change of the commit, word for word), step (a step of the
    commit's change at a line it changed otherwise), otherwise, or wrong."""
    where = (case.places[0].path, line)
    if expected.get(line) == new_line.rstrip():
        return "right"
    changed = case.changed.get(where)
    if changed is None:
        return "wrong"
    if new_line.strip() in changed:
        return "other"
    return "step" if is_step(before_lines[line - 1], new_line, changed) else "otherwise"


def cases_of(repo: str, gd: Path, limit: int | None):
    for commit, parent, hunks in commits_with_hunks(gd):
        if not parent:
            continue
        files = {h.path for h in hunks}
        if len(files) > MAX_FILES:
            continue
        hunks = [h for h in hunks if tracked(h.path)]
        groups: dict[tuple, list[Place]] = defaultdict(list)
        changed: dict[tuple[str, int], set[str]] = {}
        for h in hunks:
            for i in range(len(h.removed)):
                changed[(h.path, h.old_start + i)] = {x.strip() for x in h.added}
            if len(h.removed) != len(h.added):
                continue
            for i, (old, new) in enumerate(zip(h.removed, h.added, strict=True)):
                key = change_key(old, new)
                if key is not None:
                    groups[key].append(Place(h.path, h.old_start + i, old, new))
        multi = [(k, v) for k, v in groups.items() if len(v) >= 2]
        if not multi:
            continue
        key, places = max(multi, key=lambda kv: len(kv[1]))
        yield Case(repo, commit, key, places[:MAX_PLACES], changed)
        if limit is not None:
            limit -= 1
            if limit <= 0:
                return


CACHE = Path(os.environ.get("NEXT_EDIT_CACHE", "/tmp/next_edit_cases"))
# pickled under this module's name whether it runs as a script or is imported
# (bench/next_edit_sequential.py reads the same cache)
for _kind in (Hunk, Place, Case):
    _kind.__module__ = "next_edit"
sys.modules.setdefault("next_edit", sys.modules[__name__])


def cached_cases(repo: str, gd: Path, limit: int | None) -> list[tuple[Case, str | None]]:
    """The repository's cases with the edited file as it was before each commit: read from
    git once per mirror HEAD, then from a pickle (git log -p is most of a run's time)."""
    head = git(gd, "rev-parse", "HEAD").strip()
    tag = hashlib.sha1(f"{repo} {head} {limit} {MAX_FILES}".encode()).hexdigest()[:12]
    path = CACHE / f"{repo}-{tag}.pkl"
    if path.exists():
        return pickle.loads(path.read_bytes())
    out: list[tuple[Case, str | None]] = []
    for case in cases_of(repo, gd, limit):
        first = case.places[0]
        if not any(p.path == first.path for p in case.places[1:]):
            out.append((case, None))
            continue
        out.append((case, git(gd, "show", f"{case.commit}^:{first.path}")))
    CACHE.mkdir(parents=True, exist_ok=True)
    path.write_bytes(pickle.dumps(out))
    return out


def run_case(case: Case, before: str | None, tally: Tally) -> None:
    first = case.places[0]
    later = case.places[1:]
    here = [p for p in later if p.path == first.path]
    tally.other_files += len(later) - len(here)
    if not here or before is None:
        return
    lines = before.split("\n")
    if lines[first.line - 1] != first.old:
        return  # the diff and the file disagree (a CRLF file): not a case
    lines[first.line - 1] = first.new
    after = "\n".join(lines)
    started = time.perf_counter()
    # every place: the plugin's cut (the first MAX_SHOWN shown) is made per threshold
    proposals = propose(before, after, first.path, min_confidence=0.0, limit=EVERY)
    tally.times.append((time.perf_counter() - started) * 1000)
    tally.commits += 1
    tally.later += len(here)
    rep = explain(before, after, first.path)
    tally.later_by_rule[rep.rule if rep is not None else "none"] += len(here)
    syntax = Syntax(before, language_for(first.path))
    lines_before = before.split("\n")
    expected = {(p.path, p.line): p.new for p in here}
    for p in here:
        if not _in_code(syntax, p):
            tally.in_text += 1
    hit = set()
    log = []
    ranked: list[tuple[float, str, str]] = []
    tally.ranked.append(ranked)
    by_line = {p.line: p.new.rstrip() for p in here}
    for prop in proposals:
        label = label_of(case, lines_before, by_line, prop.line, prop.new_line)
        if label == "right":
            hit.add((prop.path, prop.line))
        ranked.append((prop.confidence, prop.rule, label))
        if DUMP is not None:
            DUMP.write(json.dumps({"repo": case.repo, "commit": case.commit[:10],
                                   "line": prop.line, "rule": prop.rule, "label": label,
                                   "distance": prop.distance,
                                   "features": dict(prop.features)}) + "\n")  # fmt: skip
        log.append(
            f"    {label} {prop.rule} {prop.confidence} L{prop.line}: {prop.new_line.strip()}"
        )
    if SHOW and (SHOW_ALL or any(lab in ("wrong", "otherwise", "step") for _, _, lab in ranked)):
        print(f"== {case.repo} {case.commit[:10]} {first.path}:{first.line} {case.key}",
              file=sys.stderr)  # fmt: skip
        print(f"   - {first.old.strip()}\n   + {first.new.strip()}", file=sys.stderr)
        for line in log:
            print(line, file=sys.stderr)
        for where, new in expected.items():
            if where not in hit:
                print(f"    missed L{where[1]}: {new.strip()}", file=sys.stderr)


def _in_code(syntax: Syntax, place: Place) -> bool:
    """Whether the commit's change at a later place is in code (not a comment, a string)."""
    key = change_key(place.old, place.new)
    row = place.line - 1
    if key is None or row >= len(syntax.lines):
        return True
    toks = [m for m in _TOKEN.finditer(place.old)]
    p = 0
    new_toks = _TOKEN.findall(place.new)
    while p < min(len(toks), len(new_toks)) and toks[p].group() == new_toks[p]:
        p += 1
    at = toks[p].start() if p < len(toks) else max(len(place.old) - 1, 0)
    return syntax.is_code(row, at, at + 1)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--repos", default=",".join(DEFAULT_REPOS))
    parser.add_argument("--limit", type=int, default=None, help="cases per repository")
    parser.add_argument("--out", default=None, help="write the markdown report here")
    parser.add_argument("--show", action="store_true", help="cases with a wrong proposal on stderr")
    parser.add_argument("--show-all", action="store_true", help="each case on stderr")
    parser.add_argument("--held-out", action="store_true", help="the held-out repositories only")
    parser.add_argument("--dump", default=None, help="each proposal's features (JSON lines)")
    parser.add_argument("--tuned", action="store_true", help="the tuned-on repositories only")
    args = parser.parse_args()
    global SHOW, SHOW_ALL, DUMP
    if args.dump:
        DUMP = open(args.dump, "w")  # noqa: SIM115
    SHOW, SHOW_ALL = args.show or args.show_all, args.show_all
    if args.tuned:
        args.repos = ",".join(TUNED)
    elif args.held_out:
        args.repos = ",".join(r for r in DEFAULT_REPOS if r not in TUNED)
    os.nice(5)
    rows: dict[str, Tally] = {}
    for repo in args.repos.split(","):
        gd = git_dir(repo)
        tally = Tally()
        for case, before in cached_cases(repo, gd, args.limit):
            run_case(case, before, tally)
        rows[repo] = tally
        print(repo, line_of(tally), file=sys.stderr)
    tuned, held = Tally(), Tally()
    for repo, t in rows.items():
        (tuned if repo in TUNED else held).add(t)
    for th in THRESHOLDS:
        print(f"@{th} tuned {line_of(tuned, th)}", file=sys.stderr)
        print(f"@{th} held  {line_of(held, th)}", file=sys.stderr)
    report = render(rows, args)
    print(report)
    if args.out:
        Path(args.out).write_text(report)


WRONG = ("wrong", "otherwise", "step")
THRESHOLDS = (0.5, 0.6, 0.7, 0.8, 0.9, 0.92, 0.95)


def line_of(t: Tally, threshold: float = MIN_CONFIDENCE) -> str:
    right, wrong, otherwise, pct, per10 = t.scores(threshold)
    first, first_wrong = t.next_right(threshold)
    return (
        f"commits {t.commits} later {t.later} right {right} ({pct:.1f}%) wrong {wrong} "
        f"next right {first:.1f}% (wrong first {first_wrong}) "
        f"({per10:.2f}/10 right; {otherwise} at lines changed otherwise, "
        f"{t.steps_apart(threshold)[0]} steps: {t.steps_apart(threshold)[1]:.2f}/10 apart) "
        f"p50 {percentile(t.times, 50):.2f} ms p95 {percentile(t.times, 95):.2f} ms"
    )


def render(rows: dict[str, Tally], args) -> str:
    tuned, held, python, total = Tally(), Tally(), Tally(), Tally()
    for repo, t in rows.items():
        (tuned if repo in TUNED else held).add(t)
        if repo in PYTHON:
            python.add(t)
        total.add(t)
    out = [
        "# The next edit on real history (issue 53)",
        "",
        f"Command: `python bench/next_edit.py{' --repos ' + args.repos if args.repos != ','.join(DEFAULT_REPOS) else ''}`  ",
        f"Machine: {platform.machine()}, {os.cpu_count()} cores, Python "
        f"{platform.python_version()}, {time.strftime('%Y-%m-%d %H:%M')}  ",
        f"Engine: `repocontext.nextedit.propose`, called in-process (not through Neovim); "
        f"shown threshold {MIN_CONFIDENCE}.",
        "",
        f"## At the default threshold ({MIN_CONFIDENCE})",
        "",
        "| repository | commits | later places | in strings/comments | right | right % | wrong "
        "| of them changed otherwise | of those a step of the commit's change "
        "| wrong per 10 right | the same, steps apart | next place right % "
        "| first shown wrong | other files (out of scope) | ms p50 | ms p95 |",
        "|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|",
    ]
    for name, t in [*rows.items(), ("tuned on (" + ", ".join(TUNED) + ")", tuned),
                    ("held out (the rest)", held),
                    *([("of them Python (" + ", ".join(PYTHON) + ")", python)] if python.commits else []),
                    ("total", total)]:  # fmt: skip
        right, wrong, otherwise, pct, per10 = t.scores(MIN_CONFIDENCE)
        steps, apart = t.steps_apart(MIN_CONFIDENCE)
        first, first_wrong = t.next_right(MIN_CONFIDENCE)
        bold = "**" if name in ("total",) or name.startswith("held") else ""
        out.append(
            f"| {bold}{name}{bold} | {t.commits} | {t.later} | {t.in_text} | {right} | {pct:.1f} "
            f"| {wrong} | {otherwise} | {steps} | {per10:.2f} | {apart:.2f} "
            f"| {first:.1f} | {first_wrong} "
            f"| {t.other_files} "
            f"| {percentile(t.times, 50):.1f} | {percentile(t.times, 95):.1f} |"
        )
    out += [
        "",
        "## By threshold (held out, then tuned on)",
        "",
        "| threshold | held out: right % | wrong per 10 right | steps apart "
        "| next place right % | tuned on: right % | wrong per 10 right | steps apart "
        "| next place right % |",
        "|---|---|---|---|---|---|---|---|---|",
    ]
    for th in THRESHOLDS:
        _, _, _, hp, hw = held.scores(th)
        _, _, _, tp, tw = tuned.scores(th)
        ha, ta = held.steps_apart(th)[1], tuned.steps_apart(th)[1]
        hn, tn = held.next_right(th)[0], tuned.next_right(th)[0]
        out.append(
            f"| {th} | {hp:.1f} | {hw:.2f} | {ha:.2f} | {hn:.1f} | {tp:.1f} | {tw:.2f} "
            f"| {ta:.2f} | {tn:.1f} |"
        )
    out += [
        "",
        "## By rule, all proposals whatever their confidence (tuned on | held out)",
        "",
        "| rule | confidence | right | wrong | right | wrong |",
        "|---|---|---|---|---|---|",
    ]
    from repocontext.nextedit.edits import CONFIDENCE

    for rule, conf in [*CONFIDENCE.items(), ("substitute", "score")]:
        out.append(
            f"| {rule} | {conf} | {tuned.count('right', 0, rule)} | "
            f"{sum(tuned.count(lab, 0, rule) for lab in WRONG)} | "
            f"{held.count('right', 0, rule)} | "
            f"{sum(held.count(lab, 0, rule) for lab in WRONG)} |"
        )
    return "\n".join(out) + "\n" + NOTES


NOTES = """
## What was measured, and what was not

- **Cases.** A commit's largest group of lines changed the same way (the same tokens
  between the common start and end of the old and new line, spacing ignored), two lines or
  more, in hunks of as many removed as added lines; merges, commits of more than 30 files
  and vendored or built paths left out. The first line of the group is replayed on the file
  as it was before the commit; the other lines of the group in that file are its later places.
- **Right**: a proposal at a later place's line whose whole new line is the commit's (trailing
  spaces aside). **Wrong**: any other proposal, except one that is another line change of
  the same commit, word for word (counted as neither). "Changed otherwise": wrong proposals
  at lines the commit changed in some other way (often the same rename and more); "a step
  of the commit's change": of those, the ones that do part of what the commit did there
  (the proposed line lies on a shortest token path from the old line to the commit's,
  `is_step`): taking one leaves less to type and nothing to undo. They count as wrong (the
  issue's measure); "steps apart" is wrong per 10 right without them.
- **In strings/comments**: later places whose change is inside a string or a comment of
  the file (embedded shell scripts, templates, messages, doc comments). The rules of
  edits.py propose a change there only where the edit itself was there and renamed one of
  the file's definitions; the substitution proposes there too, scored lower where the edit
  was in code, so most of them stay under the threshold.
- **Out of scope here**: later places in other files (the "other files" column). The engine
  reaches them through the index (`propose(..., store=...)`: a renamed definition's
  references, a changed call's callers), which would need each repository indexed at each
  commit's parent; not run. Nor is the Neovim side here: the engine's own time per call is
  above (in-process, the buffer parsed twice with tree-sitter, before and after);
  bench/next_edit_editor.py replays the same cases through a real Neovim and the plugin
  (the first line typed with real keys) and finds the plugin's places equal to these
  (bench/results/next_edit_editor.md); bench/next_edit_latency.py times the screen.
- **Direction.** The first line of a group is the topmost, so every later place in the file
  is below the edit; the engine does not read direction (distance is counted both ways, no
  feature tells above from below), so it gains nothing from that.
- **Other files at the new threshold.** The places the index links (`store=`) keep the
  rules' confidences times 0.9 and are not scored; at 0.8 a renamed definition's
  references in other files (0.837) are shown, where 0.85 hid them. Not measured here.
- **Next place right**: the share of cases whose first shown proposal (nearest the edit)
  is right: the one the user sees and jumps to. "First shown wrong": cases whose first shown
  proposal is wrong (a case may show none).
- **The engine.** Every edit is also read as a substitution (substitute.py): the tokens
  that differ between the old and the new line become the new text wherever they stand as
  whole tokens (an insertion is anchored on the tokens either side; the best-placed
  occurrence of a line only: replacing every one was less often the commit's line). Each
  place, whoever found it (the substitution, a rule of edits.py, or both), is scored by a
  logistic regression over what it reads: the tokens around it that read as around the edit
  (3 each side, the whole line), whether the old core is a name or a literal, how many places
  hold it, the rule that recognised the edit and its confidence, whether that rule proposes
  the same line, the distance, the same function. Around a renamed definition the tokens
  weigh nothing (its uses read nothing like it); a place a rule finds the same keeps at
  least that rule's confidence; a renamed bare name is not proposed inside a function that
  binds the old name itself, unless the edit's binding is there too. Places are listed
  nearest first (ordering by score instead changed next-place-right by under 0.5 points).
- **Tuning.** The rules of edits.py and their confidences were set on spf13/cobra and
  colinhacks/zod (the first engine). The score's features, weights (L2 penalty 100, of 0.01
  to 1000) and the default threshold (0.8: the most right places with at most 1 wrong per
  10 right) were chosen on spf13/cobra, colinhacks/zod and gin-gonic/gin only (`--dump`
  writes each proposal's features and label; `--tuned` runs those three). The seven other
  Go, JavaScript and TypeScript repositories are held out (and, since the seventh session,
  three Python ones, added after the score was fixed): read in aggregate (by rule and feature group) and, for
  expressjs/express's wrong proposals (most of the first engine's), case by case for their
  causes; the one fix from that is general (a wrapped argument is proposed only around an
  argument of the same shape, a name for a name, a literal for a literal: `utils.'hey'`,
  `String('1')` were proposed). No rule or weight was changed for a held-out commit; every
  change kept was kept for its effect on the tuned-on three.
- **Checked within the tuned-on three** by leaving one out (fit on two, threshold on those
  two for 1 wrong per 10 right, count on the third): L2 100 kept 24.1% right at 0.96 wrong
  per 10, against 22.5% (L2 30), 23.0% at 1.29 per 10 (L2 300), 22.5% at 1.15 per 10 with
  one-hot feature groups added, 22.4% without the definition's tokens weighing nothing.
- **A cap per edit** (the first N proposals only) did not lower wrong per 10 right on the
  tuned-on set at the same recall (first 10: 22.5% right, 0.96 per 10; first 1: 10.1%, 0.49;
  held out 23.1%, 2.15 and 11.1%, 0.90): not kept; next place right reads the first one.
- **Tried, not kept** (tuned-on figures decided): the binding check for definitions only,
  or skipping uses above a local's definition (fewer right, as many wrong); replacing every
  occurrence in a line; two more features (the line's first token and token count as the
  edited line's); a lighter L2 penalty (1: 24.0% right at 1 wrong per 10, against 26.5%).
- **Goals of issue 53 not met.** At the default threshold about a quarter of the later
  places are proposed right on both sets; held out, wrong proposals are 2.3 per 10 right
  (the goals: 50% and 1 per 10). Counted per edit, the first proposal shown (the one the
  user jumps to) is right for about 40% of the edits on both sets, and wrong for 13 of 606
  (tuned on) and 33 of 924 (held out): held out, 0.9 edits start on a wrong place per 10
  that start on a right one. Most wrong proposals left are places the commit left alone
  that read exactly like the ones it changed (identical sibling lines, a test's repeated
  setup, doc comments of other functions) or lines it changed in some other way as well
  (118 of 194 held out): nothing in the buffer tells them apart.
- One missing object in go-chi/chi's mirror (`git log -p` says `fatal: unable to read
  0b5888b3...`); its commits before it were read.
"""


if __name__ == "__main__":
    main()
