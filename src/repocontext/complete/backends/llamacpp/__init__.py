"""llama.cpp in this process: `backend:LlamaCppBackend` (the load, the decode loop, token
healing and steering), `kvcache` (what the KV cache keeps, moves, holds and evaluates: a pure
planner), `native` (every private llama-cpp-python and C API use, behind names of its own)."""

from .backend import LlamaCppBackend
from .native import LLAMA_LOG, AbortSwitch

__all__ = [
    "AbortSwitch",
    "LLAMA_LOG",
    "LlamaCppBackend",
]
