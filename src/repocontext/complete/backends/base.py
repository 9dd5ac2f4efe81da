"""What a generation backend is (`Backend`), and what it shares with the others. The two:
llama.cpp in-process (llamacpp/) and a server over HTTP (http/: llama-server's API or OpenAI's
completions). One interface:

    generate(prompt, control) -> Generation
    pending(prompt, control) -> int   (what generate would evaluate now; None: unknown)
    count_tokens(text) -> int         (cached per text: packing asks for every snippet)
    template, n_ctx, name, describe()

`control` holds what is asked for (tokens, deadline, healing, ...); its `hooks` (`Hooks`) are
asked between prompt-evaluation chunks and between tokens whether to go on (cancelled by a
newer request, asked to restart with injected context) and where the text should stop; every
new piece of text goes to `control.hooks.emit` as it arrives.

"""

from __future__ import annotations

import os
import threading
import time
from collections import OrderedDict
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Protocol

from ...errors import GenerationError
from ..steering import SteeringFacts
from ..templates import PromptTemplate

GGUF_MAGIC = b"GGUF"


class Hooks(Protocol):
    """What a running generation asks its caller between prompt chunks and tokens, and what
    it tells it as text comes (the one interface a backend calls back through)."""

    def cancelled(self) -> bool:
        """Stop: a newer request came, or the user left."""
        ...

    def abandoned(self) -> bool:
        """Cancelled because the user left the place: a prompt chunk running is stopped
        inside llama.cpp too (a newer key's cancel lets it finish: the next prompt shares it)."""
        ...

    def restart(self) -> bool:
        """A better prompt is waiting: stop evaluating."""
        ...

    def stop_at(self, text: str) -> int | None:
        """Where the text so far should end (None: not yet)."""
        ...

    def emit(self, text: str) -> None:
        """The whole text so far, on each change."""
        ...

    def token(self, start: int, end: int, logprob: float) -> None:
        """Each generated token: (start, end) of its characters in the text, and its
        log-probability (the gates' confidence; a backend that cannot say calls it with nan)."""
        ...

    def steering(self) -> SteeringFacts | None:
        """What the decoder is steered by (complete/steering/): the names in scope, the
        receiver's members, the signatures of what may be called, text to copy from; asked
        when the first token is chosen (the context may arrive while the prompt is
        evaluated), and again while its answer says the context is still coming. None: the
        model's own choice."""
        ...


@dataclass
class Callbacks:
    """`Hooks` made of functions; each default asks nothing and tells no one."""

    cancelled: Callable[[], bool] = lambda: False
    abandoned: Callable[[], bool] = lambda: False
    restart: Callable[[], bool] = lambda: False
    stop_at: Callable[[str], int | None] = lambda text: None
    emit: Callable[[str], None] = lambda text: None
    token: Callable[[int, int, float], None] = lambda start, end, logprob: None
    steering: Callable[[], SteeringFacts | None] = lambda: None


@dataclass
class Control:
    """What a generation is asked for, and who it asks and tells while it runs (`hooks`)."""

    max_tokens: int = 64
    # time.monotonic() after which no more tokens are generated (in-process, at least
    # MIN_GENERATION_SECONDS after the prompt is evaluated; a server call is cut off there)
    deadline: float = float("inf")
    # a suggestion already offered: the first token must differ from its first (a second
    # candidate, the second-best first token followed greedily)
    avoid: str | None = None
    # tokens of the context kept free for the answer (None: max_tokens); a warming request
    # generates nothing but must cut a long prompt exactly as the request after it will
    reserve: int | None = None
    # token healing (complete/healing.py): where the text before the cursor ends in the prompt
    # (a character offset) and how many characters before it are the line being typed, which
    # the backend may back up; 0: not healed
    cursor_at: int | None = None
    heal_chars: int = 0
    # guess the next tokens from the prompt and check them in one batch (complete/drafts.py;
    # in-process only)
    drafts: bool = False
    hooks: Hooks = field(default_factory=Callbacks)


