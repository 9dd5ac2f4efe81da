"""Search sees the working tree (issue 21, item 2), and status says what is left undone
(item 5): uncommitted renames, saved edits, stashes and deletions are searched as they are
now; an unchanged tree is not indexed again; a writer holding the index is not waited for;
an embedding stopped part way and a folder too deep to open are reported.

All in real git repositories and real trees; no test depends on how fast the machine is."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import time
from pathlib import Path

from conftest import git, make_deep_file, run_cli_process

from repocontext import Repository
from repocontext.store import Store

C_PY = "def compute_total(items):\n    total = sum(items)\n    return total\n"
APP = {
    "app/c.py": C_PY,
    "app/main.py": "from app.c import compute_total\n\n\ndef run():\n    return compute_total([1])\n",
    "README.md": "# Demo\n",
}


def found(cli, root, query, *args) -> list[tuple[str, int, int]]:
    result = cli("search", "--root", root, "--json", *args, query)
    assert result.code == 0, result.err
    return [(r["path"], r["start_line"], r["end_line"]) for r in result.json()["results"]]


def symbols(cli, root, query) -> list[tuple[str, str | None]]:
    result = cli("search", "--root", root, "--json", query)
    assert result.code == 0, result.err
    return [(r["path"], r["symbol"]) for r in result.json()["results"]]


def line_count(path: Path) -> int:
    return len(path.read_text().splitlines())


def indexed(root: Path) -> Path:
    Repository(root).index()
    return root


def age(root: Path, seconds: float = 60) -> None:
    """Every file and folder under root (git's too) modified `seconds` ago: outside the window
    in which a time is not trusted."""
    old = time.time() - seconds
    for dirpath, dirnames, filenames in os.walk(root):
        for name in dirnames + filenames:
            os.utime(os.path.join(dirpath, name), (old, old), follow_symlinks=False)
    os.utime(root, (old, old))


# --- the four cases of the issue ---------------------------------------------------------------


def test_an_uncommitted_git_mv_is_searched_under_its_new_name(make_repo, cli):
    root = indexed(make_repo(APP, git=True))
    git(root, "mv", "app/c.py", "app/d.py")
    hits = found(cli, root, "def compute_total", "--modality", "ast")
    assert hits == [("app/d.py", 1, 3)]
    assert not [h for h in found(cli, root, "compute_total") if h[0] == "app/c.py"]


def test_a_saved_edit_that_renames_a_function_is_searched_as_saved(make_repo, cli):
    root = indexed(make_repo(APP, git=True))
    (root / "app/c.py").write_text(C_PY.replace("compute_total", "grand_total"))
    assert ("app/c.py", "compute_total") not in symbols(cli, root, "def compute_total")
    assert found(cli, root, "def compute_total", "--modality", "ast") == []
    assert found(cli, root, "def grand_total", "--modality", "ast") == [("app/c.py", 1, 3)]


def test_after_git_stash_no_line_range_runs_past_the_end_of_its_file(make_repo, cli):
    root = make_repo(APP, git=True)
    longer = "\n" * 40 + "def far_down():\n    return 1\n"
    (root / "app/c.py").write_text(C_PY + longer)
    indexed(root)
    assert found(cli, root, "def far_down", "--modality", "ast") == [("app/c.py", 44, 45)]
    git(root, "stash")
    assert line_count(root / "app/c.py") == 3
    for path, _, end in found(cli, root, "far_down") + found(cli, root, "compute_total"):
        assert end <= line_count(root / path), (path, end)
    assert found(cli, root, "def far_down", "--modality", "ast") == []


def test_a_deleted_file_is_no_longer_listed(make_repo, cli):
    root = indexed(make_repo(APP, git=True))
    (root / "app/c.py").unlink()
    assert not [h for h in found(cli, root, "compute_total") if h[0] == "app/c.py"]
    with Repository(root).open_store() as store:
        assert "app/c.py" not in store.file_states()


# --- new files wherever they appear ------------------------------------------------------------


def test_a_new_file_is_found_in_a_new_folder_an_empty_one_and_a_folder_of_ignored_files(
    make_repo, cli
):
    root = make_repo({**APP, ".gitignore": "*.log\n"}, git=True)
    (root / "logs").mkdir()
    (root / "logs/run.log").write_text("ignored\n")
    (root / "empty/inner").mkdir(parents=True)
    indexed(root)
    (root / "logs/notes.py").write_text("def from_the_logs_folder():\n    pass\n")
    (root / "empty/inner/late.py").write_text("def filled_in_later():\n    pass\n")
    (root / "fresh/sub").mkdir(parents=True)
    (root / "fresh/sub/new.py").write_text("def brand_new_folder():\n    pass\n")
    for name, path in (
        ("from_the_logs_folder", "logs/notes.py"),
        ("filled_in_later", "empty/inner/late.py"),
        ("brand_new_folder", "fresh/sub/new.py"),
    ):
        assert found(cli, root, f"def {name}", "--modality", "ast") == [(path, 1, 2)]
    assert not [h for h in found(cli, root, "ignored") if h[0].endswith(".log")]


def test_an_empty_folder_filled_after_a_search_is_seen_by_the_next(make_repo, cli):
    root = indexed(make_repo(APP, git=True))
    (root / "pkg/deeper").mkdir(parents=True)
    assert found(cli, root, "def nothing_here_yet", "--modality", "ast") == []
    (root / "pkg/deeper/mod.py").write_text("def nothing_here_yet():\n    pass\n")
    assert found(cli, root, "def nothing_here_yet", "--modality", "ast") == [
        ("pkg/deeper/mod.py", 1, 2)
    ]


def test_outside_git_edits_additions_and_deletions_are_searched_as_they_are(make_repo, cli):
    root = indexed(make_repo(APP))
    (root / "app/c.py").write_text(C_PY.replace("compute_total", "grand_total"))
    (root / "app/extra").mkdir()
    (root / "app/extra/more.py").write_text("def one_more():\n    pass\n")
    (root / "app/main.py").unlink()
    assert found(cli, root, "def grand_total", "--modality", "ast") == [("app/c.py", 1, 3)]
    assert found(cli, root, "def one_more", "--modality", "ast") == [("app/extra/more.py", 1, 2)]
    assert not [h for h in found(cli, root, "compute_total run") if h[0] == "app/main.py"]


def test_a_file_that_stops_being_too_big_is_indexed(make_repo, cli):
    root = make_repo({**APP, "app/big.py": "x = 1\n" * 200_000}, git=True)
    indexed(root)
    (root / "app/big.py").write_text("def no_longer_big():\n    pass\n")
    assert found(cli, root, "def no_longer_big", "--modality", "ast") == [("app/big.py", 1, 2)]


def test_a_binary_file_is_not_read_again_until_it_changes(make_repo, cli, monkeypatch):
    root = make_repo({**APP, "app/blob.dat.py": b"\0\1\2" * 100}, git=True)
    age(root)
    repo = Repository(root)
    repo.index()
    with repo.open_store() as store:
        assert dict(store.skipped())["app/blob.dat.py"].startswith("binary")
    opened: list[str] = []
    real_open = open

    def spy_open(file, *args, **kwargs):
        opened.append(str(file))
        return real_open(file, *args, **kwargs)

    with monkeypatch.context() as patch:
        patch.setattr("builtins.open", spy_open)
        repo.index()
    assert opened and not [p for p in opened if p.endswith("blob.dat.py")]
    (root / "app/blob.dat.py").write_text("def now_it_is_text():\n    pass\n")
    assert found(cli, root, "def now_it_is_text", "--modality", "ast") == [
        ("app/blob.dat.py", 1, 2)
    ]


# --- cheap when nothing changed, and never in another writer's way -----------------------------


def test_an_unchanged_tree_is_not_indexed_again_by_a_search(make_repo, cli):
    from repocontext.index.fresh import tree_changed

    for use_git in (True, False):
        root = make_repo(APP, git=use_git)
        age(root)
        repo = Repository(root)
        repo.index()
        with repo.open_store() as store:
            assert tree_changed(root, store) is False
            stamp = store.get_meta("indexed_at")
        assert found(cli, root, "def compute_total", "--modality", "ast") == [("app/c.py", 1, 3)]
        with repo.open_store() as store:
            assert store.get_meta("indexed_at") == stamp  # no run: nothing was written
            os.utime(root / "README.md")  # touched, same content: looked at, not rewritten
            assert tree_changed(root, store) is True
        assert found(cli, root, "def compute_total", "--modality", "ast") == [("app/c.py", 1, 3)]
        with repo.open_store() as store:
            assert store.get_meta("indexed_at") == stamp


def test_while_another_process_writes_the_index_search_answers_from_it_as_it_is(make_repo, cli):
    root = indexed(make_repo(APP, git=True))
    git(root, "mv", "app/c.py", "app/d.py")
    repo = Repository(root)
    with Store(repo.index_file) as holder, holder.write_lock():
        result = cli("search", "--root", root, "--json", "--modality", "ast", "compute_total")
        assert result.code == 0 and result.err == ""
        assert [r["path"] for r in result.json()["results"]] == ["app/c.py"]  # as it was
    assert found(cli, root, "def compute_total", "--modality", "ast") == [("app/d.py", 1, 3)]


def test_two_searches_refreshing_at_once_leave_a_sound_index(make_repo):
    files = {f"mod{i}.py": f"def function_{i}():\n    return {i}\n" for i in range(40)}
    root = indexed(make_repo(files, git=True))
    for i in range(0, 40, 2):
        (root / f"mod{i}.py").write_text(f"def renamed_{i}():\n    return {i}\n")
    procs = [
        subprocess.Popen(
            [
                *(sys.executable, "-m", "repocontext.cli", "search", "--root", str(root)),
                *("--json", "--modality", "ast", "renamed_4"),
            ],
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
        )
        for _ in range(2)
    ]
    outs = [p.communicate(timeout=120) for p in procs]
    assert [p.returncode for p in procs] == [0, 0], outs
    assert all(err == "" for _, err in outs), outs
    repo = Repository(root)
    assert repo.check() == []
    with repo.open_store() as store:
        names = {h.name for h in store.symbols_with_prefix("renamed_", 100)}
        assert names == {f"renamed_{i}" for i in range(0, 40, 2)}
        assert store.symbols_with_prefix("function_0", 10) == []


# --- item 5: what status reports ---------------------------------------------------------------


def test_status_reports_an_embedding_stopped_part_way(make_repo, cli):
    files = {
        f"pkg/m{i}.py": "".join(
            f"def task_{i}_{j}(value):\n    return value * {i * 10 + j}\n\n\n" for j in range(6)
        )
        for i in range(8)
    }
    root = make_repo(files)
    repo = Repository(root)
    repo.index()
    batches = []

    def stop_after_four() -> None:
        batches.append(1)
        if len(batches) > 4:
            raise KeyboardInterrupt  # what Ctrl-C between two batches does

    try:
        repo.embed(batch_size=8, pause=stop_after_four)
    except KeyboardInterrupt:
        pass
    status = cli("status", "--root", root, "--json").json()
    total = status["vectors"]["chunks"]
    assert status["vectors"]["embedded"] == 32 < total
    assert status["incomplete"] == ["embedding"]
    assert status["vectors"]["missing"] == total - 32
    text = cli("status", "--root", root).out
    assert f"incomplete: embedding ({total - 32} of {total} chunk contents have no vector)" in text
    repo.embed()
    status = cli("status", "--root", root, "--json").json()
    assert status["incomplete"] == [] and status["vectors"]["missing"] == 0


def test_status_counts_every_chunk_as_missing_for_another_configured_model(
    make_repo, cli, home, monkeypatch
):
    from repocontext.config import EmbeddingConfig

    root = make_repo(APP)
    repo = Repository(root)
    repo.index()
    repo.embed()
    assert cli("status", "--root", root, "--json").json()["incomplete"] == []
    other = home / "other-model.onnx"  # another file, so another model as far as identity goes
    shutil.copyfile(EmbeddingConfig().resolved().model_path, other)
    with open(other, "ab") as fh:
        fh.write(b"\0")
    config = home / "config.toml"
    config.write_text(f'[embedding]\nmodel_path = "{other}"\n')
    monkeypatch.setenv("REPOCONTEXT_CONFIG", str(config))
    status = cli("status", "--root", root, "--json").json()
    assert status["incomplete"] == ["embedding"]
    assert status["vectors"]["missing"] == status["vectors"]["chunks"] > 0


def test_a_folder_too_deep_to_open_is_skipped_with_a_reason(tmp_path, cli):
    root = tmp_path / "deep"
    root.mkdir()
    (root / "top.py").write_text("def top():\n    pass\n")
    folders = [f"d{i % 10}" for i in range(3000)]  # 3,000 levels
    deepest = make_deep_file(root, folders, "leaf.py", b"def deepest():\n    pass\n")
    try:
        assert cli("index", "--root", root, "--no-embed").code == 0
        status = cli("status", "--root", root, "--json", "--skipped").json()
        reasons = {s["path"]: s["reason"] for s in status["skipped_files"]}
        covering = [p for p in reasons if deepest.startswith(p)]
        assert len(covering) == 1 and "too deep" in reasons[covering[0]], reasons
        assert (
            f"skipped {covering[0]}: folder too deep"
            in cli("status", "--root", root, "--skipped").out
        )
        assert found(cli, root, "def top", "--modality", "ast") == [("top.py", 1, 2)]
    finally:
        subprocess.run(["rm", "-rf", str(root)], check=True)  # pytest's clean-up would recurse


def test_the_cli_search_refreshes_in_a_process_of_its_own(make_repo):
    root = indexed(make_repo(APP, git=True))
    git(root, "mv", "app/c.py", "app/d.py")
    proc = run_cli_process("search", "--root", root, "--modality", "ast", "compute_total")
    assert proc.returncode == 0, proc.stderr
    assert "app/d.py:1-3" in proc.stdout and "app/c.py" not in proc.stdout
