"""Inside a call with a known signature: no `)` short of its arguments."""

from __future__ import annotations

from collections.abc import Callable

import numpy as np

from ..signatures import SignatureLookup, open_call, signature_for
from .base import Place, Source, Vocabulary

CALL_PENALTY = 6.0  # logits taken from a `)` that would close a call short of its arguments
PARAM_BONUS = 2.0  # logits added to the spelling of a local named like the next parameter


class CallSource(Source):
    """Inside `callee(` with a known signature: a `)` short of the required positional
    arguments loses `CALL_PENALTY`; at an argument's start, a name in scope equal to the
    parameter's gets `PARAM_BONUS` on its first token."""

    name = "calls"

    def __init__(
        self,
        vocab: Vocabulary,
        signatures: SignatureLookup,
        names: frozenset[str],
        tokenize: Callable[[bytes], list[int]],
        defining: Callable[[str], bool],
    ):
        self.vocab = vocab
        self.signatures = signatures
        self.names = names
        self.tokenize = tokenize
        self.defining = defining  # the line defines a function: its `(` is no call
        self._first: dict[bytes, int | None] = {}

    def apply(self, logits: np.ndarray, at: Place) -> None:
        text = at.line.decode("utf-8", "replace")
        call = open_call(text)
        if call is None:
            return
        callee, commas, current = call
        sig = signature_for(self.signatures, callee)
        if sig is None or self.defining(text):
            return
        written = commas + (1 if current.strip() else 0)
        if written < sig.required:
            logits[self.vocab.closing] -= CALL_PENALTY
        if current.strip() or commas >= len(sig.params):
            return
        param = sig.params[commas]
        if param not in self.names:
            return
        # after `,` the name comes with its space; after `(` or `, ` without
        spelled = (b" " if commas and not current else b"") + param.encode()
        first = self._first.get(spelled, -1)
        if first == -1:
            ids = self.tokenize(spelled)
            first = ids[0] if ids else None
            self._first[spelled] = first
        if first is not None:
            logits[first] += PARAM_BONUS
