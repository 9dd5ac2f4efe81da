"""Where indexes live: one SQLite file per repository root under $REPOCONTEXT_HOME.

The default home is the user's XDG data directory (platformdirs), so nothing is written inside
the user's repository.
"""

from __future__ import annotations

import hashlib
import os
import re
from pathlib import Path

import platformdirs

from .errors import RootError


def repocontext_home() -> Path:
    env = os.environ.get("REPOCONTEXT_HOME")
    return Path(env).expanduser() if env else Path(platformdirs.user_data_dir("repocontext"))


def models_dir() -> Path:
    """Where assembled models are kept: shared by every index (a model is not per repository)."""
    env = os.environ.get("REPOCONTEXT_MODELS")
    return Path(env).expanduser() if env else Path(platformdirs.user_cache_dir("repocontext"))


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
        return p.resolve().relative_to(root).as_posix()
    except ValueError:
        return p.as_posix()


def find_root(path: str | os.PathLike) -> Path:
    """The repository a file belongs to: the nearest ancestor holding .git, else the nearest
    one already indexed, else the file's own directory."""
    p = Path(path).expanduser().resolve()
    start = p if p.is_dir() else p.parent
    ancestors = (start, *start.parents)
    for candidate in ancestors:
        if (candidate / ".git").exists():
            return candidate
    for candidate in ancestors:
        if index_path(candidate).exists():
            return candidate
    return start


def index_path(root: Path) -> Path:
    """`<home>/indexes/<dirname>-<hash of the absolute root>.sqlite`: readable and collision-free."""
    digest = hashlib.sha256(str(root).encode("utf-8", "surrogateescape")).hexdigest()[:12]
    name = re.sub(r"[^A-Za-z0-9._-]+", "_", root.name) or "root"
    return repocontext_home() / "indexes" / f"{name}-{digest}.sqlite"


def crash_log_path(pid: int) -> Path:
    """Where a process that hosts the engine writes its fatal-error report (faulthandler): a
    native crash in llama.cpp leaves nothing else behind, and the editor reads it to say what
    happened."""
    env = os.environ.get("REPOCONTEXT_HOME")
    base = Path(env).expanduser() if env else Path(platformdirs.user_state_dir("repocontext"))
    return base / "crashes" / f"host-{pid}.log"
