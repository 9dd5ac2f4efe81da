"""One suggestion: start generating at once, inject context when it is ready, never wait past
the deadline.

The prompt is laid out for the KV cache: retrieved context first (it changes rarely, and its
order is stable, see context.packing), then a window of the file whose first line moves only in
steps of 16 lines, then the text before the cursor. A typed character therefore re-evaluates a
few tokens; a new line, one line's worth.

Injection, chosen by measurement (bench/latency.py; the numbers are in bench/results): the
context engine runs in a thread while the model evaluates the local prompt, and the local
suggestion starts streaming as soon as it can. Context that was ready before
`inject_deadline_ms` and brings a definition the prompt lacks then makes generation stop
between tokens and restart on the new prompt; the KV cache keeps the common prefix, so what is
paid is the context plus the window after it. Restarting before the first local token would
make the first token wait for that evaluation (measured: about 1.6x the local first token on a
cold prompt). Context that arrives later is kept for the next request on that file, which
starts with it, and a kept context is replaced only when a new one adds a definition, so the
prompt's head stays the same while typing. A new context block costs its own tokens, not
the window after it: the backend moves the cached window behind it
(complete/backends/llamacpp/kvcache.py, `reuse_plan` and `park`).

A line holds its block (`_holds`), and a key never waits for one (`_costlier`): with context
on, a block that changed at every place and while typing made the engine evaluate 2.2x the
prompt tokens, and the keys with a suggestion on screen fell from 38.5% to 11.5%
(bench/results/savings.md). The block is evaluated when nothing else runs: in the pause at a
new place, after the window (`warm`), or once a key's generation has ended.

(About 540 lines: the one request's life, from the local prompt to the injected context and
the stop, in one place; the prompt's parts are in templates.py and the backends.)
"""

from __future__ import annotations

import logging
import re
import threading
import time
import traceback
from collections.abc import Callable
from concurrent.futures import Future
from dataclasses import asdict, dataclass, field, replace
from typing import Any

from ..choices import COMPLETION_MODES
from ..config import GenerationConfig
from ..context.engine import ContextEngine
from ..context.lines import RepositoryLines
from ..context.request import ContextPackage, CursorRequest, RepositoryNames
from ..lang.languages import language_for
from ..lang.text import cursor_in, split_lines
from ..locations import relative_path
from ..runtime.threads import Worker
from .backends import Backend, Callbacks, Control, Generation
from .cache import CacheKey, SuggestionCache, surroundings_digest
from .gates import GateSettings, Placement, line_confidence
from .gates import apply as apply_gates
from .names import names_in
from .postprocess import MAX_BLOCK_LINES, CursorText, clean
from .run import CompletionRun, Prompt, Snippets, adds_definitions
from .signatures import Signature, signatures_in
from .steering import TEXT_SOURCES
from .templates import ContextFile

WINDOW_STEP = 16
# a key takes the line's context block when evaluating it costs at most this many tokens more
# than the prompt without it (about 70 ms here)
ADOPT_SLACK_TOKENS = 32
# the block is evaluated once no key has come for this long (a pause, not the gap between two
# keys of a word): each try a key stops is thrown away, and takes the cores from that key
BLOCK_AFTER_IDLE_S = 0.25
_MEMBER_WORD = re.compile(r"\.([A-Za-z_]\w*|)$")  # the cursor after `obj.` or `obj.na`
MODES = COMPLETION_MODES
LINE_MIN_PREFIX = 2  # characters of a line typed before the lines written so steer it
LINE_CANDIDATES = 16  # lines that steer it, at most (the most often written; the others
# count as one with no text: how sure the source is depends on their share)
BufferFacts = tuple[frozenset[str], dict[str, Signature]]  # a buffer's names, its signatures

log = logging.getLogger(__name__)


