"""The changes the user made lately: the same change made again further on is a change being
carried through the file, and the places ahead of it are surer.

One edit says little about the places that hold its old text (a rename may be local, an
argument added to one call only). The same tokens replaced the same way at a second place says
more: the user is carrying the change through the file, in a direction (from the first place
to the second), so the places ahead are likely next, the more so the more times the change
was made (by hand, or taken with <Tab> from what was shown): a second time says least. The
places between the two, left as they were, were passed over and are not shown again; if the
engine thought one of them likely, the change is chosen place by place, and the second edit
is read like any other.

A change can also be turned down: the place the plugin showed first for it (the nearest of
the answer not taken yet) was left as it was, and the user made the change somewhere else by
hand. Then the rest of that change needs `PASSED_BY_BRAKE` more confidence to be shown: one
lookalike line the user did not want says the others may be unwanted too.

`propose` asks `EditMemory.last_line`, `turned_down` and `times_made` before it scores, then
remembers the edit and what it showed (`shown`); the session keeps one memory for all its
buffers. Chosen on the history of the three tuned-on repositories replayed place after place,
then following the plugin on nineteen (bench/next_edit_sequential.py, results in
bench/results/next_edit.md).
"""

from __future__ import annotations

import math
from collections import deque
from dataclasses import dataclass, field, replace

from .edits import LineChange
from .places import NextEditPlace

# Added to the log-odds of each place ahead of a change made the second time; 1 and 2 were
# tried (2: 9 more right places in 100 on the tuned-on history, a third more wrong ones).
REPEATED_LOGIT = 1.5
# A place between the two edits at least this sure, left as it was, was passed over.
PASSED_OVER = 0.5
# The carry grows with the times a change was made (`carried_logit`): REPEATED_LOGIT the
# third and fourth time, a step less the second, a step more from the fifth. Following the
# plugin on nineteen projects' history (bench/next_edit_sequential.py, next_edit.md, twelfth
# session), steps of 0.5 and 1.0 and a bigger third time were tried; 0.5 took more places on
# every set than the same carry every time, for as many or fewer wrong ones.
LOGIT_STEP = 0.5
KEPT = 16  # the last edits remembered; a change is carried through in a run of edits
# After a change was turned down, its places need this much more confidence. Following the
# plugin on the history (bench/next_edit_sequential.py, threshold 0.8; next_edit.md, eleventh
# session), later places taken / wrong drawn per 10: tuned-on three 59.6% / 0.79 -> 58.1% /
# 0.73 (0.05: 59.2% / 0.76, 0.2: 57.0% / 0.65); held out, the ten 57.9% / 1.21 -> 57.1% /
# 1.08 and six fresh projects 50.1% / 1.11 -> 48.2% / 0.99, where a threshold of 0.82 gave
# 56.1% / 1.11 and 47.4% / 1.09: fewer wrong for the same places taken
PASSED_BY_BRAKE = 0.1

ChangeKey = tuple[tuple[str, ...], str, tuple[str, ...]]


def change_key(change: LineChange) -> ChangeKey:
    """What identifies a change wherever it is made: the old tokens, the new text, and for an
    insertion the tokens it was made between (`f(a)` → `f(a, ctx)` anywhere is one change)."""
    old = tuple(t.text for t in change.old_mid)
    anchors: tuple[str, ...] = ()
    if not old:
        toks = change.old_tokens
        left = toks[change.prefix - 1].text if change.prefix else ""
        right = toks[len(toks) - change.suffix].text if change.suffix else ""
        anchors = (left, right)
    return old, change.new_text.strip(), anchors


