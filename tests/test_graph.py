"""The graph: references extracted per language, imports resolved to files, callers, impact
radius, centrality, and the fusion arithmetic that uses them."""

from __future__ import annotations

import pytest

from repocontext import Repository
from repocontext.index.imports import ImportResolver
from repocontext.search.fusion import RRF_K
from repocontext.search.intent import WEIGHT_PROFILES
from repocontext.store import Store
from repocontext.store.schema import MIGRATIONS

APP = {
    "app/__init__.py": "",
    "app/config.py": '''
        def parse_config(path):
            """Read settings."""
            return {}
    ''',
    "app/server.py": """
        from .config import parse_config


        class Server:
            def start(self):
                settings = parse_config("a.ini")
                return settings

            def restart(self):
                self.start()
                return parse_config("b.ini")
    """,
    "app/cli.py": """
        from app.server import Server


        def main():
            Server().start()
    """,
    "app/base.py": """
        class Handler:
            pass


        class JsonHandler(Handler):
            pass
    """,
    "web/main.ts": """
        import { render } from "./view";

        export function boot(): void {
          render();
        }
    """,
    "web/view.ts": """
        export function render(): void {}
    """,
    "go/cmd/main.go": """
        package main

        import "example.com/proj/go/util"

        func main() { util.Helper() }
    """,
    "go/util/util.go": """
        package util

        func Helper() {}
    """,
}


@pytest.fixture
def app(make_repo, cli):
    root = make_repo(APP)
    assert cli("index", "--root", root, "--no-embed", "--quiet").code == 0
    return root


def rows(root, sql):
    with Repository(root).open_store() as store:
        return list(store.db.execute(sql))


def test_imports_are_resolved_to_files(app):
    got = set(
        rows(
            app,
            "SELECT f.path, r.name, r.target_path FROM refs r JOIN files f "
            "ON f.id = r.file_id WHERE r.kind = 'import'",
        )
    )
    assert got == {
        ("app/server.py", ".config", "app/config.py"),
        ("app/cli.py", "app.server", "app/server.py"),
        ("web/main.ts", "./view", "web/view.ts"),
        ("go/cmd/main.go", "example.com/proj/go/util", "go/util/"),
    }


def test_calls_are_attributed_to_the_enclosing_definition(app):
    got = set(
        rows(
            app,
            "SELECT c.qualname, r.name FROM refs r JOIN chunks c ON c.id = "
            "r.src_chunk WHERE r.kind = 'call'",
        )
    )
    assert {
        ("Server.start", "parse_config"),
        ("Server.restart", "start"),
        ("Server.restart", "parse_config"),
        ("main", "Server"),
        ("main", "start"),
        ("boot", "render"),
        ("main", "Helper"),
    } <= got
    inherits = rows(
        app,
        "SELECT c.qualname, r.name FROM refs r JOIN chunks c ON c.id = "
        "r.src_chunk WHERE r.kind = 'inherit'",
    )
    assert inherits == [("JsonHandler", "Handler")]


def test_who_calls_goes_straight_to_the_graph(app, cli):
    out = cli("search", "--root", app, "--json", "--all-chunks", "who calls parse_config").json()
    assert (out["intent"], out["strategy"]) == ("find_references", "direct")
    symbols = [r["symbol"] for r in out["results"]]
    assert set(symbols[:2]) == {"Server.start", "Server.restart"}  # callers before importers
    assert ("app/server.py", 1) in {(r["path"], r["start_line"]) for r in out["results"]}
    assert all(r["ranks"]["graph"] for r in out["results"])


def test_impact_reaches_callers_of_callers(app, cli):
    one = cli("search", "--root", app, "--json", "--all-chunks", "who calls parse_config").json()
    two = cli(
        "search", "--root", app, "--json", "--all-chunks", "what breaks if I change parse_config"
    ).json()
    assert two["intent"] == "impact_analysis"
    depth1 = {r["symbol"] for r in one["results"]}
    depth2 = {r["symbol"] for r in two["results"]}
    assert "main" not in depth1 and "main" in depth2  # main -> Server.start -> parse_config


def test_centrality_counts_referencing_files_and_boosts_fused_results(app, cli):
    assert dict(
        rows(
            app,
            "SELECT name, files FROM centrality WHERE name IN ('parse_config', 'Server', 'render')",
        )
    ) == {"parse_config": 1, "Server": 1, "render": 1}
    out = cli("search", "--root", app, "--json", "--all-chunks", "read settings config").json()
    top = next(r for r in out["results"] if r["symbol"] == "parse_config")
    assert top["factors"]["centrality"] == pytest.approx(min(1 + 0.3 * 0.6931, 1.5), abs=1e-3)


