"""An index moved between machines: written once (in CI, for a commit), brought up to date on
each developer's machine instead of built there.

The export is the index itself, copied with SQLite's online backup (a consistent snapshot even
while another process writes), plus what the importer must check, in `meta`: the version of
repocontext that wrote it, the schema (SQLite's user_version) and the embedding model of its
vectors (already recorded by vectors.py). Paths in an index are relative to the root, so the
copy fits any checkout of the same repository; the importer's next index run re-reads only
what differs (a file whose content hash matches is not chunked again, its vectors are kept).

An import is data to check, never a file to adopt. The file given is opened only if it is a
regular file (a FIFO would block, a device or a link is not what was asked for), read-only,
with `trusted_schema=OFF` and an authorizer that lets nothing of the file's own run (no view,
no trigger: only plain SELECTs of tables). Every table read must be, type and CREATE text,
the table this repocontext makes. Its rows, by explicit column lists and checked column by
column, go into a new index made by `Store` exactly as a first index run makes one; the
full-text tables are rebuilt from the chunks (never copied: they are derived data), the
vectors copied row by row into the new index's own vec0 table. The new file then has to pass
`Store.check` (SQLite's integrity check and the index's invariants, as `index --check`), and
only then replaces the current index in one rename; until that rename the current index is
untouched, and on any failure the new file is removed.

(About 590 lines: the export, the checks of a file to import and the copy that brings it up to
date share the rules of what an index file may be; apart, each would restate them.)
"""

from __future__ import annotations

import contextlib
import os
import stat
import time
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass
from pathlib import Path
from urllib.parse import quote

import apsw

from ..errors import IndexError_, IndexForeign, IndexImportRefused
from .database import Store, _first, _vec0_path
from .files import opening_lock, private_file, writer_lock
from .records import ChunkRecord
from .schema import APPLICATION_ID, SCHEMA_VERSION, SQLITE_MAGIC

COPY_BATCH = 1000  # rows per statement batch and transaction while copying
MAX_DIMS = 8192  # an embedding width beyond any model repocontext can run

# (path, start_line, end_line, kind, name, qualname, signature, doc, text) -> the chunk as the
# indexer writes it (index/prepare.py:to_record): its FTS column texts and its content hash.
ChunkRecordOf = Callable[..., ChunkRecord]

_AGAIN = "make the export again with `repocontext index --export` (the current index is untouched)"

# What the file being imported may make SQLite do: read tables and call functions, nothing
# else (writes are refused by the read-only open too); and nothing at all from inside a view
# or a trigger, which only the file's own schema could bring in.
_READER_ACTIONS = frozenset(
    (apsw.SQLITE_SELECT, apsw.SQLITE_READ, apsw.SQLITE_FUNCTION, apsw.SQLITE_PRAGMA,
     apsw.SQLITE_TRANSACTION)
)  # fmt: skip


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


# --- reading a file given to import --------------------------------------------------------------
def _regular_file(path: Path) -> None:
    """Refuse, with one line, anything but a regular file, before anything opens it for
    reading: a FIFO would block the open (and SQLite's), a device may act on being opened, a
    directory or a symbolic link is not the file asked for. Then its first bytes must be
    SQLite's header. The open that reads them does not block and does not follow a link."""
    try:
        st = os.lstat(path)
    except OSError as exc:
        raise IndexForeign(f"cannot read {path} ({exc.strerror or exc})") from None
    kind = _not_regular(st.st_mode)
    if kind:
        raise IndexForeign(
            f"{path} is {kind}, not an index export; give the path of the file "
            "`repocontext index --export` wrote"
        )
    try:
        fd = os.open(path, os.O_RDONLY | os.O_NONBLOCK | os.O_NOFOLLOW | os.O_CLOEXEC)
    except OSError as exc:
        raise IndexForeign(f"cannot read {path} ({exc.strerror or exc})") from None
    try:
        kind = _not_regular(os.fstat(fd).st_mode)  # replaced since the lstat
        if kind:
            raise IndexForeign(f"{path} is {kind}, not an index export")
        head = os.pread(fd, len(SQLITE_MAGIC), 0)
    except OSError as exc:
        raise IndexForeign(f"cannot read {path} ({exc.strerror or exc})") from None
    finally:
        os.close(fd)
    if head != SQLITE_MAGIC:
        raise IndexForeign(f"{path} is not a repocontext index export (not an SQLite file)")


