"""Where indexes live: one SQLite file per repository root under $REPOCONTEXT_HOME.

The default home is the user's XDG data directory (platformdirs), so nothing is written inside
the user's repository.
"""

from __future__ import annotations

import hashlib
import os
import re
from collections.abc import Sequence
from pathlib import Path

import platformdirs

from .errors import ConfigError, RootError


def env_path(name: str) -> Path | None:
    """The path in environment variable `name`, `~` expanded; None when it is unset or empty.
    A `~user` that names no user here is a ConfigError that names the variable."""
    value = os.environ.get(name)
    if not value:
        return None
    try:
        return Path(value).expanduser()
    except RuntimeError:  # "Could not determine home directory."
        raise ConfigError(
            f"{name} is set to {value}, but {value.split('/', 1)[0]} is no user's home "
            f"directory here; set {name} to a full path"
        ) from None


def repocontext_home() -> Path:
    return env_path("REPOCONTEXT_HOME") or Path(platformdirs.user_data_dir("repocontext"))


def models_dir() -> Path:
    """Where assembled models are kept: shared by every index (a model is not per repository).
    complete/models.py keeps it private (0700, files 0600) and trusts nothing in it that
    anyone else could have written."""
    return env_path("REPOCONTEXT_MODELS") or Path(platformdirs.user_cache_dir("repocontext"))


def resolve_root(root: str | os.PathLike | None) -> Path:
    """The absolute repository root, or a RootError that says what is wrong with it."""
    path = Path(root if root is not None else os.getcwd()).expanduser()
    if not path.exists():
        raise RootError(f"the root {path} does not exist; pass an existing directory with --root")
    if not path.is_dir():
        raise RootError(f"the root {path} is not a directory; pass a directory with --root")
    return path.resolve()


def relative_path(root: Path, path: str | os.PathLike) -> str:
    """`path` as the index names files: relative to `root`, with "/". A relative path is taken
    as relative to the root already; one outside the root comes back absolute."""
    p = Path(path).expanduser()
    if not p.is_absolute():
        return p.as_posix()
    try:
        return resolved(p).relative_to(root).as_posix()
    except ValueError:
        return p.as_posix()


def resolved(path: Path) -> Path:
    """`path.resolve()`, or the absolute path where a symlink loop stops that (a buffer can be
    named after one: the editor must still get an answer, not an error per keystroke)."""
    try:
        return path.resolve()
    except (RuntimeError, OSError):  # RuntimeError: a symlink loop (Python < 3.13)
        return Path(os.path.abspath(path))


# Version control first: the nearest of these wins over any manifest below it, so a monorepo's
# subpackage (its own pyproject.toml) stays part of the repository around it.
VCS_MARKERS = (".git", ".hg", ".svn", ".jj")
# What makes a folder a project, as lspconfig's `root_markers`: version control, then manifests.
ROOT_MARKERS = (
    *VCS_MARKERS,
    "pyproject.toml",
    "setup.py",
    "setup.cfg",
    "package.json",
    "go.mod",
    "Cargo.toml",
    "Gemfile",
    "pom.xml",
    "build.gradle",
    "Makefile",
    "CMakeLists.txt",
    "composer.json",
    "deno.json",
)

Markers = Sequence[str | Sequence[str]]


def marker_groups(markers: Markers = ROOT_MARKERS) -> list[tuple[str, ...]]:
    """The markers as levels of priority, searched one level at a time (the nearest folder
    with a marker of the level wins). Plain names: the version-control ones, then the rest. A
    nested list (Neovim's `vim.fs.root` and lspconfig do the same) sets the levels itself:
    `[[".git", ".hg"], "pyproject.toml"]`."""
    if all(isinstance(m, str) for m in markers):
        names = [m for m in markers if isinstance(m, str)]
        vcs = tuple(m for m in names if m in VCS_MARKERS)
        rest = tuple(m for m in names if m not in VCS_MARKERS)
        return [g for g in (vcs, rest) if g]
    return [(m,) if isinstance(m, str) else tuple(m) for m in markers]


def never_roots() -> set[Path]:
    """Folders that are never a root found for a file, whatever they hold: the user's home
    (a dotfiles `.git` there must not make every file under it one project) and `/`."""
    out = {Path("/")}
    try:
        out.add(Path.home().resolve())
    except RuntimeError:  # no home directory known
        pass
    return out


def find_project_root(path: str | os.PathLike, markers: Markers = ROOT_MARKERS) -> Path | None:
    """The project a file belongs to, or None when it belongs to none.

    The nearest ancestor holding a version-control marker; else the nearest holding a
    manifest (`marker_groups` says which is which); else the nearest one already indexed (a
    root the user chose), if it still exists: a folder deleted since then (and so a new
    file's folder not made yet) is no project. Never the user's home directory or `/`, and
    nothing above the home directory for a file inside it."""
    p = resolved(Path(path).expanduser())
    start = p if p.is_dir() else p.parent
    barred = never_roots()
    ancestors = []
    for candidate in (start, *start.parents):
        if candidate in barred:
            break
        ancestors.append(candidate)
    for group in marker_groups(markers):
        for candidate in ancestors:
            if any((candidate / m).exists() for m in group):
                return candidate
    for candidate in ancestors:
        if index_path(candidate).exists() and candidate.is_dir():
            return candidate
    return None


def find_root(path: str | os.PathLike) -> Path:
    """The root for a file: its project (`find_project_root`), else the file's own folder.
    Kept for callers that need a folder whatever happens; the editor should use
    `find_project_root` and `Repository.buffer_only` for a file outside any project, so that
    such a folder is never indexed."""
    p = resolved(Path(path).expanduser())
    return find_project_root(p) or (p if p.is_dir() else p.parent)


def index_path(root: Path) -> Path:
    """`<home>/indexes/<dirname>-<hash of the absolute root>.sqlite`: readable and collision-free."""
    digest = hashlib.sha256(str(root).encode("utf-8", "surrogateescape")).hexdigest()[:12]
    name = re.sub(r"[^A-Za-z0-9._-]+", "_", root.name) or "root"
    return repocontext_home() / "indexes" / f"{name}-{digest}.sqlite"


def crash_log_path(pid: int) -> Path:
    """Where a process that hosts the engine writes its fatal-error report (faulthandler): a
    native crash in llama.cpp leaves nothing else behind, and the editor reads it to say what
    happened."""
    base = env_path("REPOCONTEXT_HOME") or Path(platformdirs.user_state_dir("repocontext"))
    return base / "crashes" / f"host-{pid}.log"
