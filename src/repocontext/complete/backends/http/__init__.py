"""Backends behind a server, over the one HTTP client (`endpoint.py`): llama-server's own API
(`server:LlamaServerBackend`) and OpenAI's completions (`openai:OpenAICompletionsBackend`)."""

from .openai import OpenAICompletionsBackend
from .server import LlamaServerBackend, healing_grammar

__all__ = ["LlamaServerBackend", "OpenAICompletionsBackend", "healing_grammar"]
