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
- `LineSource`: the line the repository's other files write most often that begins as the
  cursor's line does, followed to its end when it is likely the line typed (a cache language
  model at the grain a typist accepts);
- `CopySource`: a token n-gram cache (Hellendoorn & Devanbu, FSE 2017) over the prompt and the
  context (also the context the prompt does not hold), interpolated with the model's
  distribution: a continuation seen in the project beats an invented one.

Every source is a bias, never a ban: a confident model still writes a name the buffer does not
show. The strengths below were set by hand on a few lines (tests/test_steering.py holds them)
and then measured, not tuned: bench/results/context_use.md and savings.md have what they do.

Where a name is used and what a call needs are read from the text (complete/names.py,
complete/signatures.py); this module turns them into token-level changes. A module a source (`members`, `lines`, `scope`, `calls`, `copying`) over
the seam they share (`base`); `build_sources` here picks them.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence

import numpy as np

from ..healing import NameBias
from ..names import defines_here
from .base import (
    SOURCES,
    TEXT_SOURCES,
    Place,
    Source,
    Steering,
    SteeringFacts,
    Vocabulary,
    mix,
)
from .calls import CallSource
from .copying import CopySource
from .lines import LINE_SURE, LINE_WEIGHT, LineSource, line_odds
from .members import MemberSource
from .scope import MAX_SCOPE_NAMES, ScopeSource

__all__ = [
    "SOURCES",
    "TEXT_SOURCES",
    "LINE_SURE",
    "LINE_WEIGHT",
    "CallSource",
    "CopySource",
    "LineSource",
    "MemberSource",
    "Place",
    "ScopeSource",
    "Source",
    "Steering",
    "SteeringFacts",
    "Vocabulary",
    "build_sources",
    "line_odds",
    "mix",
]


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
