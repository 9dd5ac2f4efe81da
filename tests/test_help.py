"""The help's generated parts (scripts/gen_help.py) are what the code says now.

doc/repocontext.txt's defaults, subcommands and Lua API are written from config.lua,
commands.lua and init.lua; the rest is written by hand. No Neovim and no model: unit tier.
"""

from __future__ import annotations

import importlib.util
import re
import shutil
import subprocess
import sys

import pytest
from conftest import REPO_ROOT

spec = importlib.util.spec_from_file_location("gen_help", REPO_ROOT / "scripts" / "gen_help.py")
gen_help = importlib.util.module_from_spec(spec)
spec.loader.exec_module(gen_help)


def copy_of_the_tree(tmp_path):
    """The files the generator reads, in a tree of their own to change."""
    for rel in ("doc/repocontext.txt", *gen_help.SECTIONS):
        (tmp_path / rel).parent.mkdir(parents=True, exist_ok=True)
        shutil.copy(REPO_ROOT / rel, tmp_path / rel)
    return tmp_path


def check(root) -> subprocess.CompletedProcess:
    return subprocess.run(
        [
            sys.executable,
            str(REPO_ROOT / "scripts" / "gen_help.py"),
            "--check",
            "--root",
            str(root),
        ],
        capture_output=True,
        text=True,
        timeout=60,
    )


def write(root) -> None:
    """What `python scripts/gen_help.py` writes, less doc/tags (Neovim's `:helptags`)."""
    (root / gen_help.DOC).write_text(gen_help.generate(root), encoding="utf-8")


def test_the_help_is_what_the_code_says():
    out = check(REPO_ROOT)
    assert out.returncode == 0, out.stdout + out.stderr


@pytest.mark.parametrize(
    "source, old, new",
    [
        ("lua/repocontext/config.lua", "debounce_ms = 60,", "debounce_ms = 75,"),
        ("lua/repocontext/commands.lua", '"enable / disable suggestions"', '"switch suggestions"'),
        ("lua/repocontext/init.lua", "--- Hide the suggestion.", "--- Hide the ghost text."),
    ],
)
def test_a_change_in_the_code_makes_the_check_fail(tmp_path, source, old, new):
    """A default, a subcommand's text or a function's comment changed in the code and not in the
    help: the check says so with a diff that names the new text, and writing fixes it."""
    root = copy_of_the_tree(tmp_path)
    path = root / source
    assert old in path.read_text()
    path.write_text(path.read_text().replace(old, new, 1))
    out = check(root)
    assert out.returncode == 1
    assert any(line.startswith("+") and new.strip('"-') in line for line in out.stdout.splitlines())
    write(root)
    assert check(root).returncode == 0


def test_the_hand_written_text_around_the_parts_is_kept(tmp_path):
    root = copy_of_the_tree(tmp_path)
    doc = root / "doc" / "repocontext.txt"
    before = doc.read_text()
    begin = gen_help.BEGIN.format(source="lua/repocontext/init.lua")
    end = gen_help.END.format(source="lua/repocontext/init.lua")
    head, rest = before.split(begin + "\n", 1)
    _, tail = rest.split(end + "\n", 1)
    doc.write_text(head + begin + "\n.stale()  written by hand\n" + end + "\n" + tail)
    assert check(root).returncode == 1
    write(root)
    assert doc.read_text() == before


def test_generated_lines_are_help_lines():
    """At most 78 columns; every public function has its tag; nothing of the code is missed."""
    doc = (REPO_ROOT / "doc" / "repocontext.txt").read_text()
    for source in gen_help.SECTIONS:
        part = doc.split(gen_help.BEGIN.format(source=source), 1)[1]
        part = part.split(gen_help.END.format(source=source), 1)[0]
        for line in part.strip("\n").split("\n"):
            assert len(line) <= 78, line
    init = (REPO_ROOT / "lua" / "repocontext" / "init.lua").read_text()
    for name in re.findall(r"^function M\.([a-z][a-z_]*)\(", init, re.M):
        assert f"*repocontext.{name}()*" in doc
    commands = (REPO_ROOT / "lua" / "repocontext" / "commands.lua").read_text()
    for name in re.findall(r'name = "(\w+)"', commands):
        assert re.search(rf"^:RepoContext {name}\b", doc, re.M)


def test_a_public_function_without_a_comment_is_refused(tmp_path):
    root = copy_of_the_tree(tmp_path)
    init = root / "lua" / "repocontext" / "init.lua"
    init.write_text(init.read_text().replace("--- Hide the suggestion.\n", "", 1))
    out = check(root)
    assert out.returncode == 2
    assert "M.dismiss has no --- comment" in out.stderr


def test_a_default_too_wide_for_the_help_is_refused(tmp_path):
    root = copy_of_the_tree(tmp_path)
    config = root / "lua" / "repocontext" / "config.lua"
    config.write_text(
        config.read_text().replace("debounce_ms = 60,", "debounce_ms = 60," + " " * 70, 1)
    )
    out = check(root)
    assert out.returncode == 2 and "over 76 columns" in out.stderr
