"""Running git on a tree that may not be trusted.

A tree that arrives with its `.git` (an archive, a shared folder, a copied disk) brings its
own `.git/config`, and git honours settings there that run programs: `core.fsmonitor` runs
for `ls-files` and `check-ignore`, `log.showSignature` runs `gpg.program` for `log`, hooks,
pagers, external diff, and a partial clone fetches missing objects from its remote. Every
git call of repocontext goes through `run_git`, which turns each of these off on the command
line (a `-c` setting outranks the repository's own) and in the environment, reads nothing
from standard input and writes no lock file into the user's repository.

The commands run (rev-parse, check-ignore, ls-files, log --name-only, grep) read no file
through a clean/smudge filter or a textconv driver, so those settings of the tree are never
reached; `tests/test_trust.py` plants every one of them and checks that nothing ran.

A file git reads that is a FIFO makes it wait for ever for a writer (a `core.excludesFile`
naming one stalled every index for 30 s, then a plain walk gave another list). So before git
runs, `tree_settings` finds the tree's git folder as git does, without git; checks that what
git reads there (config, HEAD, index, info/exclude...) and every file the config includes are
regular files; and names an empty file on the command line for `core.excludesFile` and
`core.attributesFile` (and mailmaps are off) when they name anything else. What no setting
can replace raises GitRefused, which says which file and what to do. A FIFO nothing names
(a .gitignore of the tree, an object) is seen while git waits to open it (Linux:
/proc/PID/wchan), and git is stopped at once with GitRefused too. GitRefused is an OSError:
callers treat it as git being unusable.
"""

from __future__ import annotations

import os
import stat
import subprocess
import time
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

from .reading import RefusedFile, read_regular

# Settings of the tree's own config that would run a program or reach the network.
SAFE_SETTINGS = (
    "core.fsmonitor=false",
    "core.hooksPath=/dev/null",
    "core.pager=cat",
    "core.askPass=",
    "core.sshCommand=",
    "log.showSignature=false",
    "log.mailmap=false",  # no .mailmap, mailmap.file or mailmap.blob read for `log`
    "diff.external=",
    "protocol.allow=never",
    "safe.bareRepository=explicit",
    "credential.helper=",
)
# Variables that would point git elsewhere than the root, or run a program.
_DROPPED = ("GIT_DIR", "GIT_WORK_TREE", "GIT_INDEX_FILE", "GIT_EXTERNAL_DIFF", "GIT_ASKPASS",
            "GIT_SSH", "GIT_SSH_COMMAND", "GIT_PAGER", "GIT_EDITOR", "SSH_ASKPASS")  # fmt: skip
# Files of the git folder (and of the common one, for a linked work tree) that the commands
# above read, whatever the config says.
_GIT_FILES = ("HEAD", "config", "config.worktree", "commondir", "index", "packed-refs",
              "shallow", "info/exclude", "info/attributes", "info/grafts",
              "objects/info/alternates")  # fmt: skip
# Settings that name a file to read, with the file git reads when they are not set.
_PATH_SETTINGS = {"core.excludesfile": "ignore", "core.attributesfile": "attributes"}
_INCLUDE_DEPTH = 10  # as git's own limit
_CONFIG_BYTES = 1 << 20  # a config read here for the word "include"; a longer one goes to git
CONFIG_TIMEOUT_S = 10
POLL_S = 0.1  # how often a running git is looked at: is it waiting to open a FIFO?
_FIFO_WAIT = ("wait_for_partner", "fifo_open")  # the kernel's names for that wait


class GitRefused(OSError):
    """git is not run on this tree, or was stopped: a file it reads is not a regular file.
    str(exc) says which, and what to do."""


@dataclass(frozen=True)
class GitFolders:
    top: Path  # the folder that holds `.git`
    git_dir: Path
    common_dir: Path  # the main repository's git folder, for a linked work tree


def find_git_folders(root: str | os.PathLike) -> GitFolders | None:
    """The git folders of the work tree holding `root`, found upward as git finds them, by
    reading `.git` (a folder, or a file `gitdir: PATH`) and `commondir`; None outside git."""
    start = Path(os.path.abspath(root))
    for folder in (start, *start.parents):
        dot = folder / ".git"
        try:
            st = os.stat(dot)
        except OSError:
            continue
        if stat.S_ISDIR(st.st_mode):
            git_dir = dot
        elif stat.S_ISREG(st.st_mode):
            text = _text(dot)
            git_dir = folder / text[7:].strip() if text.startswith("gitdir:") else dot
        else:
            raise GitRefused(_not_regular(dot, st, "git reads it first"))
        common_dir = git_dir
        commondir = git_dir / "commondir"
        if _kind(commondir) == "regular":
            common_dir = git_dir / _text(commondir).strip()
        return GitFolders(folder, git_dir, common_dir)
    return None


