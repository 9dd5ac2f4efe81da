"""The graph: references extracted per language, imports resolved to files, callers, impact
radius, centrality, and the fusion arithmetic that uses them."""

from __future__ import annotations

import pytest

from repocontext import Repository
from repocontext.index.imports import ImportResolver
from repocontext.search import fusion
from repocontext.search.fusion import RRF_K
from repocontext.search.intent import WEIGHT_PROFILES
from repocontext.store import Store
from repocontext.store.schema import MIGRATIONS, SCHEMA_VERSION

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
            if retriever == "neighbours":  # not a retriever: the call graph's corroboration
                continue
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
    # fused, a retriever the query gave nothing to search with is not why nothing was found
    fused = cli("search", "--root", app, "--json", "plain words only").json()
    assert fused["results"] == [] and not [n for n in fused["notes"] if "identifier" in n]


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
        assert store.db.execute("PRAGMA user_version").fetchone() == (SCHEMA_VERSION,)
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


# A Go package in the shape the call graph helps with: the exported `Walk` carries the doc a
# question matches, the unexported `walk` it calls holds the logic; `find` is a look-alike
# with words of its own in a doc comment, called by nothing the question finds.
WALK_TREE = {
    "go.mod": "module example.com/router\n",
    "router.go": """
        package router

        // Router holds the registered routes.
        type Router struct {
            routes []*Route
        }

        // Route is one registered path and the routers mounted under it.
        type Route struct {
            path       string
            subrouters []*Router
        }

        // Walk visits every registered route, those of nested routers included, and calls
        // fn with each; fn returning ErrSkip leaves out the routes below that one.
        func (r *Router) Walk(fn WalkFunc) error {
            return r.walk(fn, nil)
        }

        func (r *Router) walk(fn WalkFunc, ancestors []*Route) error {
            for _, t := range r.routes {
                err := fn(t, ancestors)
                if err == ErrSkip {
                    continue
                }
                for _, sub := range t.subrouters {
                    if err := sub.walk(fn, append(ancestors, t)); err != nil {
                        return err
                    }
                }
            }
            return nil
        }

        // find looks for a registered route by its path, in nested routers too.
        func (r *Router) find(path string, ancestors []*Route) *Route {
            for _, t := range r.routes {
                if t.path == path {
                    return t
                }
                for _, sub := range t.subrouters {
                    if found := sub.find(path, append(ancestors, t)); found != nil {
                        return found
                    }
                }
            }
            return nil
        }

        // Handle registers a route for path.
        func (r *Router) Handle(path string) *Route {
            t := &Route{path: path}
            r.routes = append(r.routes, t)
            println(t.String())
            return t
        }
    """,
    "walk.go": """
        package router

        import "errors"

        // WalkFunc is called for each route Walk visits, with the routes above it.
        type WalkFunc func(route *Route, ancestors []*Route) error

        // ErrSkip, returned by a WalkFunc, skips the routes of the routers below a route.
        var ErrSkip = errors.New("skip this router")
    """,
    # four definitions of one name: which one `t.String()` means is unknown
    "names.go": """
        package router

        type A struct{}
        type B struct{}
        type C struct{}
        type D struct{}

        func (A) String() string { return "a" }
        func (B) String() string { return "b" }
        func (C) String() string { return "c" }
        func (D) String() string { return "d" }
    """,
    "router_test.go": """
        package router

        import "testing"

        func TestWalk(t *testing.T) {
            r := &Router{}
            r.Walk(nil)
        }
    """,
}
WALK_QUESTION = "how do I visit every route, the nested routers' too, and skip some"


def test_the_call_graph_neighbours_of_a_go_function(make_repo, cli):
    """One call away: what a function calls and what calls it, in source files, where the
    name says which function is meant."""
    root = make_repo(WALK_TREE)
    assert cli("index", "--root", root, "--no-embed", "--quiet").code == 0
    with Repository(root).open_store() as store:
        ids = dict(store.db.execute("SELECT qualname, id FROM chunks WHERE qualname IS NOT NULL"))
        named = {v: k for k, v in ids.items()}

        def neighbours(qualname: str) -> set[str]:
            name = qualname.rsplit(".", 1)[-1]
            found = store.graph.call_neighbours(ids[qualname], name, fusion.NEIGHBOUR_DEFINITIONS)
            return {named[i] for i in found}

        # its callee; not TestWalk, a caller in a test file
        assert neighbours("Router.Walk") == {"Router.walk"}
        # its caller; not itself, though it recurses
        assert neighbours("Router.walk") == {"Router.Walk"}
        # `String` has four definitions: not followed
        assert neighbours("Router.Handle") == set()
        assert neighbours("Router.find") == set()


def test_a_function_one_call_away_from_the_best_chunks_comes_up(make_repo, cli, monkeypatch):
    """A question in the words of an exported function's doc gets the unexported one that
    does the work (Go's usual split) above a look-alike nothing found calls; how much it
    gains is in its `contributions`, under `neighbours`."""
    root = make_repo(WALK_TREE)
    assert cli("index", "--root", root, "--no-embed", "--quiet").code == 0

    def search() -> list[dict]:
        out = cli("search", "--root", root, "--json", "--all-chunks", WALK_QUESTION).json()
        assert out["intent"] == "understand_code"
        return out["results"]

    shipped = fusion.NEIGHBOUR_WEIGHT.get("go", fusion.NEIGHBOUR_WEIGHT.get("*", 0.0))
    assert shipped > 0
    with monkeypatch.context() as patched:
        patched.setattr(fusion, "NEIGHBOUR_WEIGHT", {})
        without = [r["symbol"] for r in search()]
    assert without.index("Router.find") < without.index("Router.walk")
    results = search()
    order = [r["symbol"] for r in results]
    assert order.index("Router.walk") < order.index("Router.find")
    gains = {r["symbol"]: r["contributions"].get("neighbours") for r in results}
    places = [pytest.approx(shipped / (RRF_K + place + 1), abs=1e-6) for place in range(5)]
    assert gains["Router.walk"] in places and gains["Router.Walk"] in places
    assert gains["Router.find"] is None and gains["ErrSkip"] is None and gains["WalkFunc"] is None
