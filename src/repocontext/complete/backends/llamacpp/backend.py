"""llama.cpp in this process (llama-cpp-python): the default backend.

The KV cache is reused across calls. The prompt's common prefix with what the context holds is
kept; then, as llama-server's `--cache-reuse` does, later runs of at least `cache_reuse` cached
tokens that the new prompt goes on with are moved to their new positions instead of being
evaluated again (`llama_memory_seq_add` shifts their keys' rotary positions): the window after
lines dropped from its top, the code after a snippet dropped from the context, and, past one
stretch of new text (a context block that came in or changed), the window after it. llama.cpp
requires a sequence's positions to grow one by one as it is decoded, so the runs are held in a
second sequence sharing the same cells while the new text is decoded (`_park`), then shifted
right behind it (`_unpark`). Measured (bench/kv_move.py, bench/results/latency.md: a 43-121
token context block before a 490-569-token window, 8 tokens generated): median 0.47 s against
1.49 s from an empty cache, and the same 8 tokens at 4 of 6 places. Only what follows the moved
runs is evaluated, in chunks between which a cancel is noticed (`eval_pieces`): the prompt's
last `EVAL_TAIL` tokens, which change with each keystroke, in chunks of `EVAL_CHUNK` (32
tokens, about 70 ms on 2 cores), the head before them, which the next keystroke shares, in
chunks of `EVAL_CHUNK_HEAD`. Measured on a cold 620-token prompt (gemma-3-270m, 2 threads,
alternating runs): chunks of 32 took 1.61-1.77 s, of 64 1.38-1.46 s, of 128 1.29-1.38 s, of 256
1.19-1.21 s; chunks of 8 had cost 1.6-3x those of 32. A new place's prompt is evaluated in the
pause before the first key there, and the pause is short (bench/results/editor.md), so the
head's speed is what a new place waits for (in the editor, 44% of keys had a suggestion in
time with 128, 32% with 32: bench/results/editor.md); 128 keeps a cancel at most about 0.3 s
away (the CPU after <Esc>). A moved run keeps what it computed while attending to the text it followed
before; what this costs in quality is measured in bench/results/latency.md.
"""

from __future__ import annotations

import contextlib
import ctypes
import logging
import os
import re
import threading
import time
from collections import deque
from collections.abc import Callable, Iterator
from typing import Any

import numpy as np

from ....errors import GenerationError
from ...cpu import Machine
from ...drafts import PromptLookup
from ...healing import Healing, LazyPieces, back_up
from ...steering import TEXT_SOURCES, Steering, Vocabulary, build_sources
from ...templates import TEMPLATES, detect_template, fim_markers
from ..base import Control, Generation, TokenCounts, advance, check_model_file

log = logging.getLogger(__name__)

EVAL_CHUNK = 32
EVAL_CHUNK_HEAD = 128  # the prompt's head, which the next keystroke shares (eval_pieces)
EVAL_TAIL = 64
MIN_GENERATION_SECONDS = 1.0
GRAM = 4  # cached runs are found through their first GRAM tokens
LOG_WARN, LOG_ERROR = 3, 4  # ggml_log_level: 1 debug, 2 info, 5 continues the last line
_BUFFER_LINE = re.compile(r"(\w+) model buffer size\s*=\s*([\d.]+) MiB")
_PARAMS_LOCK = threading.RLock()  # one load patches the model and the context defaults, nested


class LlamaLog:
    """llama.cpp's log, kept in memory instead of printed.

    llama-cpp-python's own callback prints to sys.stderr, which lands in the editor or the
    CLI's output. This one keeps two short lists: warnings and errors (so a failed load can name
    its cause) and the loader's lines about where the weights went ("CPU_REPACK model buffer
    size = 12.66 MiB", "AMX model buffer size = ..."), which status and health report. The rest
    (about 1,400 info lines per load) is dropped. Installed once per process; the ctypes
    callback object must stay referenced for as long as llama.cpp may call it.
    """

    def __init__(self, keep: int = 64):
        self.problems: deque[tuple[int, str]] = deque(maxlen=keep)
        self.buffers: deque[tuple[int, str]] = deque(maxlen=keep)
        self._count = 0
        self._level = 1
        self._callback: Any = None  # the ctypes callback, kept alive while installed

    def install(self) -> None:
        if self._callback is not None:
            return
        import llama_cpp

        @llama_cpp.llama_log_callback  # type: ignore[untyped-decorator]
        def callback(level: int, text: bytes, _user_data: Any) -> None:
            self._level = self._level if level == 5 else level
            self._count += 1
            if self._level in (LOG_WARN, LOG_ERROR):
                self.problems.append((self._count, text.decode("utf-8", "replace").strip()))
            elif b"model buffer size" in text or b"AMX" in text:
                self.buffers.append((self._count, text.decode("utf-8", "replace").strip()))

        self._callback = callback
        llama_cpp.llama_log_set(callback, ctypes.c_void_p(0))

    def mark(self) -> int:
        return self._count

    @staticmethod
    def since(lines: deque[tuple[int, str]], mark: int) -> list[str]:
        return [line for n, line in lines if n > mark]


LLAMA_LOG = LlamaLog()


