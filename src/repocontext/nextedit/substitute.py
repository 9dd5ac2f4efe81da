"""The edit's own substitution, offered wherever its old text stands in a context like the
edited place's.

Most multi-place changes are the same tokens replaced on several lines (bench/next_edit.py's
cases are exactly that), whatever their shape: a rename, a call's argument, an operator, a
type. So the one general rule is: the tokens that differ between the old and the new line
(the old core) become the new text at every other place where they stand as whole tokens.
An insertion (no old core) is anchored on the tokens on both sides of it.

Where the old core occurs is cheap to find; whether the user wants it changed there is not.
Each place gets a score from what the history of three repositories said matters
(bench/next_edit.py, tuned on spf13/cobra, colinhacks/zod and gin-gonic/gin only): how many
tokens around the place read as around the edit, whether the old core names something
(a name, not `)` or `0`), how many places hold it (a rare one is a rename; one on every
line is a choice made here only), whether the edited place was a definition, and whether
the other rules of edits.py agree.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

from .edits import (
    MEMBER_OPERATORS,
    LineChange,
    Token,
    around_old,
    changed_already,
    is_literal,
    is_name,
    line_tokens,
    member_before,
    tokens,
)
from .syntax import Syntax

CONTEXT = 3  # tokens compared on each side


@dataclass(frozen=True)
class Match:
    """One line where the substitution applies: its new line and what the score reads."""

    row: int
    start: int  # character columns of the replaced text (the first occurrence's)
    end: int
    new_line: str
    old_text: str
    new_text: str
    left: int  # tokens before the place that read as before the edit (up to CONTEXT)
    right: int  # and after it
    whole_prefix: bool  # the whole line before it reads the same
    whole_suffix: bool
    indent: bool  # the same indentation as the edited line
    in_code: bool


@dataclass(frozen=True)
class Substitution:
    """The edit as old tokens → new text, with the edited line's tokens around it."""

    old: tuple[str, ...]  # the old core; empty for an insertion
    new: str  # the new core's text
    before: tuple[str, ...]  # the old line's tokens before the core, nearest last
    after: tuple[str, ...]  # and after it
    gaps: str | None  # the old text with its spacing, where the spacing changed too
    new_gaps: str
    indent: str
    row: int
    edited: frozenset[int]
    in_code: bool

    @property
    def names(self) -> tuple[str, ...]:
        return tuple(t for t in self.old if is_name(t))


def substitution(change: LineChange, edited: frozenset[int], in_code: bool) -> Substitution | None:
    """The substitution one line's change makes; None where it has nothing to anchor on (an
    insertion at the start or the end of a line)."""
    old = tuple(t.text for t in change.old_mid)
    before = tuple(t.text for t in change.old_tokens[: change.prefix])
    after = tuple(t.text for t in change.old_tokens[len(change.old_tokens) - change.suffix :])
    if not old and (not before or not after):
        return None
    gaps = change.old_gap_text if change.spacing_changed or not old else None
    line = change.old_line
    return Substitution(
        old=old,
        new=change.new_text,
        before=before,
        after=after,
        gaps=gaps,
        new_gaps=change.new_gap_text,
        indent=line[: len(line) - len(line.lstrip())],
        row=change.line,
        edited=edited,
        in_code=in_code,
    )


