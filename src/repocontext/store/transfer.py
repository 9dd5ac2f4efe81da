"""An index moved between machines: written once (in CI, for a commit), brought up to date on
each developer's machine instead of built there.

The file is the index itself, copied with SQLite's online backup (a consistent snapshot even
while another process writes), plus what the importer must check, in `meta`: the version of
repocontext that wrote it, the schema (SQLite's user_version) and the embedding model of its
vectors (already recorded by vectors.py). Paths in an index are relative to the root, so the
copy fits any checkout of the same repository; the importer's next index run re-reads only
what differs (a file whose content hash matches is not chunked again, its vectors are kept).
"""

from __future__ import annotations

import os
import time
from dataclasses import dataclass
from pathlib import Path

import apsw

from ..errors import IndexForeign
from .database import Store, private_file
from .schema import APPLICATION_ID, SCHEMA_VERSION, SQLITE_MAGIC


@dataclass(frozen=True)
class ExportInfo:
    """What an export file says of itself."""

    version: str  # repocontext's, at export
    schema: int
    embed_model: str | None  # the vectors' model key (None: no vectors)
    embed_description: str | None
    commit: str | None  # HEAD of the exported checkout, when it was a git one
    exported_at: str
    files: int


def export_index(store: Store, dest: Path, meta: dict[str, str]) -> None:
    """Copy the open index to `dest` (replaced atomically, 0600) with `meta` added."""
    dest = Path(dest)
    partial = dest.with_name(f".{dest.name}.{os.getpid()}.partial")
    partial.unlink(missing_ok=True)
    private_file(partial)
    try:
        copy = apsw.Connection(str(partial))
        try:
            with store.guarded(), copy.backup("main", store.db, "main") as backup:
                backup.step(-1)
            copy.execute("PRAGMA journal_mode=DELETE")  # one self-contained file
            with copy:
                for key, value in meta.items():
                    copy.execute(
                        "INSERT OR REPLACE INTO meta(key, value) VALUES (?, ?)", (key, value)
                    )
        finally:
            copy.close()
        os.replace(partial, dest)
    finally:
        partial.unlink(missing_ok=True)


def read_export(path: Path) -> ExportInfo:
    """The export's own description; IndexForeign if it is not a repocontext export."""
    path = Path(path)
    try:
        with open(path, "rb") as fh:
            head = fh.read(len(SQLITE_MAGIC))
    except OSError as exc:
        raise IndexForeign(f"cannot read {path} ({exc.strerror or exc})") from None
    if head != SQLITE_MAGIC:
        raise IndexForeign(f"{path} is not a repocontext index export (not an SQLite file)")
    try:
        db = apsw.Connection(
            f"file:{path}?mode=ro&immutable=1",
            flags=apsw.SQLITE_OPEN_READONLY | apsw.SQLITE_OPEN_URI,
        )
        try:
            app_id, schema = db.execute(
                "SELECT (SELECT application_id FROM pragma_application_id()),"
                " (SELECT user_version FROM pragma_user_version())"
            ).fetchone()
            if app_id != APPLICATION_ID:
                raise IndexForeign(f"{path} is an SQLite file that repocontext did not write")
            meta = dict(db.execute("SELECT key, value FROM meta"))
            files = db.execute("SELECT count(*) FROM files").fetchone()[0]
        finally:
            db.close()
    except apsw.Error as exc:
        raise IndexForeign(f"{path} cannot be read as an index ({exc})") from None
    if "export_version" not in meta:
        raise IndexForeign(
            f"{path} is an index file, not an export; make one with `repocontext index --export`"
        )
    return ExportInfo(
        version=meta["export_version"],
        schema=schema,
        embed_model=meta.get("embed_model"),
        embed_description=meta.get("embed_model_description"),
        commit=meta.get("export_commit"),
        exported_at=meta.get("export_time", ""),
        files=files,
    )


def install_export(source: Path, index_file: Path) -> None:
    """Put the export at `index_file` (written beside it, then renamed: a reader sees the old
    index or the new one, never half of one); the export's own keys are removed from it."""
    index_file = Path(index_file)
    partial = index_file.with_name(f".{index_file.name}.{os.getpid()}.partial")
    partial.unlink(missing_ok=True)
    private_file(partial)
    try:
        src = apsw.Connection(
            f"file:{source}?mode=ro&immutable=1",
            flags=apsw.SQLITE_OPEN_READONLY | apsw.SQLITE_OPEN_URI,
        )
        copy = apsw.Connection(str(partial))
        try:
            with copy.backup("main", src, "main") as backup:
                backup.step(-1)
            with copy:
                copy.execute("DELETE FROM meta WHERE key LIKE 'export\\_%' ESCAPE '\\'")
                # every file is stat'ed again on this machine: its checkout's mtimes differ
                copy.execute(
                    "INSERT OR REPLACE INTO meta(key, value) VALUES ('imported_at', ?)",
                    (time.strftime("%Y-%m-%dT%H:%M:%S"),),
                )
        finally:
            copy.close()
            src.close()
        os.replace(partial, index_file)
    finally:
        partial.unlink(missing_ok=True)


__all__ = ["SCHEMA_VERSION", "ExportInfo", "export_index", "install_export", "read_export"]