def _not_regular(mode: int) -> str:
    """What a file of this mode is, when it is not a regular file ("" when it is)."""
    if stat.S_ISREG(mode):
        return ""
    if stat.S_ISLNK(mode):
        return "a symbolic link"
    if stat.S_ISDIR(mode):
        return "a directory"
    if stat.S_ISFIFO(mode):
        return "a named pipe (FIFO)"
    if stat.S_ISSOCK(mode):
        return "a socket"
    if stat.S_ISCHR(mode) or stat.S_ISBLK(mode):
        return "a device"
    return "not a regular file"


def _reader_authorizer(action, _one, _two, _database, trigger_or_view):
    if trigger_or_view is not None or action not in _READER_ACTIONS:
        return apsw.SQLITE_DENY
    return apsw.SQLITE_OK


def _open_export(path: Path) -> apsw.Connection:
    """The file, read-only and immutable (no journal, no lock, nothing written beside it),
    trusting nothing of its schema."""
    flags = apsw.SQLITE_OPEN_READONLY | apsw.SQLITE_OPEN_URI
    flags |= getattr(apsw, "SQLITE_OPEN_NOFOLLOW", 0)
    db = apsw.Connection(f"file:{quote(str(path.absolute()))}?mode=ro&immutable=1", flags=flags)
    try:
        db.execute("PRAGMA trusted_schema=OFF")
        db.execute("PRAGMA query_only=ON")
        db.authorizer = _reader_authorizer
    except BaseException:
        db.close()
        raise
    return db


def _schema_row(db: apsw.Connection, name: str) -> tuple[str, str | None] | None:
    """(type, CREATE text) of the schema object called `name`, or None."""
    row = db.execute("SELECT type, sql FROM sqlite_schema WHERE name = ?", (name,)).fetchone()
    return (row[0], row[1]) if row else None


def _require_tables(db: apsw.Connection, path: Path, names: Iterable[str]) -> None:
    """Each of `names` must be a table of the file (not a view), before any SELECT of it."""
    for name in names:
        row = _schema_row(db, name)
        if row is None:
            raise IndexImportRefused(f"{path} has no {name} table; {_AGAIN}")
        if row[0] != "table":
            raise IndexImportRefused(
                f"{path}: `{name}` is a {row[0]}, not the table repocontext writes; {_AGAIN}"
            )


def _identity(db: apsw.Connection) -> tuple[int, int]:
    row = db.execute(
        "SELECT (SELECT application_id FROM pragma_application_id()),"
        " (SELECT user_version FROM pragma_user_version())"
    ).fetchone()
    assert row is not None  # scalar subqueries: always one row
    return row[0], row[1]


_EXPORT_KEYS = ("export_version", "export_time", "export_commit", "embed_model",
                "embed_model_description")  # fmt: skip


def read_export(path: Path) -> ExportInfo:
    """The export's own description; IndexForeign if it is not a repocontext export."""
    path = Path(path)
    _regular_file(path)
    try:
        db = _open_export(path)
        try:
            app_id, schema = _identity(db)
            if app_id != APPLICATION_ID:
                raise IndexForeign(f"{path} is an SQLite file that repocontext did not write")
            _require_tables(db, path, ("meta", "files"))
            marks = ",".join("?" * len(_EXPORT_KEYS))
            meta = {
                key: value
                for key, value in db.execute(
                    f"SELECT key, value FROM meta WHERE key IN ({marks})", _EXPORT_KEYS
                )
                if isinstance(value, str)
            }
            files = _first(db.execute("SELECT count(*) FROM files").fetchone())
        finally:
            db.close()
    except (apsw.Error, UnicodeDecodeError) as exc:
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


