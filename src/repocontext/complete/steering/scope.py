"""Where a name is used: the names in scope favoured, the others pushed down."""

from __future__ import annotations

import bisect
import re
from collections.abc import Callable, Sequence

import numpy as np

from ..names import DEFINING, KEYWORD_ARGUMENTS, PARAMS_OPEN, in_string_or_comment, use_position
from ..signatures import Signature, SignatureLookup, open_call, signature_for
from .base import Place, Source, Vocabulary

MAX_SCOPE_NAMES = 200_000  # past this, the scope says little: the source stays off
SCOPE_PENALTY = 3.0  # logits taken from a token that starts or goes on with an unknown name
FAVOUR_BONUS = 4.0  # logits added to the next token of a known name from elsewhere
FAVOUR_MIN_LETTERS = 2  # a word begun with at least this many letters
MAX_FAVOURED = 8  # names a begun word may be, at most
MAX_SPELLED = 5_000  # names a begun word may be for the scope to push the others down

_TRAILING_WORD = re.compile(rb"[A-Za-z_][A-Za-z0-9_]*$|$")
_LEADING_WORD = re.compile(rb"[A-Za-z0-9_]*")


class ScopeSource(Source):
    """Where a name is used, the tokens that would start or go on with a name not in scope
    lose `SCOPE_PENALTY`. Digits, strings and punctuation are never touched."""

    name = "scope"

    def __init__(
        self,
        vocab: Vocabulary,
        names: frozenset[str],
        language: str | None,
        signatures: dict[str, Signature] | None = None,
        tables: SignatureLookup = (),
        near: frozenset[str] = frozenset(),
        tokenize: Callable[[bytes], list[int]] | None = None,
        more: Sequence[bytes] = (),
    ):
        """`names`: the names in scope the buffer and the context show, and the language's;
        `more`: the repository's, sorted (kept per index version, not sorted again per key);
        `near`: the buffer's, which the model is left to spell itself."""
        self.vocab = vocab
        self.more = more
        self.near = {n.encode() for n in near}
        self.tokenize = tokenize or (lambda text: [])
        self._first: dict[bytes, int | None] = {}
        self.signatures = tables or (signatures or {},)
        params = {p for sig in (signatures or {}).values() for p in sig.params}
        self.names = sorted(n.encode() for n in names | params)
        self.language = language
        # by the letters typed: the tokens that spell on a known name (None: no known name
        # begins so, and the model is left alone)
        self._allowed: dict[bytes, np.ndarray | None] = {}
        self._names_mask = vocab.word | vocab.spaced_word

    def apply(self, logits: np.ndarray, at: Place) -> None:
        word = _TRAILING_WORD.search(at.line)
        typed = word.group() if word else b""
        prefix = at.line[: len(at.line) - len(typed)]
        text = prefix.decode("utf-8", "replace")
        if in_string_or_comment(text, self.language):
            return
        ahead = _LEADING_WORD.match(at.ahead)
        word_so_far = typed + (ahead.group() if ahead else b"")
        if len(word_so_far) >= FAVOUR_MIN_LETTERS and not text.rstrip().endswith("."):
            self._favour(logits, typed, word_so_far, text)
        if not use_position(text, self.language) or self._maybe_keyword(text):
            return
        if typed not in self._allowed:
            self._allowed[typed] = self._spelling(typed)
        allowed = self._allowed[typed]
        if allowed is None:
            return
        # a name goes on (`typed` so far), or starts, with or without its space before it
        mask = (self.vocab.word if typed else self._names_mask).copy()
        mask[allowed] = False
        logits[mask] -= SCOPE_PENALTY

    def _beginning(self, word: bytes, limit: int) -> list[bytes] | None:
        """The known names that begin with `word` (None: more than `limit`)."""
        found: set[bytes] = set()
        for names in (self.names, self.more):
            lo = bisect.bisect_left(names, word)
            hi = bisect.bisect_left(names, word + b"\xff", lo)
            if len(found) + hi - lo > limit:
                return None
            found.update(names[lo:hi])
        return sorted(found)

    def _favour(self, logits: np.ndarray, typed: bytes, word: bytes, text: str) -> None:
        """A word begun (`word`: its letters typed and those still to spell) that few known
        names begin with, none of them the buffer's: the next token of each one's spelling
        gets FAVOUR_BONUS. The model knows the buffer's names (it reads them); a name from
        elsewhere in the repository it can only guess."""
        if DEFINING.search(text) or PARAMS_OPEN.search(text):
            return
        names = self._beginning(word, MAX_FAVOURED)
        if not names or any(n in self.near for n in names):
            return
        for name in names:
            rest = name[len(typed) :]
            if rest not in self._first:
                ids = self.tokenize(rest) if rest else []
                self._first[rest] = ids[0] if ids else None
            first = self._first[rest]
            if first is not None:
                logits[first] += FAVOUR_BONUS

    def _maybe_keyword(self, text: str) -> bool:
        """An argument's start in a call whose signature is unknown may be a keyword argument
        (`json.dump(tree, fh, ensure_ascii=`), a name no buffer shows: left to the model."""
        if self.language not in KEYWORD_ARGUMENTS:
            return False
        call = open_call(text)
        return (
            call is not None
            and not call[2].strip()
            and signature_for(self.signatures, call[0]) is None
        )

    def _spelling(self, typed: bytes) -> np.ndarray | None:
        if not typed:  # every name's start: the repository's part is kept by the vocabulary
            rests = [*self.names]
            return np.concatenate([
                self.vocab.spelling(rests, spaced=False), self.vocab.spelling(rests, spaced=True),
                self.vocab.starts_of(self.more),
            ])  # fmt: skip
        names = self._beginning(typed, MAX_SPELLED)
        if not names:
            return None  # a name we do not know, or too many: the model's own
        return self.vocab.spelling([n[len(typed) :] for n in names], spaced=False)
