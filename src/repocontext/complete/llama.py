"""llama.cpp in this process (llama-cpp-python): the default backend.

The KV cache is reused across calls. The prompt's common prefix with what the context holds is
kept; then, as llama-server's `--cache-reuse` does, later runs of at least `cache_reuse` cached
tokens that the new prompt goes on with are moved to their new positions instead of being
evaluated again (`llama_memory_seq_add` shifts their keys' rotary positions): the window after
lines dropped from its top, the code after a snippet dropped from the context. Only what
follows the moved runs is evaluated in chunks (`EVAL_CHUNK`), between which a cancel is
noticed: 32 tokens, about 70 ms on 2 cores. Smaller chunks cost more than they save: a cold
790-token prompt took 2.6-2.8 s and 5.1-5.6 CPU s in chunks of 32 against 4.2-9.7 s and
8.4-13.9 CPU s in chunks of 8 (the same run, alternating; gemma-3-270m, 2 threads). A moved run keeps what it computed while attending to the
text it followed before; what this costs in quality is measured in bench/results/latency.md.
"""

from __future__ import annotations

import contextlib
import ctypes
import os
import re
import threading
import time
from collections import deque

import numpy as np

from ..errors import GenerationError
from .backends import Control, Generation, TokenCounts, advance, check_model_file
from .cpu import Machine
from .templates import TEMPLATES, detect_template

EVAL_CHUNK = 32
MIN_GENERATION_SECONDS = 1.0
GRAM = 4  # cached runs are found through their first GRAM tokens
_FIM_PROBES = (
    "<|fim_prefix|>",
    "<|repo_name|>",
    "<|file_separator|>",
    "<fim_prefix>",
    "<｜fim▁begin｜>",
    "[PREFIX]",
    "[SUFFIX]",
    "<PRE>",
    "▁<PRE>",
)
LOG_WARN, LOG_ERROR = 3, 4  # ggml_log_level: 1 debug, 2 info, 5 continues the last line
_BUFFER_LINE = re.compile(r"(\w+) model buffer size\s*=\s*([\d.]+) MiB")
_PARAMS_LOCK = threading.Lock()


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
        self._callback = None

    def install(self) -> None:
        if self._callback is not None:
            return
        import llama_cpp

        @llama_cpp.llama_log_callback
        def callback(level: int, text: bytes, _user_data) -> None:
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
def _model_params(**overrides):
    """Model parameters that llama-cpp-python's `Llama()` does not take as arguments.

    `Llama.__init__` starts from `llama_model_default_params()` and sets only the fields it
    knows; `use_extra_bufts` is not one of them. For the length of one load, the defaults it
    gets carry our values too (under a lock: the function is module state).
    """
    import llama_cpp.llama_cpp as low

    with _PARAMS_LOCK:
        original = low.llama_model_default_params

        def defaults():
            params = original()
            for name, value in overrides.items():
                setattr(params, name, value)
            return params

        low.llama_model_default_params = defaults
        try:
            yield
        finally:
            low.llama_model_default_params = original


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
    ):
        """`cache_reuse`: the shortest run of cached tokens moved rather than evaluated again
        (0: keep the common prefix only, as before)."""
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
            with _model_params(use_extra_bufts=self.buffers.enabled):
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
        self._settings = dict(
            n_ctx=n_ctx,
            threads=threads,
            template=template,
            extra_buffers=extra_buffers,
            machine=self.machine,
            cache_reuse=cache_reuse,
        )
        self._sibling: LlamaCppBackend | None = None
        self.n_ctx = self.llm.n_ctx()
        self.lock = threading.Lock()
        memory = llama_cpp.llama_get_memory(self.llm._ctx.ctx)
        self.cache_reuse = cache_reuse if llama_cpp.llama_memory_can_shift(memory) else 0
        self.metadata = {k: str(v) for k, v in (self.llm.metadata or {}).items()}
        self.template = (
            TEMPLATES[template]
            if template != "auto"
            else detect_template(self._special_tokens(), self.metadata)
        )
        self._counts = TokenCounts(lambda text: len(self._tokenize(text, special=False)))
        self._n_vocab = self.llm.n_vocab()
        self._eos = {self.llm.token_eos()}
        for text in self.template.eot:
            ids = self._tokenize(text, special=True)
            if len(ids) == 1:
                self._eos.add(ids[0])

    def describe(self) -> dict:
        """The CPU, llama.cpp's build, and what the loader did with the weights."""
        return {
            "cpu": self.machine.cpu.to_json() | {"summary": self.machine.cpu.summary()},
            "llama_cpp": self.machine.llama_info,
            "extra_buffers": self.buffers.to_json(),
            "weight_buffers_mib": self.weight_buffers,
        }

    def _special_tokens(self) -> set[str]:
        """Which FIM marker strings this vocabulary has as single special tokens."""
        found = set()
        for probe in _FIM_PROBES:
            ids = self._tokenize(probe, special=True)
            if (
                len(ids) == 1
                and self.llm.detokenize(ids, special=True).decode("utf-8", "replace").strip()
                == probe.strip("▁").strip()
            ):
                found.add(probe)
        return found

    def _tokenize(self, text: str, special: bool = True) -> list[int]:
        return self.llm.tokenize(text.encode("utf-8"), add_bos=False, special=special)

    def tokenize_prompt(self, text: str) -> list[int]:
        bos = [] if self.llm.token_bos() < 0 else [self.llm.token_bos()]
        return bos + self._tokenize(text)

    def count_tokens(self, text: str) -> int:
        return self._counts(text)

    def generate(self, prompt: str, control: Control) -> Generation:
        with self.lock:
            return self._generate(self.tokenize_prompt(prompt), control)

    def _generate(self, tokens: list[int], control: Control) -> Generation:
        llm = self.llm
        out = Generation()
        reserve = control.max_tokens if control.reserve is None else control.reserve
        room = self.n_ctx - reserve - 1
        if len(tokens) > room:  # keep the end (the cursor), drop the oldest context
            tokens = tokens[:1] + tokens[len(tokens) - room + 1 :]
        cached = llm._input_ids[: llm.n_tokens].tolist()
        reuse = _common_prefix(cached, tokens[:-1])  # always evaluate the last token again
        moves = reuse_plan(cached, tokens, reuse, self.cache_reuse) if self.cache_reuse > 0 else []
        start = self._place(reuse, moves) if moves else reuse
        if not moves:
            self._truncate(reuse)
        out.tokens_reused = reuse + sum(n for _, _, n in moves)
        # What follows the kept and moved tokens is evaluated through llama-cpp-python's eval,
        # which keeps its own bookkeeping (told here what the cache now holds).
        llm._input_ids[:start] = tokens[:start]
        llm.n_tokens = start
        t0 = time.perf_counter()
        for i in range(start, len(tokens), EVAL_CHUNK):
            if control.cancelled() or control.restart():
                out.status = "cancelled" if control.cancelled() else "restart"
                self._truncate(llm.n_tokens)
                return out
            piece = tokens[i : i + EVAL_CHUNK]
            llm.eval(piece)
            out.tokens_evaluated += len(piece)
        out.eval_seconds = time.perf_counter() - t0
        llama_seconds = out.eval_seconds
        # A long prompt (a cold start) may use up the deadline: generation still gets a second.
        deadline = max(control.deadline, time.monotonic() + MIN_GENERATION_SECONDS)
        generated: list[int] = []
        text = full = ""  # `full`: not cut by the stop rules
        banned = self._tokenize(control.avoid, special=False)[:1] if control.avoid else []
        while len(generated) < control.max_tokens:
            if control.cancelled():
                out.status = "cancelled"
                break
            if time.monotonic() > deadline:
                out.status = "deadline"
                break
            t1 = time.perf_counter()
            token, logprob = _greedy(self._last_logits(), banned if not generated else [])
            llama_seconds += time.perf_counter() - t1
            if token in self._eos:
                break
            generated.append(token)
            if out.first_token_at is None:
                out.first_token_at = time.monotonic()
            new_text = llm.detokenize(generated).decode("utf-8", "ignore")
            control.token(len(full), len(new_text), logprob)
            full = new_text
            t1 = time.perf_counter()
            llm.eval([token])
            llama_seconds += time.perf_counter() - t1
            if new_text != text:
                text, stop = advance(new_text, control)
                if stop:
                    break
            if control.restart():
                out.status = "restart"
                break
        out.text = text
        out.tokens_generated = len(generated)
        out.timings["llama_ms"] = llama_seconds * 1000
        return out

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
            self.llm.reset()

    def _place(self, reuse: int, moves: list[tuple[int, int, int]]) -> int:
        """Keep the cached runs of `moves` (cache start, prompt start, length), drop every
        other cached cell after `reuse`, and shift the runs to their positions in the new
        prompt; return where the prompt's tokens still to evaluate begin."""
        ctx = self.llm._ctx
        kept_end = reuse
        for c, _, n in moves:
            if c > kept_end:
                ctx.kv_cache_seq_rm(0, kept_end, c)
            kept_end = c + n
        ctx.kv_cache_seq_rm(0, kept_end, -1)
        # every run moves left (or stays): from the left, none lands on cells not yet moved
        for c, p, n in moves:
            if p != c:
                ctx.kv_cache_seq_shift(0, c, c + n, p - c)
        return moves[-1][1] + moves[-1][2]

    def _truncate(self, keep: int) -> None:
        """Drop the KV cache after the first `keep` tokens (what llama-cpp-python's generate
        does when it reuses a prefix)."""
        llm = self.llm
        if keep < llm.n_tokens:
            memory = getattr(llm._ctx, "memory_seq_rm", None) or llm._ctx.kv_cache_seq_rm
            memory(-1, keep, -1)
        llm.n_tokens = keep


