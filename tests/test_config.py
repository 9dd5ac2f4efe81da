"""The config file: every option checked at load, one line naming the key, the value and what
is allowed; the documented defaults are the code's."""

from __future__ import annotations

from dataclasses import fields

import pytest

from repocontext.complete.templates import TEMPLATES
from repocontext.config import TEMPLATE_NAMES, EmbeddingConfig, GenerationConfig, load_config
from repocontext.errors import ConfigError

BAD = [
    (
        '[generation]\ntemplate = "nope"\n',
        "`generation.template` in .* is 'nope'; use one of: auto, qwen",
    ),
    ("[generation]\nn_ctx = -5\n", "`generation.n_ctx` in .* is -5; it must be at least 256"),
    ("[generation]\nmax_tokens = 0\n", "`generation.max_tokens` in .* is 0; it must be at least 1"),
    ("[embedding]\ndims = -1\n", "`embedding.dims` in .* is -1; it must be at least 1"),
    (
        "[embedding]\nmin_similarity = 2\n",
        "`embedding.min_similarity` .* is 2.0; it must be at most 1",
    ),
    ('[generation]\nextra_buffers = "sometimes"\n', "use one of: auto, on, off"),
    ('[generation]\nserver_url = "localhost:8012"\n', "give an http:// or https:// address"),
    ("[generation]\nhard_deadline_ms = true\n", "should be a int, not bool"),
    ("[generation]\nbudget = 3\n", "unknown option `generation.budget`"),
]


@pytest.mark.parametrize("text,message", BAD)
def test_a_wrong_value_is_one_line_naming_key_value_and_what_is_allowed(tmp_path, text, message):
    path = tmp_path / "config.toml"
    path.write_text(text)
    with pytest.raises(ConfigError, match=message) as err:
        load_config(path)
    assert "\n" not in str(err.value)


def test_every_default_passes_its_own_check(tmp_path):
    lines = ["[embedding]"]
    lines += [
        f"{f.name} = {_toml(getattr(EmbeddingConfig(), f.name))}" for f in fields(EmbeddingConfig)
    ]
    lines += ["[generation]"]
    lines += [
        f"{f.name} = {_toml(getattr(GenerationConfig(), f.name))}" for f in fields(GenerationConfig)
    ]
    path = tmp_path / "config.toml"
    path.write_text("\n".join(lines) + "\n")
    assert load_config(path).generation == GenerationConfig()


def test_the_template_choices_are_the_templates():
    assert set(TEMPLATE_NAMES) == set(TEMPLATES) | {"auto"}


def _toml(value) -> str:
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, str):
        return f'"{value}"'
    return str(value)


@pytest.mark.parametrize("api", ["llama-server", "openai"])
@pytest.mark.parametrize("url", ["http://", "https:///v1", "http://[::1", "ftp://host:21"])
def test_a_server_url_with_no_host_is_refused_in_one_line_before_any_connection(api, url):
    from repocontext.complete.backends import server_backend
    from repocontext.config import GenerationConfig
    from repocontext.errors import GenerationError

    config = GenerationConfig(server_url=url, server_api=api)
    with pytest.raises(GenerationError) as err:
        server_backend(config)
    line = str(err.value)
    assert "\n" not in line and "[generation] server_url" in line
    assert "http://127.0.0.1:8012" in line  # an example of what to write
