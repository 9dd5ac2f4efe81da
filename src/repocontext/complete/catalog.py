"""The generation models this machine has, and what one costs here: `repocontext models`.

People bring the code model they already have. This finds the GGUF files where the usual
tools keep them (Ollama's blobs, LM Studio's models folder, llama.cpp's download cache), beside
the default and the one the config names, and says of each what matters for completion: its
family and size, and the prompt layout it was trained on (a model without fill-in-the-middle
never sees the code after the cursor). Each file is only read, through llama.cpp's own loader
with its vocabulary alone (no weights): never copied, moved or written.

On request (`--measure`), one model is loaded whole and timed on a typical prompt: the first
token at a new place (the whole prompt evaluated), the first token after one more key (the KV
cache kept), and the time per generated token.
"""

from __future__ import annotations

import json
import os
import re
import time
from collections.abc import Iterator
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

from ..config import GenerationConfig
from ..errors import GenerationError
from ..terminal import printable
from .backends import GGUF_MAGIC, Control
from .templates import detect_template, fim_markers

# A GGUF smaller than this is no usable model (a vocabulary file, a test fixture's stub).
MIN_MODEL_BYTES = 10_000_000
OLLAMA_MODEL_LAYER = "application/vnd.ollama.image.model"
MAX_MANIFEST_BYTES = 1_000_000  # an Ollama manifest is a few hundred bytes: larger is no manifest
_OLLAMA_DIGEST = re.compile(r"sha256:[0-9a-f]{64}")


@dataclass
class ModelEntry:
    """One model as the list shows it."""

    name: str
    source: str  # default | config | ollama | lm-studio | llama.cpp
    path: str
    size_bytes: int
    architecture: str = ""
    parameters: str = ""  # the file's size label ("1.5B"), or a count from its metadata
    layout: str = ""  # the prompt layout (complete/templates.py): qwen, starcoder, ..., plain
    fim: bool = False
    problem: str = ""  # why it cannot be used, when it cannot
    cost: dict[str, float] = field(default_factory=dict)  # --measure: see `measure`

    def to_json(self) -> dict[str, Any]:
        return asdict(self)


def in_use(entries: list[ModelEntry], config: GenerationConfig) -> ModelEntry | None:
    """The entry the editor completes with: the configured model_path, else the default (none
    when a server is configured)."""
    if config.server_url:
        return None
    wanted = "config" if config.model_path else "default"
    return next((e for e in entries if e.source == wanted), None)


def pick(entries: list[ModelEntry], config: GenerationConfig, name: str) -> ModelEntry:
    """The model `--measure NAME` means: the first whose name or path holds NAME, or the one
    in use for an empty NAME."""
    if not name:
        chosen = in_use(entries, config) or next(e for e in entries if e.source == "default")
    else:
        wanted = name.lower()
        found = [e for e in entries if wanted in e.name.lower() or wanted in e.path.lower()]
        if not found:
            raise GenerationError(
                f"no listed model matches {name!r}; `repocontext models` lists them"
            )
        chosen = found[0]
    if chosen.problem:
        raise GenerationError(f"{chosen.name} cannot be measured: {chosen.problem}")
    return chosen


def listing(config: GenerationConfig, measured: str | None = None) -> list[ModelEntry]:
    """`find_models`, and with `measured` (a name, or "" for the one in use) that model timed
    here: what `repocontext models [--measure [NAME]]` and `:RepoContext model` show."""
    entries = find_models(config)
    if measured is not None:
        chosen = pick(entries, config, measured)
        chosen.cost = measure(Path(chosen.path), config)
    return entries