def matches(
    sub: Substitution,
    syntax: Syntax,
    limit: int = 400,
    member: bool | None = None,
    variable: bool = False,
) -> list[Match]:
    """Every other line where the substitution applies, at most `limit`. `member`: whether
    the old core is a member's name (`.size` for a renamed method), where the edited line
    does not say it (a definition); else read from the token before the edit. `variable`: the
    core is a renamed variable, which a keyword argument's name or an object's key is not
    (`size=size`: Syntax.is_key)."""
    k = len(sub.old)
    # the text a line must hold to be looked at: the core's longest token, or the anchors
    probe = max(sub.old, key=len) if k else sub.before[-1]
    new_toks = [t.text for t in tokens(sub.new)]
    around = around_old(sub.old, new_toks) if k else None
    if member is None:
        member = bool(sub.before) and sub.before[-1] in MEMBER_OPERATORS
    out: list[Match] = []
    for row, line in enumerate(syntax.lines):
        if row in sub.edited or probe not in line:
            continue
        toks = line_tokens(syntax, row)
        found = _in_line(sub, toks, line, k, around)
        if variable:
            found = [f for f in found if not syntax.is_key(row, toks[f[0]].start, toks[f[0]].end)]
        if not found:
            continue
        # the best-placed occurrence only: replacing every one in the line was less often
        # the commit's line (bench/next_edit.py, tuned-on set); first one in the edit's role
        # (`w` of `w.w.Write` for a renamed receiver `w`, not the field after it)
        best = max(found, key=lambda f: (member_before(toks, f[0]) == member, f[2] + f[3], f[0]))
        i, j, left, right = best
        spans = [_span(sub, toks, line, i, j)]
        new_text = sub.new_gaps if sub.gaps is not None else sub.new
        code = all(syntax.is_code(row, a, max(b, a + 1)) for a, b in spans)
        start, end = spans[0][0], spans[-1][1]
        pieces, cursor = [], start
        for a, b in spans:
            pieces += [line[cursor:a], new_text]
            cursor = b
        new_text = "".join(pieces)
        new_line = line[:start] + new_text + line[end:]
        out.append(
            Match(
                row=row,
                start=start,
                end=end,
                new_line=new_line,
                old_text=line[start:end],
                new_text=new_text,
                left=left,
                right=right,
                whole_prefix=[t.text for t in toks[:i]] == list(sub.before),
                whole_suffix=[t.text for t in toks[j:]] == list(sub.after),
                indent=line[: len(line) - len(line.lstrip())] == sub.indent,
                in_code=code,
            )
        )
        if len(out) >= limit:
            break
    return out


def _span(sub: Substitution, toks: list[Token], line: str, i: int, j: int) -> tuple[int, int]:
    """The columns an occurrence's replacement takes: its tokens, or the gaps around them
    where the spacing changed too (an insertion: the gap between its anchors)."""
    if sub.gaps is not None:
        return (toks[i - 1].end if i else 0), (toks[j].start if j < len(toks) else len(line))
    if i < j:
        return toks[i].start, toks[j - 1].end
    return toks[i - 1].end, toks[j].start


def _in_line(
    sub: Substitution, toks: list[Token], line: str, k: int, around
) -> list[tuple[int, int, int, int]]:
    """The occurrences in one line: (first token, end token, left and right context)."""
    out = []
    if k:
        first = sub.old[0]
        for i in range(len(toks) - k + 1):
            if toks[i].text != first or tuple(t.text for t in toks[i : i + k]) != sub.old:
                continue
            if around is not None and changed_already(toks, i, k, around):
                continue
            out.append(_context(sub, toks, line, i, i + k))
    else:
        left, right = sub.before[-1], sub.after[0]
        for i in range(1, len(toks)):
            if toks[i - 1].text == left and toks[i].text == right:
                if line[toks[i - 1].end : toks[i].start] == sub.gaps:
                    out.append(_context(sub, toks, line, i, i))
    if sub.gaps is not None and k:
        # the spacing changed too: only where it was the edited place's
        kept = []
        for found in out:
            start = toks[found[0] - 1].end if found[0] else 0
            end = toks[found[1]].start if found[1] < len(toks) else len(line)
            if line[start:end] == sub.gaps:
                kept.append(found)
        out = kept
    return out


def _context(
    sub: Substitution, toks: list[Token], line: str, i: int, j: int
) -> tuple[int, int, int, int]:
    left = 0
    while (
        left < CONTEXT
        and left < i
        and left < len(sub.before)
        and toks[i - 1 - left].text == sub.before[-1 - left]
    ):
        left += 1
    right = 0
    while (
        right < CONTEXT
        and j + right < len(toks)
        and right < len(sub.after)
        and toks[j + right].text == sub.after[right]
    ):
        right += 1
    return i, j, left, right


