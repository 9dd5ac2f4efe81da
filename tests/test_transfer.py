"""An index built once (a team's CI) and imported on another checkout of the same repository:
`index --export FILE`, `index --import FILE`. Real repositories, real index files."""

from __future__ import annotations

import fcntl
import json
import os
import random
import shutil
import subprocess
from pathlib import Path

import apsw
import pytest
from conftest import git, run_cli_process
from test_search import DOC_COMMENTS, PROJECT

from repocontext.locations import index_path
from repocontext.store.schema import SCHEMA_VERSION


def indexed_project(make_repo, cli, tmp_path, files=PROJECT):
    """A git repository indexed and exported, and a second clone of it elsewhere."""
    built = make_repo(files, git=True)
    export = tmp_path / "index.rctx"
    result = cli("index", "--root", built, "--quiet", "--export", export)
    assert result.code == 0, result.err
    clone = tmp_path / "clone"
    subprocess.run(["git", "clone", "-q", str(built), str(clone)], check=True)
    return built, clone, export


def test_an_exported_index_is_imported_and_only_what_differs_is_indexed_again(
    make_repo, cli, tmp_path
):
    built, clone, export = indexed_project(make_repo, cli, tmp_path)
    (clone / "pkg/models.py").write_text(
        (clone / "pkg/models.py").read_text() + "\n\ndef retry_after(response):\n    return 5\n"
    )
    result = cli("index", "--root", clone, "--import", export, "--json")
    assert result.code == 0, result.err
    assert result.out.startswith(f"imported {export}: the index of commit ")
    report = json.loads(result.out.split("\n", 1)[1])
    # a clone has other mtimes: every file is read and hashed, but only the edited one is
    # chunked and embedded again
    assert (report["updated"], report["added"], report["removed"]) == (1, 0, 0)
    assert report["embedding"]["embedded"] == 1
    found = cli("search", "--root", clone, "--json", "retry_after").json()
    assert found["results"][0]["symbol"] == "retry_after"
    question = cli("search", "--root", clone, "--json", "how does fetch get a response").json()
    assert not [n for n in question["notes"] if "vector search is off" in n]


def _edit(export, sql: str, *args) -> None:
    db = apsw.Connection(str(export))
    with db:
        db.execute(sql, args)
    db.close()


@pytest.mark.parametrize(
    "edit, said",
    [
        (("UPDATE meta SET value = '0.0.1' WHERE key = 'export_version'",),
         "was exported by repocontext 0.0.1, this is"),
        (("PRAGMA user_version = 1",),
         f"has index schema 1, this repocontext writes {SCHEMA_VERSION}"),
        (("DELETE FROM meta WHERE key = 'export_version'",),
         "is an index file, not an export"),
    ],
)  # fmt: skip
def test_an_export_this_version_cannot_use_is_refused_and_the_index_kept(
    make_repo, cli, tmp_path, edit, said
):
    built, clone, export = indexed_project(make_repo, cli, tmp_path)
    assert cli("index", "--root", clone, "--quiet", "--no-embed").code == 0
    before = index_path(clone).read_bytes()
    _edit(export, *edit)
    result = cli("index", "--root", clone, "--import", export)
    assert result.code == 1
    assert said in result.err
    assert len(result.err.strip().splitlines()) == 1 and "Traceback" not in result.err
    assert index_path(clone).read_bytes() == before  # untouched, not set aside


def test_an_export_from_another_embedding_model_is_refused(make_repo, cli, tmp_path, home):
    built, clone, export = indexed_project(make_repo, cli, tmp_path)
    (home / "config.toml").write_text('[embedding]\nname = "team-model"\n')
    result = cli("index", "--root", clone, "--import", export)
    assert result.code == 1
    assert "holds vectors of all-MiniLM-L6-v2-int8" in result.err
    assert "the configured embedding model is team-model" in result.err
    assert not index_path(clone).exists()


