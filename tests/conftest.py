"""Shared fixtures: an isolated REPOCONTEXT_HOME per test, repositories built from dicts, the CLI.

Everything is real: a real SQLite file (apsw), real tree-sitter grammars, real git where a test
needs a work tree.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from repocontext.cli import main

REPO_ROOT = Path(__file__).resolve().parents[1]
FIXTURES = Path(__file__).resolve().parent / "fixtures"


@pytest.fixture(autouse=True)
def home(tmp_path_factory, monkeypatch) -> Path:
    """Every test gets its own index home, so no test sees another's index."""
    path = tmp_path_factory.mktemp("home")
    monkeypatch.setenv("REPOCONTEXT_HOME", str(path))
    return path


def write_tree(root: Path, files: dict[str, str | bytes]) -> Path:
    for rel, content in files.items():
        path = root / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        if isinstance(content, bytes):
            path.write_bytes(content)
        else:
            path.write_text(textwrap.dedent(content).lstrip("\n"), encoding="utf-8")
    return root


def make_deep_file(root: Path, folders: list[str], name: str, content: bytes) -> str:
    """`root/folders.../name`, made one level at a time relative to each parent, so that a
    path longer than any program can open (PATH_MAX) can be made; its root-relative path."""
    fd = os.open(root, os.O_RDONLY)
    try:
        for folder in folders:
            os.mkdir(folder, dir_fd=fd)
            child = os.open(folder, os.O_RDONLY, dir_fd=fd)
            os.close(fd)
            fd = child
        leaf = os.open(name, os.O_WRONLY | os.O_CREAT, 0o644, dir_fd=fd)
        os.write(leaf, content)
        os.close(leaf)
    finally:
        os.close(fd)
    return "/".join([*folders, name])


@pytest.fixture(scope="module")
def env(tmp_path_factory):
    """For the tests in a real Neovim: an indexed project and an isolated configuration
    (test_nvim.make_env), one per test module."""
    from test_nvim import make_env

    return make_env(tmp_path_factory)


@pytest.fixture
def make_repo(tmp_path):
    """make_repo({"a.py": "..."}, git=False) -> root path."""
    counter = iter(range(1000))

    def make(files: dict[str, str | bytes], git: bool = False) -> Path:
        root = tmp_path / f"repo{next(counter)}"
        root.mkdir()
        write_tree(root, files)
        if git:
            git_init(root)
        return root

    return make


def git(root: Path, *args: str) -> str:
    env = {
        **os.environ,
        "GIT_AUTHOR_NAME": "t",
        "GIT_AUTHOR_EMAIL": "t@t",
        "GIT_COMMITTER_NAME": "t",
        "GIT_COMMITTER_EMAIL": "t@t",
    }
    return subprocess.run(
        ["git", "-C", str(root), *args], check=True, capture_output=True, text=True, env=env
    ).stdout


def git_init(root: Path) -> None:
    git(root, "init", "-q", "-b", "main")
    git(root, "add", "-A")
    git(root, "commit", "-q", "-m", "init", "--allow-empty")


class CliResult:
    def __init__(self, code: int, out: str, err: str):
        self.code, self.out, self.err = code, out, err

    def json(self):
        return json.loads(self.out)


@pytest.fixture
def cli(capsys):
    """Run `repocontext ARGS` in-process; returns exit code, stdout and stderr."""

    def run(*args: str) -> CliResult:
        capsys.readouterr()
        code = main([str(a) for a in args])
        captured = capsys.readouterr()
        return CliResult(code, captured.out, captured.err)

    return run


def run_cli_process(*args: str, env: dict | None = None, **kw) -> subprocess.CompletedProcess:
    """`repocontext ARGS` as a separate process (for locking, killing and permissions)."""
    return subprocess.run(
        [sys.executable, "-m", "repocontext.cli", *map(str, args)],
        capture_output=True,
        text=True,
        env=env or os.environ.copy(),
        **kw,
    )
