"""The line the repository's other files write most often, followed when it is likely the one
typed (`[generation] line_bias`)."""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence

import numpy as np

from .base import Place, Source, mix

# how often the most written line that begins as the cursor's is the line typed, by how many
# times it was written (log2), its share of the lines that begin so, and the characters of the
# line written so far (/10, 40 at most): a logistic fit on 132,007 prefixes of lines of click,
# jinja2, requests, django, gin, logrus, chi, zod, immer and zustand (the line's own file
# left out; calibrated: predicted 0.5-0.7 were right 62% of the time, 0.9-1 96%). The
# committed bench/line_odds.py refits it at (-5.699, 0.482, 4.188, 0.945) on 124,970 prefixes
# (a stricter test-file rule): bench/results/line_odds.md.
LINE_FIT = (-5.664, 0.491, 4.243, 0.871)
# the line is followed from that likelihood on. Where the model's first line and the line
# disagreed (requests and click, 240 lines typed to 7 prefixes, the product's own first line,
# greedy; bench/line_odds.py's second table): above 0.1 the line was right 34 times and the
# model 36, below it 18 against 62. So above 0.1 it is a wash on the dev set, and the threshold
# rests on the editor: bench/results/savings.md (a prototype that also took the buffer's own
# lines had 104 against 27 there)
LINE_SURE = 0.1
# its next token's share of the mixture: under one half, so that a model sure of another token
# (by 0.82 of probability or more) still writes its own
LINE_WEIGHT = 0.45


class LineSource(Source):
    """The line the index's other files write most often that begins as the cursor's line
    does (`logger = logging.getL` → the project's `getLogger("acme.payments")`), when
    it is likely to be the line being typed (`line_odds` at least LINE_SURE, judged once, at
    the generation's first token): its next token is mixed into the model's distribution,
    p = (1 - LINE_WEIGHT) p_model + LINE_WEIGHT, up to the line's end, while the text written
    follows it. One line followed, not a mixture of lines: tokens of several lines mixed made
    hybrids of them. The first line only; once the text leaves the line, the source is done."""

    name = "lines"

    def __init__(
        self, candidates: Sequence[tuple[str, int]], tokenize: Callable[[bytes], list[int]]
    ):
        self.candidates = [(text.encode("utf-8"), count) for text, count in candidates]
        self.tokenize = tokenize
        self._start: bytes | None = None
        self.line: bytes | None = None  # the line followed
        self.sure = 0.0  # how likely it was, when chosen
        self.done = not any(text for text, _ in self.candidates)

    def apply(self, logits: np.ndarray, at: Place) -> None:
        if self.done:
            return
        if self._start is None:
            self._start = at.line
            self._choose(at)
            if self.line is None or self.sure < LINE_SURE:
                self.done = True
                return
        written = at.line.lstrip()
        assert self.line is not None
        rest = self.line[len(written) :] + b"\n"
        if (
            not at.line.startswith(self._start)  # a new line began
            or not self.line.startswith(written)
            or not rest.startswith(at.ahead)
        ):
            self.done = True
            return
        ids = self.tokenize(rest)
        if ids:
            mix(logits, {ids[0]: 1}, LINE_WEIGHT)

    def _choose(self, at: Place) -> None:
        """The most written candidate that agrees with what was typed, and how likely it is
        the line being typed."""
        written = at.line.lstrip()
        fits = [
            (count, text)
            for text, count in self.candidates
            if text and text.startswith(written) and text[len(written) :].startswith(at.ahead)
        ]
        if not fits:
            return
        others = sum(count for text, count in self.candidates if not text)
        count, self.line = max(fits, key=lambda ct: (ct[0], -len(ct[1])))
        share = count / (sum(c for c, _ in fits) + others)
        self.sure = line_odds(count, share, len(written) + len(at.ahead))


def line_odds(count: int, share: float, chars: int) -> float:
    """How likely a line of the repository is the line being typed: written `count` times,
    `share` of the lines that begin as the typed one does, `chars` of it written (LINE_FIT)."""
    bias, per_doubling, per_share, per_ten_chars = LINE_FIT
    x = bias + per_doubling * math.log2(count) + per_share * share
    return 1 / (1 + math.exp(-(x + per_ten_chars * min(chars, 40) / 10)))