def test_a_file_that_is_no_export_is_refused(make_repo, cli, tmp_path):
    built, clone, export = indexed_project(make_repo, cli, tmp_path)
    junk = tmp_path / "notes.txt"
    junk.write_text("not an index\n")
    result = cli("index", "--root", clone, "--import", junk)
    assert result.code == 1 and "is not a repocontext index export" in result.err
    missing = cli("index", "--root", clone, "--import", tmp_path / "nowhere.rctx")
    assert missing.code == 1 and "cannot read" in missing.err


def test_import_replaces_an_existing_index_by_setting_it_aside(make_repo, cli, tmp_path):
    built, clone, export = indexed_project(make_repo, cli, tmp_path)
    assert cli("index", "--root", clone, "--quiet", "--no-embed").code == 0
    git(clone, "rm", "-q", "docs/guide.md")
    result = cli("index", "--root", clone, "--quiet", "--import", export)
    assert result.code == 0, result.err
    aside = list(index_path(clone).parent.glob(index_path(clone).name + ".old-*"))
    assert len(aside) == 1  # the old index, renamed, never deleted
    status = cli("status", "--root", clone, "--json").json()
    assert status["files"] == 4  # the export's five, less the file removed here
    shutil.rmtree(built)  # the export does not depend on the checkout it came from
    assert cli("search", "--root", clone, "--json", "def fetch").json()["results"]


# --- an import is data to check, not a file to adopt (issue 31, item 7) ----------------------
# Each export below is a real one, edited with SQLite (or byte by byte) the way a damaged or
# hostile file would be; the clone has an index of its own first, which must stay the active
# one whenever the import is refused.

HANG_GUARD = 60  # seconds: a command that runs longer hangs (the spinning trigger, the FIFO)

# a query that never ends, for a trigger or a view to run
SPIN = (
    "WITH RECURSIVE r(n) AS (SELECT 1 UNION ALL SELECT n + 1 FROM r) "
    "SELECT n AS id, '' AS path, NULL AS language, 0 AS size, 0 AS mtime_ns, "
    "'' AS content_hash, 'source' AS role, '' AS flags FROM r"
)


def bounded(*args, timeout: int = HANG_GUARD) -> subprocess.CompletedProcess:
    """`repocontext ARGS` in its own process; a test failure (not a hang) if it runs on."""
    try:
        return run_cli_process(*args, timeout=timeout)
    except subprocess.TimeoutExpired:
        pytest.fail(f"`repocontext {' '.join(map(str, args))}` still ran after {timeout} s")


def _edit_all(export, *statements: str) -> None:
    db = apsw.Connection(str(export))
    for sql in statements:
        db.execute(sql)
    db.close()


def with_own_index(make_repo, cli, tmp_path):
    """indexed_project, and the clone indexed on its own first: (clone, export, its bytes)."""
    built, clone, export = indexed_project(make_repo, cli, tmp_path)
    assert cli("index", "--root", clone, "--quiet", "--no-embed").code == 0
    return clone, export, index_path(clone).read_bytes()


def assert_refused_and_kept(result, clone, before, said: str) -> None:
    """One line, exit 1, the current index byte for byte as it was and still searched, and
    nothing of the attempt left beside it."""
    code = getattr(result, "code", getattr(result, "returncode", None))
    err = result.err if hasattr(result, "err") else result.stderr
    assert code == 1, err
    assert said in err, err
    assert len(err.strip().splitlines()) == 1 and "Traceback" not in err, err
    assert index_path(clone).read_bytes() == before
    folder = index_path(clone).parent
    assert not list(folder.glob(f".{index_path(clone).name}*")), list(folder.iterdir())
    assert not list(folder.glob(f"{index_path(clone).name}.old-*"))  # nothing set aside
    found = run_cli_process("search", "--root", clone, "--json", "def fetch", timeout=HANG_GUARD)
    assert found.returncode == 0, found.stderr
    assert json.loads(found.stdout)["results"][0]["path"] == "pkg/sessions.py"


def _rows(path, sql: str) -> list[tuple]:
    db = apsw.Connection(str(path))
    try:
        return list(db.execute(sql))
    finally:
        db.close()


