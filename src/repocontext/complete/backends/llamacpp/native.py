"""Every use of llama-cpp-python's private state and of llama.cpp's C API, behind names of our
own: the rest of the package calls these, so a new llama-cpp-python pin that moves or renames
one breaks here only, and tests/test_native.py says which (it checks each name and each C
function's argument types without loading a model).

What is reached past the library's public face, and why:
- `Llama._ctx` (its `LlamaContext`: `ctx`, `memory`, `kv_cache_seq_rm/cp/shift`): the KV
  cache's cells, kept, moved and held in a second sequence (kvcache.py plans it);
- `Llama._model.add_bos_token()`: whether the vocabulary wants a BOS;
- `Llama._input_ids`, `input_ids`, `n_tokens`: the tokens the library holds for the cache;
- `llama_cpp.llama_cpp.llama_model_default_params` / `llama_context_default_params`, swapped
  for the length of one load (`default_params`): parameters `Llama()` does not take;
- `suppress_stdout_stderr` in `llama_cpp.llama` and `llama_cpp._internals`, swapped for the
  length of one load (`streams_left_alone`);
- the C API: the log callback (`LlamaLog`), the abort callback (`AbortSwitch`), logits,
  batches, sequence positions, the vocabulary's pieces, a vocabulary-only load (`Vocabulary`)
  and the build's system info.

llama_cpp is imported inside each function, as before: this module imports without it.
"""

from __future__ import annotations

import contextlib
import ctypes
import threading
from collections import deque
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np

from ....errors import GenerationError
from ....runtime.threads import start_daemon
from .kvcache import CellOp

if TYPE_CHECKING:
    from llama_cpp import Llama

# The C functions this module calls through llama_cpp, with the argument and result types it
# passes and reads (ctypes names; "size_t" is ctypes.c_size_t's): tests/test_native.py checks
# them against the installed llama-cpp-python, and that this module calls no other.
C_API: dict[str, tuple[tuple[str, ...], str | None]] = {
    "llama_log_set": (("CFunctionType", "c_void_p"), None),
    "llama_get_memory": (("c_void_p",), "c_void_p"),
    "llama_memory_can_shift": (("c_void_p",), "c_bool"),
    "llama_model_n_swa": (("c_void_p",), "c_int"),
    "llama_model_get_vocab": (("c_void_p",), "c_void_p"),
    "llama_token_to_piece": (
        ("c_void_p", "c_int", "c_char_p", "c_int", "c_int", "c_bool"),
        "c_int",
    ),
    "llama_memory_seq_pos_max": (("c_void_p", "c_int"), "c_int"),
    "llama_memory_seq_pos_min": (("c_void_p", "c_int"), "c_int"),
    "llama_get_logits_ith": (("c_void_p", "c_int"), "LP_c_float"),
    "llama_batch_init": (("c_int", "c_int", "c_int"), "llama_batch"),
    "llama_batch_free": (("llama_batch",), None),
    "llama_decode": (("c_void_p", "llama_batch"), "c_int"),
    "llama_set_abort_callback": (("c_void_p", "CFunctionType", "c_void_p"), None),
    "llama_print_system_info": ((), "c_char_p"),
    "llama_model_default_params": ((), "llama_model_params"),
    "llama_context_default_params": ((), "llama_context_params"),
    "llama_model_load_from_file": (("c_char_p", "llama_model_params"), "c_void_p"),
    "llama_model_free": (("c_void_p",), None),
    "llama_model_meta_count": (("c_void_p",), "c_int"),
    "llama_model_meta_key_by_index": (("c_void_p", "c_int", "c_char_p", "size_t"), "c_int"),
    "llama_model_meta_val_str_by_index": (("c_void_p", "c_int", "c_char_p", "size_t"), "c_int"),
    "llama_model_n_params": (("c_void_p",), "size_t"),
    "llama_tokenize": (
        ("c_void_p", "c_char_p", "c_int", "LP_c_int", "c_int", "c_bool", "c_bool"),
        "c_int",
    ),
}
# the callback types (arguments, result) and the batch's fields it fills
C_CALLBACKS: dict[str, tuple[tuple[str, ...], str | None]] = {
    "llama_log_callback": (("c_int", "c_char_p", "c_void_p"), None),
    "ggml_abort_callback": (("c_void_p",), "c_bool"),
}
BATCH_FIELDS = ("n_tokens", "token", "pos", "n_seq_id", "seq_id", "logits")
# the parameters a load sets that `Llama()` does not take (default_params), and vocab_only
MODEL_PARAMS = ("use_extra_bufts", "vocab_only")
CONTEXT_PARAMS = ("n_seq_max", "kv_unified")