def tree_settings(root: str | os.PathLike) -> list[str]:
    """`-c` settings, beyond SAFE_SETTINGS, that keep git on regular files: an empty one for
    `core.excludesFile` or `core.attributesFile` naming a FIFO, a device or a folder (git's
    default file in its place when that one is a regular file). Raises GitRefused when git
    would read such a file that no setting replaces."""
    folders = find_git_folders(root)
    if folders is None:
        return []
    for folder in dict.fromkeys((folders.git_dir, folders.common_dir)):
        try:
            shared = [e.name for e in os.scandir(folder) if e.name.startswith("sharedindex.")]
        except OSError:
            shared = []
        for name in (*_GIT_FILES, *shared):
            _require_regular(folder / name, f"{folder / name}", "git reads it")
    for config in dict.fromkeys(
        (folders.common_dir / "config", folders.git_dir / "config.worktree")
    ):
        _check_includes(config, 0)
    try:
        done = _run(
            git_command(
                root, "config", "--null", "--get-regexp", r"^core\.(excludesfile|attributesfile)$"
            ),
            CONFIG_TIMEOUT_S,
        )
    except subprocess.TimeoutExpired:
        raise GitRefused(f"git config did not answer in {CONFIG_TIMEOUT_S} s") from None
    named = dict(_pairs(done.stdout)) if done.returncode == 0 else {}
    settings = []
    for key, default_name in _PATH_SETTINGS.items():
        default = _default_file(default_name)
        value = named.get(key)
        path = _config_path(value, folders.top) if value else default
        if path is not None and _kind(path) not in ("regular", "absent"):
            keep = default if value and default and _kind(default) == "regular" else ""
            settings.append(f"{key}={keep}")
    return settings


def git_command(root: str | os.PathLike, *args: str, settings: Sequence[str] = ()) -> list[str]:
    """The argument list for `git -C root args...` with the tree's programs turned off."""
    command = ["git", "-C", str(root)]
    for setting in (*SAFE_SETTINGS, *settings):
        command += ["-c", setting]
    return command + list(args)


def git_environment() -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if k not in _DROPPED}
    env.update(
        GIT_TERMINAL_PROMPT="0",
        GIT_OPTIONAL_LOCKS="0",  # no index refresh written into the user's repository
        GIT_NO_LAZY_FETCH="1",  # a partial clone never fetches what it lacks
        GIT_PAGER="cat",
        PAGER="cat",
    )
    return env


def run_git(
    root: str | os.PathLike | Path,
    *args: str,
    timeout: float,
    check: bool = False,
    settings: Sequence[str] | None = None,
) -> subprocess.CompletedProcess[bytes]:
    """`git -C root args...`, output captured as bytes, with `settings` (`tree_settings`,
    found here when not given); raises OSError when git is missing, GitRefused when it would
    wait on a FIFO, and subprocess.SubprocessError on a time-out (or a failure, with
    `check`)."""
    if settings is None:
        settings = tree_settings(root)
    command = git_command(root, *args, settings=settings)
    done = _run(command, timeout)
    if check and done.returncode:
        raise subprocess.CalledProcessError(done.returncode, command, done.stdout, done.stderr)
    return done


def _run(command: list[str], timeout: float) -> subprocess.CompletedProcess[bytes]:
    """`command` run as `subprocess.run` would, but stopped (GitRefused) once it waits to
    open a FIFO: no writer will come."""
    deadline = time.monotonic() + timeout
    with subprocess.Popen(
        command,
        stdin=subprocess.DEVNULL,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        env=git_environment(),
    ) as proc:
        while True:
            try:
                out, err = proc.communicate(
                    timeout=max(0.0, min(POLL_S, deadline - time.monotonic()))
                )
                break
            except subprocess.TimeoutExpired:
                late = time.monotonic() >= deadline
                if late or _waits_on_fifo(proc.pid):
                    proc.kill()
                    proc.communicate()
                    if late:
                        raise subprocess.TimeoutExpired(command, timeout) from None
                    raise GitRefused(
                        "git waited to open a FIFO (a named pipe) that nothing writes: a "
                        ".gitignore or .gitattributes of the tree, or a file of its .git, is "
                        "one; find it with `find . -type p` and remove it"
                    ) from None
    return subprocess.CompletedProcess(command, proc.returncode, out, err)


