"""One completion while it runs: the state the decoder's callbacks read and write.

`CompletionEngine.complete` sets a run up (the prompt, the context build in flight) and hands
its methods to the backend as the `Control`'s hooks (`backends.Callbacks`): whether late
context is worth a restart (`better_context`), the members that steer the decoder after `obj.` (`names_here`), where the
text stops (`stop_at`) and what is streamed (`emit`). Their state lives here, in fields, not in
closure cells: when the context became ready, whether anything was shown, when context was
injected, and this generation's tokens with their log-probabilities.
"""

from __future__ import annotations

import re
import time
from collections.abc import Callable
from concurrent.futures import Future
from dataclasses import dataclass, field

from ..config import GenerationConfig
from ..context.request import ContextPackage, RepositoryNames
from .gates import GateSettings, confident_lines, line_confidence
from .names import names_in
from .postprocess import CursorText, stop_index
from .signatures import (
    RepositorySignatures,
    Signature,
    callable_by_attribute,
    signatures_in,
)
from .steering import TEXT_SOURCES, SteeringFacts

Snippets = tuple[tuple[str, int, str], ...]  # (path, line, text) of the context a prompt holds


@dataclass
class Prompt:
    text: str
    snippets: Snippets
    cursor: int = 0  # where the text before the cursor ends in `text` (token healing)


