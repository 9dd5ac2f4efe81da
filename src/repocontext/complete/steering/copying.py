"""A token n-gram cache over the prompt and the context, mixed into the model's distribution
(`[generation] copy_bias`)."""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from .base import Place, Source, mix

COPY_ORDER = 3  # the fewest tokens of context the cache matches
COPY_STEP = 0.1  # the cache's share of the mixture per token matched (3 tokens: 0.3)
COPY_MAX = 0.8  # its share at most (8 tokens matched and more)
COPY_LONGEST = 16  # a match is not measured further back
COPY_PLACES = 64  # earlier places of the same n-gram looked at, the latest


class CopySource(Source):
    """A token cache over the prompt and the context, mixed with the model's distribution:
    p = (1 - w) p_model + w p_cache, where p_cache is what followed the longest earlier match of
    the last tokens (at least COPY_ORDER of them), and w grows with that match's length: a line
    written the same way as one seen for six tokens is likely to go on the same way
    (`def cell_length(self` → `) -> int:`, as the base class has it). Only the tokens the cache
    has seen change; the rest keep their order."""

    name = "copy"

    def __init__(self, sequences: Sequence[Sequence[int]]):
        self.sequences = [list(seq) for seq in sequences]
        self.after: dict[tuple[int, ...], list[tuple[int, int]]] = {}  # n-gram -> (seq, next)
        for k, seq in enumerate(self.sequences):
            for i in range(COPY_ORDER, len(seq)):
                self.after.setdefault(tuple(seq[i - COPY_ORDER : i]), []).append((k, i))

    def apply(self, logits: np.ndarray, at: Place) -> None:
        context = at.context
        if len(context) < COPY_ORDER:
            return
        found = self.after.get(tuple(context[-COPY_ORDER:]))
        if not found:
            return
        longest = 0
        seen: dict[int, int] = {}
        for k, i in found[-COPY_PLACES:]:
            seq, m = self.sequences[k], COPY_ORDER
            while (
                m < COPY_LONGEST
                and m < i
                and m < len(context)
                and seq[i - m - 1] == context[-m - 1]
            ):
                m += 1
            if m > longest:
                longest, seen = m, {}
            if m == longest:
                seen[seq[i]] = seen.get(seq[i], 0) + 1
        mix(logits, seen, min(COPY_MAX, COPY_STEP * longest))
