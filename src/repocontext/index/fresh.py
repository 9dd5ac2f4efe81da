"""Whether the files under a root changed since the index last caught up with them, cheaply.

A search answers from the index, so the index must match the working tree when it answers:
an uncommitted `git mv`, a saved edit, a `git stash` or an `rm` must not leave it naming a
file that is gone or lines that moved. (Context needs none of this: it checks each snippet
against the disk, context/engine.py.) Each index run leaves a stamp in meta: the modification
time of every folder its list of files depends on (a file added, removed or renamed changes
its folder's), the stat of each file it skipped for what it is or holds, and the stat of
git's index and exclude file. With the stat of every indexed file, which the index keeps
anyway, that answers "has anything changed?" with one stat per file and folder, no git call
and no walk (the cost is in bench/results/cli_speed.md). When something has, the incremental
indexer brings the index up to date before the search runs (index/indexer.py, `refresh`).

A time later than two seconds before the run started is not trusted (it is stored as 0,
which never matches): a file created during the run, or in the same clock tick as the change
the stamp saw, would not change its folder's time again.

Only the standard library here: a search on an unchanged tree imports nothing more.
"""

from __future__ import annotations

import json
import os
from collections.abc import Iterable
from pathlib import Path

TREE_STAMP = "tree_stamp"  # meta: the stamp as JSON; "" while an index run is under way
CHUNKER_META = "chunker_version"  # meta: the lang/chunking.py CHUNKER_VERSION that cut it
_RACY_NS = 2_000_000_000


def make_stamp(
    root: Path,
    folders: Iterable[str],
    watch: Iterable[str],
    skipped: dict[str, tuple[int, int]],
    started_ns: int,
) -> str:
    """The stamp of a run that started at `started_ns`: `folders` root-relative, `watch`
    absolute, `skipped` the (size, mtime_ns) of files left out for their size or content."""
    limit = started_ns - _RACY_NS

    def trusted(mtime_ns: int) -> int:
        return 0 if mtime_ns >= limit else mtime_ns

    base = str(root)
    stamp_folders = {}
    for rel in folders:
        try:
            st = os.stat(f"{base}/{rel}" if rel else base)
        except OSError:
            continue  # gone already: its parent's time changed, and that one is not trusted
        stamp_folders[rel] = trusted(st.st_mtime_ns)
    stamp_watch: dict[str, list[int] | None] = {}
    for path in watch:
        try:
            st = os.stat(path)
            stamp_watch[path] = [st.st_size, trusted(st.st_mtime_ns)]
        except OSError:
            stamp_watch[path] = None
    return json.dumps(
        {
            "folders": stamp_folders,
            "watch": stamp_watch,
            "skipped": {rel: [size, trusted(m)] for rel, (size, m) in skipped.items()},
        },
        separators=(",", ":"),
    )


def read_stamp(store) -> dict | None:
    """The last run's stamp, or None: a run stopped before its end, or an index from before
    stamps."""
    raw = store.get_meta(TREE_STAMP)
    try:
        stamp = json.loads(raw) if raw else None
        if stamp is not None and {"folders", "watch", "skipped"} <= stamp.keys():
            return stamp
    except (ValueError, AttributeError):
        pass
    return None


def tree_changed(root: Path, store) -> bool:
    """Whether a file under `root` may differ from the index: an indexed file's size or time
    changed or it is gone, a watched folder's time changed, or a skipped file's stat did.
    False for an index that cannot be written (nothing could be done about it)."""
    if store.readonly:
        return False
    stamp = read_stamp(store)
    if stamp is None:
        return True
    try:
        fd = os.open(root, os.O_RDONLY | os.O_DIRECTORY)
    except OSError:
        return True
    try:
        return _differs(fd, stamp, store)
    except (OSError, TypeError, ValueError):
        return True  # gone, or cannot be looked at: the indexer decides what that means
    finally:
        os.close(fd)


def _differs(fd: int, stamp: dict, store) -> bool:
    """The comparison itself; paths relative to the root's descriptor `fd` (a tenth faster
    than absolute ones: the root's own path is not looked up again for each)."""
    stat = os.stat
    for rel, mtime_ns in stamp["folders"].items():
        if stat(rel or ".", dir_fd=fd).st_mtime_ns != mtime_ns:
            return True
    for path, known in stamp["watch"].items():
        if known is None:
            if os.path.exists(path):
                return True
        elif [(st := stat(path)).st_size, st.st_mtime_ns] != known:
            return True
    lstat = os.lstat
    for rel, (size, mtime_ns) in stamp["skipped"].items():
        st = lstat(rel, dir_fd=fd)
        if st.st_mtime_ns != mtime_ns or st.st_size != size:
            return True
    for rel, size, mtime_ns in store.file_stats():
        st = lstat(rel, dir_fd=fd)
        if st.st_mtime_ns != mtime_ns or st.st_size != size:
            return True
    return False


def cut_by_another_chunker(store, version: int) -> bool:
    """Whether the index's chunks were cut by a chunker version other than `version` (or
    before versions were recorded), and it can be written: then every file is read and cut
    again, though none changed, so a file untouched since keeps no old names or cuts (the
    version comes from the caller: this module imports only the standard library)."""
    if store.readonly:
        return False
    return store.get_meta(CHUNKER_META) != str(version)