@dataclass
class EditMemory:
    """The last `KEPT` changes and where each was made (path, 0-based line). Read and written
    by the session's next-edit worker only (one thread)."""

    kept: int = KEPT
    _edits: deque[tuple[str, int, ChangeKey]] = field(default_factory=deque)
    # the last answer shown for each change: its path and, in the order the plugin draws
    # them, each place's line (0-based), its text then and the line proposed
    _shown: dict[ChangeKey, tuple[str, list[tuple[int, str, str]]]] = field(default_factory=dict)
    _turned_down: set[tuple[str, ChangeKey]] = field(default_factory=set)  # (path, change)
    # the places taken with <Tab> from the answers shown for each change in each file, so far
    _taken: dict[tuple[str, ChangeKey], int] = field(default_factory=dict)

    def last_line(self, path: str, line: int, key: ChangeKey) -> int | None:
        """The line (0-based) of the latest edit of `path` that made this change at another
        line."""
        lines = [n for p, n, k in self._edits if k == key and p == path and n != line]
        return lines[-1] if lines else None

    def moved(self, path: str, first: int, removed: int, added: int) -> None:
        """Lines `first` onward (0-based) of `path`, `removed` of them, are now `added` lines:
        the edits below move with them, and the ones in them are gone (a place remembered at a
        line that now holds other text would mark the wrong span as passed over)."""
        if removed == added:
            return
        end = first + removed
        self._edits = deque(
            (p, n + added - removed if p == path and n >= end else n, k)
            for p, n, k in self._edits
            if p != path or not first <= n < end
        )
        for key, (p, places) in list(self._shown.items()):
            if p == path:
                self._shown[key] = (p, [
                    (n + added - removed if n >= end else n, old, new)
                    for n, old, new in places
                    if not first <= n < end
                ])  # fmt: skip

    def turned_down(self, path: str, key: ChangeKey, lines: list[str], line: int, new: str) -> bool:
        """Was this change turned down in `path`, now or before? `lines`: the buffer before the
        edit that makes it at `line` (0-based) as `new`. The first place shown for it that was
        not taken is the one the plugin had on screen: left as it was while the user made the
        change elsewhere (or made otherwise there), it was turned down. In that file only: the
        history replayed (one file a case) says nothing of another file's places."""
        if (path, key) in self._turned_down:
            return True
        p, places = self._shown.get(key, ("", []))
        for n, old, proposed in places if p == path else []:
            now = lines[n] if n < len(lines) else None
            if n == line and new.rstrip() == proposed.rstrip():
                return False  # the place on screen, typed as proposed
            if now == proposed:
                continue  # taken with <Tab>: the next one was shown
            if now == old:
                self._turned_down.add((path, key))
                return True
            return False
        return False

    def times_made(self, path: str, key: ChangeKey, lines: list[str], line: int) -> int:
        """How many times this change has been made in `path`, this edit included: by hand
        (the edits remembered) and with <Tab> (the places of the answers shown for it that
        read as proposed by the time of its next edit). Asked once per edit, before `add`:
        the last answer's places are counted then, and not again."""
        p, places = self._shown.get(key, ("", []))
        if p == path:
            taken = sum(
                1
                for n, _, proposed in places
                if n != line and n < len(lines) and lines[n] == proposed
            )
            self._taken[path, key] = self._taken.get((path, key), 0) + taken
            self._shown[key] = (p, [])
        by_hand = sum(1 for q, n, k in self._edits if k == key and q == path and n != line)
        return 1 + by_hand + self._taken.get((path, key), 0)

    def shown(self, path: str, key: ChangeKey, places: list[tuple[int, str, str]]) -> None:
        """The answer shown for a change in `path`: (0-based line, its text, the new line)."""
        self._shown[key] = (path, places)

    def add(self, path: str, line: int, key: ChangeKey) -> None:
        """Remember an edit; the same one asked again (the session retries without the index
        when it cannot be read) is kept once."""
        entry = (path, line, key)
        if self._edits and self._edits[-1] == entry:
            return
        self._edits.append(entry)
        while len(self._edits) > self.kept:
            self._edits.popleft()
        recent = {k for _, _, k in self._edits}
        self._shown = {k: v for k, v in self._shown.items() if k in recent}
        self._turned_down = {(p, k) for p, k in self._turned_down if k in recent}
        self._taken = {(p, k): v for (p, k), v in self._taken.items() if k in recent}


def carried_logit(times: int, logit: float = REPEATED_LOGIT) -> float:
    """The log-odds added to the places ahead of a change made `times` times (2 or more):
    `logit` less one step the second time, one step more from the fifth on. The second time
    says least: on the history, the places a second edit carried were wrong 3 to 4 times in
    10 taken, those of a change made five times or more 0.5 times (next_edit.md)."""
    if times <= 2:
        return logit - LOGIT_STEP
    return logit + LOGIT_STEP if times >= 5 else logit


def carried_on(
    found: list[NextEditPlace], path: str, here: int, earlier: int, logit: float = REPEATED_LOGIT
) -> list[NextEditPlace]:
    """The places of a change made at `earlier` and now at `here` (0-based lines of `path`):
    those between the two were passed over (the user made the change on both sides of them
    and left them as they were) and are not shown again; those ahead, beyond `here` in the
    direction from `earlier`, are `logit` surer, unless a place between was one the engine
    thought likely (then the change is chosen place by place). Places behind and in other
    files keep their score."""
    low, high = sorted((earlier, here))
    between = [p.path == path and low < p.line - 1 < high for p in found]
    rest = [p for p, skipped in zip(found, between) if not skipped]
    if any(p.confidence >= PASSED_OVER for p, skipped in zip(found, between) if skipped):
        return rest
    ahead = 1 if here > earlier else -1
    return [
        _raised(p, logit) if p.path == path and (p.line - 1 - here) * ahead > 0 else p for p in rest
    ]


def _raised(place: NextEditPlace, logit: float) -> NextEditPlace:
    c = place.confidence
    if 0.0 < c < 1.0:
        c = 1 / (1 + math.exp(-(math.log(c / (1 - c)) + logit)))
    return replace(place, confidence=round(c, 3), features=(*place.features, ("carried", 1.0)))
