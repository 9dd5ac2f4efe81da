"""Indexing: which files, with which flags, and how a second run brings the index up to date."""

from __future__ import annotations

import os
import time

import apsw
from conftest import git

from repocontext import Repository
from repocontext.index.terms import expand_identifiers, split_identifier

SOURCE = {
    "src/app/config.py": '''
        def parse_config(path):
            """Read the settings file."""
            return open(path).read()
    ''',
    "src/app/server.py": """
        from .config import parse_config

        class Server:
            def start(self):
                return parse_config("x")
    """,
    "tests/test_config.py": """
        def test_parse_config():
            assert parse_config
    """,
    "README.md": "# Demo\nA demo project.\n",
}


def indexed_paths(repo: Repository) -> set[str]:
    with repo.open_store() as store:
        return set(store.file_states())


def skipped(repo: Repository) -> dict[str, str]:
    with repo.open_store() as store:
        return dict(store.skipped())


def test_git_repo_indexes_tracked_and_untracked_but_not_ignored(make_repo):
    root = make_repo({**SOURCE, ".gitignore": "secret_dir/\n*.log\n"}, git=True)
    (root / "new_module.py").write_text("def fresh():\n    pass\n")  # untracked, not ignored
    (root / "secret_dir").mkdir()
    (root / "secret_dir" / "x.py").write_text("def hidden():\n    pass\n")
    (root / "debug.log").write_text("noise\n")
    repo = Repository(root)
    report = repo.index()
    assert report.git is True
    assert indexed_paths(repo) == {
        ".gitignore",
        "README.md",
        "new_module.py",
        "src/app/config.py",
        "src/app/server.py",
        "tests/test_config.py",
    }


def test_outside_git_gitignore_files_are_honoured_at_every_level(make_repo):
    root = make_repo(
        {
            **SOURCE,
            ".gitignore": "*.tmp\n/generated/\n",
            "src/.gitignore": "scratch_*.py\n!scratch_keep.py\n",
            "src/scratch_a.py": "x = 1\n",
            "src/scratch_keep.py": "x = 2\n",
            "generated/out.py": "x = 3\n",
            "notes.tmp": "x\n",
        }
    )
    repo = Repository(root)
    assert repo.index().git is False
    paths = indexed_paths(repo)
    assert "src/scratch_keep.py" in paths
    assert not {"src/scratch_a.py", "generated/out.py", "notes.tmp"} & paths


def test_vendored_lockfiles_secrets_binaries_and_big_files_are_skipped_with_reasons(make_repo):
    root = make_repo(
        {
            **SOURCE,
            "node_modules/lib/index.js": "function vendored() {}\n",
            "build/out.py": "x = 1\n",
            "docs/_site/readme/index.html": "<p>a built page of the docs</p>\n",
            "package-lock.json": "{}\n",
            "Cargo.lock": "# lock\n",
            ".env": "API_TOKEN=supersecretvalue123\n",
            ".env.production": "API_TOKEN=supersecretvalue456\n",
            "certs/server.pem": "-----BEGIN PRIVATE KEY-----\nsupersecretpem\n",
            "keys/id_rsa": "supersecretrsa\n",
            "credentials.json": '{"token": "supersecretjson"}\n',
            "logo.png": b"\x89PNG\r\n\x1a\n\0\0\0",
            "data.bin2": b"header\0binary",
            "big.py": "x = 1\n" * 200_000,
        }
    )
    repo = Repository(root)
    repo.index()
    reasons = skipped(repo)
    assert reasons["node_modules/"].startswith("a vendored, build or cache folder")
    assert reasons["build/"].startswith("a vendored, build or cache folder")
    assert reasons["docs/_site/"].startswith("a vendored, build or cache folder")
    assert reasons["package-lock.json"] == reasons["Cargo.lock"] == "lockfile"
    for secret in (
        ".env",
        ".env.production",
        "certs/server.pem",
        "keys/id_rsa",
        "credentials.json",
    ):
        assert reasons[secret] == "looks like a secret (never indexed)"
    assert reasons["logo.png"] == "binary file type"
    assert reasons["data.bin2"] == "binary (a NUL byte at byte 6)"
    assert reasons["big.py"] == "larger than 1 MB"
    # the secrets' contents are nowhere in the database file
    blob = repo.index_file.read_bytes()
    assert b"supersecret" not in blob


