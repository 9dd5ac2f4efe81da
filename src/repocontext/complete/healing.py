"""Token healing: a prompt that ends inside a token is backed up to the token's start, and the
first generated tokens must spell what was backed up.

The cursor is mid-word at most keystrokes. After `    r` the prompt's last token is `r`, and a
model that reads it as a whole token continues as if `r` were a name (` = self.source()`);
after `uuid.UU` it proposes `UUID(`, which makes `UUUID(`. With the last token taken off
the prompt, the model chooses among the tokens that begin with the typed characters (`return`,
`raise`, `UUID`) or are a prefix of them, as it would have had the word come whole. JetBrains'
Full Line Code Completion does this (arXiv 2405.08704); llama.cpp has it only as open pull
requests (ggml-org/llama.cpp#7187). One token is backed up, never past the start of the line
being typed; a token that began before the line (an indentation run that crossed the newline)
is left as it is.

`NameBias` steers the same way with what the index knows: after `obj.` (and the letters of a
member typed so far), the tokens that spell one of the names the receiver's class has get a
bonus, so that a small model picks among the real members instead of inventing one. A bonus,
not a ban: the class may have members the index cannot see (a base from a library, attributes
set elsewhere), and then the model's own choice still wins when it is sure.

`TokenPieces` is the vocabulary as bytes, sorted, so the tokens that agree with the characters
still to spell are one bisection plus a dictionary look-up per character; built once per model
(about a second for a 262k-token vocabulary), in the background.
"""

from __future__ import annotations

import bisect
from collections.abc import Callable, Sequence

import numpy as np

from ..runtime.threads import start_daemon


class TokenPieces:
    """Every token's bytes; which tokens agree with a string still to be spelled."""

    def __init__(self, pieces: Sequence[bytes]):
        self.pieces = list(pieces)
        order = sorted((p, i) for i, p in enumerate(self.pieces) if p)
        self._sorted = [p for p, _ in order]
        self._ids = np.fromiter((i for _, i in order), dtype=np.int64, count=len(order))
        # tokens that begin with a letter, a digit or `_` (or a non-ASCII byte): they would go on
        # with the word before them
        self.word_start = np.fromiter(
            (bool(p) and (p[:1].isalnum() or p[0] == 95 or p[0] >= 0x80) for p in self.pieces),
            dtype=bool,
            count=len(self.pieces),
        )
        self._whole: dict[bytes, list[int]] = {}
        for i, p in enumerate(self.pieces):
            if p:
                self._whole.setdefault(p, []).append(i)

    def agreeing(self, rest: bytes) -> np.ndarray:
        """Ids of the tokens whose bytes begin with `rest`, or are a non-empty prefix of it."""
        lo = bisect.bisect_left(self._sorted, rest)
        hi = (
            bisect.bisect_left(self._sorted, _after_prefix(rest), lo) if rest else len(self._sorted)
        )
        shorter = [i for k in range(1, len(rest)) for i in self._whole.get(rest[:k], ())]
        longer = self._ids[lo:hi]
        return np.concatenate([longer, np.asarray(shorter, dtype=np.int64)]) if shorter else longer


def _after_prefix(prefix: bytes) -> bytes:
    """The smallest bytes string greater than every string that begins with `prefix`."""
    stripped = prefix.rstrip(b"\xff")
    if not stripped:
        return b"\xff" * (len(prefix) + 1)
    return stripped[:-1] + bytes([stripped[-1] + 1])


class LazyPieces:
    """A model's `TokenPieces`, built on a background thread at load: until it is ready, prompts
    are not healed (a first keystroke does not wait a second for it)."""

    def __init__(self, build: Callable[[], Sequence[bytes]]):
        self._pieces: TokenPieces | None = None
        self._thread = start_daemon("token-pieces", self._build, build)

    def _build(self, build: Callable[[], Sequence[bytes]]) -> None:
        self._pieces = TokenPieces(build())

    def ready(self, wait: bool = False) -> TokenPieces | None:
        if wait:
            self._thread.join()
        return self._pieces