def features(
    sub: Substitution,
    match: Match,
    count: int,
    syntax: Syntax,
    definition: bool,
    member_edit: bool,
    rule: str,
    rule_confidence: float,
    agrees: bool,
    known_new: bool,
    function: tuple[int, int] | None,
) -> dict[str, float]:
    """What the score reads of one place (names as in SCORE)."""
    named = [t for t in sub.old if is_name(t) and not syntax.is_builtin(t)]
    toks = line_tokens(syntax, match.row)
    at = next((n for n, t in enumerate(toks) if t.start == match.start), None)
    member_place = at is not None and member_before(toks, at)
    # a definition's uses read nothing like it (`def count(` and `n = count(xs)`): the
    # tokens around a place say nothing there, and weigh nothing
    near = 0.0 if definition else 1.0
    return {
        "left": near * match.left / CONTEXT,
        "right": near * match.right / CONTEXT,
        "left0": near * (match.left == 0),
        "right0": near * (match.right == 0),
        "prefix": near * match.whole_prefix,
        "suffix": near * match.whole_suffix,
        "indent": near * match.indent,
        "core": min(len(sub.old), 6) / 6,
        "insert": float(not sub.old),
        "named": float(bool(named)),
        "literal": float(any(is_literal(t) for t in sub.old)),
        "places": math.log1p(count),
        "definition": float(definition),
        "role": float(member_place == member_edit),
        "code": float(match.in_code == sub.in_code),
        "wrap": float(bool(sub.old) and _holds([t.text for t in tokens(sub.new)], sub.old)),
        "known": float(known_new),
        "rule": rule_confidence,
        "agrees": float(agrees),
        "alone": 0.0,
        **_family(rule),
        "distance": math.log1p(abs(match.row - sub.row)),
        "function": float(function is not None and function[0] <= match.row <= function[1]),
    }


FEATURES = (
    "left", "right", "left0", "right0", "prefix", "suffix", "indent", "core", "insert",
    "named", "literal", "places", "definition", "role", "code", "wrap", "known", "rule",
    "agrees", "alone", "distance", "function", "renamed", "tokens", "arguments",
)  # fmt: skip


def _family(rule: str) -> dict[str, float]:
    """Which kind of rule recognised the edit (a definition's rename has its own feature)."""
    family = rule.split("-")[0]
    return {
        "renamed": float(family == "rename" and rule != "rename-definition"),
        "tokens": float(family == "tokens"),
        "arguments": float(family == "arguments"),
    }


def alone_features(rule: str, rule_confidence: float) -> dict[str, float]:
    """A place only a rule of edits.py found (another call's arguments, say), not the
    substitution."""
    feats = dict.fromkeys(FEATURES, 0.0)
    feats.update(rule=rule_confidence, alone=1.0)
    feats.update(_family(rule))
    return feats


# The score's weights: a logistic regression fitted on the places every edit of three
# repositories' history gave, right or not (bench/next_edit.py --dump; spf13/cobra,
# colinhacks/zod and gin-gonic/gin only; the seven others held out). A strong L2 penalty
# (100) kept the most right places at 1 wrong per 10 right there (0.01 to 1000 tried): the
# score ranks places more than it gives their odds. What carries it: the whole line around
# the place reads as around the edit, few places hold the old core and it is a name, the
# edit renamed a definition, a rule of edits.py proposes the same line, the same function.
BIAS = -0.415
SCORE = {
    "left": 0.144,
    "right": 0.439,
    "left0": 0.008,
    "right0": -0.480,
    "prefix": 0.654,
    "suffix": 0.483,
    "indent": 0.235,
    "core": 0.158,
    "insert": -0.372,
    "named": 0.332,
    "literal": 0.162,
    "places": -0.423,
    "definition": 0.407,
    "role": -0.053,
    "code": 0.215,
    "wrap": -0.187,
    "known": 0.098,
    "rule": 0.481,
    "agrees": 0.577,
    "alone": -0.189,
    "distance": -0.084,
    "function": 0.320,
    "renamed": -0.173,
    "tokens": -0.127,
    "arguments": -0.002,
    "named*places": 0.086,
    "prefix*suffix": 0.362,
    "definition*named": 0.407,
    "left*right": 0.254,
}


def score(feats: dict[str, float]) -> float:
    """How sure the place is: about the share of such places that were right where the
    weights were fitted."""
    pairs = {
        "named*places": feats["named"] * feats["places"],
        "prefix*suffix": feats["prefix"] * feats["suffix"],
        "definition*named": feats["definition"] * feats["named"],
        "left*right": feats["left"] * feats["right"],
    }
    z = BIAS + sum(SCORE[name] * value for name, value in (feats | pairs).items())
    return 1 / (1 + math.exp(-z))


def _holds(toks: list[str], run: tuple[str, ...]) -> bool:
    k = len(run)
    return any(tuple(toks[j : j + k]) == run for j in range(len(toks) - k + 1))