def _pages_of(export, names: set[str]) -> set[int]:
    """The pages of these b-trees (tables, indexes, sqlite_schema itself), as dbstat lists them."""
    db = apsw.Connection(str(export))
    try:
        return {p for (p,) in db.execute(
            "SELECT pageno FROM dbstat WHERE name IN (SELECT value FROM json_each(?))",
            (json.dumps(sorted(names)),),
        )}  # fmt: skip
    finally:
        db.close()


def _overwrite_pages(export, pages: set[int], seed: int) -> None:
    db = apsw.Connection(str(export))
    size = db.execute("PRAGMA page_size").fetchone()[0]
    db.close()
    noise = random.Random(seed)
    with open(export, "r+b") as fh:
        for page in sorted(pages):
            fh.seek((page - 1) * size)
            fh.write(noise.randbytes(size))


def test_a_trigger_in_an_export_is_not_imported_and_never_runs(make_repo, cli, tmp_path):
    built, clone, export = indexed_project(make_repo, cli, tmp_path)
    # every later index run updates files (a clone's mtimes differ): the trigger would spin
    _edit_all(export, f"CREATE TRIGGER spin AFTER UPDATE ON files BEGIN "
                      f"SELECT count(*) FROM ({SPIN}); END",
                      f"CREATE TRIGGER spin_insert AFTER INSERT ON chunks BEGIN "
                      f"SELECT count(*) FROM ({SPIN}); END")  # fmt: skip
    imported = bounded("index", "--root", clone, "--quiet", "--no-embed", "--import", export)
    assert imported.returncode == 0, imported.stderr
    (clone / "pkg/models.py").write_text((clone / "pkg/models.py").read_text() + "\nX = 1\n")
    again = bounded("index", "--root", clone, "--quiet", "--no-embed", "--check")
    assert again.returncode == 0, again.stderr
    assert "check: the index is consistent" in again.stdout
    db = apsw.Connection(str(index_path(clone)), flags=apsw.SQLITE_OPEN_READONLY)
    try:
        objects = set(db.execute("SELECT type, name FROM sqlite_schema"))
    finally:
        db.close()
    assert not [o for o in objects if o[0] in ("trigger", "view")], objects
    assert ("table", "files") in objects


@pytest.mark.parametrize("view", ["SELECT * FROM files_kept", SPIN], ids=["plain", "spinning"])
def test_an_export_whose_files_is_a_view_is_refused_and_the_index_kept(
    make_repo, cli, tmp_path, view
):
    clone, export, before = with_own_index(make_repo, cli, tmp_path)
    _edit_all(export, "ALTER TABLE files RENAME TO files_kept", f"CREATE VIEW files AS {view}")
    result = bounded("index", "--root", clone, "--import", export)
    assert_refused_and_kept(result, clone, before, "`files` is a view, not the table")


@pytest.mark.parametrize("dropped", [("chunks_tri",), ("chunks_tri", "chunks_fts")])
def test_an_export_without_its_text_tables_is_imported_with_them_rebuilt(
    make_repo, cli, tmp_path, dropped
):
    """The full-text tables are derived from the chunks: made again, never copied."""
    clone, export, before = with_own_index(make_repo, cli, tmp_path)
    _edit_all(export, *(f"DROP TABLE {name}" for name in dropped))
    result = cli("index", "--root", clone, "--quiet", "--no-embed", "--import", export)
    assert result.code == 0, result.err
    checked = cli("index", "--root", clone, "--quiet", "--no-embed", "--check")
    assert checked.code == 0, checked.err
    literal = cli("search", "--root", clone, "--json", "--modality", "trigram", "ECONNREFUSED")
    assert literal.code == 0, literal.err
    assert literal.json()["results"][0]["path"] == "pkg/models.py"
    words = cli("search", "--root", clone, "--json", "--modality", "bm25", "strip auth")
    assert words.code == 0, words.err
    assert words.json()["results"][0]["symbol"] == "should_strip_auth"


