"""Project roots: which folder a file belongs to, and a file that belongs to none.

Real folders, real markers, a real index file where one is needed. Every project here lives
under a home directory of its own (HOME points at it), so nothing outside the test's folders
can be taken for a root.
"""

from __future__ import annotations

import shutil
import threading
from pathlib import Path

import pytest
from conftest import write_tree

from repocontext import Repository
from repocontext.bridge import EditorService
from repocontext.errors import NotAProject, RootError
from repocontext.locations import (
    ROOT_MARKERS,
    find_project_root,
    find_root,
    index_path,
    marker_groups,
    relative_path,
)
from repocontext.runtime.session import Session


@pytest.fixture
def user_home(tmp_path, monkeypatch) -> Path:
    """A home directory of its own (Path.home() follows $HOME)."""
    path = tmp_path / "home" / "user"
    path.mkdir(parents=True)
    monkeypatch.setenv("HOME", str(path))
    assert Path.home() == path
    return path.resolve()


def test_the_default_markers():
    assert ROOT_MARKERS[:4] == (".git", ".hg", ".svn", ".jj")
    for marker in ("pyproject.toml", "package.json", "go.mod", "Cargo.toml", "Makefile"):
        assert marker in ROOT_MARKERS
    assert "stylua.toml" not in ROOT_MARKERS
    vcs, manifests = marker_groups()
    assert vcs == (".git", ".hg", ".svn", ".jj") and "pyproject.toml" in manifests


@pytest.mark.parametrize("marker", [".git", ".hg", ".jj", "pyproject.toml", "package.json",
                                    "go.mod", "Cargo.toml", "CMakeLists.txt"])  # fmt: skip
def test_a_marker_makes_its_folder_the_root(user_home, marker):
    project = user_home / "code" / "app"
    write_tree(project, {"src/app/main.py": "x = 1\n"})
    if marker.startswith("."):
        (project / marker).mkdir()
    else:
        (project / marker).write_text("")
    assert find_project_root(project / "src/app/main.py") == project
    assert find_project_root(project / "src/app") == project  # a folder is its own start


def test_the_nearest_manifest_wins(user_home):
    outer = user_home / "work"
    write_tree(outer, {"package.json": "{}", "tools/gen/pyproject.toml": "", "tools/gen/g.py": ""})
    assert find_project_root(outer / "tools/gen/g.py") == outer / "tools/gen"
    assert find_project_root(outer / "tools/other.py") == outer


def test_version_control_wins_over_a_nearer_manifest(user_home):
    """A monorepo's subpackage has its own pyproject.toml; the repository is still one."""
    repo = user_home / "mono"
    write_tree(repo, {"packages/core/pyproject.toml": "", "packages/core/src/core.py": ""})
    (repo / ".git").mkdir()
    assert find_project_root(repo / "packages/core/src/core.py") == repo
    # and the nearest of two repositories (a submodule, a worktree's .git file) wins
    write_tree(repo, {"vendor/lib/.git": "gitdir: ../../.git/modules/lib\n", "vendor/lib/l.py": ""})
    assert find_project_root(repo / "vendor/lib/l.py") == repo / "vendor/lib"


def test_an_unpacked_release_two_levels_up(user_home):
    """The report's case: no .git, a pyproject.toml two levels above the file."""
    release = user_home / "Downloads" / "requests-2.32.3"
    write_tree(release, {"pyproject.toml": "", "src/requests/sessions.py": "x = 1\n"})
    assert find_project_root(release / "src/requests/sessions.py") == release


def test_home_and_the_filesystem_root_are_never_roots(user_home):
    # a dotfiles repository in the home directory
    (user_home / ".git").mkdir()
    write_tree(user_home, {"notes.py": "x = 1\n", "Makefile": "", "scratch/a/b.py": ""})
    assert find_project_root(user_home / "notes.py") is None
    assert find_project_root(user_home / "scratch/a/b.py") is None  # nothing above home either
    assert find_project_root(user_home) is None
    # not even when an older version left an index for it
    index_path(user_home).parent.mkdir(parents=True, exist_ok=True)
    index_path(user_home).write_bytes(b"")
    assert find_project_root(user_home / "notes.py") is None
    assert find_project_root("/") is None
    # find_root keeps its old answer for callers that need a folder whatever happens
    assert find_root(user_home / "scratch/a/b.py") == user_home / "scratch/a"


def test_a_folder_indexed_before_is_a_root_without_markers(user_home):
    """A root the user chose (`:RepoContext root DIR`) has no marker; its index makes it one."""
    chosen = user_home / "notes"
    write_tree(chosen, {"a.py": "def a():\n    return 1\n", "deep/b.py": "x = 1\n"})
    assert find_project_root(chosen / "deep/b.py") is None
    Repository(chosen).index()
    assert find_project_root(chosen / "deep/b.py") == chosen
    # with no markers at all (the editor found none), only an index makes a root
    (chosen / "deep/pyproject.toml").write_text("")
    assert find_project_root(chosen / "deep/b.py") == chosen / "deep"
    assert find_project_root(chosen / "deep/b.py", markers=()) == chosen


