"""Generation backends: the protocol (`base`), llama.cpp in this process (`llamacpp/`), servers
over HTTP (`http/`), and the registry that picks one from the configuration (`registry`).
Importing this package loads neither llama-cpp-python nor the HTTP client."""

from .base import (
    GGUF_MAGIC,
    Backend,
    Callbacks,
    Control,
    Generation,
    Hooks,
    Streamed,
    TokenCounts,
    advance,
    check_model_file,
)
from .registry import REGISTRY, generation_backend, server_backend

__all__ = [
    "Backend",
    "Callbacks",
    "Control",
    "GGUF_MAGIC",
    "Generation",
    "Hooks",
    "REGISTRY",
    "Streamed",
    "TokenCounts",
    "advance",
    "check_model_file",
    "generation_backend",
    "server_backend",
]