@contextlib.contextmanager
def _default_params(function: str, **overrides: Any) -> Iterator[None]:
    """Model or context parameters that llama-cpp-python's `Llama()` does not take as
    arguments.

    `Llama.__init__` starts from `llama_model_default_params()` and
    `llama_context_default_params()` and sets only the fields it knows; `use_extra_bufts`,
    `n_seq_max` and `kv_unified` are not among them. For the length of one load, the defaults
    it gets carry our values too (under a lock: the function is module state).
    """
    import llama_cpp.llama_cpp as low

    with _PARAMS_LOCK:
        original = getattr(low, function)

        def defaults() -> Any:
            params = original()
            for name, value in overrides.items():
                setattr(params, name, value)
            return params

        setattr(low, function, defaults)
        try:
            yield
        finally:
            setattr(low, function, original)


def _model_params(**overrides: Any) -> contextlib.AbstractContextManager[None]:
    return _default_params("llama_model_default_params", **overrides)


class _Unsuppressed:
    """A `suppress_stdout_stderr` that leaves the process's streams alone."""

    def __init__(self, disable: bool = True):
        pass

    def __enter__(self) -> _Unsuppressed:
        return self

    def __exit__(self, *exc: object) -> None:
        return None


@contextlib.contextmanager
def _streams_left_alone() -> Iterator[None]:
    """llama-cpp-python's quiet load (`verbose=False`) points file descriptors 1 and 2 at
    /dev/null for the whole load, seconds, for every thread: in the editor's host, fd 1 is
    the msgpack channel to Neovim, and a reply or a progress message written meanwhile was
    lost (a request the editor waited on for ever). llama.cpp's own log already goes to
    LLAMA_LOG, so for the length of one load the library's swap does nothing (under the
    same lock as the parameters: module state)."""
    import llama_cpp._internals as internals
    import llama_cpp.llama as high

    modules = [m for m in (high, internals) if hasattr(m, "suppress_stdout_stderr")]
    with _PARAMS_LOCK:
        originals = [m.suppress_stdout_stderr for m in modules]
        for m in modules:
            m.suppress_stdout_stderr = _Unsuppressed  # type: ignore[attr-defined]
        try:
            yield
        finally:
            for m, original in zip(modules, originals):
                m.suppress_stdout_stderr = original  # type: ignore[attr-defined]


