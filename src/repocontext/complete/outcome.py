"""Why a finished completion put nothing on screen, in words for the user.

A gate that hides a suggestion, a model with nothing to propose and a deadline all look the
same to the user: no ghost text. Said apart, an empty screen is not a mystery: an unsure model
points at `min_confidence`, a suggestion that breaks the syntax at the buffer. Each reason has
a stable code (for the status JSON and statuslines), a phrase (`:RepoContext status`) and a
few characters (the statusline).
"""

from __future__ import annotations

import math
from dataclasses import asdict, dataclass
from typing import TYPE_CHECKING, Any

from ..config import GenerationConfig
from .gates import confident_lines

if TYPE_CHECKING:
    from .engine import Suggestion

# the gates' verdicts that leave nothing on screen (complete/gates.py); a "-cut" shows the rest
GATE_REASONS = {
    "confidence-drop": "hidden: unsure",
    "syntax-drop": "hidden: syntax",
    "language-drop": "hidden: language",
}


@dataclass(frozen=True)
class Hidden:
    code: str  # confidence-drop | syntax-drop | language-drop | deadline | empty | nothing-new
    reason: str  # the whole phrase
    short: str  # for a statusline: "hidden: unsure", "∅"

    def to_json(self) -> dict[str, Any]:
        return asdict(self)


def why_hidden(result: Suggestion, config: GenerationConfig) -> Hidden | None:
    """Why `result` shows nothing under `config` (the settings it was made with); None when it
    shows something, or when it was cancelled: a newer key took its place, and that key's own
    answer is the one worth a reason."""
    if result.suggestion or result.status == "cancelled":
        return None
    gate = result.gate
    if gate == "confidence-drop":
        return Hidden(
            gate, _unsure(result.line_confidence, config.min_confidence), GATE_REASONS[gate]
        )
    if gate == "syntax-drop":
        return Hidden(
            gate,
            "hidden: it would break the file's syntax, however it was cut",
            GATE_REASONS[gate],
        )
    if gate == "language-drop":
        return Hidden(gate, "hidden: it was code in another language", GATE_REASONS[gate])
    if result.status == "deadline":
        return Hidden(
            "deadline",
            f"nothing was ready within hard_deadline_ms ({config.hard_deadline_ms} ms)",
            "∅ deadline",
        )
    if result.tokens_generated == 0:
        return Hidden("empty", "the model proposed nothing here", "∅")
    return Hidden(
        "nothing-new",
        "the model proposed only blank space or what the file already has",
        "∅",
    )


def _unsure(line_confidence: list[float], threshold: float) -> str:
    """The phrase for a confidence drop, with the first line's figure that fell short (floored,
    so that 0.999 under 1.0 never reads "1.00 < 1")."""
    low = line_confidence[confident_lines(line_confidence, threshold) :]
    if not low:
        return "hidden: the model was unsure"
    figure = math.floor(low[0] * 100) / 100
    return f"hidden: the model was unsure (confidence {figure:.2f} < {threshold:g})"