def report(entries: list[ModelEntry], config: GenerationConfig) -> str:
    """The list as `repocontext models` prints it: the one in use marked with `*`."""
    current = in_use(entries, config)
    lines = ["generation models on this machine (* completes in the editor):"]
    for e in entries:
        mark = "*" if e is current else " "
        # a file's name and its GGUF header are anyone's text: a newline in either would
        # split the line
        name, path = printable(e.name), printable(e.path)
        if e.problem:
            lines.append(f"{mark} {name}  [{e.source}]  cannot be used: {printable(e.problem)}")
            lines.append(f"    {path}")
            continue
        layout = f"{e.layout} FIM" if e.fim else "no FIM: the text after the cursor is not sent"
        size = f"{e.size_bytes / 2**20:,.0f} MB"
        facts = (printable(e.architecture), printable(e.parameters), size, layout)
        about = ", ".join(x for x in facts if x)
        lines.append(f"{mark} {name}  [{e.source}]  {about}")
        lines.append(f"    {path}")
        if e.cost:
            c = e.cost
            lines.append(
                f"    measured here: loads in {c['load_s']:.1f} s; a {c['prompt_tokens']:.0f}-token "
                f"prompt: first token {c['new_place_first_token_ms']:.0f} ms at a new place, "
                f"{c['next_key_first_token_ms']:.0f} ms after one more key; "
                f"{c['ms_per_token']:.0f} ms a token"
            )
    if config.server_url:
        lines.append("[generation] server_url is set: completions come from that server")
    if not any(e.cost for e in entries):
        lines.append("`repocontext models --measure [NAME]` times one here")
    return "\n".join(lines)


def model_folders(home: Path | None = None) -> dict[str, list[Path]]:
    """Where each tool keeps its models (its own variable first, then its default places)."""
    home = home or Path.home()
    env = os.environ
    ollama = [Path(env["OLLAMA_MODELS"])] if env.get("OLLAMA_MODELS") else []
    ollama += [home / ".ollama" / "models", Path("/usr/share/ollama/.ollama/models")]
    lm_studio = [home / ".lmstudio" / "models", home / ".cache" / "lm-studio" / "models"]
    llama = [Path(env["LLAMA_CACHE"])] if env.get("LLAMA_CACHE") else []
    cache = Path(env.get("XDG_CACHE_HOME") or home / ".cache")
    llama += [cache / "llama.cpp", home / "Library" / "Caches" / "llama.cpp"]
    return {"ollama": ollama, "lm-studio": lm_studio, "llama.cpp": llama}


def find_models(config: GenerationConfig, home: Path | None = None) -> list[ModelEntry]:
    """The default, the configured model_path, and every GGUF in the tools' folders, each
    described from its own vocabulary and metadata; one file is listed once."""
    from .models import default_model_path

    found: list[tuple[str, str, Path]] = []
    entries: list[ModelEntry] = []
    try:
        found.append(("gemma-3-270m (default)", "default", default_model_path()))
    except GenerationError as exc:
        entries.append(ModelEntry("gemma-3-270m (default)", "default", "", 0, problem=str(exc)))
    if config.model_path:
        path = Path(config.model_path).expanduser()
        found.append((path.name, "config", path))
    folders = model_folders(home)
    for folder in folders["ollama"]:
        found.extend((name, "ollama", p) for name, p in _ollama_models(folder))
    for source in ("lm-studio", "llama.cpp"):
        for folder in folders[source]:
            found.extend((p.stem, source, p) for p in _gguf_files(folder))
    seen = set()
    for name, source, path in found:
        key = _identity(path)
        if key in seen:
            continue
        seen.add(key)
        entries.append(describe(name, source, path))
    return entries


def describe(name: str, source: str, path: Path) -> ModelEntry:
    """What a GGUF is, from its vocabulary and metadata alone (llama.cpp's vocab-only load)."""
    try:
        size = path.stat().st_size
        with open(path, "rb") as fh:
            magic = fh.read(4)
    except OSError as exc:
        return ModelEntry(name, source, str(path), 0, problem=f"cannot be read ({exc.strerror})")
    entry = ModelEntry(name, source, str(path), size)
    if magic != GGUF_MAGIC:
        entry.problem = "not a GGUF file"
        return entry
    try:
        metadata, markers = _read_vocabulary(path)
    except GenerationError as exc:
        entry.problem = str(exc)
        return entry
    template = detect_template(markers, metadata)
    entry.architecture = metadata.get("general.architecture", "")
    entry.parameters = metadata.get("general.size_label", "") or metadata.get("parameters", "")
    entry.layout, entry.fim = template.name, template.fim
    if source != "default" and metadata.get("general.name"):
        entry.name = f"{entry.name} ({metadata['general.name']})"
    return entry


