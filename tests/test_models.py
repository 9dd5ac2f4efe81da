"""`repocontext models`: the generation models a user already has, where Ollama, LM Studio and
llama.cpp keep them, each described from its own vocabulary, never written; and the measured
cost of the default on this machine.

The GGUFs put in the fake tools' folders are the tiny models of tests/fim_models.py around
llama.cpp's real vocabularies (REPOCONTEXT_LLAMA_SOURCES, set by scripts/test)."""

from __future__ import annotations

import hashlib
import json
import os
from pathlib import Path

import pytest
from fim_models import FAMILIES, tiny_model_file, vocab_file

from repocontext.locations import models_dir

SOURCES = os.environ.get("REPOCONTEXT_LLAMA_SOURCES")
pytestmark = pytest.mark.skipif(
    not SOURCES, reason="set REPOCONTEXT_LLAMA_SOURCES (scripts/test sets it)"
)


def tiny(request, key: str) -> Path:
    assert SOURCES is not None
    family = FAMILIES[key]
    cache = request.config.cache.mkdir("fim-models")
    path, _ = tiny_model_file(cache, family, vocab_file(Path(SOURCES), family.vocab))
    return path


@pytest.fixture
def user_with_models(request, tmp_path, monkeypatch, home):
    """A home with a Qwen2.5-Coder in Ollama's store and a StarCoder2 in LM Studio's."""
    user = tmp_path / "user"
    monkeypatch.setenv("REPOCONTEXT_MODELS", str(models_dir()))  # the default stays assembled
    monkeypatch.setenv("HOME", str(user))
    monkeypatch.delenv("OLLAMA_MODELS", raising=False)
    monkeypatch.delenv("LLAMA_CACHE", raising=False)
    monkeypatch.delenv("XDG_CACHE_HOME", raising=False)
    ollama = user / ".ollama" / "models"
    qwen = tiny(request, "qwen2.5-coder").read_bytes()
    digest = hashlib.sha256(qwen).hexdigest()
    (ollama / "blobs").mkdir(parents=True)
    (ollama / "blobs" / f"sha256-{digest}").write_bytes(qwen)
    manifest = ollama / "manifests" / "registry.ollama.ai" / "library" / "qwen2.5-coder" / "1.5b"
    manifest.parent.mkdir(parents=True)
    manifest.write_text(
        json.dumps(
            {
                "schemaVersion": 2,
                "layers": [
                    {
                        "mediaType": "application/vnd.ollama.image.model",
                        "digest": f"sha256:{digest}",
                    },
                    {"mediaType": "application/vnd.ollama.image.license", "digest": "sha256:00"},
                ],
            }
        )
    )
    studio = user / ".lmstudio" / "models" / "second-state" / "StarCoder2-3B-GGUF"
    studio.mkdir(parents=True)
    (studio / "starcoder2-3b-Q4_K_M.gguf").write_bytes(tiny(request, "starcoder2").read_bytes())
    (studio / "notes.txt").write_text("not a model")
    return user


def snapshot(folder: Path) -> dict[str, tuple[int, int, str]]:
    return {
        str(p): (p.stat().st_size, p.stat().st_mtime_ns, hashlib.sha256(p.read_bytes()).hexdigest())
        for p in folder.rglob("*")
        if p.is_file()
    }