def test_status_lists_skipped_files_and_reasons(make_repo, cli):
    root = make_repo({**SOURCE, ".env": "X=1\n", "yarn.lock": "x\n"})
    assert cli("index", "--root", root).code == 0
    result = cli("status", "--root", root, "--skipped")
    assert result.code == 0
    assert "skipped .env: looks like a secret (never indexed)" in result.out
    assert "skipped yarn.lock: lockfile" in result.out
    data = cli("status", "--root", root, "--json", "--skipped").json()
    assert {"path": "yarn.lock", "reason": "lockfile"} in data["skipped_files"]
    assert data["files_by_role"] == {"doc": 1, "source": 2, "test": 1}


def test_minified_and_generated_files_are_indexed_but_flagged(make_repo):
    root = make_repo(
        {
            "app.min.js": "var a=1;" * 400 + "\n",
            "gen_pb2.py": "# Generated by the protocol buffer compiler.  DO NOT EDIT!\nX = 1\n",
            "plain.py": "def ok():\n    return 1\n",
        }
    )
    repo = Repository(root)
    repo.index()
    with repo.open_store() as store:
        flags = dict(store.db.execute("SELECT path, flags FROM files"))
    assert flags == {"app.min.js": "minified", "gen_pb2.py": "generated", "plain.py": ""}


def test_identifiers_are_split_for_the_index_and_the_query():
    assert split_identifier("should_strip_auth") == ("should", "strip", "auth")
    assert split_identifier("ReturnRequest") == ("Return", "Request")
    assert split_identifier("parseHTTPResponse2") == ("parse", "HTTP", "Response", "2")
    assert expand_identifiers("x = should_strip_auth(a)") == (
        "x = should_strip_auth(a)\nshould strip auth"
    )


def test_split_identifiers_match_words_in_search(make_repo, cli):
    root = make_repo(
        {"a.py": "def should_strip_auth(url):\n    pass\n\nclass ReturnRequest:\n    pass\n"}
    )
    cli("index", "--root", root)
    strip = cli("search", "--root", root, "--modality", "bm25", "--json", "strip").json()
    assert [r["symbol"] for r in strip["results"]] == ["should_strip_auth"]
    ret = cli("search", "--root", root, "--modality", "bm25", "--json", "return request").json()
    assert ret["results"][0]["symbol"] == "ReturnRequest"


# --- incremental ------------------------------------------------------------------------------


def test_second_run_on_unchanged_tree_reads_nothing(make_repo, monkeypatch):
    root = make_repo(SOURCE)
    old = time.time() - 60  # outside the "modified just now" window
    for path in root.rglob("*"):
        if path.is_file():
            os.utime(path, (old, old))
    repo = Repository(root)
    first = repo.index()
    assert first.added == 4
    opened: list[str] = []
    real_open = open

    def spy_open(file, *args, **kwargs):
        opened.append(str(file))
        return real_open(file, *args, **kwargs)

    monkeypatch.setattr("builtins.open", spy_open)
    second = repo.index()
    assert (second.added, second.updated, second.removed, second.unchanged) == (0, 0, 0, 4)
    assert second.chunks_written == 0
    assert not [p for p in opened if p.startswith(str(root))]