LOG_WARN, LOG_ERROR = 3, 4  # ggml_log_level: 1 debug, 2 info, 5 continues the last line
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
def default_params(function: str, **overrides: Any) -> Iterator[None]:
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


def model_params(**overrides: Any) -> contextlib.AbstractContextManager[None]:
    return default_params("llama_model_default_params", **overrides)


def context_params(**overrides: Any) -> contextlib.AbstractContextManager[None]:
    return default_params("llama_context_default_params", **overrides)


class _Unsuppressed:
    """A `suppress_stdout_stderr` that leaves the process's streams alone."""

    def __init__(self, disable: bool = True):
        pass

    def __enter__(self) -> _Unsuppressed:
        return self

    def __exit__(self, *exc: object) -> None:
        return None


# the modules whose `suppress_stdout_stderr` a load swaps (streams_left_alone)
SUPPRESSING_MODULES = ("llama_cpp.llama", "llama_cpp._internals")


@contextlib.contextmanager
def streams_left_alone() -> Iterator[None]:
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


def load(model_path: str, n_ctx: int, n_batch: int, n_threads: int, extra_buffers: bool) -> Llama:
    """llama-cpp-python's `Llama` for the file, quietly (`streams_left_alone`, the log in
    LLAMA_LOG), with the weights' extra buffers on or off, and a second sequence in the same
    cells (`n_seq_max` 2, one unified cache): it holds cached runs while text inserted before
    them is evaluated (kvcache.park)."""
    import llama_cpp

    with (
        streams_left_alone(),
        model_params(use_extra_bufts=extra_buffers),
        context_params(n_seq_max=2, kv_unified=True),
    ):
        return llama_cpp.Llama(
            model_path=model_path,
            n_ctx=n_ctx,
            n_batch=n_batch,
            n_threads=n_threads,
            # gemma-3 attends through a sliding window; a full-size window cache keeps
            # every cell, so the runs kvcache.place moves are still there to move (a
            # window-sized one drops old cells as it goes)
            swa_full=True,
            verbose=False,
        )