class CancelToken:
    """Stops a request. `cancel`: a newer key at the same place, whose prompt shares the head
    being evaluated (the chunk in llama.cpp finishes: its work is the next key's); `abandon`:
    the user left the place (<Esc>, another buffer, a new place), where nothing evaluated is
    wanted (a chunk is stopped inside llama.cpp: llamacpp/native.py:AbortSwitch)."""

    def __init__(self) -> None:
        self._event = threading.Event()
        self._abandoned = False

    def cancel(self) -> None:
        self._event.set()

    def abandon(self) -> None:
        self._abandoned = True
        self._event.set()

    def wait(self, seconds: float) -> bool:
        """Sleep up to `seconds`; True at once when cancelled meanwhile."""
        return self._event.wait(seconds)

    @property
    def cancelled(self) -> bool:
        return self._event.is_set()

    @property
    def abandoned(self) -> bool:
        return self._abandoned


@dataclass
class Suggestion:
    suggestion: str
    context_injected: bool = False
    snippets: int = 0
    tokens_evaluated: int = 0
    tokens_generated: int = 0
    timings_ms: dict[str, float | None] = field(default_factory=dict)
    status: str = "ok"  # ok | cancelled | empty | deadline
    source: str = "model"  # model | cache
    tokens_reused: int = 0
    # the object before the dot, when the engine could not type it: {"line", "col"} for the
    # editor to ask a language server, whose answer comes back as `receiver_location`
    receiver_unresolved: dict[str, int] | None = None
    # before the gates (complete/gates.py): the cleaned text, each of its lines' confidence,
    # and the gate that cut or dropped it (None: shown as generated)
    ungated: str = ""
    line_confidence: list[float] = field(default_factory=list)
    gate: str | None = None

    def to_json(self) -> dict[str, Any]:
        return asdict(self)