def test_an_index_cut_by_another_chunker_version_reads_and_cuts_every_file_again(
    make_repo, monkeypatch
):
    """A chunker that names or cuts differently (CHUNKER_VERSION bumped) must not leave the
    files untouched since with their old names: the next index run, and a search's refresh,
    read and cut every file again, unchanged ones too; the run after reads none."""
    import dataclasses

    from repocontext.index import prepare
    from repocontext.index.fresh import CHUNKER_META
    from repocontext.index.indexer import refresh
    from repocontext.lang.chunking import CHUNKER_VERSION

    root = make_repo(SOURCE)
    old = time.time() - 60  # outside the "modified just now" window: files and folders
    for path in [*root.rglob("*"), root]:
        os.utime(path, (old, old))
    repo = Repository(root)
    assert repo.index().added == 4
    with repo.open_store() as store:
        assert store.get_meta(CHUNKER_META) == str(CHUNKER_VERSION)
    # the chunker now names symbols otherwise (as a new version of it would)
    naming = {"suffix": "_v2"}
    real = prepare.analyze_file

    def renamed(text, language):
        analysis = real(text, language)
        chunks = [
            dataclasses.replace(c, name=c.name + naming["suffix"]) if c.name else c
            for c in analysis.chunks
        ]
        return dataclasses.replace(analysis, chunks=chunks)

    monkeypatch.setattr(prepare, "analyze_file", renamed)

    def names() -> set[str]:
        with repo.open_store() as store:
            return {n for (n,) in store.db.execute("SELECT name FROM chunks WHERE name NOT NULL")}

    assert repo.index().unchanged == 4 and "parse_config" in names()  # same version: no read
    with repo.open_store() as store:
        store.set_meta(CHUNKER_META, "0")  # an index cut by an older chunker
    again = repo.index()
    assert (again.added, again.updated, again.unchanged, again.removed) == (0, 4, 0, 0)
    assert "parse_config_v2" in names() and "parse_config" not in names()
    after = repo.index()
    assert (after.updated, after.unchanged, after.chunks_written) == (0, 4, 0)
    # a search's refresh (the editor's catch-up too) sees the version, no file having changed
    naming["suffix"] = "_v3"
    with repo.open_store() as store:
        store.set_meta(CHUNKER_META, "0")
        assert repo.tree_is_stale(store)
        assert refresh(root, store) is True
        assert store.get_meta(CHUNKER_META) == str(CHUNKER_VERSION)
        assert not repo.tree_is_stale(store)
    assert "parse_config_v3" in names()


def test_edit_add_delete_and_rename_are_brought_up_to_date(make_repo, cli):
    root = make_repo(SOURCE, git=True)
    repo = Repository(root)
    repo.index()
    (root / "src/app/config.py").write_text("def load_settings(path):\n    return path\n")
    (root / "src/app/extra.py").write_text("def brand_new():\n    pass\n")
    (root / "README.md").unlink()
    git(root, "mv", "src/app/server.py", "src/app/http_server.py")
    report = repo.index()
    assert (report.added, report.updated, report.removed) == (2, 1, 2)
    assert indexed_paths(repo) == {
        "src/app/config.py",
        "src/app/extra.py",
        "src/app/http_server.py",
        "tests/test_config.py",
    }
    found = cli("search", "--root", root, "--json", "--modality", "ast", "load_settings").json()
    assert found["results"][0]["path"] == "src/app/config.py"
    gone = cli("search", "--root", root, "--json", "--modality", "ast", "parse_config").json()
    assert not [r for r in gone["results"] if r["path"] == "src/app/config.py"]
    moved = cli("search", "--root", root, "--json", "--modality", "ast", "Server").json()
    assert [r["path"] for r in moved["results"]] == ["src/app/http_server.py"]


def test_touched_but_unchanged_file_is_not_rewritten(make_repo):
    root = make_repo(SOURCE)
    repo = Repository(root)
    repo.index()
    os.utime(root / "README.md", None)
    report = repo.index()
    assert report.updated == 0 and report.chunks_written == 0


def test_every_write_keeps_fts_and_chunks_in_step(make_repo):
    root = make_repo(SOURCE)
    repo = Repository(root)
    repo.index()
    (root / "src/app/config.py").write_text("def other():\n    return 2\n")
    repo.index()
    with repo.open_store() as store:
        chunk_ids = {r[0] for r in store.db.execute("SELECT id FROM chunks")}
        fts_ids = {r[0] for r in store.db.execute("SELECT rowid FROM chunks_fts")}
        tri_ids = {r[0] for r in store.db.execute("SELECT rowid FROM chunks_tri")}
        assert chunk_ids == fts_ids == tri_ids
        assert store.db.execute("PRAGMA integrity_check").fetchone() == ("ok",)
        hits = store.db.execute(
            "SELECT rowid FROM chunks_fts WHERE chunks_fts MATCH 'parse_config'"
        )
        assert {r[0] for r in hits} <= chunk_ids


def test_index_file_lives_under_repocontext_home(make_repo, home):
    root = make_repo(SOURCE)
    repo = Repository(root)
    repo.index()
    assert repo.index_file.parent == home / "indexes"
    assert not list(root.rglob("*.sqlite"))
    conn = apsw.Connection(str(repo.index_file))
    assert conn.execute("PRAGMA journal_mode").fetchone() == ("wal",)