class LlamaCppBackend:
    """llama-cpp-python in this process; one context, used by one thread at a time."""

    name = "llama.cpp"

    def __init__(
        self,
        model_path: str,
        n_ctx: int = 2048,
        threads: int = 0,
        template: str = "auto",
        extra_buffers: str = "auto",
        machine: Machine | None = None,
        cache_reuse: int = 16,
        n_batch: int = 256,
        abort_long_chunks: bool = True,
    ):
        """`cache_reuse`: the shortest run of cached tokens moved rather than evaluated again
        (0: keep the common prefix only, as before). `abort_long_chunks`: a cancel for a place
        the user left stops a long chunk inside llama.cpp (`AbortSwitch`)."""
        path = check_model_file(model_path)
        try:
            import llama_cpp
        except ImportError as exc:
            raise GenerationError(
                "llama-cpp-python is not installed; reinstall repocontext "
                "(pip install repocontext) or use a llama-server"
            ) from exc
        self.machine = machine or Machine.current()
        self.buffers = self.machine.extra_buffers(extra_buffers)
        LLAMA_LOG.install()
        mark = LLAMA_LOG.mark()
        try:
            # a second sequence, in the same cells, holds cached runs while text inserted
            # before them is evaluated (_park)
            with (
                _streams_left_alone(),
                _model_params(use_extra_bufts=self.buffers.enabled),
                _default_params("llama_context_default_params", n_seq_max=2, kv_unified=True),
            ):
                self.llm = llama_cpp.Llama(
                    model_path=str(path),
                    n_ctx=n_ctx,
                    n_batch=n_batch,
                    n_threads=threads or (os.cpu_count() or 1),
                    # gemma-3 attends through a sliding window; a full-size window cache keeps
                    # every cell, so the runs _place() moves are still there to move (a
                    # window-sized one drops old cells as it goes)
                    swa_full=True,
                    verbose=False,
                )
        except Exception as exc:  # llama.cpp's loader says little: name the file and the cause
            problems = LLAMA_LOG.since(LLAMA_LOG.problems, mark)
            cause = problems[-1] if problems else str(exc)
            raise GenerationError(
                f"llama.cpp could not load {path.name} ({cause}); the file "
                "is damaged or not a model llama.cpp supports"
            ) from exc
        # What the loader did with the weights: "CPU_REPACK model buffer size = 12.66 MiB", or
        # "AMX model buffer size = ..." where that path is taken (shown by status and health).
        self.weight_buffers = {
            m.group(1): float(m.group(2))
            for line in LLAMA_LOG.since(LLAMA_LOG.buffers, mark)
            if (m := _BUFFER_LINE.search(line))
        }
        self.model_path = path
        self._settings: dict[str, Any] = dict(
            n_ctx=n_ctx,
            threads=threads,
            template=template,
            extra_buffers=extra_buffers,
            machine=self.machine,
            cache_reuse=cache_reuse,
            abort_long_chunks=abort_long_chunks,
        )
        self._sibling: LlamaCppBackend | None = None
        self.n_ctx = self.llm.n_ctx()
        self.lock = threading.Lock()
        memory = llama_cpp.llama_get_memory(self.llm._ctx.ctx)
        self.cache_reuse = cache_reuse if llama_cpp.llama_memory_can_shift(memory) else 0
        self.n_swa = llama_cpp.llama_model_n_swa(self.llm.model)  # gemma-3: 512
        self.metadata = {k: str(v) for k, v in (self.llm.metadata or {}).items()}
        self.template = (
            TEMPLATES[template]
            if template != "auto"
            else detect_template(self._special_tokens(), self.metadata)
        )
        self._counts = TokenCounts(lambda text: len(self._tokenize(text, special=False)))
        self._n_vocab = self.llm.n_vocab()
        # BOS where the vocabulary asks for one (llama.cpp's add_bos, which llama-server
        # follows too): Qwen2.5-Coder's and StarCoder2's prompts start with no <|endoftext|>
        bos = self.llm.token_bos()
        self._bos = [bos] if bos >= 0 and self.llm._model.add_bos_token() else []
        # SentencePiece vocabularies that put a space before a text (llama.cpp's
        # add_space_prefix: Llama 2's, CodeLlama's) put one before the text after the cursor too
        self._space_prefix = (
            self.metadata.get(
                "tokenizer.ggml.add_space_prefix",
                str(self.metadata.get("tokenizer.ggml.model") == "llama"),
            ).lower()
            == "true"
        )
        self._eos = {self.llm.token_eos()}
        for text in self.template.eot:
            ids = self._tokenize(text, special=True)
            if len(ids) == 1:
                self._eos.add(ids[0])
        self.pieces = LazyPieces(self._token_pieces)
        self._names_vocab: Vocabulary | None = None
        self._vocab_thread: threading.Thread | None = None
        self.abort = AbortSwitch(self.llm._ctx.ctx, enabled=abort_long_chunks)

    def _token_pieces(self) -> list[bytes]:
        """Each token's bytes as `detokenize` writes them (special tokens: none)."""
        import llama_cpp

        vocab = llama_cpp.llama_model_get_vocab(self.llm._model.model)
        buf = ctypes.create_string_buffer(256)
        out = []
        for token in range(self._n_vocab):
            n = llama_cpp.llama_token_to_piece(vocab, token, buf, len(buf), 0, False)
            out.append(buf.raw[:n] if n > 0 else b"")
        return out

    def describe(self) -> dict[str, Any]:
        """The CPU, llama.cpp's build, and what the loader did with the weights."""
        return {
            "cpu": self.machine.cpu.to_json() | {"summary": self.machine.cpu.summary()},
            "llama_cpp": self.machine.llama_info,
            "extra_buffers": self.buffers.to_json(),
            "weight_buffers_mib": self.weight_buffers,
        }

    def _special_tokens(self) -> set[str]:
        return fim_markers(self)

    def detokenize(self, ids: list[int]) -> str:
        """The tokens' text, special tokens written as they are (for `fim_markers`)."""
        return self.llm.detokenize(ids, special=True).decode("utf-8", "replace")

    def _tokenize(self, text: str, special: bool = True) -> list[int]:
        return self.llm.tokenize(text.encode("utf-8"), add_bos=False, special=special)

    def tokenize(self, text: str) -> list[int]:
        """The text's tokens, special tokens parsed, no BOS (for `fim_markers`)."""
        return self._tokenize(text, special=True)

    def tokenize_prompt(self, text: str) -> list[int]:
        return self._bos + self._tokenize(text)

    def count_tokens(self, text: str) -> int:
        return self._counts(text)

    def generate(self, prompt: str, control: Control) -> Generation:
        """One generation. When llama.cpp refuses a batch (`llama_decode` -1: the cache's cells
        no longer follow the tokens we hold for it; 1: no room for the batch), the cache is
        forgotten and the prompt evaluated again, once: a slower key, not a failed one, and
        not every key after it failing the same way. `_generate` checks what it moved and
        held (`_held_end`, `_room_to_park`), so this is the last resort."""
        with self.lock:
            tokens, healing = self._healed(prompt, control)
            try:
                return self._generate(tokens, control, healing)
            except RuntimeError as exc:
                if str(exc) not in ("llama_decode returned -1", "llama_decode returned 1"):
                    raise
                log.warning("%s: the KV cache is cleared and the prompt evaluated again", exc)
                self._forget_cache()
                tokens, healing = self._healed(prompt, control)
                return self._generate(tokens, control, healing)

    def _forget_cache(self) -> None:
        """Every cell of both sequences goes, and the tokens we hold for them (llama-cpp-python
        reads a sequence of -1 as 0: the held cells of sequence 1 are removed by name)."""
        for seq in (0, 1):
            self.llm._ctx.kv_cache_seq_rm(seq, -1, -1)
        self.llm.n_tokens = 0

    def _what_the_cache_can_give(
        self, cached: int, tokens: list[int], reuse: int, moves: list[tuple[int, int, int]]
    ) -> tuple[int, list[tuple[int, int, int]]]:
        """`_plan`'s prefix and runs, cut to what llama.cpp can still give: no runs to move
        behind new text without room to hold them meanwhile, none whose first cells the window
        cache let go, and no prefix at all when the window the first new token attends is no
        longer all there."""
        if moves and moves[0][1] > reuse and not self._room_to_park(cached, tokens, reuse):
            moves = []
        if moves and not self._window_holds(0, moves[0][0]):
            moves = []
        first = reuse if not moves or moves[0][1] > reuse else moves[-1][1] + moves[-1][2]
        window_from = max(0, first - self.n_swa)
        if window_from < reuse and not self._window_holds(0, window_from):
            return 0, []
        return reuse, moves

    def _held_end(self) -> int:
        """One past the last position that sequence 0 holds, as llama.cpp counts it (for
        gemma-3, in its sliding-window cache): what the next token's position must be."""
        import llama_cpp

        return int(llama_cpp.llama_memory_seq_pos_max(self.llm._ctx.memory, 0)) + 1

    def _window_holds(self, seq: int, position: int) -> bool:
        """Does the sliding-window cache (gemma-3's) still hold `seq` from `position` on? It
        keeps each sequence's positions as one range and lets the oldest go, a window behind
        the sequence's last position, when new tokens need cells: a run moved up from there,
        or a prefix whose window reaches back there, would be attended with cells missing."""
        if not self.n_swa:
            return True
        import llama_cpp

        lowest = int(llama_cpp.llama_memory_seq_pos_min(self.llm._ctx.memory, seq))
        return lowest <= position or lowest < 0

    def _room_to_park(self, cached: int, tokens: list[int], reuse: int) -> bool:
        """Can the cache hold every cell held aside (`_park`) and the prompt's new tokens at
        once? When it cannot, llama.cpp finds no slot for them (`llama_decode` 1)."""
        return cached + len(tokens) - reuse <= self.n_ctx

    def pending(self, prompt: str, control: Control) -> int:
        """How many of the prompt's tokens `generate` would evaluate now: those the KV cache
        neither keeps nor can move into place (the engine picks the cheaper of two prompts)."""
        with self.lock:
            tokens, cached, reuse, moves = self._plan(self._healed(prompt, control)[0], control)
            return len(tokens) - reuse - sum(n for _, _, n in moves)

    def _plan(
        self, tokens: list[int], control: Control
    ) -> tuple[list[int], list[int], int, list[tuple[int, int, int]]]:
        """(tokens cut to fit, the cache's tokens, the common prefix kept, the runs moved)."""
        reserve = control.max_tokens if control.reserve is None else control.reserve
        room = self.n_ctx - reserve - 1
        if len(tokens) > room:  # keep the end (the cursor), drop the oldest context
            tokens = tokens[:1] + tokens[len(tokens) - room + 1 :]
        cached: list[int] = self.llm._input_ids[: self.llm.n_tokens].tolist()
        reuse = _common_prefix(cached, tokens[:-1])  # always evaluate the last token again
        moves = reuse_plan(cached, tokens, reuse, self.cache_reuse) if self.cache_reuse > 0 else []
        return tokens, cached, reuse, moves

    def _healed(self, prompt: str, control: Control) -> tuple[list[int], Healing | None]:
        """The prompt's tokens, its last token before the cursor taken off when the line typed so
        far ends inside it (complete/healing.py). The two sides of the cursor are tokenized
        apart: what follows the cursor in a FIM prompt begins with a marker token anyway."""
        pieces = self.pieces.ready()
        at = control.cursor_at
        if control.heal_chars <= 0 or pieces is None or at is None or not 0 < at <= len(prompt):
            return self.tokenize_prompt(prompt), None
        before = self.tokenize_prompt(prompt[:at])
        after = self._tokenize(prompt[at:]) if at < len(prompt) else []
        if self._space_prefix and after and pieces.pieces[after[0]] == b" ":
            # the space llama.cpp put before that text: it goes on from the cursor (CodeLlama's
            # " <SUF>" is one token, ▁<SUF>, as it is in the prompt whole)
            after = after[1:]
        kept, backed_up = back_up(
            before, pieces, prompt[:at], control.heal_chars, first=len(self._bos)
        )
        return kept + after, (Healing(pieces, backed_up) if backed_up else None)

    def _generate(
        self, tokens: list[int], control: Control, healing: Healing | None = None
    ) -> Generation:
        llm = self.llm
        out = Generation()
        tokens, cached, reuse, moves = self._plan(tokens, control)
        t0 = time.perf_counter()
        reuse, moves = self._what_the_cache_can_give(len(cached), tokens, reuse, moves)
        if moves and moves[0][1] > reuse:
            # text inserted before the runs (a new context block): evaluated first, the runs
            # held aside meanwhile and moved after it
            self._park(reuse, moves)
            llm.input_ids[:reuse] = tokens[:reuse]
            llm.n_tokens = reuse
            if not self._evaluate(tokens, reuse, moves[0][1], control, out):
                self._restore(reuse, cached)  # stopped: the cache goes back to what it held
                out.eval_seconds = time.perf_counter() - t0
                return out
            if self._window_holds(1, moves[0][0]):
                start = self._unpark(reuse, moves)
            else:  # the window cache gave held cells to the new text (see _park)
                self.llm._ctx.kv_cache_seq_rm(1, -1, -1)
                start = moves[0][1]
            if self._held_end() != start:
                start, moves = moves[0][1], []
                self.llm._ctx.kv_cache_seq_rm(0, start, -1)
        elif moves:
            start = self._place(reuse, moves)
            if self._held_end() != start:  # a moved run had lost cells: evaluate it again
                start, moves = reuse, []
                self.llm._ctx.kv_cache_seq_rm(0, start, -1)
        else:
            start = reuse
            self._truncate(reuse)
        out.tokens_reused = reuse + sum(n for _, _, n in moves)
        # What follows the kept and moved tokens is evaluated through llama-cpp-python's eval,
        # which keeps its own bookkeeping (told here what the cache now holds).
        llm.input_ids[:start] = tokens[:start]
        llm.n_tokens = start
        done = self._evaluate(tokens, start, len(tokens), control, out)
        out.eval_seconds = time.perf_counter() - t0
        if not done:
            return out
        llama_seconds = out.eval_seconds
        # A long prompt (a cold start) may use up the deadline: generation still gets a second.
        deadline = max(control.deadline, time.monotonic() + MIN_GENERATION_SECONDS)
        generated: list[int] = []
        text = full = ""  # `full`: not cut by the stop rules
        banned = self._tokenize(control.avoid, special=False)[:1] if control.avoid else []
        steering: Steering | None = None
        steering_pending = False  # the context may still bring members, signatures, text
        # the token backed up is spelled again: it does not count against max_tokens
        limit = control.max_tokens + (1 if healing is not None else 0)
        lookup = PromptLookup(tokens) if control.drafts else None
        logits = self._last_logits()
        stop = False

        def take(token: int, logprob: float) -> bool:
            """A generated token: counted, shown, and True where the stop rules end it."""
            nonlocal text, full
            generated.append(token)
            if lookup is not None:
                lookup.add(token)
            if out.first_token_at is None:
                out.first_token_at = time.monotonic()
            spelled = llm.detokenize(generated)
            if healing is not None:  # the typed characters it spells again are not shown
                spelled = healing.strip(spelled)
            new_text = spelled.decode("utf-8", "ignore")
            control.token(len(full), len(new_text), logprob)
            full = new_text
            if new_text == text:
                return False
            text, done = advance(new_text, control)
            return done

        while len(generated) < limit and not stop:
            if control.cancelled():
                out.status = "cancelled"
                break
            if time.monotonic() > deadline:
                out.status = "deadline"
                break
            t1 = time.perf_counter()
            first_ban = banned if not generated else []
            if not generated:
                steering, steering_pending = self._steering(control, healing, tokens)
            elif steering_pending and steering is not None:
                steering_pending = self._steer_later(control, steering, tokens)
            if steering:
                logits = steering.apply(logits)
            if healing is not None and healing.active:
                token, logprob = healing.choose(logits, first_ban)
            else:
                token, logprob = _greedy(logits, first_ban)
            if steering is not None:
                steering.consumed(token)
            llama_seconds += time.perf_counter() - t1
            if token in self._eos:
                break
            stop = take(token, logprob)
            if stop:
                break
            steered = (healing is not None and healing.active) or (
                steering is not None and steering.spelling_a_name
            )
            draft = lookup.draft() if lookup is not None and not steered else []
            t1 = time.perf_counter()
            at = llm.n_tokens
            rows = self._decode_rows([token] + draft)
            kept = 0
            for i, guess in enumerate(draft):  # a guess stays where the model agrees
                choice, logprob = _greedy(rows[i], [])
                if choice != guess or choice in self._eos or len(generated) >= limit:
                    break
                kept += 1
                out.tokens_drafted += 1
                stop = take(guess, logprob)
                if stop:
                    break
            if kept < len(draft):
                self._truncate(at + 1 + kept)  # the guesses after the first wrong one go
            logits = rows[kept]
            llama_seconds += time.perf_counter() - t1
            if not stop and control.restart():
                out.status = "restart"
                break
        out.text = text
        out.tokens_generated = len(generated)
        out.timings["llama_ms"] = llama_seconds * 1000
        return out

    def _decode_rows(self, tokens: list[int]) -> list[np.ndarray]:
        """Evaluate `tokens` after the cache in one batch; the logits after each of them (one
        token: through llama-cpp-python's eval, as a view; more: every position's, copied)."""
        llm = self.llm
        if len(tokens) == 1:
            llm.eval(tokens)
            return [self._last_logits()]
        import llama_cpp

        at = llm.n_tokens
        self._truncate(at)
        batch = llama_cpp.llama_batch_init(len(tokens), 0, 1)
        try:
            batch.n_tokens = len(tokens)
            for i, token in enumerate(tokens):
                batch.token[i] = token
                batch.pos[i] = at + i
                batch.n_seq_id[i] = 1
                batch.seq_id[i][0] = 0
                batch.logits[i] = 1
            code = llama_cpp.llama_decode(llm._ctx.ctx, batch)
        finally:
            llama_cpp.llama_batch_free(batch)
        if code != 0:
            raise RuntimeError(f"llama_decode returned {code}")
        llm.input_ids[at : at + len(tokens)] = tokens
        llm.n_tokens = at + len(tokens)
        ctx = llm._ctx.ctx
        return [
            np.ctypeslib.as_array(
                llama_cpp.llama_get_logits_ith(ctx, i), shape=(self._n_vocab,)
            ).copy()
            for i in range(len(tokens))
        ]

    def _steering(
        self, control: Control, healing: Healing | None, tokens: list[int]
    ) -> tuple[Steering | None, bool]:
        """The generation's steering (complete/steering.py), from what the run knows at its
        first token; and whether to ask again (the context build has not finished)."""
        facts = control.steering()
        if facts is None:
            return None, False
        healed = healing.backed_up if healing else b""
        before = facts.before.encode("utf-8")
        line_start = before[: len(before) - len(healed)] if healed else before
        pieces = self.pieces.ready()
        word_start = pieces.word_start if pieces is not None else None
        # the vocabulary (built once, in the background) only for the sources that read text
        vocab = self._vocabulary() if TEXT_SOURCES.intersection(facts.sources) else None
        sources = build_sources(
            facts, vocab, self._tokenize_bytes, tokens, healed, True, word_start
        )
        steering = Steering(sources, line_start, self.llm.detokenize, tokens, healed)
        # members are asked at the first token only: with no other source, nothing to wait for
        return steering, facts.pending and bool(TEXT_SOURCES.intersection(facts.sources))

    def _steer_later(self, control: Control, steering: Steering, tokens: list[int]) -> bool:
        """Asked at each token while the context is coming; once it has come, the sources
        that read it are built again with it. Whether to ask again."""
        facts = control.steering()
        if facts is None or facts.pending:
            return facts is not None
        steering.replace(
            build_sources(facts, self._vocabulary(), self._tokenize_bytes, tokens, first=False)
        )
        return False

    def _vocabulary(self) -> Vocabulary | None:
        """The vocabulary as names see it (about half a second for gemma-3's 262k tokens),
        built in the background once the token pieces are: until then only the members
        steer, and no key waits for it."""
        if self._names_vocab is None and self._vocab_thread is None:
            pieces = self.pieces.ready()
            if pieces is not None:

                def build() -> None:
                    self._names_vocab = Vocabulary(pieces)

                self._vocab_thread = threading.Thread(target=build, daemon=True, name="vocab")
                self._vocab_thread.start()
        return self._names_vocab

    def vocabulary(self, wait: bool = False) -> Vocabulary | None:
        """For tests and benches: the steering vocabulary, waited for."""
        if wait:
            self.pieces.ready(wait=True)
            self._vocabulary()
            if self._vocab_thread is not None:
                self._vocab_thread.join()
        return self._vocabulary()

    def _tokenize_bytes(self, text: bytes) -> list[int]:
        return self.llm.tokenize(text, add_bos=False, special=False)

    def _evaluate(
        self, tokens: list[int], start: int, end: int, control: Control, out: Generation
    ) -> bool:
        """Evaluate tokens[start:end] after what the cache holds, in `eval_pieces`; False
        (and out.status set) when a cancel or a restart stopped it between pieces, or a cancel
        stopped a long piece inside when the user left (`AbortSwitch`: llama.cpp drops that
        piece's cells; a newer key's cancel lets the piece finish, as its prompt shares it)."""
        for i, j in eval_pieces(start, end):
            if control.cancelled() or control.restart():
                out.status = "cancelled" if control.cancelled() else "restart"
                self._truncate(self.llm.n_tokens)
                return False
            try:
                with self.abort.watching(control.abandoned, long=j - i > EVAL_CHUNK):
                    self.llm.eval(tokens[i:j])
            except RuntimeError:  # llama_decode returned 2: aborted by the switch
                if not self.abort.fired:
                    raise
                out.status = "cancelled"
                self._truncate(self.llm.n_tokens)
                return False
            out.tokens_evaluated += j - i
        return True

    def _last_logits(self) -> np.ndarray:
        """The logits after the last evaluated token, read from llama.cpp without a copy
        (llama-cpp-python keeps them in `scores` only with logits_all, which costs memory)."""
        import llama_cpp

        ptr = llama_cpp.llama_get_logits_ith(self.llm._ctx.ctx, -1)
        return np.ctypeslib.as_array(ptr, shape=(self._n_vocab,))

    def sibling(self) -> LlamaCppBackend:
        """The same model with a KV cache of its own, for speculative prompts: they must not
        push the real next prompt out of this one (measured: first ghost text p95 214 ->
        2,141 ms when they shared it). The weights are memory-mapped, so they are shared; the
        second context costs its KV cache and a smaller compute buffer (batch of 64)."""
        if self._sibling is None:
            self._sibling = LlamaCppBackend(str(self.model_path), n_batch=64, **self._settings)
        return self._sibling

    def reset(self) -> None:
        """Forget the KV cache (the next prompt is evaluated in full)."""
        with self.lock:
            self.llm.reset()  # type: ignore[no-untyped-call]

    def _place(self, reuse: int, moves: list[tuple[int, int, int]]) -> int:
        """Keep the cached runs of `moves` (cache start, prompt start, length), drop every
        other cached cell after `reuse`, and shift the runs to their positions in the new
        prompt; return where the prompt's tokens still to evaluate begin."""
        ctx = self.llm._ctx
        self._drop_outside(0, reuse, moves)
        # every run moves left (or stays): from the left, none lands on cells not yet moved
        for c, p, n in moves:
            if p != c:
                ctx.kv_cache_seq_shift(0, c, c + n, p - c)
        return moves[-1][1] + moves[-1][2]

    def _drop_outside(self, seq: int, reuse: int, moves: list[tuple[int, int, int]]) -> None:
        """Drop from `seq` every cell after `reuse` that is in none of the runs of `moves`."""
        ctx = self.llm._ctx
        kept_end = reuse
        for c, _, n in moves:
            if c > kept_end:
                ctx.kv_cache_seq_rm(seq, kept_end, c)
            kept_end = c + n
        ctx.kv_cache_seq_rm(seq, kept_end, -1)

    def _park(self, reuse: int, moves: list[tuple[int, int, int]]) -> None:
        """Hold what the cache has after `reuse` in sequence 1 and drop it from sequence 0, so
        that the text inserted before the runs of `moves` can be evaluated at consecutive
        positions (llama.cpp requires them). All of it is held, not only the runs: a newer key
        that stops the insertion gets the cache back as it was (`_restore`), so that a context
        block tried in a pause never costs the window the key needs. The cells are shared, not
        copied. (llama-cpp-python's own removals, with a sequence of -1, touch sequence 0 only.)
        gemma-3's sliding-window cache counts a held cell that lies a window behind sequence 1's
        last one as free (llama.cpp's find_slot), and may give it to the new text: `_generate`
        checks what came back (`_held_end`) and evaluates again what did not."""
        ctx = self.llm._ctx
        ctx.kv_cache_seq_rm(1, -1, -1)
        ctx.kv_cache_seq_cp(0, 1, reuse, -1)
        ctx.kv_cache_seq_rm(0, reuse, -1)

    def _restore(self, reuse: int, cached: list[int]) -> None:
        """The insertion was stopped: what it evaluated goes, what was held comes back (all
        of it, or none where the window cache took some of it meanwhile)."""
        ctx, llm = self.llm._ctx, self.llm
        ctx.kv_cache_seq_rm(0, reuse, -1)
        ctx.kv_cache_seq_cp(1, 0, -1, -1)
        ctx.kv_cache_seq_rm(1, -1, -1)
        if self._held_end() != len(cached):
            ctx.kv_cache_seq_rm(0, reuse, -1)
            cached = cached[:reuse]
        llm.input_ids[: len(cached)] = cached
        llm.n_tokens = len(cached)

    def _unpark(self, reuse: int, moves: list[tuple[int, int, int]]) -> int:
        """Drop the held cells that are in no run, shift the runs to their places after the
        inserted text and give them back to sequence 0; return where the prompt's tokens still
        to evaluate begin. Runs moving left go first from the left, runs moving right first
        from the right: a run's range never takes in another run's cells (the shifts only ever
        grow the gaps between them)."""
        ctx = self.llm._ctx
        self._drop_outside(1, reuse, moves)
        left = [m for m in moves if m[1] < m[0]]
        right = [m for m in moves if m[1] > m[0]]
        for c, p, n in left + right[::-1]:
            ctx.kv_cache_seq_shift(1, c, c + n, p - c)
        ctx.kv_cache_seq_cp(1, 0, -1, -1)
        ctx.kv_cache_seq_rm(1, -1, -1)
        return moves[-1][1] + moves[-1][2]

    def _truncate(self, keep: int) -> None:
        """Drop the KV cache after the first `keep` tokens (what llama-cpp-python's generate
        does when it reuses a prefix)."""
        llm = self.llm
        if keep < llm.n_tokens:
            memory = getattr(llm._ctx, "memory_seq_rm", None) or llm._ctx.kv_cache_seq_rm
            memory(-1, keep, -1)
        llm.n_tokens = keep


