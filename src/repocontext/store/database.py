"""The SQLite file of one repository: schema, migrations, transactions, locks and writes.

Nothing else in the package writes SQL. The binding is apsw because it bundles a current SQLite
(FTS5 with the trigram tokenizer, contentless-delete tables, extension loading for sqlite-vec),
which the stdlib sqlite3 of many Pythons lacks.

Consistency rules the rest of the package relies on:
- a file's rows (files, chunks, both FTS tables) change together in one transaction, so a run
  killed at any point leaves each file either wholly old or wholly new;
- writers take an exclusive lock file beside the database (`write_lock`); readers never wait for
  it (WAL mode);
- the file is recognised by its application_id; anything else at the path is refused, never
  overwritten.

(Longer than most modules: it is where the SQL that writes lives, by design; the queries are
in queries.py, the vectors and the graph in vectors.py and graph.py, the lock files and the
private modes in files.py.)
"""

from __future__ import annotations

import contextlib
import importlib.util
import os
import time
from collections.abc import Iterable, Iterator, Sequence
from pathlib import Path
from typing import Any

import apsw

from ..errors import (
    IndexBusy,
    IndexCorrupt,
    IndexDiskFull,
    IndexError_,
    IndexForeign,
    IndexMissing,
    IndexTooNew,
)
from .files import opening_lock, private_dir, private_file, schema_lock, writer_lock
from .graph import GraphTable
from .queries import ChunkQueries
from .records import ChunkRecord, FileRecord, FileState, RefRecord
from .schema import APPLICATION_ID, MIGRATIONS, SCHEMA_VERSION, SQLITE_MAGIC
from .vectors import VectorTable


class _Batch:
    def __init__(self, store: Store, seconds: float):
        self.store = store
        self.seconds = seconds
        self.started: float | None = None

    def tick(self) -> None:
        """Call between units of work: commits when the time is up, then opens a new one."""
        now = time.monotonic()
        if self.started is not None and now - self.started >= self.seconds:
            self.commit()
        if self.started is None:
            with self.store.guarded():
                self.store.db.execute("BEGIN")
            self.started = now
            self.store._in_batch = True

    def commit(self) -> None:
        self._end("COMMIT")

    def rollback(self) -> None:
        """After an error mid-file: drop the open batch rather than commit a half-written file."""
        self._end("ROLLBACK")

    def _end(self, verb: str) -> None:
        if self.started is not None:
            self.started = None
            self.store._in_batch = False
            if verb == "ROLLBACK" and self.store.db.in_transaction is False:
                return  # SQLite already rolled back (a full disk or I/O error does that)
            with self.store.guarded():
                self.store.db.execute(verb)


def _translate(exc: apsw.Error, path: Path) -> Exception:
    if isinstance(exc, (apsw.CorruptError, apsw.NotADBError)):
        return IndexCorrupt(
            f"the index {path} is damaged ({exc}); run `repocontext index --rebuild` to rebuild it"
        )
    if isinstance(exc, apsw.BusyError):
        return IndexBusy(f"the index {path} is busy; try again in a moment")
    if isinstance(exc, apsw.FullError):
        return IndexDiskFull(
            f"the disk holding {path} is full; free some space (the index is intact up to the "
            "last file written) and run again"
        )
    if isinstance(exc, (apsw.ReadOnlyError, apsw.CantOpenError, apsw.PermissionsError)):
        return IndexError_(
            f"the index {path} cannot be written ({exc}); make it and its directory writable, "
            "or set REPOCONTEXT_HOME to a directory you can write"
        )
    if isinstance(exc, apsw.IOError):
        return IndexError_(f"reading or writing {path} failed ({exc}); check the disk")
    return exc


def _vec0_path() -> str:
    """sqlite-vec's loadable extension, as `sqlite_vec.loadable_path()` names it, found
    without importing the package: its __init__ imports sqlite3 and numpy.typing, a tenth of
    a second that a command-line search would spend before its first query."""
    spec = importlib.util.find_spec("sqlite_vec")
    if spec is None or not spec.submodule_search_locations:
        raise IndexCorrupt("the sqlite-vec package is not installed; reinstall repocontext")
    return os.path.join(list(spec.submodule_search_locations)[0], "vec0")