# --- installing one ------------------------------------------------------------------------------
def install_export(source: Path, index_file: Path, chunk_record: ChunkRecordOf) -> None:
    """Build a new index at `index_file` from the rows of the export `source` (see the
    module's docstring), then put it in place of the current one, which is kept beside it
    (as *.old-DATE, never deleted). `chunk_record` makes a chunk's record as the indexer
    does: its full-text columns are rebuilt with it and its content hash checked against it.

    Raises IndexImportRefused (or IndexForeign for a file that is no export) with the one line
    to show; the current index is then as it was, and nothing of the attempt is left."""
    source, index_file = Path(source), Path(index_file)
    _regular_file(source)
    partial = index_file.with_name(f".{index_file.name}.{os.getpid()}.partial")
    _remove_files(partial)
    try:
        try:
            src = _open_export(source)
            try:
                with Store(partial) as fresh:  # the schema exactly as a first index run makes it
                    _Copy(src, fresh, source, chunk_record).run()
            finally:
                src.close()
            _verify(partial, source)
        except UnicodeDecodeError:
            raise IndexImportRefused(
                f"{source} holds text that is not UTF-8, which repocontext never writes; {_AGAIN}"
            ) from None
        except (apsw.Error, IndexError_) as exc:
            if isinstance(exc, (IndexImportRefused, IndexForeign)):
                raise
            # SQLite's own error, or the store's translation of one (about the new file)
            cause = exc if isinstance(exc, apsw.Error) else exc.__cause__
            if isinstance(cause, apsw.FullError):
                raise IndexError_(
                    f"the disk holding {index_file.parent} is full; free some space and import "
                    "again (the current index is untouched)"
                ) from None
            if isinstance(cause, apsw.Error):
                raise IndexImportRefused(
                    f"{source} cannot be read as an index ({cause}); {_AGAIN}"
                ) from None
            raise
        _swap_in(partial, index_file)
    finally:
        _remove_files(partial)