def test_markers_as_levels_of_priority(user_home):
    """A nested list sets the levels itself, as lspconfig's root_markers and vim.fs.root."""
    top = user_home / "top"
    write_tree(top, {"Makefile": "", "sub/package.json": "{}", "sub/x.js": ""})
    assert find_project_root(top / "sub/x.js") == top / "sub"  # the nearest of one level
    assert find_project_root(top / "sub/x.js", [["Makefile"], ["package.json"]]) == top
    assert find_project_root(top / "sub/x.js", ["Makefile"]) == top
    assert marker_groups([[".git", ".hg"], "go.mod"]) == [(".git", ".hg"), ("go.mod",)]


# --- outside any project: the open buffers only ----------------------------------------------


def indexes(repocontext_home: Path) -> list[Path]:
    return sorted(repocontext_home.rglob("*.sqlite*")) if repocontext_home.exists() else []


def test_a_buffer_only_repository_never_writes_an_index(user_home, tmp_path, monkeypatch):
    rc_home = tmp_path / "rc-home"
    monkeypatch.setenv("REPOCONTEXT_HOME", str(rc_home))
    write_tree(user_home, {"notes.py": "def total(xs):\n    return sum(xs)\n"})
    notes = user_home / "notes.py"
    assert find_project_root(notes) is None
    repo = Repository.buffer_only(notes)
    assert repo.project is False and repo.root == user_home
    expected = (
        f"{notes} is not inside a project (no .git, pyproject.toml, package.json, ...); "
        "suggestions use the open buffers only. Choose a root with :RepoContext root DIR"
    )
    for action in (repo.index, repo.embed, repo.check, lambda: repo.search("total")):
        with pytest.raises(NotAProject) as err:
            action()
        assert str(err.value) == expected
        assert isinstance(err.value, RootError)
    status = repo.status()
    assert status["root"] is None and status["index"] is None
    assert status["indexed"] is False and status["project"] is False
    assert status["note"] == expected and status["folder"] == str(user_home)
    assert repo.completion_engine(_NoModel()).context is None
    # a session indexes nothing, and says so without an error
    session = Session(repo, backend=_NoModel())
    done = threading.Event()
    reports: list[dict] = []
    session.index(True, lambda p: reports.append(p), lambda r: (reports.append(r), done.set()))
    assert done.wait(30)
    assert reports == [{"root": None, "project": False, "note": expected}]
    assert session.engine.context is None
    assert session.status()["recent_errors"] == []
    session.close()
    assert indexes(rc_home) == [] and not index_path(user_home).exists()


def test_a_buffer_only_repository_for_a_file_in_a_new_folder(user_home):
    """A new buffer whose folder does not exist yet: still a session, nothing made."""
    path = user_home / "not-yet" / "draft.py"
    repo = Repository.buffer_only(path)
    assert repo.root == user_home / "not-yet" and not repo.root.exists()
    assert repo.status()["project"] is False


def test_a_new_file_where_a_folder_was_deleted_is_in_no_project(user_home, tmp_path, monkeypatch):
    """A folder indexed once (a root the user chose) and deleted since: a new file in it, in
    a folder not made again yet, is in no project, whether the editor names the old root
    ("" or None: the engine decides) or still has it as its chosen root."""
    monkeypatch.setenv("REPOCONTEXT_HOME", str(tmp_path / "rc-home"))
    scratch = write_tree(user_home / "scratch", {"calc.py": "def total(xs):\n    return 1\n"})
    Repository(scratch).index()
    assert find_project_root(scratch / "calc.py", markers=()) == scratch
    shutil.rmtree(scratch)
    draft = scratch / "new" / "draft.py"
    assert find_project_root(draft) is None  # its index is left, the folder is not
    assert find_project_root(draft, markers=()) is None
    service = EditorService()
    try:
        for root in (None, "", str(scratch)):
            session = service.session(str(draft), root)
            assert session.repo.project is False and session.repo.root == scratch / "new"
        done = threading.Event()
        reports: list[dict] = []
        service.index(str(draft), reports.append, lambda r: (reports.append(r), done.set()),
                      root=str(scratch))  # fmt: skip
        assert done.wait(30)
        assert reports == [{"root": None, "outside": True, "path": str(draft)}]
        assert not scratch.exists()  # nothing was made for it
    finally:
        service.close()


def test_a_buffer_named_after_a_symlink_loop_still_has_its_project(user_home):
    """`:edit loop.py` where loop.py points at itself: the editor asks about it like any
    other file, and must get an answer, not an error per keystroke."""
    project = write_tree(user_home / "app", {"main.py": "x = 1\n"})
    (project / ".git").mkdir()
    (project / "loop.py").symlink_to("loop.py")
    (project / "looped").symlink_to("looped")
    for name in ("loop.py", "looped/inner.py"):
        assert find_project_root(project / name) == project
        assert relative_path(project, project / name) == name
        assert find_root(project / name) == project
    service = EditorService()
    try:
        assert service.session(str(project / "loop.py"), "").repo.project is False  # no index
        assert service.session(str(project / "loop.py")).repo.root == project
    finally:
        service.close()


class _NoModel:
    """The model is not what these tests are about: a backend that never generates."""

    name, n_ctx = "none", 2048

    def __init__(self):
        from repocontext.complete.templates import TEMPLATES

        self.template = TEMPLATES["plain"]

    def count_tokens(self, text: str) -> int:
        return len(text) // 4

    def sibling(self):
        return self

    def describe(self) -> dict:
        return {}

    def close(self) -> None:
        pass
