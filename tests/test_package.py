"""The package's face: public names, the README's two commands, CI, and the documented CLI."""

from __future__ import annotations

import re

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


def test_lua_defaults_are_documented_verbatim():
    cfg = (REPO_ROOT / "lua" / "repocontext" / "config.lua").read_text()
    block = cfg.split("--minidoc_replace_start\n", 1)[1].split("--minidoc_replace_end", 1)[0]
    doc = (REPO_ROOT / "doc" / "repocontext.txt").read_text()
    assert block.rstrip() in doc


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
