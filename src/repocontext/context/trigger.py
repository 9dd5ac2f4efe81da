"""Selective retrieval: does this keystroke need anything from other files?

Any one explicit signal triggers retrieval: an identifier near the cursor that the file does not
define (or that it imports); an import statement being written; an open call whose callee is not
local (after a dot, even one named like a builtin: `ctx.exit(`); an attribute access on an
imported module or on an object made by a foreign callee; an object before the dot whose
class (or one of its bases) is defined in another file, however the object was made and
whatever the word being typed after the dot (context/receivers.py). The
model's uncertainty (its first tokens' top-1 probability, when generation supplies it) is OR'ed
in by the caller. Nothing else retrieves: a snippet that does not help teaches the model to
invent, and skipping costs nothing.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field

from ..lang.scopes import KEYWORDS
from .cursor import CursorView
from .receivers import Receiver

_ASSIGNED = re.compile(r"([A-Za-z_][A-Za-z0-9_]*)\s*(?::[^=]*)?=(?!=)")

UNCERTAIN_TOP1 = 0.35  # below this first-token probability the model is guessing


@dataclass
class TriggerDecision:
    retrieve: bool
    reasons: list[str] = field(default_factory=list)
    skip_reason: str | None = None
    foreign: list[str] = field(default_factory=list)  # names to find definitions for


def decide(
    view: CursorView,
    top1_probability: float | None = None,
    receiver: Receiver | None = None,
    foreign_classes: list[str] | None = None,
) -> TriggerDecision:
    """`foreign_classes`: the receiver's classes, or bases of them, defined in other files."""
    scope = view.scope
    reasons: list[str] = []
    foreign: list[str] = []

    def want(name: str, reason: str) -> None:
        if name not in foreign:
            foreign.append(name)
        if reason not in reasons:
            reasons.append(reason)

    if view.in_comment_or_string:
        if top1_probability is not None and top1_probability < UNCERTAIN_TOP1:
            return TriggerDecision(True, [f"model unsure (top-1 {top1_probability:.2f})"])
        return TriggerDecision(False, skip_reason="the cursor is in a comment or a string")
    if view.writing_import:
        reasons.append("an import statement is being written")
    if receiver is not None and foreign_classes:
        reasons.append(f"{receiver.describe()}, defined in {', '.join(foreign_classes)}")
    being_assigned = set(_ASSIGNED.findall(view.before[-400:]))
    for name in view.near:
        if name == view.partial or name in being_assigned:
            continue  # the word being typed is judged below; `x = ...` is binding x right here
        if name in scope.imported:
            want(name, f"{name} is imported")
        elif scope.is_foreign(name):
            want(name, f"{name} is not defined in this file")
    # the word being typed is a member of a typed object: the receiver decides, not the word
    typed = (
        receiver is not None
        and receiver.member == view.partial
        and any(not t.module for t in receiver.types)
    )
    # after a dot a name is a member, never a builtin: `ctx.exit`, `console.print(`
    after_dot = view.receiver_chain is not None and view.member == view.partial
    if view.partial and len(view.partial) >= 3 and not typed:
        # The word being typed: a name the file imports (even one that shadows a builtin, as
        # `from .exceptions import ConnectionError` does), or one that nothing in this file
        # starts with (after `obj.` too: a method inherited from a class defined elsewhere).
        if view.partial in scope.imported:
            want(view.partial, f"{view.partial} is imported")
        elif (after_dot or not scope.is_builtin(view.partial)) and not any(
            b.startswith(view.partial) for b in scope.bound
        ):
            want(view.partial, f"{view.partial}... matches nothing defined in this file")
    if view.callee and (
        view.callee in scope.imported
        or scope.is_foreign(view.callee)
        or (view.callee_base and view.callee not in scope.bound and view.callee not in KEYWORDS)
        or (view.callee_base and _foreign_object(view, view.callee_base))
    ):
        want(view.callee, f"calling {view.callee}, defined elsewhere")
    if view.attr_base and _foreign_object(view, view.attr_base):
        want(view.attr_base, f"attribute of {view.attr_base}, which comes from another file")
    if top1_probability is not None and top1_probability < UNCERTAIN_TOP1:
        reasons.append(f"model unsure (top-1 {top1_probability:.2f})")
    if reasons:
        return TriggerDecision(True, reasons, foreign=foreign)
    if not view.near and not view.partial:
        return TriggerDecision(False, skip_reason="nothing near the cursor to look up")
    return TriggerDecision(False, skip_reason="every name near the cursor is defined in this file")


def _foreign_object(view: CursorView, base: str) -> bool:
    scope = view.scope
    if base in ("self", "this", "cls"):
        return False
    if base in scope.imported or scope.is_foreign(base):
        return True
    made_by = scope.assigned_from.get(base)
    if not made_by:
        return False
    return made_by in scope.imported or scope.is_foreign(made_by)