def measure(path: Path, config: GenerationConfig) -> dict[str, float]:
    """One model loaded as the editor loads it and timed here on a typical prompt (this
    package's own source around a cursor, in the model's layout): seconds to load, the prompt's
    tokens, the first token at a new place and after one more key (milliseconds), and
    milliseconds per generated token."""
    from .backends.llamacpp import LlamaCppBackend

    started = time.perf_counter()
    backend = LlamaCppBackend(
        str(path),
        n_ctx=config.n_ctx,
        threads=config.threads,
        template=config.template,
        extra_buffers=config.extra_buffers,
        cache_reuse=config.cache_reuse,
    )
    load_s = time.perf_counter() - started
    prefix, suffix = _typical_text(config)
    _, prompt = backend.template.build("complete/engine.py", "python", prefix, suffix, [])
    new_place = _timed(backend, prompt, config.max_tokens)
    next_key = _timed(backend, prompt.replace(prefix, prefix + "s", 1), 1)
    return {
        "load_s": round(load_s, 2),
        "prompt_tokens": float(backend.count_tokens(prompt)),
        "new_place_first_token_ms": new_place["first_token_ms"],
        "next_key_first_token_ms": next_key["first_token_ms"],
        "ms_per_token": new_place["ms_per_token"],
    }


def _timed(backend: Any, prompt: str, max_tokens: int) -> dict[str, float]:
    started = time.monotonic()
    gen = backend.generate(prompt, Control(max_tokens=max_tokens))
    ended = time.monotonic()
    first = gen.first_token_at or ended
    per_token = (ended - first) / (gen.tokens_generated - 1) if gen.tokens_generated > 1 else 0.0
    return {
        "first_token_ms": round((first - started) * 1000, 1),
        "ms_per_token": round(per_token * 1000, 1),
    }


def _typical_text(config: GenerationConfig) -> tuple[str, str]:
    """A cursor in the middle of real code (complete/engine.py of this package): the lines
    a request would send before it (prefix_lines) and after it (suffix_lines)."""
    lines = (Path(__file__).parent / "engine.py").read_text(encoding="utf-8").split("\n")
    at = min(len(lines) - 1, 220)
    before = lines[max(0, at - config.prefix_lines) : at]
    cut = lines[at][: len(lines[at]) // 2]
    after = [lines[at][len(cut) :]] + lines[at + 1 : at + 1 + config.suffix_lines]
    return "\n".join(before + [cut]), "\n".join(after)


def _read_vocabulary(path: Path) -> tuple[dict[str, str], set[str]]:
    """The GGUF's metadata and which FIM markers its vocabulary holds as single tokens,
    loaded by llama.cpp without the weights."""
    from .backends.llamacpp.native import Vocabulary

    with Vocabulary(path) as vocabulary:
        metadata = vocabulary.metadata()
        if not metadata.get("general.size_label"):
            metadata["parameters"] = _count(vocabulary.n_params())
        return metadata, fim_markers(vocabulary)


def _count(n: int) -> str:
    return f"{n / 1e9:.1f}B" if n >= 1e9 else f"{n / 1e6:.0f}M" if n > 0 else ""


def _ollama_models(folder: Path) -> Iterator[tuple[str, Path]]:
    """Ollama's models: each manifest (`manifests/<registry>/<namespace>/<name>/<tag>`) names
    its weights' blob by digest (`blobs/sha256-<hex>`)."""
    manifests = folder / "manifests"
    if not manifests.is_dir():
        return
    for manifest in sorted(p for p in manifests.rglob("*") if p.is_file()):
        try:
            with open(manifest, "rb") as fh:
                data = fh.read(MAX_MANIFEST_BYTES + 1)
            if len(data) > MAX_MANIFEST_BYTES:
                continue
            layers = json.loads(data).get("layers") or []
        except (OSError, ValueError, AttributeError):
            continue
        for layer in layers:
            if isinstance(layer, dict) and layer.get("mediaType") == OLLAMA_MODEL_LAYER:
                digest = str(layer.get("digest", ""))
                if not _OLLAMA_DIGEST.fullmatch(digest):
                    continue  # a name, not a digest: never a path out of the blobs folder
                blob = folder / "blobs" / digest.replace(":", "-")
                if blob.is_file():
                    name, tag = manifest.parent.name, manifest.name
                    yield f"{name}:{tag}", blob


def _gguf_files(folder: Path) -> Iterator[Path]:
    if not folder.is_dir():
        return
    for path in sorted(folder.rglob("*.gguf")):
        try:
            if path.is_file() and path.stat().st_size >= MIN_MODEL_BYTES:
                yield path
        except OSError:
            continue


def _identity(path: Path) -> tuple[int, int] | str:
    try:
        st = path.stat()
    except OSError:
        return str(path)
    return (st.st_dev, st.st_ino)