class AbortSwitch:
    """Stops a prompt chunk inside llama.cpp when the request is cancelled.

    A head chunk of `EVAL_CHUNK_HEAD` tokens takes about 0.3 s on 2 cores, and work went on
    that long after the user left the place (<Esc>). A newer key at the same place does not
    stop it: its prompt shares the head (stopping every chunk at 150 ms a key, measured,
    left the head never evaluated while typing went on). llama.cpp asks an abort callback between the nodes of its graph
    (`llama_set_abort_callback`). A Python callback there would take the GIL hundreds of times
    a chunk, and wait for it while the context thread holds it, so the callback is C: libc's
    `strlen` over a two-byte buffer, which returns 1 (true) once the first byte is set. While a
    long chunk runs, a watcher thread sets that byte when the request is cancelled. Without a
    C library to take `strlen` from, chunks are stopped between pieces only, as before."""

    def __init__(self, ctx: Any, enabled: bool = True) -> None:
        self.fired = False
        self._flag = ctypes.create_string_buffer(2)
        self._callback: Any = None
        if not enabled:
            return
        try:
            import llama_cpp

            libc = ctypes.CDLL(None)
            address = ctypes.cast(libc.strlen, ctypes.c_void_p).value
            if address is None:
                return
            self._callback = llama_cpp.ggml_abort_callback(address)
            llama_cpp.llama_set_abort_callback(
                ctx, self._callback, ctypes.cast(self._flag, ctypes.c_void_p)
            )
        except (OSError, AttributeError, TypeError):
            self._callback = None

    @contextlib.contextmanager
    def watching(
        self, cancelled: Callable[[], bool], long: bool, every: float = 0.005
    ) -> Iterator[None]:
        """While the block runs, fire the switch once `cancelled()` (only for a `long` chunk:
        a short one ends sooner than the watcher starts)."""
        self.fired = False
        if self._callback is None or not long:
            yield
            return
        done = threading.Event()

        def watch() -> None:
            while True:
                if cancelled():
                    self.fired = True
                    self._flag[0] = b"x"
                    return
                if done.wait(every):
                    return

        watcher = threading.Thread(target=watch, daemon=True, name="abort-watch")
        watcher.start()
        try:
            yield
        finally:
            done.set()
            watcher.join()
            self._flag[0] = b"\0"


