"""After `obj.`: the receiver's members (healing.NameBias) as a steering source."""

from __future__ import annotations

import numpy as np

from ..healing import NameBias
from .base import Place, Source


class MemberSource(Source):
    """After `obj.`: healing.NameBias, the receiver's members spelled as the model would."""

    name = "members"

    def __init__(self, bias: NameBias):
        self.bias = bias

    def apply(self, logits: np.ndarray, at: Place) -> None:
        if self.bias.active:
            logits[:] = self.bias.apply(logits)

    def consumed(self, token: int) -> None:
        self.bias.consumed(token)

    @property
    def spelling(self) -> bool:
        return self.bias.active
