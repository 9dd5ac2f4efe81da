"""The seam every steering source shares: what the run knows in words (`SteeringFacts`), the
model's vocabulary seen as names (`Vocabulary`), where the next token starts (`Place`), a source
(`Source`), one generation's sources (`Steering`), and the mixture two sources use (`mix`)."""

from __future__ import annotations

import re
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, field

import numpy as np

from ..healing import TokenPieces
from ..signatures import Signature, SignatureTable

SOURCES = ("members", "lines", "scope", "calls", "copy")
# the sources that read the buffer's and the context's text and need the Vocabulary: with none
# of them on (the defaults), a key pays for neither
TEXT_SOURCES = frozenset(("scope", "calls", "copy"))


@dataclass
class SteeringFacts:
    """What the run knows when the first token is chosen, in words; `pending`: the context
    build has not finished, so the run is asked again (its members and signatures may come)."""

    before: str = ""  # the line up to the cursor
    language: str | None = None
    names: frozenset[str] = frozenset()  # names in scope
    near: frozenset[str] = frozenset()  # of those, the buffer's (the prompt shows them)
    repository_names: Sequence[bytes] = ()  # the index's names, sorted, as UTF-8
    members: tuple[str, ...] = ()  # after `obj.`: the receiver's members
    member_typed: str = ""  # the member's letters typed so far
    signatures: dict[str, Signature] = field(default_factory=dict)  # the buffer's, the context's
    repository: SignatureTable | None = None  # the index's, read when a call is open
    copy_texts: tuple[str, ...] = ()  # the context's texts, for the n-gram cache
    # lines of the repository and the buffer that begin as the cursor's line: (stripped
    # line, how many times written)
    lines: tuple[tuple[str, int], ...] = ()  # ("", n): n more lines, not kept
    sources: tuple[str, ...] = SOURCES  # the sources turned on
    pending: bool = False

    @property
    def signature_tables(self) -> tuple[SignatureTable, ...]:
        tables: tuple[SignatureTable, ...] = (self.signatures,)
        return tables + ((self.repository,) if self.repository is not None else ())


class Vocabulary:
    """The model's tokens seen as the start or the rest of a name: each token's leading word
    characters (after one optional space), grouped, so that the tokens that spell a part of a
    name are dictionary look-ups. Built once per model, from `TokenPieces`."""

    def __init__(self, pieces: TokenPieces):
        n = len(pieces.pieces)
        self.pieces = pieces
        self.word = np.zeros(n, dtype=bool)  # begins with a letter or `_`: a name goes on
        self.spaced_word = np.zeros(n, dtype=bool)  # " name...": a name starts after a space
        self.closing = np.zeros(n, dtype=bool)  # holds a `)`
        self._parts: dict[tuple[bool, bytes], list[int]] = {}
        self._starts: list[tuple[Sequence[bytes], np.ndarray]] = []
        for i, p in enumerate(pieces.pieces):
            if not p:
                continue
            if b")" in p:
                self.closing[i] = True
            spaced = p[:1] == b" "
            body = p[1:] if spaced else p
            m = re.match(rb"[A-Za-z_][A-Za-z0-9_]*", body)
            if m is None:
                continue
            (self.spaced_word if spaced else self.word)[i] = True
            self._parts.setdefault((spaced, m.group()), []).append(i)

    def starts_of(self, names: Sequence[bytes]) -> np.ndarray:
        """The tokens that begin one of `names`, with or without a space before it: for the
        repository's names, the same list for every key until the index changes, so kept
        (the last two lists asked, by identity)."""
        for kept, ids in self._starts:
            if kept is names:
                return ids
        ids = np.concatenate(
            [self.spelling(names, spaced=False), self.spelling(names, spaced=True)]
        )
        self._starts = [(names, ids), *self._starts[:1]]
        return ids

    def spelling(self, rests: Iterable[bytes], spaced: bool) -> np.ndarray:
        """Tokens whose word part is a non-empty prefix of one of `rests`, the rest of a name
        still to spell (those that would not leave every name)."""
        ids: list[int] = []
        seen: set[bytes] = set()
        for rest in rests:
            for k in range(1, len(rest) + 1):
                part = rest[:k]
                if part in seen:
                    continue
                seen.add(part)
                ids.extend(self._parts.get((spaced, part), ()))
        return np.asarray(ids, dtype=np.int64)


@dataclass
class Place:
    """Where the next token starts: the line before it (bytes), the bytes token healing still
    makes it spell (the end of what was typed, backed up), and every token so far."""

    line: bytes
    ahead: bytes
    context: list[int]


class Source:
    """One steering source for one generation: `apply` changes the logits in place before a
    token is chosen."""

    name = ""

    def apply(self, logits: np.ndarray, at: Place) -> None:
        raise NotImplementedError

    def consumed(self, token: int) -> None:
        """The token chosen (sources that follow a spelling)."""

    @property
    def spelling(self) -> bool:
        """A name is being spelled by this source (prompt-lookup drafts wait)."""
        return False


def mix(logits: np.ndarray, seen: dict[int, int], weight: float) -> None:
    """p = (1 - weight) p_model + weight p_seen for the tokens `seen` counts (p_seen: their
    shares of the count), written back as logits; the other tokens keep theirs, and so their
    order."""
    total = sum(seen.values())
    top = float(np.max(logits))
    log_z = top + float(np.log(np.exp(logits - top).sum()))
    for token, count in seen.items():
        p_model = float(np.exp(logits[token] - log_z))
        mixed = (1 - weight) * p_model + weight * count / total
        logits[token] = log_z + np.log(mixed / (1 - weight))


class Steering:
    """One generation's sources. `line_start`: the line's text before the first generated
    token (the healed bytes off); `healed`: those bytes, which the first tokens spell again.
    The backend reports each token with `consumed`."""

    def __init__(
        self,
        sources: list[Source],
        line_start: bytes,
        detokenize: Callable[[list[int]], bytes],
        prompt: Sequence[int],
        healed: bytes = b"",
    ):
        self.sources = sources
        self.line_start = line_start
        self.healed = healed
        self.detokenize = detokenize
        self.generated: list[int] = []
        self.at = Place(line_start.rsplit(b"\n", 1)[-1], healed, list(prompt))

    def __bool__(self) -> bool:
        return bool(self.sources)

    def replace(self, sources: list[Source]) -> None:
        """Sources built again with more facts (the context arrived): same names replaced."""
        names = {s.name for s in sources}
        self.sources = [s for s in self.sources if s.name not in names] + sources

    def apply(self, logits: np.ndarray) -> np.ndarray:
        out = np.array(logits, dtype=np.float32, copy=True)
        for source in self.sources:
            source.apply(out, self.at)
        return out

    def consumed(self, token: int) -> None:
        for source in self.sources:
            source.consumed(token)
        self.generated.append(token)
        self.at.context.append(token)
        spelled = self.detokenize(self.generated)
        self.at.line = (self.line_start + spelled).rsplit(b"\n", 1)[-1]
        self.at.ahead = self.healed[len(spelled) :] if self.healed.startswith(spelled) else b""

    @property
    def spelling_a_name(self) -> bool:
        """A member is being spelled (prompt-lookup drafts wait)."""
        return any(s.spelling for s in self.sources)