class Healing:
    """One generation's healing: the bytes backed up, and what of them is still to be spelled.

    `choose` picks the next token among those that agree (greedy), with its log-probability
    among them: the probability of the token given the characters the user typed."""

    def __init__(self, pieces: TokenPieces, backed_up: bytes):
        self.pieces = pieces
        self.backed_up = backed_up
        self.rest = backed_up

    @property
    def active(self) -> bool:
        return bool(self.rest)

    def choose(self, logits: np.ndarray, banned: Sequence[int] = ()) -> tuple[int, float]:
        allowed = self.pieces.agreeing(self.rest)
        if banned:
            allowed = allowed[~np.isin(allowed, np.asarray(banned, dtype=np.int64))]
        if allowed.size == 0:  # cannot happen with a vocabulary that spells every byte
            self.rest = b""
            return int(np.argmax(logits)), 0.0
        scores = np.asarray(logits[allowed], dtype=np.float32)
        best = int(np.argmax(scores))
        top = float(scores[best])
        logprob = -float(np.log(np.exp(scores - top).sum()))
        token = int(allowed[best])
        self.consumed(token)
        return token, logprob

    def consumed(self, token: int) -> None:
        piece = self.pieces.pieces[token]
        self.rest = self.rest[len(piece) :] if self.rest.startswith(piece) else b""

    def strip(self, generated: bytes) -> bytes:
        """The generated bytes without the backed-up ones they begin with."""
        n = len(self.backed_up)
        return generated[n:] if generated.startswith(self.backed_up) else generated


NAME_BONUS = 6.0  # logits added to the token that spells a known member (e^6: about 400x)


class NameBias:
    """A bonus for the token that goes on spelling one of `names` as the model would spell it.

    `typed`: the member's letters before the cursor; `healed`: the bytes healing backed up
    (the end of `typed`, or more). Each name's rest, after `healed`, is tokenized as a whole
    (its usual spelling: `line_items` as `line` `_items`), and the bonus goes to the next token
    of each spelling that agrees with what was generated: not to every token that is a prefix
    of a name (`l` would then win, and the model would take it for the whole name). Once a
    whole name is spelled, the next token is favoured to end the word (`grand_total_with_tax`,
    not `..._tax_discount`); it stops there, or when the model leaves every spelling.
    `word_start`: which tokens go on with a word (TokenPieces), for that last step."""

    def __init__(
        self,
        tokenize: Callable[[bytes], list[int]],
        names: Sequence[str],
        typed: str,
        healed: bytes = b"",
        word_start: np.ndarray | None = None,
    ):
        rests = {healed + n[len(typed) :].encode("utf-8") for n in names if n.startswith(typed)}
        self.targets = [t for t in (tokenize(r) for r in rests if r) if t]
        self.generated: list[int] = []
        self.word_start = word_start
        self.at_end = False  # a whole name was just spelled

    @property
    def active(self) -> bool:
        return bool(self.targets) or self.at_end

    def apply(self, logits: np.ndarray) -> np.ndarray:
        """The logits with the bonus (a copy), or as they are when no name is being spelled."""
        if self.at_end:
            if self.word_start is None:
                return logits
            out = np.array(logits, dtype=np.float32, copy=True)
            out[self.word_start] -= NAME_BONUS
            return out
        if not self.targets:
            return logits
        k = len(self.generated)
        allowed = sorted({t[k] for t in self.targets})
        out = np.array(logits, dtype=np.float32, copy=True)
        out[allowed] += NAME_BONUS
        return out

    def consumed(self, token: int) -> None:
        k = len(self.generated)
        self.generated.append(token)
        kept = [t for t in self.targets if len(t) > k and t[k] == token]
        longer = [t for t in kept if len(t) > k + 1]
        self.at_end = len(longer) < len(kept) and not longer
        self.targets = longer


def back_up(
    tokens: list[int], pieces: TokenPieces, text_before: str, limit: int, first: int = 0
) -> tuple[list[int], bytes]:
    """`tokens` (the prompt up to the cursor) without its last token when that token lies
    within the last `limit` characters of `text_before` (the line typed so far); the bytes
    taken off. `first`: tokens before it are never taken (the beginning-of-text token)."""
    if limit <= 0 or len(tokens) <= first:
        return tokens, b""
    piece = pieces.pieces[tokens[-1]]
    tail = text_before[-limit:].encode("utf-8")
    if not piece or len(piece) > len(tail) or not tail.endswith(piece):
        return tokens, b""
    return tokens[:-1], piece
