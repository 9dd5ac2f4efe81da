"""llama.cpp in this process (llama-cpp-python): the default backend.

The KV cache is reused across calls: the prompt's common prefix with what the context holds is
kept, and later cached runs are moved rather than evaluated again, held aside in a second
sequence while new text before them is decoded. kvcache.py plans it (what to keep, move, hold
and evaluate: pure, tested without a model); this class carries the plan out through native.py
(every private llama-cpp-python and C API use) and checks, between the steps, what llama.cpp
really holds. Measured (bench/kv_move.py, bench/results/latency.md: a 43-121 token context
block before a 490-569-token window, 8 tokens generated): median 0.47 s against 1.49 s from an
empty cache, and the same 8 tokens at 4 of 6 places. Only what follows the moved runs is
evaluated, in chunks between which a cancel is noticed (`kvcache.eval_pieces`): the prompt's
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

import logging
import os
import re
import threading
import time
from typing import TYPE_CHECKING, Any

import numpy as np

from ....errors import GenerationError
from ....extras import missing
from ....runtime.threads import start_daemon
from ...cpu import Machine
from ...drafts import PromptLookup
from ...healing import Healing, LazyPieces, back_up
from ...steering import TEXT_SOURCES, Steering, Vocabulary, build_sources
from ...templates import TEMPLATES, detect_template, fim_markers
from ..base import Control, Generation, TokenCounts, advance, check_model_file
from . import kvcache
from .kvcache import EVAL_CHUNK, Plan, eval_pieces
from .native import LLAMA_LOG, Native, load

if TYPE_CHECKING:
    from threading import Thread

log = logging.getLogger(__name__)

MIN_GENERATION_SECONDS = 1.0
_BUFFER_LINE = re.compile(r"(\w+) model buffer size\s*=\s*([\d.]+) MiB")


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
            import llama_cpp  # noqa: F401  (native.py imports it where it is used)
        except ImportError as exc:
            raise GenerationError(
                missing("local", "completion in this process", "set [generation] server_url")
            ) from exc
        self.machine = machine or Machine.current()
        self.buffers = self.machine.extra_buffers(extra_buffers)
        LLAMA_LOG.install()
        mark = LLAMA_LOG.mark()
        try:
            self.llm = load(
                str(path),
                n_ctx=n_ctx,
                n_batch=n_batch,
                n_threads=threads or (os.cpu_count() or 1),
                extra_buffers=self.buffers.enabled,
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
        self.native = Native(self.llm)
        self.n_ctx = self.llm.n_ctx()
        self.lock = threading.Lock()
        self.cache_reuse = cache_reuse if self.native.can_shift() else 0
        self.n_swa = self.native.n_swa()  # gemma-3: 512
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
        self._bos = [bos] if bos >= 0 and self.native.add_bos() else []
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
        self._vocab_thread: Thread | None = None
        self.abort = self.native.abort_switch(enabled=abort_long_chunks)

    def _token_pieces(self) -> list[bytes]:
        """Each token's bytes as `detokenize` writes them (special tokens: none)."""
        return self.native.token_pieces(self._n_vocab)

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
        held (`_carry_out`, `kvcache.what_the_cache_can_give`), so this is the last resort."""
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
        """Every cell of both sequences goes, and the tokens we hold for them."""
        self.native.forget()

    def _lowest(self, seq: int) -> int:
        """The lowest position `seq` holds, asked of llama.cpp only where a sliding window
        may have let cells go (`kvcache.window_holds` needs it then only)."""
        return self.native.lowest(seq) if self.n_swa else -1

    def pending(self, prompt: str, control: Control) -> int:
        """How many of the prompt's tokens `generate` would evaluate now: those the KV cache
        neither keeps nor can move into place (the engine picks the cheaper of two prompts)."""
        with self.lock:
            return self._plan(self._healed(prompt, control)[0], control).pending

    def _plan(self, tokens: list[int], control: Control) -> Plan:
        """The prompt cut to fit, the cache's tokens, the common prefix kept, the runs moved."""
        reserve = control.max_tokens if control.reserve is None else control.reserve
        cached = self.native.held_tokens()
        return kvcache.plan(tokens, cached, self.n_ctx, reserve, self.cache_reuse)

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
        plan = self._plan(tokens, control)
        t0 = time.perf_counter()
        plan = kvcache.what_the_cache_can_give(plan, self.n_ctx, self.n_swa, self._lowest(0))
        tokens = plan.tokens

        def evaluate(start: int, end: int) -> bool:
            return self._evaluate(tokens, start, end, control, out)

        start, out.tokens_reused = kvcache.carry_out(plan, self.native, self.n_swa, evaluate)
        if start is None:  # stopped while new text was evaluated: the cache is as it was
            out.eval_seconds = time.perf_counter() - t0
            return out
        # What follows the kept and moved tokens is evaluated through llama-cpp-python's eval,
        # which keeps its own bookkeeping (told here what the cache now holds).
        self.native.hold(tokens[:start])
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
            control.hooks.token(len(full), len(new_text), logprob)
            full = new_text
            if new_text == text:
                return False
            text, done = advance(new_text, control)
            return done

        while len(generated) < limit and not stop:
            if control.hooks.cancelled():
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
            if not stop and control.hooks.restart():
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
        at = llm.n_tokens
        self._truncate(at)
        rows = self.native.decode_rows(tokens, at, self._n_vocab)
        self.native.hold(tokens, at=at)
        return rows

    def _steering(
        self, control: Control, healing: Healing | None, tokens: list[int]
    ) -> tuple[Steering | None, bool]:
        """The generation's steering (complete/steering/), from what the run knows at its
        first token; and whether to ask again (the context build has not finished)."""
        facts = control.hooks.steering()
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
        facts = control.hooks.steering()
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

                self._vocab_thread = start_daemon("vocab", build)
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
            if control.hooks.cancelled() or control.hooks.restart():
                out.status = "cancelled" if control.hooks.cancelled() else "restart"
                self._truncate(self.llm.n_tokens)
                return False
            try:
                with self.abort.watching(control.hooks.abandoned, long=j - i > EVAL_CHUNK):
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
        """The logits after the last evaluated token (a view of llama.cpp's own)."""
        return self.native.last_logits(self._n_vocab)

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

    def _truncate(self, keep: int) -> None:
        """Drop the KV cache after the first `keep` tokens."""
        self.native.truncate(keep)


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
