"""Decoding steered by what the buffer and the index know: the repository acts on the
distribution of the next token, where a small model listens, not only in the prompt, which it
mostly ignores (bench/results/context_use.md: the callee's own definition in the prompt gave
gemma-3-270m 45 exact first lines against 44 without it).

The run states what it knows in words (`SteeringFacts`: names in scope, the receiver's members,
the signatures of the functions it may call, text to copy from); `Steering` turns that into
logit changes with the model's vocabulary, one source a class:

- `MemberSource`: after `obj.`, the names the receiver's class has (healing.NameBias);
- `ScopeSource`: where a name is used (not defined), a token that would start or go on with a
  name no one defined is pushed down: the buffer's names, the context's, the language's
  builtins and keywords. Monitor-guided decoding (Agrawal et al., NeurIPS 2023) masks such
  identifiers with a static analysis; here it is a penalty, since the buffer is a guess at
  what is in scope and a library's names are not in it;
- `CallSource`: inside `callee(` with a known signature, no `)` before its required
  positional arguments, and a local named like the next parameter is favoured for it;
- `LineSource`: the lines the repository and the buffer wrote that begin as the cursor's
  line does, mixed into the model's distribution by how often each was written and how much
  of the line agrees (a cache language model at the grain a typist accepts);
- `CopySource`: a token n-gram cache (Hellendoorn & Devanbu, FSE 2017) over the prompt and the
  context (also the context the prompt does not hold), interpolated with the model's
  distribution: a continuation seen in the project beats an invented one.

Every source is a bias, never a ban: a confident model still writes a name the buffer does not
show. The strengths below were set by hand on a few lines (tests/test_steering.py holds them)
and then measured, not tuned: bench/results/context_use.md and savings.md have what they do.

Where a name is used and what a call needs are read from the text (complete/names.py,
complete/signatures.py); this module turns them into token-level changes. It is over 400 lines
for the seam, the vocabulary and five source classes that share them; a source added next would
make a `steering/` package with a module a source worth it.
"""

from __future__ import annotations

import bisect
import math
import re
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, field

import numpy as np

from .healing import NameBias, TokenPieces
from .names import (
    DEFINING,
    KEYWORD_ARGUMENTS,
    PARAMS_OPEN,
    defines_here,
    in_string_or_comment,
    use_position,
)
from .signatures import Signature, SignatureLookup, SignatureTable, open_call, signature_for

SCOPE_PENALTY = 3.0  # logits taken from a token that starts or goes on with an unknown name
CALL_PENALTY = 6.0  # logits taken from a `)` that would close a call short of its arguments
PARAM_BONUS = 2.0  # logits added to the spelling of a local named like the next parameter
COPY_ORDER = 3  # the fewest tokens of context the cache matches
COPY_STEP = 0.1  # the cache's share of the mixture per token matched (3 tokens: 0.3)
COPY_MAX = 0.8  # its share at most (8 tokens matched and more)
COPY_LONGEST = 16  # a match is not measured further back
COPY_PLACES = 64  # earlier places of the same n-gram looked at, the latest
# how often the most written line that begins as the cursor's is the line typed, by how many
# times it was written (log2), its share of the lines that begin so, and the characters of the
# line written so far (/10, 40 at most): a logistic fit on 132,007 prefixes of lines of click,
# jinja2, requests, django, gin, logrus, chi, zod, immer and zustand (the line's own file
# left out; calibrated: predicted 0.5-0.7 were right 62% of the time, 0.9-1 96%).
LINE_FIT = (-5.664, 0.491, 4.243, 0.871)
# the line is followed from that likelihood on: where the model's first line and the line
# disagreed, at 1,551 typed prefixes of 240 lines of requests and click (the dev set, the
# product's own first line, greedy), the line was right 104 times and the model 27 above 0.1;
# below it, 24 against 78 (/tmp-free record: bench/results/NOTES.md, issue 48)
LINE_SURE = 0.1
# its next token's share of the mixture: under one half, so that a model sure of another token
# (by 0.82 of probability or more) still writes its own
LINE_WEIGHT = 0.45
MAX_SCOPE_NAMES = 200_000  # past this, the scope says little: the source stays off
FAVOUR_BONUS = 4.0  # logits added to the next token of a known name from elsewhere
FAVOUR_MIN_LETTERS = 2  # a word begun with at least this many letters
MAX_FAVOURED = 8  # names a begun word may be, at most
MAX_SPELLED = 5_000  # names a begun word may be for the scope to push the others down

SOURCES = ("members", "lines", "scope", "calls", "copy")
# the sources that read the buffer's and the context's text and need the Vocabulary: with none
# of them on (the defaults), a key pays for neither
TEXT_SOURCES = frozenset(("scope", "calls", "copy"))

_TRAILING_WORD = re.compile(rb"[A-Za-z_][A-Za-z0-9_]*$|$")
_LEADING_WORD = re.compile(rb"[A-Za-z0-9_]*")


# words after which a name is being defined, not used
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
        _mix(logits, seen, min(COPY_MAX, COPY_STEP * longest))


def _mix(logits: np.ndarray, seen: dict[int, int], weight: float) -> None:
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


class LineSource(Source):
    """The line the repository and the buffer wrote most often that begins as the cursor's
    line does (`logger = logging.getL` → the project's `getLogger("acme.payments")`), when
    it is likely to be the line being typed (`line_odds` at least LINE_SURE, judged once, at
    the generation's first token): its next token is mixed into the model's distribution,
    p = (1 - LINE_WEIGHT) p_model + LINE_WEIGHT, up to the line's end, while the text written
    follows it. One line followed, not a mixture of lines: tokens of several lines mixed made
    hybrids of them. The first line only; once the text leaves the line, the source is done."""

    name = "lines"

    def __init__(self, candidates: Sequence[tuple[str, int]], tokenize: Callable[[bytes], list[int]]):
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
            _mix(logits, {ids[0]: 1}, LINE_WEIGHT)

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
        return any(isinstance(s, MemberSource) and s.bias.active for s in self.sources)


def build_sources(
    facts: SteeringFacts,
    vocab: Vocabulary | None,
    tokenize: Callable[[bytes], list[int]],
    prompt: Sequence[int],
    healed: bytes = b"",
    first: bool = True,
    word_start: np.ndarray | None = None,
) -> list[Source]:
    """The sources `facts` call for; `first`: the generation's first token (members are
    steered only from there: NameBias follows a spelling from its start). `vocab` None: not
    built yet, only the members steer (`word_start`: TokenPieces', for their word end)."""
    on = set(facts.sources)
    sources: list[Source] = []
    if first and "members" in on and facts.members:
        bias = NameBias(tokenize, facts.members, facts.member_typed, healed, word_start)
        sources.append(MemberSource(bias))
    if first and "lines" in on and facts.lines:
        sources.append(LineSource(facts.lines, tokenize))
    if vocab is None:
        return sources
    names = facts.names
    if "scope" in on and names and len(names) <= MAX_SCOPE_NAMES:
        tables = facts.signature_tables
        scope = ScopeSource(
            vocab, names, facts.language, facts.signatures, tables, facts.near, tokenize,
            facts.repository_names,
        )  # fmt: skip
        sources.append(scope)
    if "calls" in on and (facts.signatures or facts.repository is not None):
        tables = facts.signature_tables
        sources.append(CallSource(vocab, tables, names, tokenize, defines_here))
    if "copy" in on:
        sequences = [list(prompt)] + [tokenize(t.encode()) for t in facts.copy_texts]
        sources.append(CopySource(sequences))
    return sources