class _Copy:
    """The rows of the export `src` into the new index `fresh`."""

    def __init__(self, src: apsw.Connection, fresh: Store, source: Path, chunk_record):
        self.src = src
        self.fresh = fresh
        self.db = fresh.db
        self.source = source
        self.chunk_record = chunk_record

    def run(self) -> None:
        app_id, version = _identity(self.src)
        if app_id != APPLICATION_ID or version != SCHEMA_VERSION:
            raise IndexImportRefused(
                f"{self.source} is not an index of schema {SCHEMA_VERSION} that repocontext "
                f"wrote; {_AGAIN}"
            )
        tables = self._own_tables()
        for name in tables:
            self._same_table(name)
        vectors = self._vectors_ready()
        for name in tables:
            if name == "embeddings" and not vectors:
                continue  # a catalogue of vectors that are not copied: the embedder redoes them
            self._copy_table(name)
        if vectors:
            self._copy_vectors(vectors)
        self._rebuild_text_tables()
        with self.db:
            self.db.execute("DELETE FROM meta WHERE key LIKE 'export\\_%' ESCAPE '\\'")
            # every file is stat'ed again on this machine: its checkout's mtimes differ
            self.db.execute(
                "INSERT OR REPLACE INTO meta(key, value) VALUES ('imported_at', ?)",
                (time.strftime("%Y-%m-%dT%H:%M:%S"),),
            )

    # --- the schema ----------------------------------------------------------------------------
    def _own_tables(self) -> list[str]:
        """The new index's ordinary tables (its virtual tables' shadow tables left out), files
        first: the others refer to it."""
        listed = list(
            self.db.execute("SELECT name, type FROM pragma_table_list WHERE schema = 'main'")
        )
        virtual = [name for name, kind in listed if kind == "virtual"]
        tables = [
            name
            for name, kind in listed
            if kind == "table"
            and not name.startswith("sqlite_")
            and not any(name.startswith(v + "_") for v in virtual)
        ]
        return sorted(tables, key=lambda name: (name != "files", name))

    def _same_table(self, name: str) -> None:
        """The export's `name` must be a table made by the same CREATE statement as ours."""
        theirs = _schema_row(self.src, name)
        ours = _schema_row(self.db, name)
        if theirs is None:
            raise IndexImportRefused(f"{self.source} has no {name} table; {_AGAIN}")
        if theirs[0] != "table":
            raise IndexImportRefused(
                f"{self.source}: `{name}` is a {theirs[0]}, not the table repocontext writes; "
                f"{_AGAIN}"
            )
        if theirs != ours:
            raise IndexImportRefused(
                f"{self.source}: its {name} table is not the one this repocontext writes; {_AGAIN}"
            )

    def _columns(self, name: str) -> list[tuple[str, type | None, bool]]:
        """(column, the Python type its values must have, NULL allowed) from our own table."""
        types = {"INTEGER": int, "TEXT": str, "BLOB": bytes}
        return [
            (col, types.get(decl.upper()), not notnull)
            for _, col, decl, notnull, _, _ in self.db.execute(
                'SELECT cid, name, type, "notnull", dflt_value, pk FROM pragma_table_info(?)',
                (name,),
            )
        ]

    # --- rows --------------------------------------------------------------------------------
    def _copy_table(self, name: str) -> None:
        columns = self._columns(name)
        names = ", ".join(f'"{col}"' for col, _, _ in columns)
        marks = ", ".join("?" * len(columns))
        verb = "INSERT OR REPLACE" if name == "meta" else "INSERT"  # meta: the vectors' keys
        insert = f'{verb} INTO "{name}"({names}) VALUES ({marks})'
        rows = self.src.execute(f'SELECT {names} FROM "{name}" NOT INDEXED')
        for batch in _batches(rows):
            for row in batch:
                self._check_row(name, columns, row)
            try:
                with self.db:
                    self.db.executemany(insert, batch)
            except apsw.ConstraintError as exc:
                raise IndexImportRefused(
                    f"{self.source}: the rows of its {name} table do not fit the index ({exc}); "
                    f"{_AGAIN}"
                ) from None

    def _check_row(self, name: str, columns, row: tuple) -> None:
        for (col, kind, nullable), value in zip(columns, row):
            if value is None:
                if nullable:
                    continue
            elif kind is None or type(value) is kind:
                continue
            raise IndexImportRefused(
                f"{self.source}: a row of {name} holds {_KINDS.get(type(value), 'a value')} in "
                f"{col}, where repocontext writes {_KINDS.get(kind, 'a value')}; {_AGAIN}"
            )

    def _vectors_ready(self) -> int | None:
        """When the export has vectors of a model: our own vec0 table made for them (as the
        embedder makes it) and the export's checked against it; their width, or None when
        there are none to copy."""
        if _schema_row(self.src, "vectors") is None:
            return None
        meta = dict(
            self.src.execute(
                "SELECT key, value FROM meta WHERE key IN "
                "('embed_model', 'embed_model_description', 'embed_dims')"
            )
        )
        model, dims = meta.get("embed_model"), meta.get("embed_dims")
        if not isinstance(model, str) or not model:
            return None  # vectors of no model: the embedder makes them again
        if not (isinstance(dims, str) and dims.isdigit() and 0 < int(dims) <= MAX_DIMS):
            raise IndexImportRefused(
                f"{self.source} holds vectors of an unreadable width ({dims!r}); {_AGAIN}"
            )
        description = meta.get("embed_model_description")
        self.fresh.vectors.ensure(
            model, description if isinstance(description, str) else model, int(dims)
        )
        shadow = [
            name
            for (name,) in self.db.execute(
                "SELECT name FROM sqlite_schema WHERE name LIKE 'vectors\\_%' ESCAPE '\\'"
            )
        ]
        for name in ("vectors", *shadow):
            if _schema_row(self.src, name) != _schema_row(self.db, name):
                raise IndexImportRefused(
                    f"{self.source}: its vector table ({name}) is not the one this repocontext "
                    f"and its sqlite-vec write; {_AGAIN}"
                )
        try:  # sqlite-vec reads the export's vectors table (its shadow tables checked above)
            self.src.enable_load_extension(True)
            self.src.load_extension(_vec0_path())
        finally:
            self.src.enable_load_extension(False)
        return int(dims)

    def _copy_vectors(self, dims: int) -> None:
        """Each vector into our vectors table under its catalogue id (embeddings is copied);
        every vector must have its catalogue row and every row its vector."""
        copied = 0
        rows = self.src.execute("SELECT rowid, embedding FROM vectors")
        for batch in _batches(rows):
            for emb_id, blob in batch:
                if type(emb_id) is not int or type(blob) is not bytes or len(blob) != 4 * dims:
                    raise IndexImportRefused(
                        f"{self.source}: a vector is not {dims} floats; {_AGAIN}"
                    )
                if (
                    self.db.execute("SELECT 1 FROM embeddings WHERE id = ?", (emb_id,)).fetchone()
                    is None
                ):
                    raise IndexImportRefused(
                        f"{self.source}: a vector has no row in the embeddings catalogue; {_AGAIN}"
                    )
            with self.db:
                self.db.executemany("INSERT INTO vectors(rowid, embedding) VALUES (?, ?)", batch)
            copied += len(batch)
        catalogued = _first(self.db.execute("SELECT count(*) FROM embeddings").fetchone())
        if catalogued != copied:
            raise IndexImportRefused(
                f"{self.source}: its embeddings catalogue lists {catalogued} vectors, it holds "
                f"{copied}; {_AGAIN}"
            )

    def _rebuild_text_tables(self) -> None:
        """chunks_fts and chunks_tri from the new index's own chunks, as the indexer writes
        them (Store.replace_file); each chunk's content hash checked against its text."""
        last = 0
        while True:
            batch = list(
                self.db.execute(
                    "SELECT c.id, f.path, c.start_line, c.end_line, c.kind, c.name, c.qualname, "
                    "c.signature, c.doc, c.text, c.lead, c.content_hash FROM chunks c "
                    "JOIN files f ON f.id = c.file_id WHERE c.id > ? ORDER BY c.id LIMIT ?",
                    (last, COPY_BATCH),
                )
            )
            if not batch:
                return
            fts, tri = [], []
            for chunk_id, path, *fields, content_hash in batch:
                record = self.chunk_record(path, *fields)
                if record.content_hash != content_hash:
                    raise IndexImportRefused(
                        f"{self.source}: a chunk of {path} does not match its content hash; "
                        f"{_AGAIN}"
                    )
                fts.append((chunk_id, *record.fts))
                tri.append((chunk_id, record.literal_text))
            with self.db:
                self.db.executemany(
                    "INSERT INTO chunks_fts(rowid, path, name, signature, doc, body) "
                    "VALUES (?,?,?,?,?,?)",
                    fts,
                )
                self.db.executemany("INSERT INTO chunks_tri(rowid, body) VALUES (?, ?)", tri)
            last = batch[-1][0]


