"""The next-edit engine's one call: from an edit to the next places, nearest and surest first.

`propose` takes the buffer before and after the edit (the bridge keeps both; a recorded edit
gives them through `propose_record`), recognises the replacement (edits.py) and finds where
it applies next (places.py), and the places where the edit's own tokens stand again
(substitute.py); each of the buffer's places is scored (substitute.score) and they are
listed by distance, then, given the index, those of the files it links to the edited name.
Nothing here waits on a model; a few milliseconds for a buffer of a few thousand lines
(bench/next_edit.py measures it).
"""

from __future__ import annotations

import os
import re
from dataclasses import replace
from typing import TYPE_CHECKING

from ..lang.languages import language_for
from .edits import (
    Edit,
    LineChange,
    Replacement,
    Token,
    edit_between,
    edit_from_record,
    is_name,
    line_changes,
    line_tokens,
    member_before,
    recognise,
)
from .memory import (
    PASSED_BY_BRAKE,
    REPEATED_LOGIT,
    EditMemory,
    carried_logit,
    carried_on,
    change_key,
)
from .places import NextEditPlace, linked_places, places_in
from .substitute import (
    Match,
    Substitution,
    alone_features,
    features,
    matches,
    score,
    substitution,
)
from .syntax import Syntax

if TYPE_CHECKING:
    from ..store import Store

# The places under this confidence are not proposed: a wrong proposal is a false alarm on
# the user's screen. 0.8 kept the most right places with at most 1 wrong per 10 right on
# the history the score was fitted on (bench/results/next_edit.md gives the other thresholds
# and the held-out repositories).
MIN_CONFIDENCE = 0.8
MAX_PLACES = 50
_NAME = re.compile(r"[A-Za-z_$][\w$]*(?:\.[A-Za-z_$][\w$]*)*")  # `name`, `pkg.Name`


def propose(
    before: str,
    after: str,
    path: str,
    *,
    store: Store | None = None,
    root: str | os.PathLike | None = None,
    buffers: dict[str, str] | None = None,
    min_confidence: float = MIN_CONFIDENCE,
    limit: int = MAX_PLACES,
    memory: EditMemory | None = None,
    repeated_logit: float = REPEATED_LOGIT,
) -> list[NextEditPlace]:
    """The next places for the edit that turned `before` into `after` (the whole buffer,
    `path` root-relative). With `store`, the files the index links to the edited name follow
    the buffer's, read from `buffers` (root-relative path → unsaved text) or below `root`.
    With `memory`, the edit is remembered, and the places of a change made before at another
    place are surer (`repeated_logit` on their log-odds: memory.py)."""
    edit = edit_between(before, after, path)
    if edit is None:
        return []
    if memory is not None:
        memory.moved(path, edit.first - 1, len(edit.old_lines), len(edit.new_lines))
    old_syntax = Syntax(before, language_for(path))
    syntax = old_syntax.edited(after, edit.first - 1, len(edit.old_lines), len(edit.new_lines))
    changes = line_changes(edit, old_syntax, syntax)
    if not changes:
        return []
    earlier = None
    times = 1
    here = changes[0].line
    threshold = min_confidence
    after_lines: list[str] = []
    if memory is not None:
        key = change_key(changes[0])
        earlier = memory.last_line(path, here, key)
        after_lines = after.split("\n")
        new_line = after_lines[here] if here < len(after_lines) else ""
        before_lines = before.split("\n")
        if memory.turned_down(path, key, before_lines, here, new_line):
            threshold = min(min_confidence + PASSED_BY_BRAKE, 1.0)
        times = memory.times_made(path, key, before_lines, here)
        memory.add(path, here, key)
    replacement = recognise(edit, old_syntax, syntax, changes)
    found = _scored(replacement, changes, edit, syntax, old_syntax, path)
    if store is not None and replacement is not None and len(found) < limit:
        found += linked_places(replacement, store, path, root, buffers or {})
    if earlier is not None:
        found = carried_on(found, path, here, earlier, carried_logit(times, repeated_logit))
    shown = [p for p in found if p.confidence >= threshold and not _breaks(p, path, syntax)][:limit]
    if memory is not None:
        memory.shown(path, key, [
            (p.line - 1, after_lines[p.line - 1], p.new_line)
            for p in shown
            if p.path == path and p.line <= len(after_lines)
        ])  # fmt: skip
    return shown


