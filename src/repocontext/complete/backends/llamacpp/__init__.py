"""llama.cpp in this process: `backend:LlamaCppBackend`."""

from .backend import LLAMA_LOG, AbortSwitch, LlamaCppBackend

__all__ = ["LLAMA_LOG", "AbortSwitch", "LlamaCppBackend"]