_KINDS = {int: "an integer", str: "text", bytes: "a blob", float: "a number", type(None): "NULL"}


def _batches(rows: Iterator[tuple]) -> Iterator[list[tuple]]:
    batch: list[tuple] = []
    for row in rows:
        batch.append(row)
        if len(batch) >= COPY_BATCH:
            yield batch
            batch = []
    if batch:
        yield batch


def _verify(partial: Path, source: Path) -> None:
    """The new file as `index --check` sees it; then one self-contained file (no WAL)."""
    with Store(partial, create=False) as store:
        problems = store.check()
        if problems:
            more = f" and {len(problems) - 1} more" if len(problems) > 1 else ""
            raise IndexImportRefused(
                f"{source} does not make a consistent index ({problems[0]}{more}); {_AGAIN}"
            )
        with store.guarded():
            store.db.execute("PRAGMA journal_mode=DELETE")


def _remove_files(partial: Path) -> None:
    for suffix in ("", "-wal", "-shm", "-journal", ".lock", ".schema.lock", ".open.lock"):
        Path(str(partial) + suffix).unlink(missing_ok=True)


# --- putting it in place ---------------------------------------------------------------------
def _no_writer(index_file: Path):
    """The index writers' lock while the file is swapped: an index run or an embedding on the
    current index is not replaced under it."""
    return writer_lock(index_file, "then import again (the current index is untouched)")


def aside_name(index_file: Path) -> Path:
    """`<index>.old-DATE` (then -2, -3 ...): a name no file has, so nothing is overwritten."""
    base = f"{index_file.name}.old-{time.strftime('%Y%m%d-%H%M%S')}"
    aside, n = index_file.with_name(base), 1
    while os.path.lexists(aside):
        n += 1
        aside = index_file.with_name(f"{base}-{n}")
    return aside


def _swap_in(partial: Path, index_file: Path) -> None:
    """`partial` becomes `index_file` in one rename: a reader sees the old index or the new
    one, never none. The old one is kept, hard-linked as *.old-DATE with its WAL files (which
    must not stay beside the new file: SQLite would replay them into it)."""
    with _no_writer(index_file), opening_lock(index_file, moving=True):
        moved: list[tuple[Path, Path]] = []
        aside = None
        linked = False
        try:
            if os.path.lexists(index_file):
                aside = aside_name(index_file)
                try:
                    os.link(index_file, aside, follow_symlinks=False)
                    linked = True
                except OSError:  # no hard links here: renamed instead
                    os.rename(index_file, aside)
                for suffix in ("-wal", "-shm"):
                    side = Path(str(index_file) + suffix)
                    if side.exists():
                        os.replace(side, Path(str(aside) + suffix))
                        moved.append((Path(str(aside) + suffix), side))
            os.replace(partial, index_file)
        except OSError as exc:
            for there, back in moved:
                with contextlib.suppress(OSError):
                    os.replace(there, back)
            if aside is not None:
                with contextlib.suppress(OSError):
                    if linked:
                        os.unlink(aside)
                    else:
                        os.rename(aside, index_file)
            raise IndexError_(
                f"cannot put the imported index at {index_file} ({exc.strerror or exc}); check "
                "the disk and its permissions (the current index is untouched)"
            ) from None


__all__ = ["SCHEMA_VERSION", "ExportInfo", "export_index", "install_export", "read_export"]