@dataclass
class CompletionRun:
    """A completion's state from its first evaluation to its last token (one thread: the
    completion worker's; only `ready_at` is set from the context thread, once)."""

    started: float  # time.monotonic() of the keystroke's request
    mode: str  # parallel | sequential | local
    held: bool  # the line's context block is fixed (`CompletionEngine._holds`)
    cur: CursorText
    prompt: Prompt  # the prompt now evaluated (replaced when context is injected)
    future: Future[ContextPackage] | None  # the context build, when one was asked for
    config: GenerationConfig
    gates: GateSettings
    member_word: re.Match[str] | None  # `.name` before the cursor, when members steer
    on_update: Callable[[str], None] | None
    # steering (complete/steering/): the sources on (none: the model's own choice), what
    # the buffer says (its names and signatures), its language, and the context kept from an
    # earlier key, used while this key's build is not done
    sources: tuple[str, ...] = ()
    buffer_names: frozenset[str] = frozenset()
    buffer_signatures: dict[str, Signature] = field(default_factory=dict)
    language: str | None = None
    kept: ContextPackage | None = None
    lines: tuple[tuple[str, int], ...] = ()  # lines written that begin as the cursor's
    repository: RepositoryNames | None = None  # the index's names and definition heads
    ready_at: float | None = None  # when the context build ended
    shown: bool = False  # something was streamed (the local suggestion has started)
    injected_at: float | None = None  # when late context restarted the generation
    spans: list[tuple[int, int, float]] = field(default_factory=list)  # (start, end, logprob)
    _signatures: RepositorySignatures | None = None

    def __post_init__(self) -> None:
        if self.future is not None:
            self.future.add_done_callback(self._context_ready)

    def _context_ready(self, _future: Future[ContextPackage]) -> None:
        self.ready_at = time.monotonic()

    def better_context(self) -> ContextPackage | None:
        """Context worth a restart: ready before the injection deadline, bringing a definition
        the prompt lacks, and only once the local suggestion has started to show (so the first
        token comes as fast as without retrieval)."""
        future = self.future
        if self.held or future is None or self.injected_at is not None or self.ready_at is None:
            return None
        if (self.ready_at - self.started) * 1000 > self.config.inject_deadline_ms:
            return None
        if self.mode == "parallel" and not self.shown:
            return None
        if future.exception() is not None:
            return None
        fresh = future.result()
        return fresh if adds_definitions(fresh, self.prompt.snippets) else None

    def names_here(self) -> tuple[tuple[str, ...], str]:
        """The members of the object before the dot, when the context has typed it."""
        word = self.member_word
        package = self._package()
        if word is None or package is None:
            return (), ""
        receiver = package.receiver
        if not receiver or receiver.get("member") != word[1]:
            return (), ""
        return tuple(receiver.get("members") or ()), word[1]

    def _package(self) -> ContextPackage | None:
        """This key's context once built (None while it is not, or when it failed)."""
        future = self.future
        if future is None or not future.done() or future.cancelled():
            return None
        return future.result() if future.exception() is None else None

    def steering(self) -> SteeringFacts | None:
        """What steers the decoder now: the buffer's names and signatures, and the context's
        (this key's build when done, else the one kept from an earlier key), with `pending`
        while this key's build runs. None when no source is on."""
        if not self.sources:
            return None
        package = self._package()
        pending = self.future is not None and not self.future.done()
        known = package or self.kept
        names, signatures = self.buffer_names, self.buffer_signatures
        texts: tuple[str, ...] = ()
        if known is not None and known.snippets and TEXT_SOURCES.intersection(self.sources):
            in_prompt = {(p, line) for p, line, _ in self.prompt.snippets}
            texts = tuple(s.text for s in known.snippets if (s.path, s.start_line) not in in_prompt)
            every = [s.text for s in known.snippets]
            names = names | names_in(every, None)
            found = signatures_in(every, self.language)
            signatures = {**callable_by_attribute(found), **found, **signatures}
        members, typed = self.names_here() if "members" in self.sources else ((), "")
        repository = self.repository
        if repository is not None:
            texts += same_name_heads(self.cur.before, repository)
        return SteeringFacts(
            before=self.cur.before,
            language=self.language,
            names=names,
            near=self.buffer_names,
            repository=self._repository_signatures(),
            repository_names=repository.spelled if repository is not None else (),
            members=members,
            member_typed=typed,
            signatures=signatures,
            copy_texts=texts,
            lines=self.lines,
            sources=self.sources,
            pending=pending,
        )

    def _repository_signatures(self) -> RepositorySignatures | None:
        if self.repository is None:
            return None
        if self._signatures is None or self._signatures.heads is not self.repository.heads:
            self._signatures = RepositorySignatures(self.repository.heads)
        return self._signatures

    def stop_at(self, text: str) -> int | None:
        """The stop rules, and nothing generated past a completed line below the confidence
        threshold (the gate then cuts that line, and says so)."""
        end = stop_index(text, self.cur)
        if self.gates.min_confidence > 0:
            conf = line_confidence(text, self.spans)
            keep = confident_lines(conf[:-1], self.gates.min_confidence)  # completed lines
            if keep < len(conf) - 1:
                cut = sum(len(ln) + 1 for ln in text.split("\n")[: keep + 1]) - 1
                end = cut if end is None else min(end, cut)
        return end

    def emit(self, text: str) -> None:
        """Streamed text is shown while every line so far is confident enough: a guess the
        final gates would hide is never flashed."""
        self.shown = True
        conf = line_confidence(text, self.spans)
        if self.on_update is not None and confident_lines(conf, self.gates.min_confidence) == len(
            conf
        ):
            self.on_update(text)

    def token(self, start: int, end: int, logprob: float) -> None:
        self.spans.append((start, end, logprob))


_DEF_HEAD = re.compile(r"^\s*(?:async\s+)?(?:def|func|function|fn)\s+(?:\([^)]*\)\s*)?(\w+)\s*\(")
SAME_NAME_HEADS = 3  # at most, of the same name elsewhere


def same_name_heads(before: str, repository: RepositoryNames) -> tuple[str, ...]:
    """At `def name(` being written: how the repository's other definitions of `name` go on
    (a base class's, a sibling's: `def cell_length(self) -> int`), for the n-gram cache to copy
    the parameters and the return annotation from."""
    head = _DEF_HEAD.match(before)
    if head is None:
        return ()
    heads = repository.heads.get(head[1], ())[:SAME_NAME_HEADS]
    return tuple(h.strip() + (":" if h.lstrip().startswith("def ") else "") for h, _, _ in heads)


def adds_definitions(package: ContextPackage, have: Snippets) -> bool:
    """Does `package` hold a definition (or class outline) that `have` does not?"""
    held = {(p, line) for p, line, _ in have}
    return any(
        ("definition" in s.source or "member" in s.source) and (s.path, s.start_line) not in held
        for s in package.snippets
    )
