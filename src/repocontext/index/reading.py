"""Reading the tree as data: regular files inside the root, never through a link, never
blocking, never more than a cap.

A repository is someone else's data. Git's index may still list `etc/passwd` after `etc`
became a link to `/etc`; a file committed as text may be a FIFO or a link to `/dev/zero` by the
time it is read. So a file of the tree is reached from the root one folder at a time, each
opened with O_NOFOLLOW (a link at any step is refused), the last one checked with lstat
before it is opened (a FIFO or a device is never opened) and with fstat after (nothing
swapped it in between), and read up to a cap. `RefusedFile.reason` is the line
`status --skipped` shows.
"""

from __future__ import annotations

import errno
import os
import stat

MAX_FILE_BYTES = 1_000_000  # the most of a file the tree is read for: larger ones are skipped

_FLAGS = os.O_RDONLY | getattr(os, "O_CLOEXEC", 0) | getattr(os, "O_NOCTTY", 0)
_NOFOLLOW = getattr(os, "O_NOFOLLOW", 0)
_NONBLOCK = getattr(os, "O_NONBLOCK", 0)
_DIRECTORY = getattr(os, "O_DIRECTORY", 0)
_WALKS = os.open in os.supports_dir_fd and bool(_NOFOLLOW and _DIRECTORY)


class RefusedFile(Exception):
    """A path of the tree that is not read: a link on the way, not a regular file."""

    def __init__(self, reason: str):
        super().__init__(reason)
        self.reason = reason


def source_text(data: bytes) -> tuple[str, bool]:
    """A file's bytes as text, and whether they were not UTF-8. Those are read as Latin-1, as
    Neovim's default 'fileencodings' (ucs-bom,utf-8,default,latin1) opens them, so that the
    index holds the names the user sees (decoded as UTF-8 with replacement, a Latin-1 name
    such as `Müller_client` became `M\ufffdller_client` and its symbol `er_client`, so its
    context was wrong). Latin-1 decodes every byte."""
    try:
        return data.decode("utf-8"), False
    except UnicodeDecodeError:
        return data.decode("latin-1"), True


def read_in_root(root: str | os.PathLike, rel: str, limit: int) -> bytes:
    """At most `limit` + 1 bytes of the regular file `rel` ("/"-separated) below `root`.

    Raises RefusedFile for a link at any step or anything but a regular file, and OSError
    (FileNotFoundError among them) for what the system refuses."""
    fd = open_in_root(root, rel)
    with os.fdopen(fd, "rb") as fh:
        return fh.read(limit + 1)


def stat_in_root(root: str | os.PathLike, rel: str) -> os.stat_result:
    """The stat of the regular file `rel` below `root`, reached as `read_in_root` reaches it."""
    parent, name = _parent(root, rel)
    try:
        return _regular_lstat(name, parent)
    finally:
        if parent is not None:
            os.close(parent)


def open_in_root(root: str | os.PathLike, rel: str) -> int:
    """A read-only descriptor of the regular file `rel` below `root` (see `read_in_root`)."""
    parent, name = _parent(root, rel)
    try:
        _regular_lstat(name, parent)
        fd = os.open(name, _FLAGS | _NOFOLLOW | _NONBLOCK, dir_fd=parent)
    except OSError as exc:
        if exc.errno == errno.ELOOP:
            raise RefusedFile("symbolic link") from exc
        raise
    finally:
        if parent is not None:
            os.close(parent)
    return _checked(fd)


def read_regular(path: str | os.PathLike, limit: int) -> bytes:
    """At most `limit` + 1 bytes of `path` if it is a regular file (links followed: the path is
    the user's, or git's own), without ever blocking on a FIFO or reading a device."""
    st = os.stat(path)
    if not stat.S_ISREG(st.st_mode):
        raise RefusedFile("not a regular file")
    fd = _checked(os.open(path, _FLAGS | _NONBLOCK))
    with os.fdopen(fd, "rb") as fh:
        return fh.read(limit + 1)


def _parent(root: str | os.PathLike, rel: str) -> tuple[int | None, str]:
    """(a descriptor of rel's folder, opened one step at a time from the root without
    following a link; rel's last name). Where the system cannot open relative to a folder
    (no dir_fd), None and an absolute path checked by realpath instead."""
    parts = rel.split("/")
    if any(p in ("", ".", "..") for p in parts):
        raise RefusedFile("path leaves the project folder")
    if not _WALKS:
        full = os.path.join(root, *parts)
        folder = os.path.realpath(os.path.dirname(full))
        inside = os.path.realpath(root)
        if folder != inside and not folder.startswith(inside + os.sep):
            raise RefusedFile("inside a symbolic link to a folder")
        return None, full
    fd = os.open(root, _FLAGS | _DIRECTORY)
    try:
        for i, part in enumerate(parts[:-1]):
            try:
                nxt = os.open(part, _FLAGS | _DIRECTORY | _NOFOLLOW, dir_fd=fd)
            except OSError as exc:
                if exc.errno in (errno.ELOOP, errno.ENOTDIR):
                    where = "/".join(parts[: i + 1])
                    raise RefusedFile(f"inside {where}/, a symbolic link or not a folder") from exc
                raise
            os.close(fd)
            fd = nxt
    except BaseException:
        os.close(fd)
        raise
    return fd, parts[-1]


def _regular_lstat(name: str, parent: int | None) -> os.stat_result:
    st = os.stat(name, dir_fd=parent, follow_symlinks=False)
    if stat.S_ISLNK(st.st_mode):
        raise RefusedFile("symbolic link")
    if not stat.S_ISREG(st.st_mode):
        raise RefusedFile("not a regular file")
    return st


def _checked(fd: int) -> int:
    """`fd` if it is a regular file, in blocking mode again; else closed and refused."""
    try:
        st = os.fstat(fd)
        if not stat.S_ISREG(st.st_mode):
            raise RefusedFile("not a regular file")
        if _NONBLOCK:
            os.set_blocking(fd, True)
    except BaseException:
        os.close(fd)
        raise
    return fd