@dataclass
class Generation:
    text: str = ""
    status: str = "ok"  # ok | cancelled | restart | deadline (a failure raises instead)
    tokens_evaluated: int = 0
    tokens_reused: int = 0
    tokens_generated: int = 0
    tokens_drafted: int = 0  # of those, guessed from the prompt and confirmed in a batch
    first_token_at: float | None = None  # time.monotonic()
    eval_seconds: float = 0.0
    timings: dict[str, float] = field(default_factory=dict)


class Backend(Protocol):
    """What the completion engine needs of a model, in-process or behind a server."""

    name: str
    n_ctx: int
    template: PromptTemplate

    def count_tokens(self, text: str) -> int: ...

    def generate(self, prompt: str, control: Control) -> Generation: ...

    def describe(self) -> dict[str, Any]: ...

    def pending(self, prompt: str, control: Control) -> int | None:
        """The prompt tokens `generate` would evaluate now (None: it cannot tell)."""
        ...

    def sibling(self) -> Backend:
        """A backend with a KV cache of its own for speculative prompts, or itself."""
        ...


class TokenCounts:
    """Token counts of recent texts: the context packer asks for each candidate snippet at
    each keystroke, and the same snippets come back (an HTTP round trip each for a server)."""

    def __init__(self, count: Callable[[str], int], keep: int = 2048):
        self._count = count
        self._keep = keep
        self._known: OrderedDict[str, int] = OrderedDict()
        self._lock = threading.Lock()

    def __call__(self, text: str) -> int:
        with self._lock:
            if text in self._known:
                self._known.move_to_end(text)
                return self._known[text]
        n = self._count(text)
        with self._lock:
            self._known[text] = n
            if len(self._known) > self._keep:
                self._known.popitem(last=False)
        return n


def check_model_file(path: str) -> Path:
    """A clear refusal for a missing file, a file that is not GGUF, or one too big for memory."""
    p = Path(path).expanduser()
    if not p.is_file():
        raise GenerationError(
            f"the model file {p} does not exist; set [generation] model_path "
            "or pass --model with a GGUF file"
        )
    with open(p, "rb") as fh:
        magic = fh.read(4)
    if magic != GGUF_MAGIC:
        raise GenerationError(
            f"{p} is not a GGUF model (it does not start with 'GGUF'); pass a llama.cpp GGUF file"
        )
    available = _available_memory()
    size = p.stat().st_size
    if available is not None and size * 1.2 > available:
        raise GenerationError(
            f"the model {p.name} needs about {size * 1.2 / 2**30:.1f} GiB but only "
            f"{available / 2**30:.1f} GiB of memory is free; pick a smaller quantisation, or "
            "run it in llama-server ([generation] server_url)"
        )
    return p


def _available_memory() -> int | None:
    try:
        with open("/proc/meminfo") as fh:
            for line in fh:
                if line.startswith("MemAvailable:"):
                    return int(line.split()[1]) * 1024
    except OSError:
        pass
    try:
        return os.sysconf("SC_AVPHYS_PAGES") * os.sysconf("SC_PAGE_SIZE")
    except (ValueError, OSError, AttributeError):
        return None


def advance(text: str, control: Control) -> tuple[str, bool]:
    """The text so far, cut where the stop rules say, sent to the caller; True to stop."""
    end = control.hooks.stop_at(text)
    if end is not None:
        text = text[:end]
    control.hooks.emit(text)
    return text, end is not None


class Streamed:
    """A server's answer as it streams in, piece by piece: the generation's counts and first
    token time, each token reported to `control`, and the text as the stop rules cut it."""

    def __init__(self, out: Generation, control: Control):
        self.out, self.control = out, control
        self.text = ""
        self.full = ""  # not cut by the stop rules

    def add(self, piece: str, logprob: float) -> bool:
        """One more piece (a token) with its log-probability; True when the text is to stop."""
        if self.out.first_token_at is None:
            self.out.first_token_at = time.monotonic()
        self.out.tokens_generated += 1
        self.control.hooks.token(len(self.full), len(self.full) + len(piece), logprob)
        self.full += piece
        self.text, stop = advance(self.text + piece, self.control)
        return stop
