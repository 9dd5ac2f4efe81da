"""Prompt-lookup drafts: the tokens that followed the last few generated ones where the same
tokens appear in the prompt, guessed as what comes next and checked in one batch.

Code repeats what is on screen (a name from the line above, a call from the retrieved
context), and a small model's step costs the same whether it confirms one token or several:
measured on 2 cores with gemma-3-270m (one decode with the logits of every position), 1 token
50 ms, 1 + 3 drafted 74 ms, 1 + 7 drafted 102 ms. With greedy decoding the answer is the one
token-by-token decoding gives: a drafted token is kept only where the model's own choice at
that position is the same, and the first one that differs is replaced by that choice (its
logits are already there). llama-cpp-python's `LlamaPromptLookupDecoding` does the same search;
it works through `Llama.generate`, which this backend does not use (it moves cached runs
itself), so the search is here.

Off by default ([generation] prompt_lookup): measured on 23 places in this repository's own
code, 24 tokens each, the same cache state for both, 28% of the tokens came from confirmed
drafts, yet the whole took 1.1-1.2x as long as token by token (22.0 s against 24.7 s with 4
guesses at a time, 22.7 / 26.6 with 2, 20.5 / 22.8 with 8): the logits of every checked
position cost about 10 ms each with a 262k-token vocabulary, and the drafts that fail pay
them for nothing. A model with a smaller vocabulary, or a faster machine, may gain; a
batched decode also rounds differently from one token at a time, so 4-6 of the 23 answers
differed after their first tokens.
"""

from __future__ import annotations

import numpy as np

NGRAM = 3  # the generated tokens looked up in the prompt
MAX_DRAFT = 4  # tokens guessed at a time (a wrong guess of 4 costs about half a step)


class PromptLookup:
    """The prompt and what was generated after it; where its last `NGRAM` tokens were seen."""

    def __init__(self, prompt: list[int], ngram: int = NGRAM, max_draft: int = MAX_DRAFT):
        self.tokens = np.asarray(prompt, dtype=np.int64)
        self.ngram = ngram
        self.max_draft = max_draft
        self.count = len(prompt)
        self._spare = np.empty(max(64, len(prompt)), dtype=np.int64)

    def add(self, token: int) -> None:
        if self.count == len(self.tokens):
            self.tokens = np.concatenate([self.tokens, self._spare])
        self.tokens[self.count] = token
        self.count += 1

    def draft(self) -> list[int]:
        """The tokens that followed the latest earlier occurrence of the last `ngram` ones
        (at most `max_draft`), or [] where they were not seen."""
        seen = self.tokens[: self.count]
        n = self.ngram
        if self.count <= n:
            return []
        tail = seen[-n:]
        windows = np.lib.stride_tricks.sliding_window_view(seen[:-1], n)
        hits = np.flatnonzero((windows == tail).all(axis=1))
        if hits.size == 0:
            return []
        start = int(hits[-1]) + n
        return [int(t) for t in seen[start : start + self.max_draft]]
