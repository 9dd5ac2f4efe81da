"""Generation backends: the protocol (`base`), llama.cpp in this process (`llamacpp/`) and
servers over HTTP (`http/`). Importing this package loads neither llama-cpp-python nor the
HTTP client."""

from .base import (
    GGUF_MAGIC,
    Backend,
    Control,
    Generation,
    Streamed,
    TokenCounts,
    advance,
    check_model_file,
)

__all__ = [
    "GGUF_MAGIC",
    "Backend",
    "Control",
    "Generation",
    "Streamed",
    "TokenCounts",
    "advance",
    "check_model_file",
]