def sqlite_versions() -> str:
    """SQLite's and sqlite-vec's versions, from an in-memory connection (for :checkhealth);
    raises IndexCorrupt when the extension cannot be loaded."""
    conn = apsw.Connection(":memory:")
    try:
        conn.enable_load_extension(True)
        conn.load_extension(_vec0_path())
        version = _first(conn.execute("SELECT vec_version()").fetchone())
    except apsw.Error as exc:
        raise IndexCorrupt(f"the sqlite-vec extension cannot be loaded ({exc})") from exc
    finally:
        conn.close()
    return f"SQLite {apsw.sqlite_lib_version()} with sqlite-vec {version}"


class Store(ChunkQueries):
    """One open index database: its connection, schema, locks and writes; its queries are in
    queries.py. Use as a context manager or call close()."""

    def __init__(self, path: Path, *, create: bool = True):
        """`create`: make the file if it is missing (an index run); otherwise it must exist.
        A file this user cannot write (or in a directory they cannot write) is opened
        read-only: search and status work on it, an index run says why it cannot."""
        self.path = Path(path)
        self._in_batch = False
        # FTS5 expression -> matching chunks counted up to a cap (term_counts); emptied by
        # this store's writes, approximate after another process's (only a term's rarity)
        self._term_counts: dict[tuple[str, int], int] = {}
        if not create and not self.path.exists():
            raise IndexMissing(f"no index at {self.path}; run `repocontext index` first")
        self._check_header()
        self.readonly = self.path.exists() and not (
            os.access(self.path, os.W_OK) and os.access(self.path.parent, os.W_OK)
        )
        try:
            if not self.readonly:
                private_dir(self.path.parent)
                private_file(self.path)
                for side in ("-wal", "-shm"):
                    with contextlib.suppress(FileNotFoundError):  # the last closer removes them
                        os.chmod(str(self.path) + side, 0o600)
        except PermissionError as exc:
            raise IndexError_(
                f"cannot create the index in {self.path.parent} ({exc.strerror}); set "
                "REPOCONTEXT_HOME to a directory you can write"
            ) from exc
        except OSError as exc:
            raise IndexError_(
                f"cannot create the index in {self.path.parent} ({exc.strerror or exc}); check "
                "the disk, or set REPOCONTEXT_HOME to another directory"
            ) from exc
        # an immutable read-only open has no log to mix up; any other holds the opening lock
        # until its first read has opened the -wal and -shm files of the very file it opened
        # (`index --rebuild` renames the file aside under it: files.opening_lock)
        opening = (
            contextlib.nullcontext() if self.readonly else opening_lock(self.path, moving=False)
        )
        with opening:
            try:
                if self.readonly:
                    # read-only: with the WAL files absent and no right to create them, only an
                    # immutable open reads the file at all
                    self.db = apsw.Connection(
                        f"file:{self.path}?mode=ro&immutable=1",
                        flags=apsw.SQLITE_OPEN_READONLY | apsw.SQLITE_OPEN_URI,
                    )
                else:
                    self.db = apsw.Connection(str(self.path))
                self.db.set_busy_timeout(5000)
                self._open()
            except apsw.Error as exc:
                raise _translate(exc, self.path) from exc
            try:
                self._inode: int | None = os.stat(self.path).st_ino
            except FileNotFoundError:
                # an index set aside by another's hand (not repocontext's) since the open: the
                # one opened is no longer at the path (replaced() says so; a writer refuses)
                self._inode = None
        self.vectors = VectorTable(self)
        self.graph = GraphTable(self)

    def replaced(self) -> bool:
        """Whether the file at this path is no longer the one opened (`index --rebuild` set it
        aside and built a new one): a long-lived reader must open the new one."""
        if self._inode is None:
            return True
        try:
            return os.stat(self.path).st_ino != self._inode
        except OSError:
            return True

    # --- opening and schema --------------------------------------------------------------
    def _check_header(self) -> None:
        """Refuse a file that is not SQLite before SQLite gets a chance to write to it."""
        try:
            with open(self.path, "rb") as fh:
                head = fh.read(len(SQLITE_MAGIC))
        except FileNotFoundError:
            return
        except IsADirectoryError:
            raise IndexForeign(
                f"{self.path} is a directory, not an index; move it away or set REPOCONTEXT_HOME"
            ) from None
        if head and head != SQLITE_MAGIC:
            raise IndexForeign(
                f"{self.path} is not a repocontext index (not an SQLite file); it was left "
                "untouched: move it away, or run `repocontext index --rebuild` to set it aside"
            )

    def _open(self) -> None:
        # one statement, so one snapshot: read apart, another process's first schema could
        # commit between them, and its tables would be seen without its application_id
        row = self.db.execute(
            "SELECT (SELECT application_id FROM pragma_application_id()),"
            " (SELECT user_version FROM pragma_user_version()),"
            " (SELECT count(*) FROM sqlite_schema)"
        ).fetchone()
        assert row is not None  # a SELECT of scalar subqueries has its one row
        app_id, version, tables = row
        if app_id != APPLICATION_ID and (app_id != 0 or tables):
            raise IndexForeign(
                f"{self.path} is an SQLite file that repocontext did not write; it was left "
                "untouched: move it away, or run `repocontext index --rebuild` to set it aside"
            )
        if version > SCHEMA_VERSION:
            raise IndexTooNew(
                f"the index {self.path} was written by a newer repocontext (schema {version}, "
                f"this one knows {SCHEMA_VERSION}); upgrade repocontext or run "
                "`repocontext index --rebuild`"
            )
        self._load_sqlite_vec()
        if self.readonly:
            if version < SCHEMA_VERSION:
                raise IndexError_(
                    f"the index {self.path} is read-only and older than this repocontext; make "
                    "it writable, or run `repocontext index --rebuild` with a writable "
                    "REPOCONTEXT_HOME"
                )
            return
        self.db.execute("PRAGMA journal_mode=WAL")
        self.db.execute("PRAGMA foreign_keys=ON")
        self.db.execute("PRAGMA synchronous=NORMAL")
        if version < SCHEMA_VERSION:
            with schema_lock(self.path):
                # another process may have made the schema while this one waited
                version = self._scalar("PRAGMA user_version")
                if version < SCHEMA_VERSION:
                    self._migrate(version)

    def _load_sqlite_vec(self) -> None:
        try:
            self.db.enable_load_extension(True)
            self.db.load_extension(_vec0_path())
        except apsw.Error as exc:
            raise IndexCorrupt(
                f"the sqlite-vec extension cannot be loaded ({exc}); reinstall repocontext "
                "(pip install --force-reinstall sqlite-vec)"
            ) from exc
        finally:
            self.db.enable_load_extension(False)

    def _migrate(self, current: int) -> None:
        with self.db:
            for version in range(current + 1, SCHEMA_VERSION + 1):
                self.db.execute(MIGRATIONS[version])
            self.db.execute(f"PRAGMA application_id={APPLICATION_ID}")
            self.db.execute(f"PRAGMA user_version={SCHEMA_VERSION}")

    def _scalar(self, sql: str, params: Sequence[Any] = ()) -> Any:
        row = self.db.execute(sql, params).fetchone()
        return row[0] if row else None

    def close(self) -> None:
        self.db.close()

    def __enter__(self) -> Store:
        return self

    def __exit__(self, *exc_info) -> None:
        self.close()

    @contextlib.contextmanager
    def guarded(self) -> Iterator[None]:
        """Translate SQLite errors into the package's own for the enclosed statements."""
        try:
            yield
        except apsw.Error as exc:
            raise _translate(exc, self.path) from exc

    @contextlib.contextmanager
    def write_lock(self) -> Iterator[None]:
        """Exclusive, non-blocking lock for index writers; a second writer gets IndexBusy."""
        if self.readonly:
            raise IndexError_(
                f"the index {self.path} is read-only; make it and its directory writable, or "
                "set REPOCONTEXT_HOME to a directory you can write"
            )
        with writer_lock(self.path, "then run again"):
            if self.replaced():
                # `index --rebuild` set this file aside between its opening and this lock:
                # what would be written here would land in the file set aside (issue 49)
                raise IndexBusy(
                    f"another `repocontext index --rebuild` set the index {self.path} aside "
                    "while this run started; run again to update the new one"
                )
            yield

    def _atomic(self):
        """A savepoint, unless a batch transaction is open: FTS5 flushes its pending terms at
        every savepoint release, which made one savepoint per file the largest cost of a
        cold index. Inside a batch, an error rolls the whole batch back instead."""
        return contextlib.nullcontext() if self._in_batch else self.db

    def batch(self, seconds: float = 1.0) -> _Batch:
        """Group many writes into one transaction, committed about every `seconds`.

        A commit per file costs more than the file's own writes; one commit per second keeps
        a killed run's loss to that second, and each file's rows still change together.
        """
        return _Batch(self, seconds)

    # --- meta ------------------------------------------------------------------------------
    def get_meta(self, key: str) -> str | None:
        with self.guarded():
            return self._scalar("SELECT value FROM meta WHERE key = ?", (key,))

    def set_meta(self, key: str, value: str) -> None:
        with self.guarded(), self.db:
            self.db.execute("INSERT OR REPLACE INTO meta(key, value) VALUES (?, ?)", (key, value))

    # --- files -----------------------------------------------------------------------------
    def file_states(self) -> dict[str, FileState]:
        with self.guarded():
            rows = self.db.execute("SELECT path, id, size, mtime_ns, content_hash FROM files")
            return {r[0]: FileState(r[1], r[2], r[3], r[4]) for r in rows}

    def file_stats(self) -> list[tuple[str, int, int]]:
        """(path, size, mtime_ns) of every indexed file: what a freshness check compares."""
        with self.guarded():
            return list(self.db.execute("SELECT path, size, mtime_ns FROM files"))

    def replace_file(
        self, record: FileRecord, chunks: Iterable[ChunkRecord], refs: Iterable[RefRecord] = ()
    ) -> set[str]:
        """Write a file, its chunks and its references, replacing any previous version, atomically.

        A chunk the previous version already had (same text, kind, names, signature, doc and
        doc comment lines) keeps its row and only has its lines moved: a save or a pull
        usually changes one function of a file, and rewriting the others' full-text and trigram
        rows was most of the cost of catching up (FTS5 deletions cost more the larger the
        index). Returns the names the previous version referenced (their centrality may
        change).
        """
        chunks = list(chunks)
        self._term_counts.clear()
        with self.guarded(), self._atomic():
            file_id, kept, old_names = self._file_row(record, chunks)
            # Explicit ids (writers hold the write lock) let each table take one executemany.
            first = (self._scalar("SELECT max(id) FROM chunks") or 0) + 1
            ids: list[int] = []
            new: list[tuple[int, ChunkRecord]] = []
            for index, ch in enumerate(chunks):
                if index in kept:
                    ids.append(kept[index])
                else:
                    ids.append(first + len(new))
                    new.append((ids[-1], ch))
            self.db.executemany(
                "UPDATE chunks SET start_line = ?, end_line = ? WHERE id = ?",
                [(chunks[i].start_line, chunks[i].end_line, cid) for i, cid in kept.items()],
            )
            self.db.executemany(
                "INSERT INTO chunks(id, file_id, start_line, end_line, kind, name, qualname, "
                "signature, doc, text, content_hash, lead) VALUES (?,?,?,?,?,?,?,?,?,?,?,?)",
                [
                    (
                        i,
                        file_id,
                        ch.start_line,
                        ch.end_line,
                        ch.kind,
                        ch.name,
                        ch.qualname,
                        ch.signature,
                        ch.doc,
                        ch.text,
                        ch.content_hash,
                        ch.lead,
                    )
                    for i, ch in new
                ],
            )
            self.db.executemany(
                "INSERT INTO chunks_fts(rowid, path, name, signature, doc, body) "
                "VALUES (?,?,?,?,?,?)",
                [(i, *ch.fts) for i, ch in new],
            )
            self.db.executemany(
                "INSERT INTO chunks_tri(rowid, body) VALUES (?, ?)",
                [(i, ch.literal_text) for i, ch in new],
            )
            self.db.executemany(
                "INSERT INTO refs(file_id, src_chunk, kind, name, module, line) "
                "VALUES (?,?,?,?,?,?)",
                [
                    (
                        file_id,
                        None if r.chunk_index is None else ids[r.chunk_index],
                        r.kind,
                        r.name,
                        r.module,
                        r.line,
                    )
                    for r in refs
                ],
            )
            self.db.execute("DELETE FROM skipped WHERE path = ?", (record.path,))
        return old_names

    def _file_row(
        self, record: FileRecord, chunks: list[ChunkRecord]
    ) -> tuple[int, dict[int, int], set[str]]:
        """The file's row, written; {index in `chunks`: id} of the chunks its previous version
        already had; the names that version referenced. Every other chunk of that version, and
        its references, are gone."""
        values = (record.language, record.size, record.mtime_ns, record.content_hash,
                  record.role, record.flags, record.path)  # fmt: skip
        file_id = self._scalar("SELECT id FROM files WHERE path = ?", (record.path,))
        if file_id is None:
            self.db.execute(
                "INSERT INTO files(language, size, mtime_ns, content_hash, role, flags, path) "
                "VALUES (?, ?, ?, ?, ?, ?, ?)",
                values,
            )
            return self.db.last_insert_rowid(), {}, set()
        self.db.execute(
            "UPDATE files SET language = ?, size = ?, mtime_ns = ?, content_hash = ?, role = ?, "
            "flags = ? WHERE path = ?",
            values,
        )
        old_names = {
            name
            for (name,) in self.db.execute(
                "SELECT DISTINCT name FROM refs WHERE file_id = ?", (file_id,)
            )
        }
        self.db.execute("DELETE FROM refs WHERE file_id = ?", (file_id,))
        previous: dict[tuple, list[int]] = {}
        for cid, *key in self.db.execute(
            "SELECT id, content_hash, kind, name, qualname, signature, doc, lead FROM chunks "
            "WHERE file_id = ? ORDER BY id",
            (file_id,),
        ):
            previous.setdefault(tuple(key), []).append(cid)
        kept: dict[int, int] = {}
        for index, ch in enumerate(chunks):
            same = previous.get(
                (ch.content_hash, ch.kind, ch.name, ch.qualname, ch.signature, ch.doc, ch.lead)
            )
            if same:
                kept[index] = same.pop(0)
        gone = [(cid,) for ids in previous.values() for cid in ids]
        self._delete_chunks(gone)
        return file_id, kept, old_names

    def _delete_chunks(self, ids: list[tuple[int]]) -> None:
        # One `rowid = ?` per chunk: FTS5 answers `rowid IN (subquery)` by walking its whole
        # index, which made each changed file cost milliseconds per 10,000 indexed files.
        self.db.executemany("DELETE FROM chunks_fts WHERE rowid = ?", ids)
        self.db.executemany("DELETE FROM chunks_tri WHERE rowid = ?", ids)
        self.db.executemany("DELETE FROM chunks WHERE id = ?", ids)

    def update_file_stat(self, path: str, size: int, mtime_ns: int) -> None:
        """The file was touched but its content hash is unchanged: remember the new stat."""
        with self.guarded(), self._atomic():
            self.db.execute(
                "UPDATE files SET size = ?, mtime_ns = ? WHERE path = ?", (size, mtime_ns, path)
            )

    def set_roles(self, roles: dict[str, str]) -> None:
        """Each file's role as the tree's rules now say (index/roles.py); only changes written."""
        with self.guarded(), self._atomic():
            self.db.executemany(
                "UPDATE files SET role = ?1 WHERE path = ?2 AND role != ?1",
                [(role, path) for path, role in roles.items()],
            )

    def delete_files(self, paths: Iterable[str]) -> None:
        self._term_counts.clear()
        with self.guarded(), self.db:
            for path in paths:
                self._delete_file_rows(path)

    def _delete_file_rows(self, path: str) -> None:
        file_id = self._scalar("SELECT id FROM files WHERE path = ?", (path,))
        if file_id is None:
            return
        ids = self.db.execute("SELECT id FROM chunks WHERE file_id = ?", (file_id,)).fetchall()
        self._delete_chunks([(i,) for (i,) in ids])  # type: ignore[misc]  # ids are ints
        self.db.execute("DELETE FROM files WHERE id = ?", (file_id,))

    def record_skipped(self, skipped: dict[str, str]) -> None:
        """Replace the list of skipped files with their reasons; their old rows are removed."""
        with self.guarded(), self.db:
            self.db.execute("DELETE FROM skipped")
            for path, reason in skipped.items():
                self._delete_file_rows(path)
                self.db.execute(
                    "INSERT OR REPLACE INTO skipped(path, reason) VALUES (?, ?)", (path, reason)
                )

    def skipped(self) -> list[tuple[str, str]]:
        with self.guarded():
            return list(self.db.execute("SELECT path, reason FROM skipped ORDER BY path"))

    def stats(self) -> dict[str, object]:
        with self.guarded():
            roles = dict(self.db.execute("SELECT role, count(*) FROM files GROUP BY role"))
            langs = dict(
                self.db.execute(
                    "SELECT coalesce(language, 'text'), count(*) FROM files GROUP BY 1 ORDER BY 2 DESC"
                )
            )
            flagged = self._scalar("SELECT count(*) FROM files WHERE flags != ''")
            return {
                "files": sum(roles.values()),
                "files_by_role": roles,
                "files_by_language": langs,
                "flagged_files": flagged,
                "chunks": self._scalar("SELECT count(*) FROM chunks"),
                "symbols": self._scalar("SELECT count(*) FROM chunks WHERE name IS NOT NULL"),
                "skipped": self._scalar("SELECT count(*) FROM skipped"),
                "skipped_by_reason": dict(
                    self.db.execute(
                        "SELECT reason, count(*) FROM skipped GROUP BY reason ORDER BY 2 DESC"
                    )
                ),
            }

    def check(self) -> list[str]:
        """SQLite's integrity check and the index's own invariants: the problems found."""
        problems: list[str] = []
        with self.guarded():
            rows = [r[0] for r in self.db.execute("PRAGMA integrity_check(20)")]
            if rows != ["ok"]:
                problems += [f"SQLite: {r}" for r in rows]
                return problems  # the counts below would not mean much
            chunks = self._scalar("SELECT count(*) FROM chunks")
            for table in ("chunks_fts", "chunks_tri"):
                n = self._scalar(f"SELECT count(*) FROM {table}")
                if n != chunks:
                    problems.append(f"{table} holds {n} rows for {chunks} chunks")
            orphans = self._scalar(
                "SELECT count(*) FROM chunks WHERE file_id NOT IN (SELECT id FROM files)"
            )
            if orphans:
                problems.append(f"{orphans} chunks belong to no file")
            orphans = self._scalar(
                "SELECT count(*) FROM refs WHERE file_id NOT IN (SELECT id FROM files)"
            )
            if orphans:
                problems.append(f"{orphans} references belong to no file")
            if self.get_meta("graph_pending") == "1":
                problems.append("the graph was not brought up to date after the last files")
        return problems

    def incomplete(self) -> list[str]:
        """Phases an index run left unfinished (the next run finishes them)."""
        return ["graph"] if self.get_meta("graph_pending") == "1" else []


def _first(row: Any) -> Any:
    """The first column of a row that a query always returns (a count, a function's value)."""
    assert row is not None
    return row[0]
