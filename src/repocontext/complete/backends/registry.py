"""Which backend a `[generation]` configuration gets, as `search/retrievers.py`'s REGISTRY picks
retrievers: a name and how to make it. llama.cpp in this process unless a server is configured
(a model file asked for by name, `--model`, is always loaded here); a server as `server_api`
says, and `auto` asks it: a llama-server answers `/props`, anything else is spoken to through
the OpenAI API. Each maker imports its backend when called: llama-cpp-python is loaded only
for a local model, the HTTP client only for a server."""

from __future__ import annotations

from collections.abc import Callable

from ...config import GenerationConfig
from ...errors import GenerationError
from .base import Backend


def _llama_cpp(config: GenerationConfig, model: str | None, timeout: float) -> Backend:
    from ..models import default_model_path
    from .llamacpp import LlamaCppBackend

    return LlamaCppBackend(
        model or config.model_path or str(default_model_path()),
        n_ctx=config.n_ctx,
        threads=config.threads,
        template=config.template,
        extra_buffers=config.extra_buffers,
        cache_reuse=config.cache_reuse,
        abort_long_chunks=config.abort_long_chunks,
    )


def _llama_server(config: GenerationConfig, model: str | None, timeout: float) -> Backend:
    from .http import LlamaServerBackend

    return LlamaServerBackend(config.server_url, config.template, timeout)


def _openai(config: GenerationConfig, model: str | None, timeout: float) -> Backend:
    from .http import OpenAICompletionsBackend

    return OpenAICompletionsBackend(
        config.server_url, config.server_model, config.template, config.n_ctx, timeout
    )


# name -> how to make it from the configuration, the model file asked for, and the time a
# server has to answer. "llama.cpp" is the local model; the others are `server_api`'s choices.
REGISTRY: dict[str, Callable[[GenerationConfig, str | None, float], Backend]] = {
    "llama.cpp": _llama_cpp,
    "llama-server": _llama_server,
    "openai": _openai,
}


def generation_backend(
    config: GenerationConfig, model: str | None = None, timeout: float = 10.0
) -> Backend:
    """The configured server if there is one (and no model file was asked for), else
    llama.cpp in-process with `model` or the configured or default GGUF."""
    if config.server_url and not model:
        return server_backend(config, timeout)
    return REGISTRY["llama.cpp"](config, model, timeout)


def server_backend(config: GenerationConfig, timeout: float = 10.0) -> Backend:
    """The backend for `config.server_url`, as `server_api` says; `auto` asks the server: a
    llama-server answers `/props`, anything else is spoken to through the OpenAI API."""
    api = config.server_api
    if api == "auto":
        try:
            return REGISTRY["llama-server"](config, None, timeout)
        except GenerationError as exc:
            if getattr(exc, "status", None) is None:
                raise  # nothing answered at all: say so, not that the API is wrong
            api = "openai"
    return REGISTRY[api](config, None, timeout)
