"""A llama-server reached over HTTP, for models that do not fit in this process or run on
another machine."""

from __future__ import annotations

import math
import time
from typing import Any

from ....endpoint import Endpoint, server_events
from ....errors import GenerationError
from ...templates import (
    FIM_PROBE_TEXT,
    TEMPLATES,
    PromptTemplate,
    detect_template,
    fim_markers_in_pieces,
)
from ..base import Control, Generation, Streamed, TokenCounts


class LlamaServerBackend:
    """A llama-server reached over HTTP (`/completion` with `cache_prompt`), for models that do
    not fit in-process or run on another machine. The server keeps its own KV cache."""

    name = "llama-server"

    def __init__(self, url: str, template: str = "auto", timeout: float = 10.0):
        self.endpoint = Endpoint(url, "[generation] server_url", GenerationError, timeout)
        self.url, self.shown, self.timeout = self.endpoint.url, self.endpoint.shown, timeout
        props = self._get("/props")
        self.n_ctx = int(props.get("default_generation_settings", {}).get("n_ctx", 4096))
        self.metadata = {"general.name": str(props.get("model_path", ""))}
        self.layout_problem = ""
        self.template = TEMPLATES[template] if template != "auto" else self._detected_template()
        self._counts = TokenCounts(
            lambda text: len(self._post("/tokenize", {"content": text}).get("tokens", []))
        )

    def count_tokens(self, text: str) -> int:
        return self._counts(text)

    def _detected_template(self) -> PromptTemplate:
        """The layout from the server's own vocabulary, as the in-process model's: its
        /tokenize parses special tokens and shows each token's piece, so one request over
        every marker says which it has. A server too slow to answer it now is prompted
        plainly (said by `describe`) rather than refused: /props answered."""
        try:
            answer = self._post("/tokenize", {"content": FIM_PROBE_TEXT, "with_pieces": True})
        except GenerationError as exc:
            self.layout_problem = f"its vocabulary could not be read ({exc}); set template"
            return TEMPLATES["plain"]
        pieces = [t.get("piece") for t in answer.get("tokens", []) if isinstance(t, dict)]
        markers = fim_markers_in_pieces([p for p in pieces if isinstance(p, str)])
        return detect_template(markers, self.metadata)

    def sibling(self) -> LlamaServerBackend:
        """The server keeps one cache per slot: speculation shares this one."""
        return self

    def pending(self, prompt: str, control: Control) -> int | None:
        """Unknown: the server's cache is its own (the engine then takes the prompt it wants)."""
        return None

    def describe(self) -> dict[str, Any]:
        out = {"server": self.shown, "model": self.metadata["general.name"]}
        return out | ({"layout_problem": self.layout_problem} if self.layout_problem else {})

    def generate(self, prompt: str, control: Control) -> Generation:
        out = Generation()
        prompt, healed = self._healed(prompt, control)
        payload = {
            "prompt": prompt,
            "n_predict": control.max_tokens + (1 if healed else 0),  # healed: one spelled again
            "stream": True,
            "cache_prompt": True,
            "temperature": 0,
            "top_k": 1,
            "n_probs": 1,  # each token's probability: the confidence gate's input
            "stop": list(self.template.eot),
        }
        if healed:  # the answer must begin with the characters backed up (complete/healing.py)
            payload["grammar"] = healing_grammar(healed)
        if control.avoid:
            # the server cannot ban a token for the first step only: it is banned throughout
            first = self._post("/tokenize", {"content": control.avoid}).get("tokens", [])[:1]
            payload["logit_bias"] = [[first[0], False]] if first else []
        answer = Streamed(out, control)
        spelled = ""  # while healing: what the answer spelled of the backed-up characters
        # the reply ends by the key's deadline, or the endpoint's time-out if that is sooner
        deadline = min(control.deadline, time.monotonic() + self.timeout)
        try:
            with self.endpoint.reply("POST", "/completion", payload, deadline) as reply:
                if reply.status != 200:
                    raise GenerationError(
                        f"the llama-server at {self.shown} answered {reply.status}"
                    )
                for data in server_events(reply):
                    if control.hooks.cancelled():
                        out.status = "cancelled"
                        break
                    if time.monotonic() > control.deadline:
                        out.status = "deadline"
                        break
                    piece = data.get("content", "")
                    if healed and piece:  # what the user typed is not shown again
                        spelled += piece
                        piece = spelled[len(healed) :] if len(spelled) > len(healed) else ""
                        if piece:
                            healed = ""
                    if piece and answer.add(piece, _logprob(data)):
                        break
                    if data.get("stop"):
                        timings = data.get("timings", {})
                        out.tokens_evaluated = int(timings.get("prompt_n", 0))
                        break
        except GenerationError as exc:
            out.status = self.endpoint.stream_failed(exc)
        except ValueError as exc:  # an event that is not JSON
            out.status = self.endpoint.stream_failed(self.endpoint.not_answering(exc))
        out.text = answer.text
        return out

    def _healed(self, prompt: str, control: Control) -> tuple[str, str]:
        """The prompt without its last token before the cursor when the line typed so far ends
        inside it, and that token's text (complete/healing.py); the server is asked for the
        token (one `/tokenize` of the text before the cursor, which the KV cache does not
        depend on). A piece that is not plain text, or lies outside the line, is not healed."""
        at = control.cursor_at
        if control.heal_chars <= 0 or at is None or not 0 < at <= len(prompt):
            return prompt, ""
        before = prompt[:at]
        try:
            pieces = self._post("/tokenize", {"content": before, "with_pieces": True})
        except GenerationError:
            return prompt, ""
        tokens = pieces.get("tokens") or []
        last = tokens[-1] if tokens else None
        piece = last.get("piece") if isinstance(last, dict) else None
        line = before[-control.heal_chars :]
        if not isinstance(piece, str) or not piece or not line.endswith(piece):
            return prompt, ""
        return before[: len(before) - len(piece)] + prompt[at:], piece

    def _get(self, path: str) -> dict[str, Any]:
        answer: dict[str, Any] = self.endpoint.json("GET", path)
        return answer

    def _post(self, path: str, payload: dict[str, Any]) -> dict[str, Any]:
        answer: dict[str, Any] = self.endpoint.json("POST", path, payload)
        return answer


def healing_grammar(text: str) -> str:
    """A GBNF grammar for an answer that begins with `text` and goes on with anything."""
    return f'root ::= "{"".join(map(_gbnf_char, text))}" [^\\x00]*'


def _gbnf_char(c: str) -> str:
    if c.isprintable() and c not in '"\\':
        return c
    n = ord(c)
    return f"\\x{n:02x}" if n < 0x100 else f"\\u{n:04x}" if n < 0x10000 else f"\\U{n:08x}"


def _logprob(data: dict[str, Any]) -> float:
    """The streamed token's log-probability: llama-server sends `logprob` (newer) or `prob`
    (older) under `completion_probabilities`; nan when it sends neither."""
    probs = data.get("completion_probabilities") or [{}]
    first = probs[0] if isinstance(probs, list) and probs else {}
    if "logprob" in first:
        return float(first["logprob"])
    for alt in first.get("probs", []):  # older servers: the top candidates with their `prob`
        if alt.get("tok_str") == first.get("content") and alt.get("prob", 0) > 0:
            return math.log(alt["prob"])
    return math.nan
