"""An index built once (a team's CI) and imported on another checkout of the same repository:
`index --export FILE`, `index --import FILE`. Real repositories, real index files."""

from __future__ import annotations

import json
import shutil
import subprocess

import apsw
import pytest
from conftest import git
from test_search import PROJECT

from repocontext.locations import index_path


def indexed_project(make_repo, cli, tmp_path):
    """A git repository indexed and exported, and a second clone of it elsewhere."""
    built = make_repo(PROJECT, git=True)
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
        (("PRAGMA user_version = 1",), "has index schema 1, this repocontext writes 2"),
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