def test_models_lists_the_default_and_the_tools_models_and_measures_the_default(
    user_with_models, cli
):
    before = snapshot(user_with_models)
    out = cli("models", "--measure", "--json")
    assert out.code == 0, out.err
    models = {m["source"]: m for m in out.json()["models"]}
    assert set(models) == {"default", "ollama", "lm-studio"}

    default = models["default"]
    assert default["in_use"] and default["architecture"] == "gemma3"
    assert default["layout"] == "plain" and not default["fim"]  # gemma-3 has no FIM markers
    cost = default["cost"]
    assert cost["prompt_tokens"] > 100 and cost["load_s"] > 0
    assert cost["new_place_first_token_ms"] > 0 and cost["ms_per_token"] > 0
    # one more key reuses the cached prompt: it costs less than the whole prompt
    assert cost["next_key_first_token_ms"] < cost["new_place_first_token_ms"]

    qwen = models["ollama"]
    assert qwen["name"].startswith("qwen2.5-coder:1.5b") and qwen["layout"] == "qwen"
    assert qwen["fim"] and qwen["architecture"] == "llama" and not qwen["in_use"]
    assert "/.ollama/models/blobs/sha256-" in qwen["path"] and not qwen["cost"]
    starcoder = models["lm-studio"]
    assert starcoder["layout"] == "starcoder" and starcoder["fim"]
    assert starcoder["path"].endswith("StarCoder2-3B-GGUF/starcoder2-3b-Q4_K_M.gguf")

    assert snapshot(user_with_models) == before  # read, never written, moved or copied

    text = cli("models")
    assert text.code == 0
    lines = text.out.splitlines()
    assert any(line.startswith("* gemma-3-270m (default)") for line in lines)
    assert any("qwen2.5-coder:1.5b" in line and "qwen FIM" in line for line in lines)
    assert any("no FIM: the text after the cursor is not sent" in line for line in lines)


def test_a_configured_model_is_the_one_in_use_and_a_name_nobody_has_is_one_line(
    user_with_models, cli, home
):
    starcoder = next((user_with_models / ".lmstudio").rglob("*.gguf"))
    (home / "config.toml").write_text(f'[generation]\nmodel_path = "{starcoder}"\n')
    models = cli("models", "--json").json()["models"]
    in_use = [m for m in models if m["in_use"]]
    assert len(in_use) == 1 and in_use[0]["source"] == "config"
    assert in_use[0]["layout"] == "starcoder"
    assert sum(m["path"] == str(starcoder) for m in models) == 1  # listed once
    out = cli("models", "--measure", "deepseek-that-is-not-here")
    assert out.code == 1
    assert out.err.strip() == (
        "repocontext: no listed model matches 'deepseek-that-is-not-here'; "
        "`repocontext models` lists them"
    )


def test_files_that_are_no_model_are_listed_with_why_and_a_strange_manifest_is_skipped(
    user_with_models, cli
):
    studio = user_with_models / ".lmstudio" / "models" / "someone" / "broken"
    studio.mkdir(parents=True)
    (studio / "zeros.gguf").write_bytes(bytes(11_000_000))  # not GGUF at all
    (studio / "cut.gguf").write_bytes(b"GGUF" + bytes(11_000_000))  # a header and nothing
    ollama = user_with_models / ".ollama" / "models" / "manifests" / "registry.ollama.ai"
    evil = ollama / "library" / "evil" / "latest"
    evil.parent.mkdir(parents=True)
    outside = user_with_models / "elsewhere.gguf"  # a model, but not in Ollama's blobs
    outside.write_bytes(next((user_with_models / ".ollama").rglob("sha256-*")).read_bytes())
    layer = {"mediaType": "application/vnd.ollama.image.model", "digest": str(outside)}
    evil.write_text(json.dumps({"layers": [layer]}))
    (ollama / "library" / "huge").mkdir()
    (ollama / "library" / "huge" / "latest").write_bytes(b" " * 2_000_000)
    out = cli("models", "--json")
    assert out.code == 0, out.err
    models = {Path(m["path"]).name: m for m in out.json()["models"]}
    assert models["zeros.gguf"]["problem"] == "not a GGUF file"
    assert models["cut.gguf"]["problem"].startswith("llama.cpp cannot read its vocabulary")
    assert not any("evil" in m["name"] or "huge" in m["name"] for m in models.values())
    assert "elsewhere.gguf" not in models  # a manifest names a blob by digest, never a path
    assert {m["source"] for m in models.values()} == {"default", "ollama", "lm-studio"}
    text = cli("models").out
    assert "zeros.gguf" in text and "cannot be used: not a GGUF file" in text