def reuse_plan(
    cached: list[int], prompt: list[int], start: int, min_run: int
) -> list[tuple[int, int, int]]:
    """Runs of `cached` found again in `prompt` right where its kept part ends: (cache start,
    prompt start, length), each at least `min_run` tokens, the prompt's last token excluded
    (always evaluated). llama.cpp requires a sequence's positions to stay consecutive, so a run
    can only follow what is kept (text removed before it: a window that slid down, a snippet
    dropped), not text inserted before it. Runs are found through an index of the cache's
    GRAM-token sequences: a prompt of a thousand tokens is planned in about a millisecond."""
    index: dict[tuple[int, ...], list[int]] = {}
    for i in range(start, len(cached) - GRAM + 1):
        index.setdefault(tuple(cached[i : i + GRAM]), []).append(i)
    moves: list[tuple[int, int, int]] = []
    head_c, head_p, limit = start, start, len(prompt) - 1
    while head_p + GRAM <= limit:
        best = None
        for c in index.get(tuple(prompt[head_p : head_p + GRAM]), ()):
            if c < head_c:
                continue
            n = GRAM
            while (
                c + n < len(cached) and head_p + n < limit and cached[c + n] == prompt[head_p + n]
            ):
                n += 1
            if best is None or n > best[2]:
                best = (c, head_p, n)
            if n >= min_run:
                break  # the first long enough run from the left, as llama-server takes it
        if best is None or best[2] < min_run:
            break  # the prompt goes on with new text: everything after it is evaluated
        moves.append(best)
        head_c, head_p = best[0] + best[2], head_p + best[2]
    return moves


def _greedy(logits, banned: list[int]) -> tuple[int, float]:
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
