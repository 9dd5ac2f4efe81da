"""What an index keeps on disk beside its SQL, none of which SQLite does: folders and files
private to their owner (`private_dir`, `private_file`: an index holds the user's source), and
the three lock files next to the index file: `<index>.lock`, the writers' (`writer_lock`, asked
by `index_writer`), `<index>.schema.lock`, the making of a schema (`schema_lock`), and
`<index>.open.lock`, opening the file against moving it (`opening_lock`)."""

from __future__ import annotations

import contextlib
import fcntl
import os
from collections.abc import Iterator
from pathlib import Path

from ..errors import IndexBusy, IndexError_


def private_dir(path: Path) -> None:
    """`path` and any ancestor created for it: mode 0700 whatever the umask (an index holds the
    user's source; on a shared machine no one else may read it)."""
    missing = []
    p = path
    while not p.exists():
        missing.append(p)
        p = p.parent
    for d in reversed(missing):
        try:
            d.mkdir(mode=0o700)
        except FileExistsError:
            pass
        os.chmod(d, 0o700)
    if not missing and path.is_dir() and path.name in ("indexes", "crashes"):
        os.chmod(path, 0o700)  # ours: private even if an older version made it 0755


def private_file(path: Path) -> None:
    """Create `path` (if absent) readable and writable by its owner only, whatever the umask;
    SQLite gives its -wal and -shm files the database file's mode."""
    fd = os.open(path, os.O_CREAT | os.O_RDWR, 0o600)
    try:
        os.fchmod(fd, 0o600)
    finally:
        os.close(fd)


def index_writer(path: Path) -> int | None:
    """The process id of the writer holding the index at `path` (0 when its id is unknown),
    or None when no one does. Creates nothing; the shared lock it takes to find out lasts
    microseconds (a writer starting in them is told the index is busy, as with any writer)."""
    lock_path = Path(path).with_name(Path(path).name + ".lock")
    try:
        fd = os.open(lock_path, os.O_RDONLY)
    except OSError:
        return None
    try:
        try:
            fcntl.flock(fd, fcntl.LOCK_SH | fcntl.LOCK_NB)
        except BlockingIOError:
            other = os.pread(fd, 32, 0).decode(errors="replace").strip()
            return int(other) if other.isdigit() else 0
        return None
    finally:
        os.close(fd)  # releases the shared lock, if taken


@contextlib.contextmanager
def writer_lock(index_file: Path, then: str) -> Iterator[None]:
    """The index writers' lock: flock on `<index>.lock`, which holds the holder's pid. Not
    blocking: a second writer gets IndexBusy, whose message ends with `then` (what to do)."""
    fd = _open_lock_file(index_file.with_name(index_file.name + ".lock"))
    try:
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            other = os.pread(fd, 32, 0).decode(errors="replace").strip() or "another process"
            raise IndexBusy(
                f"another `repocontext index` (pid {other}) is updating this index; "
                f"wait for it to finish, {then}",
                pid=int(other) if other.isdigit() else None,
            ) from None
        os.ftruncate(fd, 0)
        os.pwrite(fd, str(os.getpid()).encode(), 0)
        yield
    finally:
        os.close(fd)


@contextlib.contextmanager
def opening_lock(index_file: Path, *, moving: bool) -> Iterator[None]:
    """Opening the index file, against moving it. SQLite opens the file, and its -wal and -shm
    files by name at the first read: a file renamed between the two (`index --rebuild` sets it
    aside, an import swaps one in) is read through the new file's log, a mix of two indexes
    (SQLite's "disk I/O error", or the other index's rows). An opener holds this shared until
    its first read is done; whoever renames the file holds it exclusive (`moving`).
    Milliseconds either way; a connection once open reads its own file whatever is renamed."""
    with _waiting_lock(index_file, ".open.lock", fcntl.LOCK_EX if moving else fcntl.LOCK_SH):
        yield


@contextlib.contextmanager
def schema_lock(index_file: Path) -> Iterator[None]:
    """Making or migrating the schema: one process at a time, the others wait (a few
    milliseconds) and then find it made. A lock file of its own, so that it never
    competes with an index run's write lock."""
    with _waiting_lock(index_file, ".schema.lock", fcntl.LOCK_EX):
        yield


@contextlib.contextmanager
def _waiting_lock(index_file: Path, suffix: str, operation: int) -> Iterator[None]:
    """flock `operation` on the lock file `<index><suffix>`, waiting for it."""
    fd = _open_lock_file(index_file.with_name(index_file.name + suffix))
    try:
        fcntl.flock(fd, operation)
        yield
    finally:
        os.close(fd)


def _open_lock_file(lock_path: Path) -> int:
    """The lock file's descriptor, the file made if absent; one that cannot be opened (a full
    disk, a folder in its place) is one clear line."""
    try:
        return os.open(lock_path, os.O_RDWR | os.O_CREAT, 0o600)
    except OSError as exc:
        raise IndexError_(
            f"cannot open the index's lock file {lock_path} ({exc.strerror or exc}); check the "
            "disk, or move that file away"
        ) from None