def _waits_on_fifo(pid: int) -> bool:
    try:
        with open(f"/proc/{pid}/wchan") as fh:
            return fh.read().strip() in _FIFO_WAIT
    except OSError:
        return False  # not Linux, or gone: the time-out still ends it


def _check_includes(config: Path, depth: int) -> None:
    """Every file `config` includes (`include.path`, `includeIf.*.path`, whatever the
    condition), and theirs, is a regular file or absent (git passes over a missing one)."""
    if depth > _INCLUDE_DEPTH or _kind(config) != "regular":
        return
    try:
        text = read_regular(config, _CONFIG_BYTES)
    except (OSError, RefusedFile):
        return  # gone, or unreadable: git reads nothing from it either
    if len(text) <= _CONFIG_BYTES and b"include" not in text.lower():
        return  # no include section: no git process to ask
    command = ["git", "config", "--file", str(config), "--no-includes", "--null",
               "--get-regexp", r"^include(if\..*)?\.path$"]  # fmt: skip
    try:
        # outside any repository ("/"): git looking for one reads its config, includes too
        done = subprocess.run(command, capture_output=True, timeout=CONFIG_TIMEOUT_S,
                              stdin=subprocess.DEVNULL, env=git_environment(), cwd="/")  # fmt: skip
    except subprocess.TimeoutExpired:
        raise GitRefused(f"git config did not read {config} in {CONFIG_TIMEOUT_S} s") from None
    for _, value in _pairs(done.stdout) if done.returncode == 0 else ():
        path = _config_path(value, config.parent)
        _require_regular(path, f"{config} includes {value}, which", "git reads it")
        _check_includes(path, depth + 1)


def _pairs(output: bytes) -> list[tuple[str, str]]:
    """`git config --null --get-regexp`'s (key, value) pairs."""
    pairs = []
    for item in output.split(b"\0"):
        key, _, value = os.fsdecode(item).partition("\n")
        if key:
            pairs.append((key.lower(), value))
    return pairs


def _config_path(value: str, base: Path) -> Path:
    """A path as git reads it from a config: `~/` is the home folder, a relative path is
    relative to `base`."""
    path = Path(os.path.expanduser(value)) if value.startswith("~") else Path(value)
    return path if path.is_absolute() else base / path


def _default_file(name: str) -> Path | None:
    """git's own file for a setting left unset: $XDG_CONFIG_HOME/git/NAME or
    ~/.config/git/NAME."""
    xdg = os.environ.get("XDG_CONFIG_HOME")
    if xdg:
        return Path(xdg) / "git" / name
    home = os.environ.get("HOME")
    return Path(home) / ".config" / "git" / name if home else None


def _require_regular(path: Path, what: str, why: str) -> None:
    kind = _kind(path)
    if kind not in ("regular", "absent", "folder"):
        raise GitRefused(f"{what} is {kind}, not a regular file, and {why}: git would wait "
                         "on it; remove it or make it a regular file")  # fmt: skip


def _not_regular(path: Path, st: os.stat_result, why: str) -> str:
    return (f"{path} is {_kind_of(st)}, not a folder or a regular file, and {why}: git "
            "would wait on it; remove it")  # fmt: skip


def _kind(path: Path) -> str:
    try:
        return _kind_of(os.stat(path))
    except OSError:
        return "absent"  # or unreadable: git cannot open it either, and does not wait


def _kind_of(st: os.stat_result) -> str:
    if stat.S_ISREG(st.st_mode):
        return "regular"
    if stat.S_ISDIR(st.st_mode):
        return "folder"
    if stat.S_ISFIFO(st.st_mode):
        return "a FIFO (a named pipe)"
    if stat.S_ISSOCK(st.st_mode):
        return "a socket"
    return "a device"


def _text(path: Path) -> str:
    try:
        return read_regular(path, 4096)[:4096].decode("utf-8", "replace")
    except (OSError, RefusedFile):
        return ""