def test_a_changed_file_keeps_its_unchanged_chunks_and_search_sees_only_the_new_version(
    make_repo,
):
    """A save or a pull that changes one function rewrites that function's rows only; the
    others keep their rows with their lines moved, and every search sees the file as it is."""
    old = "def alpha():\n    return 1\n\n\ndef beta():\n    return 'gamma_old_text'\n\n\ndef gone():\n    return 3\n"
    root = make_repo({"m.py": old})
    repo = Repository(root)
    repo.index()
    with repo.open_store() as store:
        before = {name: (cid, line) for cid, name, line in store.db.execute(
            "SELECT id, name, start_line FROM chunks WHERE name IS NOT NULL")}  # fmt: skip
    new = "import os\n\n\n" + old.replace("gamma_old_text", "delta_new_text").replace(
        "def gone():\n    return 3\n", "def added():\n    return os.sep\n"
    )
    (root / "m.py").write_text(new)
    repo.index()
    with repo.open_store() as store:
        after = {name: (cid, line) for cid, name, line in store.db.execute(
            "SELECT id, name, start_line FROM chunks WHERE name IS NOT NULL")}  # fmt: skip
        assert store.check() == []
    assert after["alpha"] == (before["alpha"][0], before["alpha"][1] + 3)  # kept, moved
    assert after["beta"][0] != before["beta"][0]  # changed: a new row
    assert "gone" not in after and "added" in after

    def found(query: str, modality: str) -> set[str]:
        return {r.name for r in repo.search(query, modality=modality).results}

    assert "beta" in found("delta_new_text", "trigram") and not found("gamma_old_text", "trigram")
    assert "added" in found("added", "bm25") and "gone" not in found("gone", "bm25")
    assert "alpha" in found("alpha", "bm25")


def test_a_long_first_index_takes_the_open_files_neighbourhood_first(make_repo):
    """On a large tree the files the open buffer needs come first: the open file, what it
    imports, the other files of their folders, the files of the last commits; then the rest."""
    files = {f"aaa/filler_{i:03}.py": f"def filler_{i}():\n    return {i}\n" for i in range(320)}
    files["zzz/app/main.py"] = (
        "from zzz.lib.util import helper\nfrom yyy.sub import extra\n\n\ndef run():\n"
        "    return helper() + extra.more()\n"
    )
    files["yyy/sub/extra.py"] = "def more():\n    return 6\n"  # a namespace package
    files["zzz/app/other.py"] = "def other():\n    return 2\n"
    files["zzz/lib/util.py"] = "def helper():\n    return 1\n"
    files["zzz/lib/more.py"] = "def more():\n    return 3\n"
    files["mmm/recent.py"] = "def recent():\n    return 4\n"
    root = make_repo(files, git=True)
    (root / "mmm/recent.py").write_text("def recent():\n    return 5\n")
    git(root, "commit", "-qam", "a recent change")
    order: list[str] = []
    Repository(root).index(lambda done, total, path: order.append(path), first=["zzz/app/main.py"])
    assert len(order) == len(files)
    # `from yyy.sub import extra`: a module of the package, imported by name
    assert order[:3] == ["zzz/app/main.py", "zzz/lib/util.py", "yyy/sub/extra.py"]
    assert set(order[3:5]) == {"zzz/app/other.py", "zzz/lib/more.py"}
    assert order[5:] == ["mmm/recent.py"] + sorted(f for f in files if f.startswith("aaa/"))


def test_what_index_prints_fits_an_80_column_terminal(tmp_path, cli):
    """Its summary was one line of 130 columns, which an 80-column terminal wrapped inside a
    number. A root of a short name: only the root's own name can make a line longer."""
    root = tmp_path / "proj"
    files = {f"pkg/mod{i}.py": f"def f{i}(x):\n    return x + {i}\n" for i in range(30)}
    files["data.bin"] = "\0binary"
    for path, text in files.items():
        (root / path).parent.mkdir(parents=True, exist_ok=True)
        (root / path).write_text(text)
    for args in (("--no-embed",), ()):
        result = cli("index", "--root", root, "--quiet", *args)
        assert result.code == 0, result.err
        lines = (result.out + result.err).splitlines()
        assert any("30 files" in line for line in lines), lines
        # the root as a short name: pytest's folder for it is long enough alone to wrap
        assert all(len(line.replace(str(root), "~/proj")) <= 80 for line in lines), lines