def test_fusion_contribution_is_weight_over_k_plus_rank(app, cli):
    out = cli("search", "--root", app, "--json", "--all-chunks", "settings for the server").json()
    assert out["intent"] == "understand_code" and out["confidence"] == 0.40
    for r in out["results"]:
        for retriever, contribution in r["contributions"].items():
            group = {"bm25": "text", "ast": "structural", "graph": "graph", "vector": "semantic"}
            weight = WEIGHT_PROFILES["understand_code"][group[retriever]]
            assert contribution == pytest.approx(weight / (RRF_K + r["ranks"][retriever]), abs=1e-6)


def test_graph_modality_and_nothing_to_follow(app, cli):
    out = cli("search", "--root", app, "--json", "--modality", "graph", "Helper").json()
    # the caller (func main) and the chunk holding the import, both in main.go
    assert {(r["path"], r["symbol"]) for r in out["results"]} == {
        ("go/cmd/main.go", "main"),
        ("go/cmd/main.go", None),
    }
    none = cli("search", "--root", app, "--json", "--modality", "graph", "plain words only").json()
    assert none["results"] == [] and any("no identifier" in n for n in none["notes"])


def test_resolver_rules():
    r = ImportResolver(
        [
            "src/pkg/__init__.py",
            "src/pkg/mod.py",
            "src/pkg/sub/x.py",
            "web/a/b.tsx",
            "web/a/index.js",
            "go/x/y/z.go",
        ]
    )
    assert r.resolve("src/pkg/sub/x.py", "..mod", "python") == "src/pkg/mod.py"
    assert r.resolve("src/pkg/sub/x.py", "pkg.mod", "python") == "src/pkg/mod.py"
    assert r.resolve("src/pkg/mod.py", ".", "python") == "src/pkg/__init__.py"
    assert r.resolve("src/pkg/mod.py", "os.path", "python") is None
    assert r.resolve("web/c.ts", "./a/b", "typescript") == "web/a/b.tsx"
    assert r.resolve("web/c.ts", "./a", "typescript") == "web/a/index.js"
    assert r.resolve("web/c.ts", "react", "typescript") is None
    assert r.resolve("go/main.go", "github.com/me/repo/go/x/y", "go") == "go/x/y/"
    assert r.resolve("go/main.go", "fmt", "go") is None


def test_a_version_1_index_is_migrated(tmp_path):
    path = tmp_path / "old.sqlite"
    import apsw

    conn = apsw.Connection(str(path))
    conn.execute(MIGRATIONS[1])
    conn.execute("PRAGMA application_id=1380144216; PRAGMA user_version=1")
    conn.execute("INSERT INTO meta VALUES ('root', '/x')")
    conn.close()
    with Store(path) as store:
        assert store.db.execute("PRAGMA user_version").fetchone() == (2,)
        assert store.get_meta("root") == "/x"
        assert store.graph.counts()["imports_resolved"] == 0


def test_a_run_that_only_rewrites_files_updates_the_graph_as_a_full_rebuild_would(make_repo):
    """After a pull that changes files without adding or removing any, only those files'
    imports are resolved again and only the names they reference recounted: the graph must be
    the one a rebuild from scratch makes."""
    files = {
        "pkg/__init__.py": "",
        "pkg/a.py": "def foo():\n    return 1\n\n\ndef bar():\n    return 2\n",
        "pkg/b.py": "from pkg.a import foo\n\n\ndef b():\n    return foo()\n",
        "pkg/c.py": "from pkg.a import foo\n\n\ndef c():\n    return foo() + foo()\n",
        "pkg/d.py": "import os\n\n\ndef d():\n    return os.sep\n",
    }
    root = make_repo(files)
    repo = Repository(root)
    repo.index()
    (root / "pkg/c.py").write_text("from pkg.a import bar\n\n\ndef c():\n    return bar()\n")
    (root / "pkg/d.py").write_text("from pkg import a\n\n\ndef d():\n    return a.foo()\n")
    repo.index()

    def graph_state() -> tuple:
        with repo.open_store() as store:
            return (
                sorted(store.db.execute("SELECT name, files FROM centrality")),
                sorted(
                    store.db.execute(
                        "SELECT f.path, r.name, r.target_path FROM refs r JOIN files f "
                        "ON f.id = r.file_id WHERE r.kind = 'import'"
                    )
                ),  # fmt: skip
            )

    incremental = graph_state()
    assert ("foo", 2) in incremental[0] and ("bar", 1) in incremental[0]
    assert ("pkg/d.py", "pkg", "pkg/__init__.py") in incremental[1]
    repo.index(rebuild=True)
    assert graph_state() == incremental