def test_an_imported_index_finds_the_text_of_doc_comments(make_repo, cli, tmp_path):
    """A definition's doc comment lines (`chunks.lead`) travel with the export, and the trigram
    table made again from the chunks holds them: exact-string search finds them in the clone."""
    _, clone, export = indexed_project(make_repo, cli, tmp_path, DOC_COMMENTS)
    result = cli("index", "--root", clone, "--quiet", "--import", export)
    assert result.code == 0, result.err
    found = cli("search", "--root", clone, "--json", '"method not allowed"').json()["results"]
    assert [(r["path"], r["start_line"]) for r in found] == [("mux.go", 6)]


@pytest.mark.parametrize("kept", [{"sqlite_schema", "meta", "files"}, {"sqlite_schema"}],
                         ids=["all-but-what-read_export-reads", "all-but-the-schema"])  # fmt: skip
def test_an_export_of_garbage_pages_is_refused_and_the_index_kept(make_repo, cli, tmp_path, kept):
    clone, export, before = with_own_index(make_repo, cli, tmp_path)
    keep = _pages_of(export, kept | {f"sqlite_autoindex_{t}_1" for t in kept})
    every = _pages_of(export, {n for (n,) in _rows(export, "SELECT DISTINCT name FROM dbstat")})
    assert keep and every - keep
    _overwrite_pages(export, every - keep, seed=31)
    result = bounded("index", "--root", clone, "--import", export)
    assert_refused_and_kept(result, clone, before, str(export))


@pytest.mark.parametrize("kind", ["fifo", "symlink", "directory", "device"])
def test_an_import_that_is_no_regular_file_is_refused_at_once(make_repo, cli, tmp_path, kind):
    clone, export, before = with_own_index(make_repo, cli, tmp_path)
    given = tmp_path / f"given-{kind}"
    said = {"fifo": "is a named pipe (FIFO)", "symlink": "is a symbolic link",
            "directory": "is a directory", "device": "is a device"}[kind]  # fmt: skip
    if kind == "fifo":
        os.mkfifo(given)  # no one ever writes it: an open that waits for a writer hangs
    elif kind == "symlink":
        given.symlink_to(export)
    elif kind == "directory":
        given.mkdir()
    else:
        given = Path(os.devnull)
    result = bounded("index", "--root", clone, "--import", given, timeout=30)
    assert_refused_and_kept(result, clone, before, said)


def test_a_failure_while_installing_leaves_the_index_active(make_repo, cli, tmp_path):
    """Three real failures after every check of read_export passed: a damaged page of the
    chunks, a chunk of no file, and another writer holding the index."""
    clone, export, before = with_own_index(make_repo, cli, tmp_path)
    good = tmp_path / "good.rctx"
    shutil.copy(export, good)

    _overwrite_pages(export, _pages_of(export, {"chunks"}), seed=7)
    result = cli("index", "--root", clone, "--import", export)
    assert_refused_and_kept(result, clone, before, "cannot be read as an index")

    shutil.copy(good, export)
    _edit(export, "INSERT INTO chunks(file_id, start_line, end_line, kind, text, content_hash) "
                  "VALUES (9999, 1, 1, 'code', 'x = 1', 'x')")  # fmt: skip
    # the search of the check above may bring the index up to date (a file written within the
    # last 2 s is read again): compare with the index as it is just before each attempt
    before = index_path(clone).read_bytes()
    result = cli("index", "--root", clone, "--import", export)
    assert_refused_and_kept(
        result, clone, before, "do not fit the index (FOREIGN KEY constraint failed)"
    )

    lock = os.open(str(index_path(clone)) + ".lock", os.O_RDWR | os.O_CREAT, 0o600)
    try:
        fcntl.flock(lock, fcntl.LOCK_EX)
        os.ftruncate(lock, 0)
        os.pwrite(lock, b"4242", 0)  # as Store.write_lock marks it
        before = index_path(clone).read_bytes()
        result = cli("index", "--root", clone, "--import", good)
    finally:
        os.close(lock)
    assert_refused_and_kept(result, clone, before, "(pid 4242) is updating this index")
    # and with the writer gone, the same file imports
    assert cli("index", "--root", clone, "--quiet", "--import", good).code == 0