def _breaks(place: NextEditPlace, path: str, syntax: Syntax) -> bool:
    """A place of the buffer whose line would be a syntax error it was not (Syntax.breaks).
    A name put for a name (a rename's every place) cannot make one: not parsed again."""
    if place.path != path or (_NAME.fullmatch(place.old_text) and _NAME.fullmatch(place.new_text)):
        return False
    return syntax.breaks(place.line - 1, place.new_line)


def _scored(
    rep: Replacement | None,
    changes: list[LineChange],
    edit: Edit,
    syntax: Syntax,
    old_syntax: Syntax,
    path: str,
) -> list[NextEditPlace]:
    """The buffer's places: the edit's substitution where it applies and the rules' places,
    one per line, each scored (substitute.score), nearest first."""
    rules = places_in(rep, syntax, path, here=True) if rep is not None else []
    by_row = {p.line - 1: p for p in rules}
    change = changes[0]
    edited = frozenset(range(edit.first - 1, edit.first - 1 + len(edit.old_lines)))
    in_code = rep.in_code if rep is not None else True
    sub = substitution(change, edited, in_code)
    out: list[NextEditPlace] = []
    seen: set[int] = set()
    if sub is not None:
        variable = rep is not None and rep.kind == "rename" and not rep.member
        every = matches(
            sub, syntax, member=rep.member if rep is not None else None, variable=variable
        )
        found = _same_binding(every, sub, change, rep, syntax, old_syntax)
        package = _package_of(change.old_tokens, change.prefix, old_syntax)
        found = [m for m in found if _package_at(m, syntax) == package]
        # a place of another binding or package is no one's: not the rules' either
        seen.update(m.row for m in every if m not in found)
        new_names = [t.text for t in change.new_mid if is_name(t.text)]
        known = all(_holds_name(old_syntax.text, n) for n in new_names)
        member = member_before(change.old_tokens, change.prefix)
        definition = rep is not None and rep.definition
        function = syntax.function_lines(change.line, change.new_span[0])
        for m in found:
            rule = by_row.get(m.row)
            covered = _covered_by_rename(rule, m, syntax)
            # the same line, or the same occurrence written the rule's way (`{value: amount}`)
            agrees = rule is not None and (
                rule.new_line == m.new_line or covered == (rule.col, rule.end_col)
            )
            feats = features(
                sub, m, len(found), syntax, definition, member,
                rep.rule if rep is not None else "",
                rep.confidence if rep is not None else 0.0, agrees, known, function,
            )  # fmt: skip
            sure = score(feats)
            if agrees and rule is not None:
                # a place a rule of edits.py finds the same is at least as sure as that rule
                # was where it was tuned (a definition's rename: its uses read nothing like
                # it); the rule's place keeps its own span (a call's whole argument list)
                # unless the rule itself marked it less sure than its kind (a method's name
                # at the end of a chain, `self.repo.status`: places.OTHER_RECEIVER)
                demoted = rep is not None and rule.confidence < rep.confidence - 1e-6
                confidence = rule.confidence if demoted else max(sure, rule.confidence)
                place = replace(
                    rule, confidence=round(confidence, 3), features=tuple(feats.items())
                )
            elif rule is not None and covered is not None:
                # the rule renames this occurrence and more (`error.code ... ${error.code}`):
                # never a half-renamed line; the rule's, as sure as the substitution's score
                # (not surer: on history such lines were as often left alone, a parameter
                # renamed to bind the old name anew: express)
                place = replace(rule, confidence=round(sure, 3), features=tuple(feats.items()))
            else:
                place = NextEditPlace(
                    path=path,
                    line=m.row + 1,
                    col=_byte_col(syntax.lines[m.row], m.start),
                    end_col=_byte_col(syntax.lines[m.row], m.end),
                    old_text=m.old_text,
                    new_text=m.new_text,
                    new_line=m.new_line,
                    confidence=round(sure, 3),
                    kind="substitute",
                    rule="substitute",
                    distance=abs(m.row - change.line),
                    features=tuple(feats.items()),
                )
            out.append(place)
            seen.add(m.row)
    for row, rule in by_row.items():
        if row in seen:
            continue
        feats = alone_features(rule.rule, rule.confidence)
        out.append(replace(rule, confidence=round(score(feats), 3), features=tuple(feats.items())))
    out.sort(key=lambda p: (p.distance or 0, -p.confidence, p.line))
    return out