class Native:
    """One loaded `Llama`'s private state and C calls: its KV cache's sequences, the tokens the
    library holds for them, logits and batches. Used by one thread at a time (the backend's
    lock)."""

    def __init__(self, llm: Llama):
        self.llm = llm

    # --- the model --------------------------------------------------------------------------
    def can_shift(self) -> bool:
        """Can the cache move cells to other positions (`llama_memory_can_shift`)?"""
        import llama_cpp

        memory = llama_cpp.llama_get_memory(self.llm._ctx.ctx)
        return bool(llama_cpp.llama_memory_can_shift(memory))

    def n_swa(self) -> int:
        """The sliding window's size (gemma-3: 512; 0: none)."""
        import llama_cpp

        return int(llama_cpp.llama_model_n_swa(self.llm.model))

    def add_bos(self) -> bool:
        """Does the vocabulary ask for a BOS (llama.cpp's add_bos)?"""
        return bool(self.llm._model.add_bos_token())

    def token_pieces(self, n_vocab: int) -> list[bytes]:
        """Each token's bytes as `detokenize` writes them (special tokens: none)."""
        import llama_cpp

        vocab = llama_cpp.llama_model_get_vocab(self.llm._model.model)
        buf = ctypes.create_string_buffer(256)
        out = []
        for token in range(n_vocab):
            n = llama_cpp.llama_token_to_piece(vocab, token, buf, len(buf), 0, False)
            out.append(buf.raw[:n] if n > 0 else b"")
        return out

    def abort_switch(self, enabled: bool = True) -> AbortSwitch:
        return AbortSwitch(self.llm._ctx.ctx, enabled=enabled)

    # --- the tokens the library holds for the cache ------------------------------------------
    def held_tokens(self) -> list[int]:
        """The tokens llama-cpp-python holds for sequence 0's cells."""
        held: list[int] = self.llm._input_ids[: self.llm.n_tokens].tolist()
        return held

    def hold(self, tokens: list[int], at: int = 0) -> None:
        """Tell llama-cpp-python that sequence 0's cells now hold `tokens` from position `at`
        on, and nothing after them (its `eval` goes on there)."""
        self.llm.input_ids[at : at + len(tokens)] = tokens
        self.llm.n_tokens = at + len(tokens)

    # --- the cache's cells -----------------------------------------------------------------
    def seq_rm(self, seq: int, p0: int, p1: int) -> None:
        self.llm._ctx.kv_cache_seq_rm(seq, p0, p1)

    def seq_cp(self, src: int, dst: int, p0: int, p1: int) -> None:
        self.llm._ctx.kv_cache_seq_cp(src, dst, p0, p1)

    def seq_shift(self, seq: int, p0: int, p1: int, delta: int) -> None:
        self.llm._ctx.kv_cache_seq_shift(seq, p0, p1, delta)

    def apply(self, ops: list[CellOp]) -> None:
        """Carry out a kvcache plan's steps, in order."""
        for op in ops:
            if op.kind == "remove":
                self.seq_rm(op.seq, op.p0, op.p1)
            elif op.kind == "copy":
                self.seq_cp(op.seq, op.to, op.p0, op.p1)
            else:
                self.seq_shift(op.seq, op.p0, op.p1, op.delta)

    def truncate(self, keep: int) -> None:
        """Drop the cache after the first `keep` tokens (what llama-cpp-python's generate
        does when it reuses a prefix)."""
        llm = self.llm
        if keep < llm.n_tokens:
            memory = getattr(llm._ctx, "memory_seq_rm", None) or llm._ctx.kv_cache_seq_rm
            memory(-1, keep, -1)
        llm.n_tokens = keep

    def forget(self) -> None:
        """Every cell of both sequences goes, and the tokens we hold for them (llama-cpp-python
        reads a sequence of -1 as 0: the held cells of sequence 1 are removed by name)."""
        for seq in (0, 1):
            self.seq_rm(seq, -1, -1)
        self.llm.n_tokens = 0

    def held_end(self) -> int:
        """One past the last position that sequence 0 holds, as llama.cpp counts it (for
        gemma-3, in its sliding-window cache): what the next token's position must be."""
        import llama_cpp

        return int(llama_cpp.llama_memory_seq_pos_max(self.llm._ctx.memory, 0)) + 1

    def lowest(self, seq: int) -> int:
        """The lowest position `seq` holds (-1: none), as llama.cpp counts it."""
        import llama_cpp

        return int(llama_cpp.llama_memory_seq_pos_min(self.llm._ctx.memory, seq))

    # --- logits and batches -------------------------------------------------------------------
    def last_logits(self, n_vocab: int) -> np.ndarray:
        """The logits after the last evaluated token, read from llama.cpp without a copy
        (llama-cpp-python keeps them in `scores` only with logits_all, which costs memory)."""
        import llama_cpp

        ptr = llama_cpp.llama_get_logits_ith(self.llm._ctx.ctx, -1)
        return np.ctypeslib.as_array(ptr, shape=(n_vocab,))

    def decode_rows(self, tokens: list[int], at: int, n_vocab: int) -> list[np.ndarray]:
        """Decode `tokens` at positions `at`... of sequence 0 in one batch, every position's
        logits asked for; the logits after each of them, copied. `llama_decode`'s refusal
        raises RuntimeError("llama_decode returned N"), as llama-cpp-python's eval does."""
        import llama_cpp

        batch = llama_cpp.llama_batch_init(len(tokens), 0, 1)
        try:
            batch.n_tokens = len(tokens)
            for i, token in enumerate(tokens):
                batch.token[i] = token
                batch.pos[i] = at + i
                batch.n_seq_id[i] = 1
                batch.seq_id[i][0] = 0
                batch.logits[i] = 1
            code = llama_cpp.llama_decode(self.llm._ctx.ctx, batch)
        finally:
            llama_cpp.llama_batch_free(batch)
        if code != 0:
            raise RuntimeError(f"llama_decode returned {code}")
        ctx = self.llm._ctx.ctx
        return [
            np.ctypeslib.as_array(llama_cpp.llama_get_logits_ith(ctx, i), shape=(n_vocab,)).copy()
            for i in range(len(tokens))
        ]


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

        watcher = start_daemon("abort-watch", watch)
        try:
            yield
        finally:
            done.set()
            watcher.join()
            self._flag[0] = b"\0"


