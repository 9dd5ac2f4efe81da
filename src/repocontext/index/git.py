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
"""

from __future__ import annotations

import os
import subprocess
from pathlib import Path

# Settings of the tree's own config that would run a program or reach the network.
SAFE_SETTINGS = (
    "core.fsmonitor=false",
    "core.hooksPath=/dev/null",
    "core.pager=cat",
    "core.askPass=",
    "core.sshCommand=",
    "log.showSignature=false",
    "diff.external=",
    "protocol.allow=never",
    "safe.bareRepository=explicit",
    "credential.helper=",
)
# Variables that would point git elsewhere than the root, or run a program.
_DROPPED = ("GIT_DIR", "GIT_WORK_TREE", "GIT_INDEX_FILE", "GIT_EXTERNAL_DIFF", "GIT_ASKPASS",
            "GIT_SSH", "GIT_SSH_COMMAND", "GIT_PAGER", "GIT_EDITOR", "SSH_ASKPASS")  # fmt: skip


def git_command(root: str | os.PathLike, *args: str) -> list[str]:
    """The argument list for `git -C root args...` with the tree's programs turned off."""
    command = ["git", "-C", str(root)]
    for setting in SAFE_SETTINGS:
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
    root: str | os.PathLike | Path, *args: str, timeout: float, check: bool = False
) -> subprocess.CompletedProcess[bytes]:
    """`git -C root args...`, output captured as bytes; raises OSError when git is missing and
    subprocess.SubprocessError on a time-out (or a failure, with `check`)."""
    return subprocess.run(
        git_command(root, *args),
        capture_output=True,
        timeout=timeout,
        check=check,
        stdin=subprocess.DEVNULL,
        env=git_environment(),
    )
