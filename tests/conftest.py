"""Shared fixtures: an isolated REPOCONTEXT_HOME per test, repositories built from dicts, the CLI.

Everything is real: a real SQLite file (apsw), real tree-sitter grammars, real git where a test
needs a work tree.
"""

from __future__ import annotations

import importlib
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

# The unit tier (`pytest -m unit`, run first by scripts/test): the modules whose tests need no
# model (neither the generation model nor the embedding model) and no Neovim, and run in
# seconds. The tier as a whole runs in under a minute; `no_model_in_a_unit_test` below fails a
# unit test that loads a model or starts Neovim, so neither can creep into the tier.
UNIT_MODULES = {
    "test_chunking",
    "test_chunking_ts",
    "test_config",
    "test_gates",
    "test_graph",
    "test_help",
    "test_lines",
    "test_nextedit",
    "test_package",
    "test_progress",
    "test_prompting",
    "test_receivers",
    "test_roots",
    "test_secret_formats",
    "test_secret_shapes",
    "test_terminal_names",
}
# tests of those modules that are not unit tests (they start Neovim)
NOT_UNIT = {"test_package.py::test_help_tags_are_shipped_and_current"}


def pytest_configure(config):
    config.addinivalue_line(
        "markers", "unit: no model, no Neovim, seconds (tests/conftest.py UNIT_MODULES)"
    )


def pytest_collection_modifyitems(config, items):
    for item in items:
        module = item.path.stem
        if module in UNIT_MODULES and f"{item.path.name}::{item.originalname}" not in NOT_UNIT:
            item.add_marker(pytest.mark.unit)


@pytest.fixture(autouse=True)
def no_model_in_a_unit_test(request, monkeypatch):
    """A unit test that loads the generation model (llama_cpp), an ONNX model (the embedding
    model, the reranker) or starts Neovim fails, saying so, even where the code under test
    catches the refusal (an index whose embedding fails still ends): it belongs to the other
    tier."""
    if request.node.get_closest_marker("unit") is None:
        yield
        return
    refusals = []

    def refuse(what):
        def refused(*args, **kwargs):
            refusals.append(what)
            raise AssertionError(f"a unit test {what}")

        return refused

    for module, attr, what in (
        ("llama_cpp", "Llama", "loaded the generation model"),
        ("onnxruntime", "InferenceSession", "loaded an ONNX model"),
    ):
        try:
            loaded = importlib.import_module(module)  # once a session; a test may import it late
        except ImportError:
            continue
        monkeypatch.setattr(getattr(loaded, attr), "__init__", refuse(what))
    popen = subprocess.Popen.__init__

    def no_neovim(self, args, *rest, **kwargs):
        program = args[0] if isinstance(args, (list, tuple)) and args else args
        if str(program).endswith("nvim"):
            refuse("started Neovim")()
        popen(self, args, *rest, **kwargs)

    monkeypatch.setattr(subprocess.Popen, "__init__", no_neovim)
    yield
    if refusals:
        pytest.fail(
            f"a unit test {refusals[0]}: take {request.node.path.name} out of UNIT_MODULES"
            " (tests/conftest.py), or the test into NOT_UNIT"
        )


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