def system_info() -> str:
    """llama.cpp's own account of what it was built with ("AVX2 = 1 | ... | REPACK = 1");
    raises when llama-cpp-python is missing or broken."""
    import llama_cpp

    info: bytes = llama_cpp.llama_print_system_info()
    return info.decode("utf-8", "replace").strip()


class Vocabulary:
    """A GGUF's metadata and vocabulary, loaded by llama.cpp without the weights
    (`vocab_only`); a tokenizer for `templates.fim_markers`. Closed with `close()` (or as a
    context manager)."""

    def __init__(self, path: Path):
        import llama_cpp

        LLAMA_LOG.install()  # llama.cpp's loader speaks through our log, not on stderr
        mark = LLAMA_LOG.mark()
        params = llama_cpp.llama_model_default_params()
        params.vocab_only = True
        self._model = llama_cpp.llama_model_load_from_file(str(path).encode(), params)
        if not self._model:
            problems = LLAMA_LOG.since(LLAMA_LOG.problems, mark)
            cause = f" ({problems[-1]})" if problems else ""
            raise GenerationError(f"llama.cpp cannot read its vocabulary{cause}")
        self.vocab = llama_cpp.llama_model_get_vocab(self._model)

    def __enter__(self) -> Vocabulary:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def close(self) -> None:
        import llama_cpp

        if self._model:
            llama_cpp.llama_model_free(self._model)
            self._model = None

    def metadata(self) -> dict[str, str]:
        import llama_cpp

        metadata: dict[str, str] = {}
        key, value = ctypes.create_string_buffer(256), ctypes.create_string_buffer(512)
        for i in range(llama_cpp.llama_model_meta_count(self._model)):
            llama_cpp.llama_model_meta_key_by_index(self._model, i, key, len(key))
            llama_cpp.llama_model_meta_val_str_by_index(self._model, i, value, len(value))
            metadata[key.value.decode("utf-8", "replace")] = value.value.decode("utf-8", "replace")
        return metadata

    def n_params(self) -> int:
        import llama_cpp

        return int(llama_cpp.llama_model_n_params(self._model))

    def tokenize(self, text: str) -> list[int]:
        import llama_cpp

        data = text.encode("utf-8")
        out = (llama_cpp.llama_token * (len(data) + 8))()
        n = llama_cpp.llama_tokenize(self.vocab, data, len(data), out, len(out), False, True)
        return list(out[: max(n, 0)])

    def detokenize(self, ids: list[int]) -> str:
        import llama_cpp

        buf = ctypes.create_string_buffer(256)
        text = b""
        for token in ids:
            n = llama_cpp.llama_token_to_piece(self.vocab, token, buf, len(buf), 0, True)
            text += buf.raw[: max(n, 0)]
        return text.decode("utf-8", "replace")