def eval_pieces(start: int, end: int) -> list[tuple[int, int]]:
    """The chunks in which prompt tokens [start, end) are evaluated: the last `EVAL_TAIL`
    tokens (the line being typed, and what follows it in the prompt) in chunks of `EVAL_CHUNK`,
    the rest before them in chunks of up to `EVAL_CHUNK_HEAD`. The next keystroke's prompt
    shares that head, so a cancel noticed one big chunk later loses nothing there, and big
    chunks evaluate faster."""
    pieces = []
    head_end = max(start, end - EVAL_TAIL)
    for i in range(start, head_end, EVAL_CHUNK_HEAD):
        pieces.append((i, min(i + EVAL_CHUNK_HEAD, head_end)))
    for i in range(head_end, end, EVAL_CHUNK):
        pieces.append((i, min(i + EVAL_CHUNK, end)))
    return pieces


def reuse_plan(
    cached: list[int], prompt: list[int], start: int, min_run: int, min_after_insert: int = 64
) -> list[tuple[int, int, int]]:
    """Runs of `cached` found again in `prompt` after its kept part: (cache start, prompt
    start, length), each at least `min_run` tokens, the prompt's last token excluded (always
    evaluated). They follow the kept part directly (text removed before them: a window that
    slid down, a snippet dropped), or follow one stretch of new text (a context block that
    changed or came in before the window): then the first run is at least `min_after_insert`
    tokens, and the new text is evaluated before the runs are moved behind it (`_park`).
    Runs are found through an index of the cache's GRAM-token sequences, the run after new
    text through one of its `min_after_insert`-token sequences (one lookup per prompt token,
    however repetitive the code): a prompt of 1,500 tokens is planned in a few milliseconds."""
    index: dict[tuple[int, ...], list[int]] = {}
    for i in range(start, len(cached) - GRAM + 1):
        index.setdefault(tuple(cached[i : i + GRAM]), []).append(i)
    limit = len(prompt) - 1

    def extend(c: int, p: int, n: int) -> int:
        while c + n < len(cached) and p + n < limit and cached[c + n] == prompt[p + n]:
            n += 1
        return n

    def run_at(head_c: int, head_p: int) -> tuple[int, int, int] | None:
        best = None
        for c in index.get(tuple(prompt[head_p : head_p + GRAM]), ()):
            if c < head_c:
                continue
            n = extend(c, head_p, GRAM)
            if best is None or n > best[2]:
                best = (c, head_p, n)
            if n >= min_run:
                break  # the first long enough run from the left, as llama-server takes it
        return best if best is not None and best[2] >= min_run else None

    def run_after_new_text(head_c: int, head_p: int) -> tuple[int, int, int] | None:
        width = max(min_run, min_after_insert, GRAM)
        anchors: dict[tuple[int, ...], int] = {}
        for i in range(head_c, len(cached) - width + 1):
            anchors.setdefault(tuple(cached[i : i + width]), i)
        for p in range(head_p + 1, limit - width + 1):
            c = anchors.get(tuple(prompt[p : p + width]))
            if c is not None:
                return (c, p, extend(c, p, width))
        return None

    moves: list[tuple[int, int, int]] = []
    head_c, head_p = start, start
    while head_p + GRAM <= limit:
        found = run_at(head_c, head_p)
        if found is None and not moves:
            found = run_after_new_text(head_c, head_p)
        if found is None:
            break  # the prompt goes on with new text: everything after it is evaluated
        moves.append(found)
        head_c, head_p = found[0] + found[2], found[1] + found[2]
    return moves


def _greedy(logits: Any, banned: list[int]) -> tuple[int, float]:
    """The most probable token (not one of `banned`) and its log-probability: what
    llama.cpp's greedy sampler picks, plus the confidence the gates need."""
    logits = np.asarray(logits, dtype=np.float32)
    if banned:
        logits = logits.copy()
        logits[banned] = -np.inf
    token = int(np.argmax(logits))
    top = float(logits[token])
    return token, -float(np.log(np.exp(logits - top).sum()))


def _common_prefix(a: list[int], b: list[int]) -> int:
    n = min(len(a), len(b))
    i = 0
    while i < n and a[i] == b[i]:
        i += 1
    return i