class CompletionEngine:
    """Owns a backend, a context engine and the suggestion cache for one repository."""

    def __init__(
        self,
        backend: Backend,
        context: ContextEngine | None,
        config: GenerationConfig,
        on_context_kept: Callable[[str], None] | None = None,
        on_context_error: Callable[[str], None] | None = None,
        on_index_replaced: Callable[[], None] | None = None,
        use_repository: bool = True,
    ):
        """`context`: the index handle, None until the repository has an index (the session
        publishes it then, `use_index`); `on_context_kept`: told when late context is kept for
        a file (the session warms the next prompt with it); `on_context_error`: told when a
        context build fails (the completion goes on without that context);
        `on_index_replaced`: told when a build finds its index file replaced (`index
        --rebuild` by another process): the session publishes a handle on the new one;
        `use_repository`: False makes a plain local completer (`[context] use_repository`):
        no context is built and only the buffer steers the decoder."""
        self.backend = backend
        self.context = context
        self.use_repository = use_repository
        # the index's names and definition heads, read on the context thread by a build and
        # kept for the decoder's steering (one assignment: read by the completion thread)
        self.repository: RepositoryNames | None = None
        # the index's source lines (context/lines.py), read the same way, for `line_bias`
        self.repository_lines: RepositoryLines | None = None
        # the buffer's names and signatures, by file, for the text above and below the line
        # being typed (recomputed only when that changes; the line itself is read each key)
        self._buffer_facts: dict[str, tuple[str, BufferFacts]] = {}
        self.config = config
        self.on_context_kept = on_context_kept
        self.on_context_error = on_context_error
        self.on_index_replaced = on_index_replaced
        self.cache = SuggestionCache()
        self.last_context: dict[str, ContextPackage] = {}
        # the line each file's kept context is held for: typing on that line never changes
        # the prompt's head (see `_holds`)
        self.held_line: dict[str, int] = {}
        # the one thread that uses the context engines (their caches and stores): each build
        # takes the newest handle when it starts, and a replaced handle is closed here, after
        # the builds queued before it
        self._pool = Worker("context")

    def close(self) -> None:
        self._pool.shutdown(wait=False, cancel_futures=True)

    def busy(self) -> bool:
        """Is a context build (or a replaced handle's close) queued or running?"""
        return self._pool.busy()

    def use_index(self, context: ContextEngine) -> None:
        """Publish a new index handle (one assignment; the session's index worker). The next
        build takes it; the handle it replaces is closed on the context thread once the builds
        queued before this call, its last readers, have ended."""
        old, self.context = self.context, context
        if old is not None and old is not context:
            try:
                self._pool.submit(old.close)
            except RuntimeError:  # the engine is closed: no build runs any more
                old.close()

    def _with_budget(self, request: CursorRequest) -> CursorRequest:
        """The request as the context build gets it: with the configured budget unless it
        names its own (`complete` and `warm` ask the same way)."""
        if request.budget is not None:
            return request
        return replace(request, budget=self.config.context_budget)

    def _build(self, request: CursorRequest) -> ContextPackage:
        """A context build, on the context thread, with the newest handle (a handle once
        published is only ever replaced by another, never by None)."""
        context = self.context
        assert context is not None
        if self.on_index_replaced is not None and context.store.replaced():
            self.on_index_replaced()  # this build still reads the old file, consistently
        try:
            package = context.build(request)
            if self.use_repository:
                self.repository = context.repository_names()
                if self.config.line_bias:
                    self.repository_lines = context.repository_lines()
            return package
        except Exception as exc:
            # the completion goes on without this context; the failure is not hidden
            log.debug("context build failed:\n%s", traceback.format_exc())
            if self.on_context_error is not None:
                self.on_context_error(f"context build failed ({type(exc).__name__}: {exc})")
            raise

    def complete(
        self,
        request: CursorRequest,
        mode: str = "parallel",
        cancel: CancelToken | None = None,
        on_update: Callable[[str], None] | None = None,
        speculative: bool = False,
    ) -> Suggestion:
        """`speculative`: a suggestion prepared ahead (the session's speculation), generated
        in the backend's sibling so that the real next prompt keeps its KV cache."""
        t0 = time.monotonic()
        backend = self.backend.sibling() if speculative else self.backend
        cancel = cancel or CancelToken()
        lines, line, cur = _cursor_of(request)
        key = CacheKey(request.file, line, surroundings_digest(lines[: line - 1], lines[line:]))
        cached = self.cache.get(key, cur.before) if request.avoid is None else None
        if cached is not None and mode == "parallel":
            if on_update:
                on_update(cached)
            return Suggestion(
                cached,
                source="cache",
                timings_ms={"first_token": _ms(t0), "injection": None, "total": _ms(t0)},
            )
        future: Future[ContextPackage] | None = None
        held = mode == "parallel" and self._holds(request.file, line)
        member_word = _MEMBER_WORD.search(cur.before)
        repository = self.use_repository and self.context is not None
        # a held line still asks the context engine after `obj.`: the members steer the decoder
        if repository and mode != "local" and (not held or member_word):
            future = self._pool.submit(self._build, self._with_budget(request))
        kept = (
            self.last_context.get(request.file) if self.use_repository and mode != "local" else None
        )
        package = kept if mode == "parallel" else None
        if mode == "sequential" and future is not None:
            package = future.result()
        prompt = self._prompt(request.file, lines, line, cur, package)
        # a second candidate bans the first one's first token: that ban and healing's
        # choice of the first token would fight, so a second candidate is not healed
        heal_chars = len(cur.before) if self.config.token_healing and not request.avoid else 0
        deferred = False  # the line's context is not in the KV cache yet: a warming brings it
        if held and prompt.snippets:
            local = self._prompt(request.file, lines, line, cur, None)
            if self._costlier(backend, prompt, local, heal_chars):
                prompt, deferred = local, True
        deadline = t0 + self.config.hard_deadline_ms / 1000
        first_token: float | None = None
        evaluated = reused = 0
        llama_ms = 0.0
        run = CompletionRun(
            started=t0,
            mode=mode,
            held=held,
            cur=cur,
            prompt=prompt,
            future=future,
            config=self.config,
            gates=self.gate_settings(),
            member_word=member_word if self.config.member_bias else None,
            on_update=on_update,
            sources=self._sources(mode),
            language=language_for(request.file),
            kept=kept,
            # mode local: no context, so nothing of the index either (the buffer steers)
            repository=self.repository if self.use_repository and mode != "local" else None,
        )
        if "lines" in run.sources:
            run.lines = self._line_candidates(request.file, cur.before)
        if TEXT_SOURCES.intersection(run.sources):
            run.buffer_names, run.buffer_signatures = self._buffer_facts_of(
                request.file, key.surroundings, lines, line, run.language
            )
        hooks = Callbacks(
            cancelled=lambda: cancel.cancelled,
            abandoned=lambda: cancel.abandoned,
            restart=lambda: run.better_context() is not None,
            stop_at=run.stop_at,
            emit=run.emit,
            token=run.token,
            steering=run.steering,
        )
        control = Control(
            max_tokens=self.config.max_tokens,
            deadline=deadline,
            avoid=request.avoid,
            heal_chars=heal_chars,
            drafts=self.config.prompt_lookup,
            hooks=hooks,
        )
        while True:
            run.spans.clear()
            control.cursor_at = run.prompt.cursor
            gen: Generation = backend.generate(run.prompt.text, control)
            if first_token is None:
                reused = gen.tokens_reused  # what the keystroke found in the KV cache
            evaluated += gen.tokens_evaluated
            llama_ms += gen.timings.get("llama_ms", 0.0)
            if first_token is None and gen.first_token_at is not None:
                first_token = gen.first_token_at
            if gen.status != "restart":
                break
            fresh = run.better_context()
            if fresh is None:  # the window closed while we looked: finish locally
                hooks.restart = lambda: False
                continue
            run.injected_at = time.monotonic()
            run.prompt = self._prompt(request.file, lines, line, cur, fresh)
        unresolved = None
        if future is not None:
            # a speculation is about a line the user has not reached: it keeps nothing (it
            # would move the line held, and warm its block, while this line is typed)
            if not held and not speculative:
                future.add_done_callback(lambda f: self._remember(request.file, f, line))
            if future.done() and not future.cancelled() and future.exception() is None:
                receiver = future.result().receiver
                if receiver and not receiver["types"] and receiver["col"] is not None:
                    unresolved = {"line": receiver["line"], "col": receiver["col"]}
        if deferred and not speculative and gen.status != "cancelled" and self.on_context_kept:
            self.on_context_kept(request.file)  # the engine is idle until the next key
        used_context = bool(run.prompt.snippets)
        ungated = clean(gen.text, cur)
        confidence = line_confidence(gen.text, run.spans)[: len(ungated.split("\n"))]
        verdict = apply_gates(
            ungated,
            confidence,
            Placement(lines, line, len(cur.before), language_for(request.file)),
            run.gates,
        )
        text = verdict.text
        status = (
            gen.status if gen.status in ("cancelled", "deadline") else ("ok" if text else "empty")
        )
        if status in ("ok", "deadline") and text and request.avoid is None:
            self.cache.put(key, cur.before, text)
        return Suggestion(
            suggestion=text if status != "cancelled" else "",
            context_injected=used_context,
            snippets=len(run.prompt.snippets),
            tokens_evaluated=evaluated,
            tokens_generated=gen.tokens_generated,
            tokens_reused=reused,
            status=status,
            source="model",
            receiver_unresolved=unresolved,
            ungated=ungated if status != "cancelled" else "",
            line_confidence=[round(c, 4) for c in confidence],
            gate=verdict.gate,
            timings_ms={
                "first_token": None if first_token is None else (first_token - t0) * 1000,
                "injection": None if run.injected_at is None else (run.injected_at - t0) * 1000,
                "total": _ms(t0),
                "llama": llama_ms,
            },
        )

    def _sources(self, mode: str) -> tuple[str, ...]:
        """The steering sources on for a request: those configured, less the index's own
        (members) for a plain local completer or a `local` request."""
        cfg = self.config
        on = (
            ("members", cfg.member_bias and self.use_repository and mode != "local"),
            ("lines", cfg.line_bias and self.use_repository and mode != "local"),
            ("scope", cfg.scope_bias),
            ("calls", cfg.call_bias),
            ("copy", cfg.copy_bias),
        )
        return tuple(name for name, wanted in on if wanted)

    def _line_candidates(self, path: str, before: str) -> tuple[tuple[str, int], ...]:
        """The lines the index holds, in the files other than this one, that begin as the
        cursor's line (`line_bias`): the LINE_CANDIDATES most often written, and ("", n)
        for the n others. Not the buffer's own: the model reads those in its prompt, and on
        the dev set copying them cost keys (22.3% saved against 23.1% without)."""
        prefix = before.lstrip()
        indexed, context = self.repository_lines, self.context
        if len(prefix) < LINE_MIN_PREFIX or indexed is None or context is None:
            return ()
        found = indexed.starting(prefix, relative_path(context.root, path), LINE_CANDIDATES)
        return tuple((c.text, c.count) for c in found)

    def _buffer_facts_of(
        self, path: str, surroundings: str, lines: list[str], line: int, language: str | None
    ) -> BufferFacts:
        """The buffer's names and signatures: those of every line but the cursor's, kept while
        those lines do not change (a key types on one line), plus the cursor line's."""
        kept = self._buffer_facts.get(path)
        if kept is None or kept[0] != surroundings:
            others = "\n".join(lines[: line - 1] + lines[line:])
            kept = (surroundings, (names_in([others], language), signatures_in([others], language)))
            self._buffer_facts = {path: kept}
        names, signatures = kept[1]
        current = lines[line - 1]
        return names | names_in([current], None), {
            **signatures_in([current], language),
            **signatures,
        }

    def gate_settings(self) -> GateSettings:
        cfg = self.config
        return GateSettings(cfg.gate_syntax, cfg.gate_language, cfg.min_confidence)

    def warm(self, request: CursorRequest, cancel: CancelToken | None = None) -> Generation:
        """Evaluate the prompt the next keystroke here will need, and generate nothing (what
        llama.vim's `n_predict = 0` requests do): its context is gathered first (a few
        milliseconds) and kept for that keystroke, so the keystroke pays only for what it
        types. A newer request cancels it between evaluation chunks."""
        cancel = cancel or CancelToken()
        lines, line, cur = _cursor_of(request)
        if self.context is not None and self.use_repository:
            done = self._pool.submit(self._build, self._with_budget(request))
            done.result()  # built on the context thread, after a build still running there
            self._remember(request.file, done, line, notify=False)
        prompt = self._prompt(request.file, lines, line, cur, self.last_context.get(request.file))
        hooks = Callbacks(cancelled=lambda: cancel.cancelled, abandoned=lambda: cancel.abandoned)
        control = Control(max_tokens=0, reserve=self.config.max_tokens, hooks=hooks)
        if not (prompt.snippets and self._holds(request.file, line)):
            return self.backend.generate(prompt.text, control)
        local = self._prompt(request.file, lines, line, cur, None)
        if not self._costlier(self.backend, prompt, local, 0):
            return self.backend.generate(prompt.text, control)
        # The window first, as with no context: a key that comes meanwhile shares it. Then, in
        # a pause, the context block before it (the window is moved behind it); a key that
        # comes then stops the block inside llama.cpp and gets the cache back as it was
        # (kvcache.give_back).
        first = self.backend.generate(local.text, control)
        if first.status == "cancelled" or cancel.wait(BLOCK_AFTER_IDLE_S):
            first.status = "cancelled"
            return first
        hooks.abandoned = lambda: cancel.cancelled
        gen = self.backend.generate(prompt.text, control)
        gen.tokens_evaluated += first.tokens_evaluated
        return gen

    def _costlier(self, backend: Backend, prompt: Prompt, local: Prompt, heal: int) -> bool:
        """Would `prompt` (with the context block) cost more to evaluate now than `local`
        (without it)? A key never waits for a block that is not yet in the KV cache: it gets
        the local prompt, and the block is evaluated while nothing else runs (`warm`)."""

        def cost(p: Prompt) -> int | None:
            control = Control(self.config.max_tokens, cursor_at=p.cursor, heal_chars=heal)
            return backend.pending(p.text, control)

        with_block = cost(prompt)
        if with_block is None or with_block <= ADOPT_SLACK_TOKENS:
            return False
        without = cost(local)
        return without is not None and with_block > without + ADOPT_SLACK_TOKENS

    def _holds(self, path: str, line: int) -> bool:
        """Is the prompt's head fixed for this line? Once a line has its context (from the
        warming at the place, or the first request there), every key typed on it reuses that
        block as it is: a block that changed while typing was evaluated again and again
        (bench/results/savings.md: 2.2x the prompt tokens with context on, and a suggestion on
        screen before the next key for 11.5% of keys against 38.5% with context off)."""
        return self.held_line.get(path) == line and path in self.last_context

    def _remember(
        self, path: str, future: Future[ContextPackage], line: int, notify: bool = True
    ) -> None:
        """Context for `line` of `path`, kept for the requests that follow there (and held for
        that line, see `_holds`). It replaces the context already kept only when it brings a
        definition that one lacks: a block that stays the same keeps the prompt's head, and so
        the KV cache, across lines and files. `notify`: tell `on_context_kept` (not when a
        warming keeps it: it is warming already)."""
        if future.cancelled() or future.exception() is not None:
            return
        package = future.result()
        old = self.last_context.get(path)
        if not package.retrieved:
            if old is not None:
                self.held_line[path] = line  # nothing needed here: the block stays as it is
            return
        self.held_line[path] = line
        if old is None or adds_definitions(package, _snippets(old)):
            self.last_context[path] = package
            if notify and self.on_context_kept is not None:
                self.on_context_kept(path)

    def _prompt(
        self,
        path: str,
        lines: list[str],
        line: int,
        cur: CursorText,
        package: ContextPackage | None,
    ) -> Prompt:
        cfg = self.config
        start = max(0, ((line - 1 - cfg.prefix_lines) // WINDOW_STEP) * WINDOW_STEP)
        prefix = "\n".join(lines[start : line - 1] + [cur.before])
        suffix = cur.after + "\n" + "\n".join(lines[line : line + cfg.suffix_lines])
        snippets = _snippets(package)
        context = [ContextFile(p, t) for p, _, t in snippets]
        template = self.backend.template
        head, tail = template.build(path, language_for(path), prefix, suffix, context)
        return Prompt(head + tail, snippets, template.cursor_offset(head + tail, suffix))


def _cursor_of(request: CursorRequest) -> tuple[list[str], int, CursorText]:
    """The buffer's lines, the cursor's line (1-based, clamped into the text) and the text
    around it: what `complete` and `warm` start from. (The editor and the command line always
    send the text; None, the context engine's "read the file", reads as an empty buffer.)"""
    lines = split_lines(request.text or "") or [""]
    line, col = cursor_in(lines, request.line, request.col)
    current = lines[line - 1]
    return (
        lines,
        line,
        CursorText(current[:col], current[col:], tuple(lines[line : line + MAX_BLOCK_LINES])),
    )


def _snippets(package: ContextPackage | None) -> Snippets:
    if package is None:
        return ()
    return tuple((s.path, s.start_line, s.text) for s in package.snippets)


def _ms(t0: float) -> float:
    return (time.monotonic() - t0) * 1000
