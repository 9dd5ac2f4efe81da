"""Big cached files loaded without hashing them each time: a stamp beside each says what it is.

A model file (the generation model's GGUF, an ONNX graph optimised once and kept) is
code-like input to a native library: one swapped, truncated or changed in place must never
be loaded as if it were the right one, yet hashing hundreds of megabytes at every load costs
more than the cache saves. So, when such a file is written or checked, a stamp is written
beside it: a private file of ours that records the file's sha256 (or what it was made from)
with its size, mtime, ctime, inode and device. A later load trusts the file only when it is a
regular file (not a link) of ours or root's that no one else can write, in a folder no one
else can write, and its stat is still the one stamped: a file changed in place has another
ctime (os.utime cannot set it back), one put in its place another inode.

Used by complete/models.py (the default GGUF) and embed/runtime.py (ONNX Runtime's optimised
graphs).
"""

from __future__ import annotations

import json
import os
import stat
from pathlib import Path
from typing import Any

from .files import private_file


def owners() -> tuple[int, ...]:
    """Whose cache files can be trusted: ours, and root's (who could change them anyway)."""
    return (os.getuid(), 0)


def trusted_file(path: Path) -> os.stat_result | None:
    """`path`'s stat when it is a regular file (not a link) of ours or root's that no one
    else can write, made 0600 if it is ours; else None."""
    try:
        st = os.lstat(path)
    except OSError:
        return None
    if not stat.S_ISREG(st.st_mode) or st.st_uid not in owners() or st.st_mode & 0o022:
        return None
    if st.st_uid == os.getuid() and st.st_mode & 0o077:
        try:
            os.chmod(path, 0o600)
            st = os.lstat(path)
        except OSError:
            pass
    return st


def stamp_of(st: os.stat_result, sha256: str) -> dict[str, Any]:
    return {
        "sha256": sha256,
        "size": st.st_size,
        "mtime_ns": st.st_mtime_ns,
        "ctime_ns": st.st_ctime_ns,  # os.utime cannot set it back: any write moves it
        "inode": st.st_ino,
        "device": st.st_dev,
    }


def read_stamp(stamp: Path) -> dict[str, Any] | None:
    """The stamp's record, or None when there is none that can be trusted: a stamp that is
    no private file of ours (or root's) is not read."""
    if trusted_file(stamp) is None:
        return None
    try:
        record = json.loads(stamp.read_text())
    except (OSError, ValueError):
        return None
    return record if isinstance(record, dict) else None


def write_stamp(target: Path, stamp: Path, sha256: str) -> None:
    """Record at `stamp` that `target`, as it is now, matched `sha256`: a private file, put
    in place whole. A cache that cannot be written only costs a hash (or a rebuild) next time."""
    tmp = stamp.with_name(f"{stamp.name}.tmp{os.getpid()}")
    try:
        record = stamp_of(os.lstat(target), sha256)
        tmp.unlink(missing_ok=True)
        private_file(tmp)
        tmp.write_text(json.dumps(record))  # an existing file keeps its 0600
        os.replace(tmp, stamp)
    except OSError:
        tmp.unlink(missing_ok=True)


def stamped(target: Path, stamp: Path, sha256: str) -> bool:
    """Whether `target` is a trusted file (`trusted_file`) whose stat is the one stamped for
    `sha256` at `stamp`: then it can be loaded without hashing it."""
    st = trusted_file(target)
    return st is not None and read_stamp(stamp) == stamp_of(st, sha256)
