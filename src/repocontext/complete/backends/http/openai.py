"""Any server that speaks OpenAI's completions API (`/v1/completions`): vLLM, LM Studio,
Ollama, llama-server, a team's gateway.

The prompt is the one the in-process model gets: the family's fill-in-the-middle layout built
here (complete/templates.py), with its markers as text the server tokenizes as special
tokens (llama-server, vLLM and Ollama all do). The API has no token counter and no view of
the server's cache, so token counts are estimated from characters and `pending` is unknown;
the server's own prefix cache, where it has one, does the rest.

The server is asked at start-up which models it serves (`/v1/models`): a model name that is
not among them is refused there with the names it does serve, rather than at every key.
"""

from __future__ import annotations

import math
import time
from typing import Any

from ....endpoint import DONE, Endpoint, server_events, server_reason
from ....errors import GenerationError
from ...templates import TEMPLATES, template_for_name
from ..base import Control, Generation, Streamed, TokenCounts

# Characters per token for the budget's estimate: code tokenizers give 3-4; the low end keeps
# a packed prompt inside the server's context.
CHARS_PER_TOKEN = 3.0
MAX_STOPS = 4  # OpenAI's API takes at most four stop strings (vLLM and Ollama more)


class OpenAICompletionsBackend:
    """`/v1/completions`, streamed, greedy; `url` is the server's address, with or without
    its `/v1`."""

    name = "openai"

    def __init__(
        self,
        url: str,
        model: str = "",
        template: str = "auto",
        n_ctx: int = 4096,
        timeout: float = 10.0,
    ):
        base = url.rstrip("/")
        if not base.endswith("/v1"):
            base += "/v1"
        self.endpoint = Endpoint(base, "[generation] server_url", GenerationError, timeout)
        self.shown, self.timeout, self.n_ctx = self.endpoint.shown, timeout, n_ctx
        self.model = self._served(model)
        self.metadata = {"general.name": self.model}
        self.template = TEMPLATES[template] if template != "auto" else template_for_name(self.model)
        self._counts = TokenCounts(lambda text: math.ceil(len(text) / CHARS_PER_TOKEN))

    def count_tokens(self, text: str) -> int:
        return self._counts(text)

    def sibling(self) -> OpenAICompletionsBackend:
        """The server's cache is its own: speculation shares this backend."""
        return self

    def pending(self, prompt: str, control: Control) -> int | None:
        return None

    def describe(self) -> dict[str, Any]:
        return {"server": self.shown, "model": self.model, "api": "openai"}

    def generate(self, prompt: str, control: Control) -> Generation:
        out = Generation()
        payload: dict[str, Any] = {
            "model": self.model,
            "prompt": prompt,
            "max_tokens": control.max_tokens,
            "stream": True,
            "temperature": 0,
            "logprobs": 1,  # each token's log-probability: the confidence gate's input
            "stop": list(self.template.eot)[:MAX_STOPS],
        }
        if not payload["stop"]:
            del payload["stop"]
        answer = Streamed(out, control)
        ended = False  # the server said the answer is whole (a finish reason, or [DONE])
        # the reply ends by the key's deadline, or the endpoint's time-out if that is sooner
        deadline = min(control.deadline, time.monotonic() + self.timeout)
        try:
            # left early (a newer key, the deadline), the stream's connection is closed: the
            # server stops
            with self.endpoint.reply("POST", "/completions", payload, deadline) as reply:
                if reply.status != 200:
                    raise GenerationError(
                        f"the server at {self.shown} refused the completion ({reply.status})"
                        f"{server_reason(reply.body())}; check [generation] server_url and "
                        "server_model"
                    )
                for data in server_events(reply):
                    if data is DONE:
                        ended = True
                        break
                    if control.hooks.cancelled():
                        out.status = "cancelled"
                        break
                    if time.monotonic() > control.deadline:
                        out.status = "deadline"
                        break
                    usage = data.get("usage") or {}
                    out.tokens_evaluated = int(usage.get("prompt_tokens") or out.tokens_evaluated)
                    choice = (data.get("choices") or [{}])[0]
                    piece = choice.get("text") or ""
                    if piece and answer.add(piece, _logprob(choice)):
                        ended = True
                        break
                    if choice.get("finish_reason"):
                        ended = True
                        break
            if out.status == "ok" and not ended:
                raise GenerationError(
                    f"the server at {self.shown} closed the stream before the answer ended; "
                    "it may have stopped or run out of memory"
                )
        except GenerationError as exc:
            if getattr(exc, "kind", None) is None:
                raise  # ours, above: already the one line
            out.status = self.endpoint.stream_failed(exc)
        except (ValueError, AttributeError, TypeError) as exc:  # an event of another shape
            out.status = self.endpoint.stream_failed(self.endpoint.not_answering(exc))
        out.text = answer.text
        return out

    def _served(self, model: str) -> str:
        """The model to ask for: `model` if the server serves it, the one it serves if `model`
        is empty; else a clear refusal naming what it serves."""
        answer = self.endpoint.json("GET", "/models")
        served = [str(m.get("id")) for m in (answer.get("data") or []) if isinstance(m, dict)]
        if model and (model in served or not served):
            return model
        if not model and len(served) == 1:
            return served[0]
        names = ", ".join(served[:8]) or "none"
        if not model:
            raise GenerationError(
                f"the server at {self.shown} serves several models ({names}); "
                "name one in [generation] server_model"
            )
        raise GenerationError(
            f"the server at {self.shown} has no model {model!r} (it serves: {names}); "
            "fix [generation] server_model"
        )


def _logprob(choice: dict[str, Any]) -> float:
    """The streamed token's log-probability (`logprobs.token_logprobs`), nan when absent."""
    logprobs = choice.get("logprobs") or {}
    values = logprobs.get("token_logprobs") if isinstance(logprobs, dict) else None
    if values and isinstance(values[0], (int, float)):
        return float(values[0])
    return math.nan