def _same_binding(
    found: list[Match],
    sub: Substitution,
    change: LineChange,
    rep: Replacement | None,
    syntax: Syntax,
    old_syntax: Syntax,
) -> list[Match]:
    """A renamed bare name's places where it is the edited variable: not inside a function
    that binds the name itself unless the edit's binding is that function's too (a
    parameter of the same name elsewhere is another variable)."""
    if rep is None or rep.kind != "rename" or rep.member or not syntax.scoped():
        return found
    if len(sub.old) != 1:
        return found
    name = sub.old[0]
    # asked of the buffer before the edit: after it, the renamed binding binds the new name
    own = old_syntax.local_scope(change.line, change.old_span[0], name)
    alike = {own, *rep.siblings}  # a Go receiver's: its type's methods that name theirs alike
    return [m for m in found if old_syntax.local_scope(m.row, m.start, name) in alike]


def _covered_by_rename(
    rule: NextEditPlace | None, match: Match, syntax: Syntax
) -> tuple[int, int] | None:
    """The substitution's occurrence (byte columns) where a definition's rename at the same
    line changes it too, else None: the rule's line is then the one that works."""
    if rule is None or rule.rule != "rename-definition":
        return None
    line = syntax.lines[match.row]
    start, end = _byte_col(line, match.start), _byte_col(line, match.end)
    return (start, end) if rule.col <= start and end <= rule.end_col else None


def _package_of(toks: list[Token], index: int, syntax: Syntax) -> str | None:
    """The imported package whose member the token at `index` is (`reflect` in
    `reflect.Value`), or None: a package's name is never the edited one's where the edit
    was not that package's, and back (`c.Println` is not `fmt.Println`)."""
    if index < 2 or not member_before(toks, index):
        return None
    receiver = toks[index - 2].text
    if receiver not in syntax.modules or member_before(toks, index - 2):
        return None
    return receiver


def _package_at(match: Match, syntax: Syntax) -> str | None:
    toks = line_tokens(syntax, match.row)
    at = next((n for n, t in enumerate(toks) if t.start == match.start), None)
    return _package_of(toks, at, syntax) if at is not None else None


def _holds_name(text: str, name: str) -> bool:
    return re.search(rf"(?<![\w$]){re.escape(name)}(?![\w$])", text) is not None


def _byte_col(line: str, col: int) -> int:
    return len(line[:col].encode("utf-8", "surrogatepass"))


def propose_record(
    buffer: str, path: str, line: int, col: int, old_text: str, new_text: str, **options
) -> list[NextEditPlace]:
    """`propose` for the plugin's recent-edit record: `new_text` now stands in `buffer` at
    `line` (1-based), character column `col`, where `old_text` was."""
    before, edit = edit_from_record(buffer, path, line, col, old_text, new_text)
    if edit is None:
        return []
    return propose(before, buffer, path, **options)


def explain(before: str, after: str, path: str) -> Replacement | None:
    """The replacement the edit makes that can apply elsewhere, or None (no edit, an edit of
    another shape): what `propose` looks for."""
    return _recognised(before, after, path)[0]


def _recognised(before: str, after: str, path: str) -> tuple[Replacement | None, Syntax]:
    old_syntax = Syntax(before, language_for(path))
    edit = edit_between(before, after, path)
    if edit is None:
        return None, old_syntax  # the same text
    syntax = old_syntax.edited(after, edit.first - 1, len(edit.old_lines), len(edit.new_lines))
    return recognise(edit, old_syntax, syntax), syntax
