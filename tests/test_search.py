"""Search through the CLI contract: definitions before call sites, exact strings, explain, JSON."""

from __future__ import annotations

import json
import os
from collections import Counter

import pytest

from repocontext.choices import CHUNKS_PER_PLACE, PER_FILE, PER_FILE_MOST
from repocontext.search.intent import classify, quoted_inside

PROJECT = {
    "pkg/models.py": '''
        class Response:
            """An HTTP response."""

            def raise_for_status(self):
                """Raise HTTPError if the status is 4xx or 5xx."""
                if self.status >= 400:
                    raise HTTPError("bad status: ECONNREFUSED or worse")

            def json(self):
                return {}
    ''',
    "pkg/sessions.py": '''
        from .models import Response


        def fetch(url):
            response = Response()
            response.raise_for_status()
            response.raise_for_status()
            return response


        def should_strip_auth(old_url, new_url):
            """Decide whether the Authorization header is removed when redirecting."""
            return old_url != new_url
    ''',
    "pkg/exceptions.py": '''
        class HTTPError(Exception):
            """An HTTP error occurred."""


        class UnrewindableBodyError(HTTPError):
            """The body cannot be rewound to resend it."""
    ''',
    "tests/test_models.py": """
        from pkg.models import Response


        def test_raise_for_status():
            r = Response()
            r.raise_for_status()
            r.raise_for_status()
            r.raise_for_status()
    """,
    "docs/guide.md": "# Guide\\n\\nCall raise_for_status after every request.\\n",
}


@pytest.fixture
def project(make_repo, cli):
    root = make_repo(PROJECT)
    assert cli("index", "--root", root, "--quiet").code == 0
    return root


def search(cli, root, *args):
    result = cli("search", "--root", root, "--json", *args)
    assert result.code == 0, result.err
    return result.json()


def test_identifier_query_finds_the_definition_before_call_sites(project, cli):
    out = search(cli, project, "raise_for_status")
    first = out["results"][0]
    assert (first["path"], first["symbol"], first["start_line"]) == (
        "pkg/models.py",
        "Response.raise_for_status",
        4,
    )
    assert out["intent"] == "find_definition"
    camel = search(cli, project, "UnrewindableBodyError")["results"][0]
    assert (camel["path"], camel["symbol"]) == ("pkg/exceptions.py", "UnrewindableBodyError")


def test_json_follows_the_contract(project, cli):
    out = search(cli, project, "--top", "3", "how does a response raise an error for a bad status")
    assert set(out) == {
        "query", "intent", "confidence", "strategy", "results", "timings_ms", "modality", "rule",
        "notes", "functions",
    }  # fmt: skip
    assert out["strategy"] == "fused"  # a question: no one retriever answers it alone
    assert isinstance(out["timings_ms"]["total"], float) and out["timings_ms"]["total"] > 0
    assert 1 <= len(out["results"]) <= 3
    for r in out["results"]:
        assert set(r) == {
            "path", "start_line", "end_line", "symbol", "kind", "score", "ranks", "role", "flags",
            "contributions", "factors", "rerank", "placed", "signature",
        }  # fmt: skip
        assert r["signature"] is None or r["signature"].split()[0] in ("def", "class")
        assert set(r["ranks"]) == {"bm25", "vector", "trigram", "ast", "graph"}
        assert r["rerank"] is None  # the second stage is off by default
        assert r["placed"] is None  # in score order: no rule placed it
        assert r["start_line"] <= r["end_line"]
        assert "\\\\" not in r["path"] and not r["path"].startswith("/")
    assert out["functions"] == []  # only a long text (a bug report) gets a function answer


def test_plain_language_question_finds_the_documented_function(project, cli):
    out = search(cli, project, "remove the authorization header when redirecting")
    assert out["results"][0]["symbol"] == "should_strip_auth"


def test_exact_string_goes_to_the_trigram_retriever(project, cli):
    out = search(cli, project, '"bad status: ECONN"')
    assert (out["intent"], out["strategy"]) == ("exact_match", "direct")
    assert [r["path"] for r in out["results"]] == ["pkg/models.py"]
    assert out["results"][0]["ranks"]["trigram"] == 1
    errno = search(cli, project, "ECONNREFUSED")
    assert errno["results"][0]["start_line"] == 4  # the method whose body holds the string


DOC_COMMENTS = {
    "mux.go": """
        package mux

        // Route is one registered path.
        type Route struct{ path string }

        // methodNotAllowed responds with a 405,
        // method not allowed, and lists the allowed methods.
        func methodNotAllowed(allowed []string) string {
            return "405 " + strings.Join(allowed, ",")
        }
    """,
    "src/store.ts": """
        /**
         * Creates a store whose state survives a page reload.
         * @param name the storage key
         */
        export function persist(name: string) {
          return localStorage.getItem(name);
        }
    """,
    "src/lib.rs": """
        /// Splits the buffer in two at the given index, panicking when out of bounds.
        pub fn split_to(at: usize) -> usize {
            at
        }
    """,
}


@pytest.mark.parametrize(
    "phrase, path, symbol, comment_line",
    [
        ("method not allowed", "mux.go", "methodNotAllowed", 6),
        ("survives a page reload", "src/store.ts", "persist", 1),
        ("panicking when out of bounds", "src/lib.rs", "split_to", 1),
    ],
)
def test_an_exact_string_in_a_doc_comment_is_found_as_grep_finds_it(
    make_repo, cli, phrase, path, symbol, comment_line
):
    """A doc comment above a Go, TypeScript or Rust definition is the definition's `doc`, not
    its text: exact-string search, which reads text, found nothing there that grep finds. It
    finds the definition now, shown from the comment's first line; a string of the body still
    shows the definition from its own first line."""
    root = make_repo(DOC_COMMENTS)
    assert cli("index", "--root", root, "--quiet", "--no-embed").code == 0
    out = search(cli, root, f'"{phrase}"')
    assert (out["intent"], out["strategy"]) == ("exact_match", "direct")
    found = [(r["path"], r["symbol"], r["start_line"]) for r in out["results"]]
    assert found == [(path, symbol, comment_line)]
    # a question quoting it is fused from several lists: the definition starts there too
    asked = search(cli, root, f'which code says "{phrase}"')
    assert asked["strategy"] == "fused"
    hit = next(r for r in asked["results"] if r["symbol"] == symbol)
    assert (hit["start_line"], hit["ranks"]["trigram"]) == (comment_line, 1)
    in_the_body = search(cli, root, '"405 "')
    assert [(r["symbol"], r["start_line"]) for r in in_the_body["results"]] == [
        ("methodNotAllowed", 8)
    ]


QUOTED_NAME = {
    "lib/pricing.c": """
        #include "pricing.h"

        int apply_discount(int price, int percent) {
            return price - price * percent / 100;
        }
    """,
    "lib/cart.c": """
        #include "pricing.h"

        int cart_total(int *prices, int n) {
            int total = 0;
            for (int i = 0; i < n; i++) total += apply_discount(prices[i], 10);
            if (total > 1000) total = apply_discount(total, 5);
            return apply_discount(total, 0) + apply_discount(0, 0);
        }
    """,
}


def test_a_quoted_name_lists_its_definition_before_the_places_that_use_it(make_repo, cli):
    """Exact-string search ranks by occurrences: `"apply_discount"` listed cart_total, which
    calls it four times, above the function. Its definition comes first now, said by
    `placed`; the uses keep their order after it, and a quoted phrase is ranked as before."""
    root = make_repo(QUOTED_NAME)
    assert cli("index", "--root", root, "--quiet", "--no-embed").code == 0
    out = search(cli, root, '"apply_discount"')
    assert (out["intent"], out["strategy"]) == ("exact_match", "direct")
    assert [(r["symbol"], r["ranks"]["trigram"]) for r in out["results"]] == [
        ("apply_discount", 2),
        ("cart_total", 1),
    ]
    assert out["results"][0]["placed"] == (
        "the definition of the quoted name, before the places that use it"
    )
    phrase = search(cli, root, '"price * percent"')
    assert [r["symbol"] for r in phrase["results"]] == ["apply_discount"]
    assert phrase["results"][0]["placed"] is None


SAME_NAMES = {
    "src/money.rs": """
        pub struct Money(i64);

        impl From<i64> for Money {
            fn from(cents: i64) -> Self {
                Money(cents)
            }
        }

        impl From<f64> for Money {
            fn from(amount: f64) -> Self {
                Money((amount * 100.0).round() as i64)
            }
        }

        impl Money {
            pub fn cents(&self) -> i64 {
                self.0
            }
        }
    """,
}


def test_results_of_one_name_show_what_tells_them_apart(make_repo, cli):
    """Two `impl From<X> for Money` make two `Money.from (method)` that only their lines told
    apart (serde_json lists three `Value.from`): each shows its head; a name listed once
    shows none. The JSON carries every result's signature."""
    root = make_repo(SAME_NAMES)
    assert cli("index", "--root", root, "--quiet", "--no-embed").code == 0
    text = cli("search", "--root", root, "--modality", "bm25", "Money from cents amount").out
    shown = [line.strip() for line in text.splitlines() if "Money." in line]
    assert any(line.endswith("Money.from (method)  fn from(cents: i64) -> Self") for line in shown)
    assert any(line.endswith("Money.from (method)  fn from(amount: f64) -> Self") for line in shown)
    assert any(line.endswith("Money.cents (method)") for line in shown), shown
    out = search(cli, root, "--modality", "bm25", "Money from cents amount")
    heads = {r["signature"] for r in out["results"] if r["symbol"] == "Money.from"}
    assert heads == {"fn from(cents: i64) -> Self", "fn from(amount: f64) -> Self"}


def test_an_index_of_the_version_before_finds_doc_comments_from_the_first_search(make_repo, cli):
    """An index written before doc comments were kept (schema 2, chunker 7: no `lead`, the
    trigram rows the chunks' text alone) is migrated when opened and its files cut again
    before the first search answers, their vectors kept (nothing embedded again)."""
    import apsw

    from repocontext.index.fresh import CHUNKER_META
    from repocontext.locations import index_path

    root = make_repo(DOC_COMMENTS)
    assert cli("index", "--root", root, "--quiet").code == 0
    db = apsw.Connection(str(index_path(root)))
    vectors = "SELECT group_concat(id || content_hash) FROM embeddings"
    embedded = db.execute(vectors).fetchone()
    with db:  # what the version before wrote
        db.execute(
            "DELETE FROM chunks_tri; INSERT INTO chunks_tri(rowid, body) SELECT id, text FROM "
            "chunks; ALTER TABLE chunks DROP COLUMN lead; PRAGMA user_version=2"
        )
        db.execute("UPDATE meta SET value = '7' WHERE key = ?", (CHUNKER_META,))
    found = search(cli, root, '"survives a page reload"')["results"]
    assert [(r["symbol"], r["start_line"]) for r in found] == [("persist", 1)]
    assert db.execute("PRAGMA user_version").fetchone() == (3,)
    assert db.execute(vectors).fetchone() == embedded
    db.close()


def test_modalities_each_return_their_own_ranking(project, cli):
    bm25 = search(cli, project, "--modality", "bm25", "rewound")
    assert bm25["results"][0]["symbol"] == "UnrewindableBodyError"
    assert bm25["results"][0]["ranks"]["bm25"] == 1
    tri = search(cli, project, "--modality", "trigram", "rewou")
    assert tri["results"][0]["symbol"] == "UnrewindableBodyError"
    ast = search(cli, project, "--modality", "ast", "Response.json")
    assert [r["symbol"] for r in ast["results"]] == ["Response.json"]


def test_tests_and_docs_rank_below_source_unless_asked_for(project, cli):
    out = search(cli, project, "--all-chunks", "raise for status")
    roles = [r["role"] for r in out["results"]]
    assert roles == sorted(roles, key=lambda x: x != "source")
    assert roles[0] == "source"
    wanted = search(cli, project, "tests for raise_for_status")
    assert wanted["results"][0]["path"] == "tests/test_models.py"
    only_tests = search(cli, project, "--scope", "tests", "--modality", "bm25", "raise_for_status")
    assert {r["path"] for r in only_tests["results"]} == {"tests/test_models.py"}
    only_src = search(cli, project, "--scope", "src", "--modality", "bm25", "raise_for_status")
    assert "tests/test_models.py" not in {r["path"] for r in only_src["results"]}
    assert "docs/guide.md" not in {r["path"] for r in only_src["results"]}


def test_a_few_chunks_per_file_unless_asked_otherwise(project, cli):
    """The answer is often the neighbour of a file's best chunk: up to PER_FILE are kept."""
    default = search(cli, project, "response")
    per_path = [r["path"] for r in default["results"]]
    assert max(per_path.count(p) for p in per_path) in (2, 3)  # Response and its methods
    one = search(cli, project, "--per-file", "1", "response")
    paths = [r["path"] for r in one["results"]]
    assert len(paths) == len(set(paths))
    many = search(cli, project, "--all-chunks", "response")
    assert len(many["results"]) >= len(default["results"]) > len(one["results"])
    bad = cli("search", "--root", project, "--per-file", "0", "response")
    assert bad.code == 2 and "--per-file is 0" in bad.err  # a usage error


def test_text_results_are_grouped_by_file_with_their_ranks(project, cli):
    out = cli("search", "--root", project, "response").out.splitlines()
    assert out[0] == "pkg/models.py"  # a file, then its chunks with their ranks
    assert out[1].startswith("   1. pkg/models.py:")
    headers = [line for line in out if not line.startswith(" ")]
    assert len(headers) == len(set(headers))


def test_explain_shows_intent_strategy_ranks_and_contributions(project, cli):
    out = cli("search", "--root", project, "--explain", "where do we decide about auth headers")
    assert out.code == 0
    assert "intent understand_code" in out.out and "strategy fused" in out.out
    assert "ranks: bm25 #" in out.out and "contributions: bm25 " in out.out
    direct = cli("search", "--root", project, "--explain", "def fetch")
    assert "intent find_definition (confidence 0.95" in direct.out
    assert "strategy direct" in direct.out and "ranks: ast #1" in direct.out


@pytest.mark.parametrize(
    "query,intent,confidence",
    [
        ("def parse_config", "find_definition", 0.95),
        # the name, then its kind: Go's way (issue 52); prose is no definition
        ("WrapResponseWriter interface", "find_definition", 0.95),
        ("Router struct?", "find_definition", 0.95),
        ("user interface", "understand_code", 0.40),
        ("the user interface", "understand_code", 0.40),
        ("where is parseConfig defined", "find_definition", 0.95),
        ("who calls parse_config", "find_references", 0.90),
        ("usages of render_to_string", "find_references", 0.90),
        # a CLI's error ends with "for usage": a message, not a question about references
        (
            'Error: unknown command "strat" for "myapp"\nRun \'myapp --help\' for usage.',
            "exact_match",
            0.85,
        ),
        ("what breaks if I change get_connection", "impact_analysis", 0.90),
        ('"connection refused"', "exact_match", 0.90),
        ("ECONNREFUSED", "exact_match", 0.90),
        ("parse_config", "find_definition", 0.80),
        ("Session", "find_definition", 0.60),
        ("how does authentication work", "understand_code", 0.75),
        ("authentication tokens", "understand_code", 0.40),
    ],
)
def test_intent_rules(query, intent, confidence):
    got = classify(query)
    assert (got.name, got.confidence) == (intent, confidence)


def test_nothing_found_is_an_empty_list_not_an_error(project, cli):
    out = search(cli, project, "zebra xylophone quasar")
    assert out["results"] == []


# --- messages, bug reports, test trees (issue 14) ------------------------------------------------

TOOL = {
    "src/tool/fields.py": '''
        class FieldError(Exception):
            pass


        def resolve_keyword(name, choices):
            """Find the field a lookup names."""
            if name not in choices:
                raise FieldError(
                    "Cannot resolve keyword '%s' into field. Choices are: %s"
                    % (name, ", ".join(sorted(choices)))
                )
            return name


        def check_marker(name, known):
            if name not in known:
                warn(f"Unknown mark {name} - is this a typo? You can register custom marks")
    ''',
    "src/tool/connections.py": """
        class ConnectionMissing(Exception):
            pass


        class Connections:
            def __getitem__(self, alias):
                if alias not in self.settings:
                    raise ConnectionMissing(f"The connection '{alias}' doesn't exist.")
                return self.settings[alias]
    """,
    "src/tool/fixtures.py": '''
        def setup_fixture(request, definition):
            """Run a fixture's function and keep its value for the scope."""
            value = definition.func(**request.params)
            request.cache[definition.name] = value
            return value


        def teardown_fixtures(request):
            for finalizer in reversed(request.finalizers):
                finalizer()


        def check_arguments(func_name, kind, arg, names):
            if arg not in names:
                fail(f"In {func_name}: function uses no {kind} '{arg}'")
    ''',
    # tests under a folder no name rule knows, made a test root by the configuration and by
    # a conftest.py; each mentions the same words as the source, more often
    "pyproject.toml": '[tool.pytest.ini_options]\ntestpaths = ["checks"]\n',
    "checks/test_fields.py": """
        from tool.fields import resolve_keyword


        def test_resolve_keyword_fixture_teardown_fixture_value():
            assert resolve_keyword("a", ["a"]) == "a"  # fixture value teardown fixture


        def test_an_unknown_argument_is_reported(run):
            assert "In test_login: function uses no argument 'usrname'" in run("test_login")
    """,
    "qa/conftest.py": "import pytest\n",
    "qa/check_fixtures.py": '''
        def check_fixture_value_teardown_fixture():
            """fixture value teardown: the fixture's value is kept for the scope"""
    ''',
    ".github/ISSUE_TEMPLATE/bug.md": "Fixture value teardown: describe the fixture and scope\n",
    "CHANGELOG.rst": "Fixed: a fixture's value was kept after teardown of its scope.\n",
}


@pytest.fixture
def tool(make_repo, cli):
    root = make_repo(TOOL)
    assert cli("index", "--root", root, "--quiet").code == 0
    return root


def test_an_unquoted_message_with_its_values_filled_in_finds_where_it_is_raised(tool, cli):
    pasted = (
        "tool.fields.FieldError: Cannot resolve keyword 'titel' into field. "
        "Choices are: body, id, title"
    )
    out = search(cli, tool, pasted)
    assert out["results"][0]["symbol"] == "resolve_keyword"
    assert out["intent"] == "exact_match" and out["rule"] == "found in the code"
    fstring = search(cli, tool, "Unknown mark slow - is this a typo? You can register custom marks")
    assert fstring["results"][0]["symbol"] == "check_marker"
    # a test asserts on the message as printed, values and all, and names a test: the code
    # that prints it still comes first
    printed = search(cli, tool, "In test_login: function uses no argument 'usrname'")
    assert printed["results"][0]["symbol"] == "check_arguments"


def test_a_message_whose_value_splits_it_into_short_runs_finds_where_it_is_raised(tool, cli):
    """`The connection 'replica' doesn't exist.`: the printed value leaves two runs too short
    to look up alone (2 words each); together, with a format verb between them in the code
    (`'{alias}'`, quoted there as printed), they find the line that raised it, not the
    exception class the message names."""
    out = search(
        cli, tool, "tool.connections.ConnectionMissing: The connection 'replica' doesn't exist."
    )
    assert (out["results"][0]["path"], out["results"][0]["symbol"]) == (
        "src/tool/connections.py",
        "Connections.__getitem__",
    )
    assert out["rule"] == "found in the code"


def test_test_trees_are_known_by_configuration_structure_and_name(tool, cli):
    status = cli("status", "--root", tool, "--json").json()
    roles = status["files_by_role"]
    assert roles["test"] == 3  # checks/ (testpaths), qa/ (its conftest.py) and its conftest
    assert roles["tooling"] == 2  # .github/ and the changelog
    out = search(cli, tool, "the fixture value after teardown")
    assert out["results"][0]["path"] == "src/tool/fixtures.py"
    asked = search(cli, tool, "tests for resolve_keyword")
    assert asked["results"][0]["path"] == "checks/test_fields.py"


def test_a_bug_report_with_a_traceback_finds_the_frames_function_first(tool, cli):
    report = (
        "After upgrading, every test that uses a parametrized fixture fails during setup. "
        "I am on Python 3.12 with pytest and our plugin; the fixture is scoped to the module "
        "and the failure only shows when two tests share it. Traceback below, trimmed:\n"
        '  File "/home/me/proj/tests/test_app.py", line 12, in test_app\n'
        "    client.get('/')\n"
        '  File "/home/me/.venv/lib/python3.12/site-packages/tool/fixtures.py", line 4, in '
        "setup_fixture\n"
        "    request.cache[definition.name] = value\n"
        "KeyError: 'db'\n"
        "I expected the fixture to be set up once per module. Any idea what changed?"
    )
    out = search(cli, tool, report)
    assert out["strategy"] == "fused" and out["rule"] == "long text"
    assert out["results"][0]["symbol"] == "setup_fixture"
    assert all(r["role"] == "source" for r in out["results"][:2])  # "test" said, not asked


def test_a_definition_is_found_without_loading_the_embedding_model(project):
    from repocontext import Repository

    repo = Repository(project)
    repo.embed()
    with repo.open_store() as store:
        searcher = repo.searcher(store)
        assert searcher.search("def fetch").results[0].symbol == "fetch"
        assert searcher.retrievers["vector"].model._model is None  # never loaded
        searcher.search("how are redirects handled")
        assert searcher.retrievers["vector"].model._model is not None
        searcher.close()


@pytest.mark.parametrize(
    "query,asked",
    [
        ("tests for raise_for_status", True),
        ("where is slugify tested", True),
        ("unit tests of the cache backend", True),
        ("test_fetch_redirects", True),
        ("SessionTests", True),
        ("tests that check the retry limit", True),
        ("how are the tests that failed last time run first", False),  # talks about tests
        ("my test fails when the fixture raises", False),  # says "test", asks about code
        ("pytest fixture teardown order", False),  # in pytest's own repository: source
        ("how does the test client keep cookies", False),
        ("latest version check", False),
        # what to call from one's own tests: the project's API, not its tests
        ("In a unit test of a handler, how can I put path variables into a request?", False),
        ("In unit tests, how can I capture the log entries my code produces?", False),
        ("when writing tests, how do I stub the transport", False),
        ("unit tests of the router, how do I run them", True),
    ],
)
def test_a_question_asks_for_tests_only_when_it_says_so(query, asked):
    from repocontext.search.intent import about_tests

    assert about_tests(query) is asked


def test_a_test_named_in_a_pasted_message_does_not_ask_for_tests():
    from repocontext.search.intent import about_tests

    message = "ScopeMismatch: You tried to access the function scoped fixture, tests/conftest.py:18"
    assert about_tests("In test_login: function uses no argument 'usrname'")
    assert not about_tests("In test_login: function uses no argument 'usrname'", pasted=True)
    assert not about_tests(message, pasted=True)
    assert about_tests("tests for the message " + message, pasted=True)


BUG_REPORT = """fetch() raises HTTPError for a 304 Not Modified

Fetching a page that has not changed since my last request fails, although 304 is not an
error and I expect the response back:

Traceback (most recent call last):
  File "/home/me/app/poll.py", line 12, in poll
    page = fetch(url)
  File "/home/me/.venv/lib/python3.12/site-packages/pkg/sessions.py", line 6, in fetch
    response.raise_for_status()
  File "/home/me/.venv/lib/python3.12/site-packages/pkg/models.py", line 7, in raise_for_status
    raise HTTPError("bad status: ECONNREFUSED or worse")
pkg.exceptions.HTTPError: bad status: ECONNREFUSED or worse
"""


def test_a_bug_report_is_answered_with_the_function_to_change_and_why(project, cli):
    out = search(cli, project, BUG_REPORT)
    assert out["rule"] == "long text"
    first, *rest = out["functions"]
    assert (first["path"], first["symbol"]) == ("pkg/models.py", "Response.raise_for_status")
    assert "frame innermost of the traceback" in first["reasons"]
    assert any(r.startswith("named in the report") for r in first["reasons"])
    assert ("pkg/sessions.py", "fetch") in [(f["path"], f["symbol"]) for f in rest]
    # a report is not read by the second stage (it did not pay on real reports)
    assert all(r["rerank"] is None for r in out["results"])
    explained = cli("search", "--root", project, "--explain", BUG_REPORT).out
    assert "most likely to need the change:" in explained
    assert "pkg/models.py" in explained.split("results:")[0]
    assert "frame innermost of the traceback" in explained


def test_the_second_stage_is_off_by_default_and_can_be_turned_on(project, cli, home):
    question = "how does a response raise an error for a bad status"
    out = search(cli, project, question)
    assert all(r["rerank"] is None for r in out["results"])
    assert "rerank" not in out["timings_ms"]
    (home / "config.toml").write_text("[search]\nrerank = true\n")
    reread = search(cli, project, question)["results"]
    # the model's rank and the first stage's, on each of the five it reads
    assert all(set(r["rerank"]) == {"score", "rank", "first_stage_rank"} for r in reread[:5])
    assert search(cli, project, "def fetch")["results"][0]["rerank"] is None  # direct


def test_search_by_name_answers_from_files_a_first_index_has_not_reached(make_repo, monkeypatch):
    """A first index stopped after two files (as it is, minutes long, on a large tree): a
    definition search finds definitions in the files it has not reached (git grep, then the
    indexer's own parsing), never a mere use of the name, ranks them above an indexed chunk
    that only uses the name, and once the index has run to its end the answer comes from the
    index alone."""
    from repocontext import Repository
    from repocontext.store.database import Store

    files = {
        "pkg/a_first.py": "def indexed_fn():\n    return 1\n",
        "pkg/a_user.py": 'class Alpha:\n    """An Alpha, not alpha."""\n\n\nALPHA = Alpha()\n',
        "pkg/b.py": "def alpha(x):\n    return x + 1\n",
        "pkg/c.py": "from pkg.a_first import indexed_fn\n\n\nclass Beta:\n    pass\n",
        "pkg/d.py": "from pkg.b import alpha\n\n# alpha is used here, not defined\nalpha(2)\n",
        "tests/test_b.py": "def alpha():\n    return 'a test helper'\n",
    }
    root = make_repo(files, git=True)
    repo = Repository(root)
    calls = []
    batches = []  # the index run's batch commits when its window ends: here, when told to
    real_batch = Store.batch
    monkeypatch.setattr(
        Store,
        "batch",
        lambda self, seconds=1.0: batches.append(real_batch(self, 1e9)) or batches[-1],
    )

    def stop_at_the_fourth_file(done: int, total: int, path: str) -> None:
        calls.append(path)
        if len(calls) == 3:
            batches[-1].seconds = 0  # the first two files' batch is committed before the next
        if len(calls) == 4:
            raise KeyboardInterrupt

    with pytest.raises(KeyboardInterrupt):
        repo.index(stop_at_the_fourth_file)
    with repo.open_store() as store:
        assert set(store.file_states()) == {"pkg/a_first.py", "pkg/a_user.py"}
        searcher = repo.searcher(store)
        found = searcher.search("def alpha")
        # source before tests (as in a finished index), the exact name first within each
        assert [(r.path, r.start_line, r.symbol) for r in found.results] == [
            ("pkg/b.py", 1, "alpha"),
            ("pkg/a_user.py", 1, "Alpha"),
            ("pkg/a_user.py", 5, "ALPHA"),
            ("tests/test_b.py", 1, "alpha"),
        ]
        assert any("still being built" in n for n in found.notes)
        assert [r.path for r in searcher.search("def alpha", scope="tests").results] == [
            "tests/test_b.py"
        ]
        assert [(r.path, r.symbol) for r in searcher.search("class Beta").results] == [
            ("pkg/c.py", "Beta")
        ]
        assert [r.path for r in searcher.search("def indexed_fn").results] == ["pkg/a_first.py"]
        bare = searcher.search("alpha")  # a bare name: a less sure intent, the fused path
        assert bare.intent == "find_definition" and bare.strategy == "fused"
        assert (bare.results[0].path, bare.results[0].symbol) == ("pkg/b.py", "alpha")
        searcher.close()
    repo.index()
    with repo.open_store() as store:
        searcher = repo.searcher(store)
        found = searcher.search("def alpha")
        assert [r.path for r in found.results if r.symbol == "alpha"] == [
            "pkg/b.py",
            "tests/test_b.py",
        ]
        assert not any("still being built" in n for n in found.notes)
        assert searcher.search("alpha").results[0].path == "pkg/b.py"
        searcher.close()


def test_bm25_leaves_out_terms_too_common_to_rank_while_one_is_left(make_repo, monkeypatch):
    """A term in COMMON_TERM_CHUNKS chunks or more costs a scoring of each of them and weighs
    almost nothing: it is left out of the query, unless every term is that common. The counts
    behind it stop at the cap and follow the index's writes."""
    from repocontext import Repository
    from repocontext.search import retrievers
    from repocontext.search.retrievers import BM25Retriever, Query

    files = {f"pkg/m{i}.py": f"def handler_{i}(value):\n    return value + {i}\n" for i in range(6)}
    files["pkg/rare.py"] = "def rare_widget(value):\n    return value\n"
    root = make_repo(files)
    repo = Repository(root)
    repo.index()
    monkeypatch.setattr(retrievers, "COMMON_TERM_CHUNKS", 4)
    with repo.open_store() as store:
        assert store.term_counts(['"value"', '"rare_widget"', '"nothing_here"'], 4) == [4, 1, 0]
        hits = BM25Retriever(store).search(Query("value rare_widget", 10)).hits
        assert [h.path for h in hits] == ["pkg/rare.py"]
        everywhere = BM25Retriever(store).search(Query("value", 10)).hits
        assert len(everywhere) == 7
    (root / "pkg/m0.py").write_text("def handler_0(other):\n    return other\n")
    (root / "pkg/m1.py").write_text("def handler_1(other):\n    return other\n")
    (root / "pkg/m2.py").write_text("def handler_2(other):\n    return other\n")
    (root / "pkg/m3.py").write_text("def handler_3(other):\n    return other\n")
    repo.index()
    with repo.open_store() as store:
        assert store.term_counts(['"value"'], 10) == [3]
        hits = BM25Retriever(store).search(Query("value rare_widget", 10)).hits
        assert {h.path for h in hits} == {"pkg/rare.py", "pkg/m4.py", "pkg/m5.py"}


def test_definitions_outside_a_first_index_stay_inside_a_project_in_a_larger_repository(
    make_repo,
):
    """A project that is a folder of a larger git repository: the files git finds are named
    relative to the project, and the rest of the repository is not searched."""
    from repocontext import Repository

    root = make_repo(
        {
            "proj/pyproject.toml": "[project]\nname = 'p'\n",
            "proj/pkg/b.py": "def alpha(x):\n    return x\n",
            "elsewhere/x.py": "def alpha():\n    return 'not this project'\n",
        },
        git=True,
    )
    repo = Repository(root / "proj")

    def stop(done: int, total: int, path: str) -> None:
        raise KeyboardInterrupt

    with pytest.raises(KeyboardInterrupt):
        repo.index(stop)
    with repo.open_store() as store:
        searcher = repo.searcher(store)
        found = searcher.search("def alpha")
        searcher.close()
    assert [(r.path, r.symbol) for r in found.results] == [("pkg/b.py", "alpha")]


def test_a_new_retriever_needs_no_change_to_the_engine(project, monkeypatch):
    """The engine names no retriever: one added to the registry, with a preparation of its
    own and a problem it may report, is asked, prepared off the caller's thread, fused, noted
    and refused by name as the built-in ones are."""
    import ast
    import threading
    from pathlib import Path

    from repocontext import Repository, choices
    from repocontext.errors import EmbeddingModelError, QueryError
    from repocontext.search import engine, results
    from repocontext.search.retrievers import REGISTRY, Query, Ranked, Retriever

    source = Path(engine.__file__).read_text()
    constants = {n.value for n in ast.walk(ast.parse(source)) if isinstance(n, ast.Constant)}
    names = {n.id for n in ast.walk(ast.parse(source)) if isinstance(n, ast.Name)}
    groups = {make(None, None, None, False).group for make in REGISTRY.values()}  # "graph" too
    named = constants & (set(choices.RETRIEVERS) - groups)
    assert not named, f"search/engine.py names a retriever: {named}"
    assert not {n for n in names if n.endswith("Retriever") and n != "Retriever"}

    calls: list[tuple[str, str]] = []

    class PathRetriever(Retriever):
        """Chunks whose file path holds a word of the query, after a 'preparation' that
        lower-cases the words."""

        name = "path"
        group = "text"
        preparation = "path_words"
        off: str | None = None

        def __init__(self, store):
            self.store = store

        def problem(self):
            return EmbeddingModelError(self.off) if self.off else None

        def prepare(self, text):
            calls.append(("prepare", threading.current_thread().name))
            return [w.lower() for w in text.split()]

        def search(self, query: Query) -> Ranked:
            calls.append(("search", repr(query.prepared)))
            hits = [
                h
                for h in self.store.bm25_search('"fetch" OR "sessions"', (1, 1, 1, 1, 1), 50)
                if any(w in h.path for w in query.prepared or [])
            ]
            return Ranked(self.name, hits)

    monkeypatch.setitem(REGISTRY, "path", lambda store, model, problem, cache: PathRetriever(store))
    monkeypatch.setattr(results, "RETRIEVERS", (*choices.RETRIEVERS, "path"))
    monkeypatch.setattr(engine, "MODALITIES", (*choices.MODALITIES, "path"))
    repo = Repository(project)
    repo.index()
    with repo.open_store() as store:
        searcher = engine.Searcher(store, model_problem="no vectors in this test")
        out = searcher.search("how are sessions fetched")
        assert ("search", "['how', 'are', 'sessions', 'fetched']") in calls
        prepared_on = [where for what, where in calls if what == "prepare"]
        assert prepared_on and all(t.startswith("prepare") for t in prepared_on)
        assert "path_words" in out.timings_ms
        assert any(r.ranks["path"] for r in out.results)
        assert any(r.path == "pkg/sessions.py" and r.contributions.get("path") for r in out.results)
        assert "vector search is off: no vectors in this test" in out.notes

        PathRetriever.off = "the path index is not built"
        out = searcher.search("how are sessions fetched")
        assert "path search is off: the path index is not built" in out.notes
        assert not any(r.ranks["path"] for r in out.results)
        with pytest.raises(QueryError, match="--modality path needs the index: the path index"):
            searcher.search("how are sessions fetched", modality="path")
        searcher.close()


def test_the_second_stage_reorders_only_the_first_stages_top_five(make_repo):
    """The cross-encoder may move an answer up among the first stage's five, never push one
    out of them: an answer the first stage put 7th stays 7th (with a pool of eight the model
    lifted it into the five, and pushed a first-stage answer out), one it put 2nd comes 1st."""
    from repocontext import Repository
    from repocontext.search.rerank import SecondStage
    from repocontext.service import _load_reranker

    functions = {
        "add_numbers": "def add_numbers(a, b):\n    return a + b\n",
        "send_email": "def send_email(to, body):\n    smtp.send(to, body)\n",
        "resize_image": "def resize_image(img, w, h):\n    return img.resize((w, h))\n",
        "hash_password": "def hash_password(pw):\n    return sha256(pw.encode()).hexdigest()\n",
        "open_socket": "def open_socket(host, port):\n    return socket.create_connection((host, port))\n",
        "sort_users": "def sort_users(users):\n    return sorted(users, key=lambda u: u.name)\n",
        "parse_iso_date": (
            "def parse_iso_date(text):\n"
            '    """Parse a date string such as 2024-05-01 into a date."""\n'
            "    return date.fromisoformat(text)\n"
        ),
        "write_csv": "def write_csv(rows, path):\n    csv.writer(open(path, 'w')).writerows(rows)\n",
    }
    root = make_repo({f"pkg/{name}.py": code for name, code in functions.items()})
    repo = Repository(root)
    repo.index()
    question = "how is a date string parsed"
    with repo.open_store() as store:
        searcher = repo.searcher(store)
        found = {n: searcher.search(f"def {n}", modality="ast").results[0] for n in functions}
        stage = SecondStage(store, _load_reranker)
        others = [found[n] for n in functions if n != "parse_iso_date"]

        seventh = others[:6] + [found["parse_iso_date"]] + others[6:]
        order = [r.symbol for r in seventh]
        out = [r.symbol for r in stage.rerank(question, [*seventh])]
        assert set(out[:5]) == set(order[:5]) and out[5:] == order[5:]

        second = others[:1] + [found["parse_iso_date"]] + others[1:]
        assert stage.rerank(question, [*second])[0].symbol == "parse_iso_date"
        searcher.close()


def test_the_editor_keeps_its_searcher_and_still_searches_the_tree_as_it_is_now(project, cli):
    """`:RepoContext search` asks a searcher kept for the session (vectors in memory, models
    loaded); the tree is checked beside each question, so a file written on disk since the
    last question is found, and one deleted is not, with no `index` run in between."""
    from repocontext.bridge import EditorService

    service = EditorService()
    try:
        path = str(project / "pkg" / "sessions.py")

        def ask(query: str) -> list[tuple[str, str]]:
            out = service.request("search", {"path": path, "query": query})
            return [(r["path"], r["symbol"]) for r in out["results"]]

        assert ("pkg/sessions.py", "fetch") in ask("def fetch")
        kept = service.session(path)._search
        assert kept is not None
        (project / "pkg" / "retry.py").write_text(
            "def backoff_schedule(attempts):\n    return [2**i for i in range(attempts)]\n"
        )
        assert ask("def backoff_schedule") == [("pkg/retry.py", "backoff_schedule")]
        (project / "pkg" / "retry.py").unlink()
        assert ("pkg/retry.py", "backoff_schedule") not in ask("def backoff_schedule")
        assert service.session(path)._search is kept  # the same searcher all along
    finally:
        service.close()


def test_a_reports_code_is_told_from_its_prose():
    """The code a reporter pastes (fenced, indented after a blank line, typed at a prompt) and
    the API it calls, apart from the words around it: its own weight in the fusion."""
    from repocontext.search.report import called_names, code_of

    report = (
        "Feature flag default ignored when declared second\n\nTake this:\n\n"
        "```python\n@click.option('--green', flag_value='green', default=True)\n"
        "def cli(color): print(color)\n```\n\n"
        "Then, indented:\n\n    value = attr.evolve(obj, a=1)\n\n"
        ">>> fields.Nested(Schema).deserialize({})\n"
        "and prose that mentions handle_parse_result() is not code.\n"
    )
    code = code_of(report)
    assert "handle_parse_result" not in code and "Then, indented" not in code
    assert called_names(code) == ["option", "cli", "evolve", "Nested", "deserialize"]


def test_the_function_a_reports_code_calls_comes_first(project, cli):
    """A report with no traceback whose words match the error it got (`HTTPError`, `bad
    status`) and whose pasted code calls `fetch`: the definition of what the reporter called
    is evidence of its own (engine.REPORT_EVIDENCE["code"], 0.3 since the 21 labelled
    repositories chose it), so `fetch` leads the chunks, where the words alone put the
    exception class first."""
    report = (
        "HTTPError for a bad status when the server answers 304\n\n"
        "Our poller gets an error although 304 is not one. This is what runs:\n\n"
        "    from pkg.sessions import fetch\n"
        '    page = fetch("https://a.example/feed")\n'
    )
    out = search(cli, project, report)
    assert out["rule"] == "long text"
    assert (out["results"][0]["path"], out["results"][0]["symbol"]) == ("pkg/sessions.py", "fetch")
    assert "fetch" in [f["symbol"] for f in out["functions"][:2]]


def test_a_search_process_ends_fast_with_its_whole_output_and_its_exit_code(make_repo, cli):
    """`repocontext search` ends its process without the interpreter's teardown (cli.run):
    what it printed must still arrive whole, through a buffered pipe, and its exit code
    unchanged."""
    from conftest import run_cli_process

    files = {f"pkg/handler_{i}.py": f"def handle_event_{i}(event):\n    return event\n"
             for i in range(60)}  # fmt: skip
    root = make_repo(files)
    assert cli("index", "--root", root, "--quiet", "--no-embed").code == 0
    buffered = {k: v for k, v in os.environ.items() if k != "PYTHONUNBUFFERED"}
    for extra in ([], ["--json"]):
        found = run_cli_process("search", "--root", root, *extra, "--top", "50", "handle event",
                                env=buffered)  # fmt: skip
        assert found.returncode == 0, found.stderr
        if extra:
            assert len(json.loads(found.stdout)["results"]) == 50
        else:
            assert found.stdout.count("handle_event_") == 50
    empty = run_cli_process("search", "--root", root, "   ", env=buffered)
    assert empty.returncode == 1 and empty.stderr.count("\n") == 1
    assert "query is empty" in empty.stderr


# --- Go and TypeScript (issue 52) ----------------------------------------------------------------

LOGKIT = {
    "go.mod": "module example.com/logkit\n\ngo 1.21\n",
    "hooks.go": """
        package logkit

        // A hook to be fired when logging on the logging levels returned from
        // Levels() on your implementation of the interface. Note that this is not
        // fired in a goroutine or a channel with workers, you should handle such
        // functionality yourself if your call is non-blocking.
        type Hook interface {
            Levels() []Level
            Fire(*Entry) error
        }

        // LevelHooks stores the hooks of a logger, by level.
        type LevelHooks map[Level][]Hook

        // Add a hook to an instance of logger. This is called with
        // log.Hooks.Add(new(MyHook)) where MyHook implements the Hook interface.
        func (hooks LevelHooks) Add(hook Hook) {
            for _, level := range hook.Levels() {
                hooks[level] = append(hooks[level], hook)
            }
        }

        // Fire all the hooks for the passed level. Used by entries when logging,
        // each hook of the interface called in turn.
        func (hooks LevelHooks) Fire(level Level, entry *Entry) error {
            for _, hook := range hooks[level] {
                if err := hook.Fire(entry); err != nil {
                    return err
                }
            }
            return nil
        }
    """,
    "logger.go": """
        package logkit

        // AddHook adds a hook to the logger hooks; the hook must implement the Hook interface.
        func (logger *Logger) AddHook(hook Hook) {
            logger.mu.Lock()
            defer logger.mu.Unlock()
            logger.Hooks.Add(hook)
        }

        // ReplaceHooks replaces the logger hooks and returns the old ones.
        func (logger *Logger) ReplaceHooks(hooks LevelHooks) LevelHooks {
            logger.mu.Lock()
            oldHooks := logger.Hooks
            logger.Hooks = hooks
            logger.mu.Unlock()
            return oldHooks
        }
    """,
    "entry.go": """
        package logkit

        import (
            "fmt"
            "reflect"
        )

        // WithFields adds a map of fields to the Entry.
        func (entry *Entry) WithFields(fields Fields) *Entry {
            data := make(Fields, len(entry.Data)+len(fields))
            for k, v := range entry.Data {
                data[k] = v
            }
            fieldErr := entry.err
            for k, v := range fields {
                isErrField := false
                if t := reflect.TypeOf(v); t != nil && t.Kind() == reflect.Func {
                    isErrField = true
                }
                if isErrField {
                    tmp := fmt.Sprintf("can not add field %q", k)
                    if fieldErr != "" {
                        fieldErr = entry.err + ", " + tmp
                    } else {
                        fieldErr = tmp
                    }
                } else {
                    data[k] = v
                }
            }
            return &Entry{Logger: entry.Logger, Data: data, Time: entry.Time, err: fieldErr}
        }

        // fireHooks runs the hooks of the entry's level.
        func (entry *Entry) fireHooks() {
            err := entry.Logger.Hooks.Fire(entry.Level, entry)
            if err != nil {
                fmt.Printf("Failed to fire hook %s at level %v\\n", err, entry.Level)
            }
        }
    """,
    "formatter.go": """
        package logkit

        // Default key names for the default fields
        const (
            FieldKeyMsg         = "msg"
            FieldKeyLevel       = "level"
            FieldKeyTime        = "time"
            FieldKeyLogrusError = "logrus_error"
        )

        // Format renders a single log entry as key=value pairs: time, level, msg, then the
        // fields, and logrus_error when a field could not be added.
        func (f *TextFormatter) Format(entry *Entry) ([]byte, error) {
            data := make(Fields)
            for k, v := range entry.Data {
                data[k] = v
            }
            keys := []string{FieldKeyTime, FieldKeyLevel}
            if entry.Message != "" {
                keys = append(keys, FieldKeyMsg)
            }
            if entry.err != "" {
                keys = append(keys, FieldKeyLogrusError)
            }
            for _, key := range keys {
                f.appendKeyValue(entry.Buffer, key, data[key])
            }
            return entry.Buffer.Bytes(), nil
        }
    """,
    "registry.go": """
        package logkit

        import "fmt"

        // Register adds a named hook to the registry, once.
        func (r *Registry) Register(name string, hook Hook) error {
            if _, ok := r.hooks[name]; ok {
                return fmt.Errorf("hook %s is already added", name)
            }
            r.hooks[name] = hook
            return nil
        }

        // Remove takes a named hook out of the registry.
        func (r *Registry) Remove(name string) error {
            if _, ok := r.hooks[name]; !ok {
                return fmt.Errorf("hook %q not found", name)
            }
            delete(r.hooks, name)
            return nil
        }
    """,
    "examples/syslog/main.go": """
        package main

        // main adds the syslog hook to the logger at startup, unless it is already added,
        // and stops with a fatal error if that failed.
        func main() {
            hook, err := syslog.NewHook("udp", "localhost:514")
            if err == nil {
                err = addOnce("syslog", hook)
            }
            if err != nil {
                log.WithError(err).Fatal("startup failed")
            }
            log.AddHook(hook)
        }
    """,
    "examples/server/main.go": """
        package main

        func handle(w http.ResponseWriter, r *http.Request) {
            start := time.Now()
            next(w, r)
            log.WithFields(log.Fields{"time": start, "callback": cb}).Info("request done")
        }
    """,
}


@pytest.fixture
def logkit(make_repo, cli):
    root = make_repo(LOGKIT)
    assert cli("index", "--root", root, "--quiet").code == 0
    return root


def test_a_go_definition_asked_name_first_is_found_first(logkit, cli):
    """`Hook interface` is how Go (and its docs) name a definition: asked so, the interface
    comes first, not the methods whose comments say "the Hook interface"."""
    out = search(cli, logkit, "Hook interface")
    assert out["intent"] == "find_definition"
    assert (out["results"][0]["path"], out["results"][0]["symbol"]) == ("hooks.go", "Hook")


def test_a_pasted_log_line_finds_the_code_that_printed_its_message(logkit, cli):
    """A logger's line, logfmt or JSON, holds its message in a value (`logrus_error="can not
    add field \\"callback\\""`), and the code holds it with a format verb where the value was
    printed (`"can not add field %q"`, `"hook %s is already added"`): a quoted value or a
    plain word. The code that printed it comes first, not the caller whose words it shares."""
    logfmt = (
        'time="2024-03-01T10:15:00Z" level=info msg="request done" '
        'logrus_error="can not add field \\"callback\\""'
    )
    out = search(cli, logkit, logfmt)
    assert (out["results"][0]["path"], out["results"][0]["symbol"]) == (
        "entry.go",
        "Entry.WithFields",
    )
    assert out["rule"] == "found in the code"
    as_json = json.dumps(
        {
            "level": "fatal",
            "msg": "startup failed",
            "error": "hook syslog is already added",
            "time": "2024-03-01T10:15:00Z",
        }
    )
    first = search(cli, logkit, as_json)["results"][0]
    assert (first["path"], first["symbol"]) == ("registry.go", "Registry.Register")
    # a quoted value between two short runs (`hook "syslog" not found`): the code has `%q`
    quoted = search(
        cli, logkit, 'level=error msg="remove failed" error="hook \\"syslog\\" not found"'
    )
    assert (quoted["results"][0]["path"], quoted["results"][0]["symbol"]) == (
        "registry.go",
        "Registry.Remove",
    )


def test_a_log_lines_messages_are_its_message_values_and_the_text_outside_its_pairs():
    from repocontext.search.literal import log_messages

    assert log_messages('level=error err="read tcp: reset" user_error="no \\"x\\""') == [
        "read tcp: reset",
        'no "x"',
    ]
    assert log_messages("INFO[0000] request done    status=200 path=/x") == [
        "INFO[0000] request done"
    ]
    assert log_messages('{"message": "disk full", "code": 28}') == ["disk full"]
    assert log_messages("Cannot resolve keyword 'x' into field") == []  # no log line
    assert log_messages("set x=1 first") == []  # one pair is no log line


def test_short_runs_around_a_printed_value_are_looked_up_together():
    from repocontext.search.literal import runs_of, short_runs_around_a_value

    message = "ConnectionDoesNotExist: The connection 'replica' doesn't exist."
    assert runs_of(message) == []  # each side alone is two words: too short to mean much
    assert short_runs_around_a_value(message) == [("The connection", "doesn't exist")]
    # a side long enough alone is looked up alone, and with a short neighbour too
    long_left = "Cannot resolve keyword 'titel' into field"
    assert runs_of(long_left) == ["Cannot resolve keyword"]
    assert short_runs_around_a_value(long_left) == [("Cannot resolve keyword", "into field")]
    assert short_runs_around_a_value("no value here at all") == []


TINYSTORE = {
    "package.json": '{"name": "tinystore"}\n',
    "src/types.ts": """
        export type StateCreator<T> = (set: SetState<T>, get: () => T) => T

        export interface StoreApi<T> {
          getState: () => T
          setState: SetState<T>
          subscribe: (listener: (state: T, prev: T) => void) => () => void
        }

        // The type of createStore: called with a state creator, or with none to get a
        // curried form that takes it later.
        export type CreateStore = {
          <T>(initializer: StateCreator<T>): StoreApi<T>
          <T>(): (initializer: StateCreator<T>) => StoreApi<T>
        }
    """,
    "src/react.ts": """
        import type { CreateStore, StoreApi } from './types'
        import { createStore } from './vanilla'

        export function useStore<T>(api: StoreApi<T>): T {
          return useSyncExternalStore(api.subscribe, api.getState)
        }

        export const create: CreateStore = (createState) => {
          const api = createStore(createState)
          return Object.assign(() => useStore(api), api)
        }
    """,
    "src/context.ts": """
        import type { CreateStore } from './types'

        export function makeContext(factory: CreateStore) {
          return { factory }
        }
    """,
    "src/vanilla.ts": """
        import type { CreateStore, StateCreator, StoreApi } from './types'

        const createStoreImpl = <T>(createState: StateCreator<T>): StoreApi<T> => {
          let state: T
          const listeners = new Set<(state: T, prev: T) => void>()
          const setState = (partial: Partial<T>) => {
            const previous = state
            state = Object.assign({}, state, partial)
            listeners.forEach((listener) => listener(state, previous))
          }
          const getState = () => state
          const subscribe = (listener: (state: T, prev: T) => void) => {
            listeners.add(listener)
            return () => listeners.delete(listener)
          }
          const api = { setState, getState, subscribe }
          state = createState(setState, getState)
          return api
        }

        export function createStore<T>(createState?: StateCreator<T>) {
          return createState ? createStoreImpl(createState) : createStoreImpl
        }
    """,
}


def test_an_identifier_finds_its_own_spelling_before_a_type_that_differs_in_case(make_repo, cli):
    """`createStore` asks for the function, not its type `CreateStore`: names are looked up
    without case, and the type, imported by more files, outranked it."""
    root = make_repo(TINYSTORE)
    assert cli("index", "--root", root, "--quiet").code == 0
    out = search(cli, root, "createStore")
    symbols = [(r["path"], r["symbol"]) for r in out["results"]]
    assert symbols[0] == ("src/vanilla.ts", "createStore")
    assert ("src/types.ts", "CreateStore") in symbols[1:]  # still there, after it
    # with a lower score than the type's: --explain says why it stands first
    assert (
        out["results"][0]["score"]
        < out["results"][symbols.index(("src/types.ts", "CreateStore"))]["score"]
    )
    assert out["results"][0]["placed"] == "spelt as asked, before a name that differs only in case"
    explained = cli("search", "--root", root, "--explain", "createStore").out
    assert "placed: spelt as asked, before a name that differs only in case" in explained
    typed = search(cli, root, "CreateStore")["results"][0]
    assert (typed["path"], typed["symbol"]) == ("src/types.ts", "CreateStore")


ZOD_TYPES = """
import { isAsync, handleResult } from "./helpers/parseUtil"

export abstract class ZodType<Output = any> {
  abstract _parse(input: ParseInput): ParseReturnType<Output>

  parse(data: unknown): Output {
    const result = this.safeParse(data)
    if (result.success) return result.data
    throw result.error
  }

  safeParse(data: unknown): SafeParseReturnType<Output> {
    const result = this._parseSync({ data, path: [], parent: null })
    return handleResult(result)
  }

  _parseSync(input: ParseInput): SyncParseReturnType<Output> {
    const result = this._parse(input)
    if (isAsync(result)) {
      throw new Error("Synchronous parse encountered promise.")
    }
    return result
  }

  async parseAsync(data: unknown): Promise<Output> {
    const result = await this.safeParseAsync(data)
    if (result.success) return result.data
    throw result.error
  }
}
"""


def test_identical_copies_of_the_source_take_one_place_the_one_nearest_the_root(make_repo, cli):
    """A copy of the source shipped beside it (zod's `deno/lib/` is `src/` again, its imports
    aside) took a second place for every answer, and won the tie on its name. Each text is
    listed once, from the file nearest the root, at the best place of its copies; a note says
    so, and the index keeps the copy."""
    root = make_repo(
        {
            "package.json": '{"name": "zodlike"}\n',
            "src/types.ts": ZOD_TYPES,
            "deno/lib/types.ts": ZOD_TYPES.replace('parseUtil"', 'parseUtil.ts"'),
            "src/helpers/parseUtil.ts": """
            export const isAsync = (x: unknown): x is Promise<unknown> =>
              typeof Promise !== "undefined" && x instanceof Promise

            export function handleResult(result) {
              return result.status === "valid" ? { success: true, data: result.value } : {}
            }
            """,
        }
    )
    assert cli("index", "--root", root, "--quiet").code == 0
    for query in ("Synchronous parse encountered promise.", '"encountered promise"', "_parseSync"):
        out = search(cli, root, query)
        found = [(r["path"], r["symbol"]) for r in out["results"]]
        assert found[0] == ("src/types.ts", "ZodType._parseSync"), query
        assert ("deno/lib/types.ts", "ZodType._parseSync") not in found, query
        assert any("identical copies" in n and "deno/lib/types.ts" in n for n in out["notes"])
    # the copy ranked first for the message: --explain says why the source stands there
    message = search(cli, root, "Synchronous parse encountered promise.")["results"][0]
    assert message["placed"] == "at the place of its identical copy deno/lib/types.ts:17"
    # a pasted report too: its chunks and the functions to change name each text once
    report = (
        "safeParse throws instead of returning an error for an async refinement\n\n"
        "Calling `schema.safeParse(data)` on a schema with an async check throws "
        "`Synchronous parse encountered promise.` from _parseSync instead of returning "
        "`{ success: false }` the way the documentation of safeParse says it should."
    )
    out = search(cli, root, report)
    copied = [r for r in out["results"] if r["path"] == "deno/lib/types.ts" and r["symbol"]]
    assert copied == []  # (its import lines differ from the source's: that window is no copy)
    functions = [(f["path"], f["symbol"]) for f in out["functions"]]
    assert ("src/types.ts", "ZodType._parseSync") in functions
    assert not any(path == "deno/lib/types.ts" for path, _ in functions), functions
    assert len(functions) == len(set(symbol for _, symbol in functions)), functions
    # the copy is still indexed: searched on its own, it is found
    alone = search(cli, root, "--modality", "trigram", "encountered promise")
    assert {r["path"] for r in alone["results"]} == {"src/types.ts", "deno/lib/types.ts"}


COMMANDER_TYPINGS = """
export class Option {
  /**
   * Set environment variable to check for option value.
   *
   * An environment variable is only used if when processed the current option value is
   * undefined, or the source of the current value is 'default' or 'config' or 'env'.
   */
  env(name: string): this;

  /**
   * Set the custom handler for processing CLI option arguments into option values.
   */
  argParser<T>(fn: (value: string, previous: T) => T): this;
}
"""

COMMANDER_COMMAND = """
class Command {
  constructor(name) {
    this.options = []
    this._name = name || ''
  }

  _parseOptionsEnv() {
    this.options.forEach((option) => {
      if (option.envVar && option.envVar in process.env) {
        const optionKey = option.attributeName()
        if (this.getOptionValue(optionKey) === undefined ||
            ['default', 'config', 'env'].includes(this.getOptionValueSource(optionKey))) {
          this.emit(`optionEnv:${option.name()}`, process.env[option.envVar])
        }
      }
    })
  }
}

exports.Command = Command
"""


def test_a_declaration_file_ranks_below_the_code_it_declares(make_repo, cli):
    """commander's typings/index.d.ts declares each method with its JSDoc right above it, in
    the words questions use, and outranked lib/command.js, the code that does it. A
    declaration file is ranked as a generated one is: the implementation first, the
    declarations still in the list."""
    root = make_repo(
        {
            "package.json": '{"name": "commanderlike", "types": "typings/index.d.ts"}\n',
            "typings/index.d.ts": COMMANDER_TYPINGS,
            "lib/command.js": COMMANDER_COMMAND,
        }
    )
    assert cli("index", "--root", root, "--quiet").code == 0
    question = "How are option values taken from environment variables?"
    found = [(r["path"], r["symbol"]) for r in search(cli, root, question)["results"]]
    assert found[0] == ("lib/command.js", "Command._parseOptionsEnv")
    assert ("typings/index.d.ts", "Option.env") in found[1:]
    other = search(cli, root, "custom handler for processing option arguments")["results"]
    assert ("typings/index.d.ts", "Option.argParser") in [(r["path"], r["symbol"]) for r in other]


MUXLIKE = {
    "go.mod": "module example.com/muxlike\n",
    "mux.go": """
package mux

import "net/http"

// Vars returns the route variables for the current request, if any.
func Vars(r *http.Request) map[string]string {
	if rv := r.Context().Value(varsKey); rv != nil {
		return rv.(map[string]string)
	}
	return nil
}
""",
    "test_helpers.go": """
package mux

import "net/http"

// SetURLVars sets the URL variables for the given request, to be accessed via mux.Vars for
// testing route behaviour. Arguments are not modified, a shallow copy is returned.
func SetURLVars(r *http.Request, val map[string]string) *http.Request {
	return requestWithVars(r, val)
}
""",
    "mux_test.go": """
package mux

import "testing"

// TestRouteVars checks the variables of a matched route.
func TestRouteVars(t *testing.T) {
	req := newRequest("GET", "/articles/tech/42")
	if Vars(req)["category"] != "tech" {
		t.Errorf("wrong variables: %v", Vars(req))
	}
}

// TestHandlerVars checks that a handler sees the variables of its request.
func TestHandlerVars(t *testing.T) {
	req := newRequest("GET", "/users/7")
	if Vars(req)["id"] != "7" {
		t.Fatal("the handler got no variables")
	}
}
""",
}


LOGHOOKS = {
    "go.mod": "module example.com/loghooks\n",
    "logger.go": """
package loghooks

// Logger writes entries to its output, through its hooks.
type Logger struct {
	Hooks []Hook
	Out   io.Writer
}

// Log writes one entry at a level and fires every hook on it.
func (l *Logger) Log(level Level, msg string) {
	entry := &Entry{Level: level, Message: msg}
	for _, h := range l.Hooks {
		h.Fire(entry)
	}
	fmt.Fprintln(l.Out, msg)
}
""",
    "hooks/test/test.go": """
// Package test is used for testing code that logs: a hook that records the entries.
package test

// Hook records the entries logged, for assertions in tests.
type Hook struct {
	Entries []loghooks.Entry
}

// NewNullLogger creates a logger that discards its output, with the recording hook installed.
func NewNullLogger() (*loghooks.Logger, *Hook) {
	hook := &Hook{}
	logger := &loghooks.Logger{Out: io.Discard, Hooks: []loghooks.Hook{hook}}
	return logger, hook
}

// Fire records the entry.
func (t *Hook) Fire(e *loghooks.Entry) error {
	t.Entries = append(t.Entries, *e)
	return nil
}
""",
    "hooks/test/test_test.go": """
package test

// TestNullLoggerRecords checks that entries logged are recorded and not written.
func TestNullLoggerRecords(t *testing.T) {
	logger, hook := NewNullLogger()
	logger.Log(InfoLevel, "recorded entries")
	if len(hook.Entries) != 1 {
		t.Fatal("the entry was not recorded")
	}
}
""",
    "testdata/sample.go": "package sample\n\n// Sample is data for the tests, not code.\nvar Sample = 1\n",
}


def test_a_go_package_in_a_folder_named_test_is_source_not_a_test(make_repo, cli):
    """Go's tests are its `_test.go` files: `hooks/test/test.go` is a package its users' tests
    import (logrus's NewNullLogger), so it is source, ranked as source; its own
    `test_test.go` and a `testdata/` folder stay tests."""
    root = make_repo(LOGHOOKS)
    assert cli("index", "--root", root, "--quiet").code == 0
    roles = cli("status", "--root", root, "--json").json()["files_by_role"]
    assert roles == {"source": 3, "test": 2}  # go.mod, logger.go, hooks/test/test.go
    question = "In unit tests, how can I capture the entries my code logs without writing them?"
    found = [(r["path"], r["symbol"], r["role"]) for r in search(cli, root, question)["results"]]
    helper = found.index(("hooks/test/test.go", "NewNullLogger", "source"))
    assert helper < 5
    assert helper < found.index(("hooks/test/test_test.go", "TestNullLoggerRecords", "test"))


def test_javascript_build_and_lint_configuration_is_tooling_not_source():
    """`jest.config.js`, `rollup.config.mjs`, `.eslintrc.js` are code no question is about
    unless it names them: ranked as tooling, below the source (immer's tsdx.config.js came
    third for a question about drafts)."""
    from repocontext.index.roles import file_role

    for path in ("jest.config.js", "tsdx.config.js", "site/vite.config.ts", "rollup.config.mjs",
                 ".eslintrc.js", "gulpfile.js"):  # fmt: skip
        assert file_role(path) == "tooling", path
    for path in ("src/config.js", "src/app.config.json", "src/index.ts", "lib/configure.js"):
        assert file_role(path) == "source", path


def test_jest_style_test_folders_are_tests():
    """immer's `__performance_tests__/todo.js` took a place among a question's first five
    once its module constants were symbols: `__name__` folders of tests and mocks are tests."""
    from repocontext.index.roles import file_role

    for path in ("__performance_tests__/todo.js", "src/__mocks__/fs.js", "__e2e_tests__/a.ts",
                 "src/__tests__/a.test.ts", "pkg/__integration_test__/run.js"):  # fmt: skip
        assert file_role(path) == "test", path
    for path in ("src/__init__.py", "src/__internal__/a.js", "src/testsuite/run.js"):
        assert file_role(path) == "source", path


def test_a_how_to_for_ones_own_tests_gets_the_helper_not_the_projects_tests(make_repo, cli):
    """ "In a unit test of a single handler, how can I put path variables into a request?" asks
    what to call from the user's own tests (mux's SetURLVars, in test_helpers.go), not for mux's
    tests: it was taken as asking for tests, and mux_test.go's functions came first."""
    root = make_repo(MUXLIKE)
    assert cli("index", "--root", root, "--quiet").code == 0
    question = (
        "In a unit test of a single handler, how can I put path variables into a request "
        "without going through the router?"
    )
    found = [(r["path"], r["symbol"]) for r in search(cli, root, question)["results"]]
    helper = found.index(("test_helpers.go", "SetURLVars"))
    assert helper < min(i for i, (path, _) in enumerate(found) if path == "mux_test.go")


COMMANDS = {
    "go.mod": "module example.com/clikit\n\ngo 1.21\n",
    "command.go": """
        package clikit

        // Command is one subcommand of the tool: its name, its aliases and its children.
        type Command struct {
            Use      string
            Aliases  []string
            commands []*Command
            parent   *Command
        }

        // Print writes a message for the user to the command's output.
        func (c *Command) Print(i ...interface{}) {
            fmt.Fprint(c.OutOrStderr(), i...)
        }

        // PrintErr prints a list of messages to the error output of the tool.
        func (c *Command) PrintErr(i ...interface{}) {
            fmt.Fprint(c.ErrOrStderr(), i...)
        }

        // Commands returns the list of subcommands of this command, sorted by name.
        func (c *Command) Commands() []*Command {
            sort.Sort(commandSorterByName(c.commands))
            return c.commands
        }

        // Find walks the arguments down the tree of subcommands to the one the user typed.
        func (c *Command) Find(args []string) (*Command, []string, error) {
            next := c
            for _, arg := range args {
                if found := next.findNext(arg); found != nil {
                    next = found
                }
            }
            return next, args, nil
        }

        func (c *Command) findSuggestions(arg string) string {
            if c.DisableSuggestions {
                return ""
            }
            var b strings.Builder
            if names := c.SuggestionsFor(arg); len(names) > 0 {
                b.WriteString("\\n\\nDid you mean this?\\n")
                for _, s := range names {
                    fmt.Fprintf(&b, "\\t%v\\n", s)
                }
            }
            return b.String()
        }
    """,
}


def test_a_question_that_quotes_printed_text_finds_the_code_that_prints_it(make_repo, cli):
    """Asked in words with the printed text in quotes (`how does the tool build the "Did you
    mean this?" list`), the function holding that text comes first: its own words (`b`,
    `names`, `arg`) share nothing with the question, where Print and Commands share "prints"
    and "list" (cobra's question of the dev sets)."""
    root = make_repo(COMMANDS)
    assert cli("index", "--root", root, "--quiet").code == 0
    question = (
        "When someone mistypes a subcommand, how does the tool build the "
        '"Did you mean this?" list of alternatives it prints?'
    )
    first = search(cli, root, question)["results"][0]
    assert (first["path"], first["symbol"]) == ("command.go", "Command.findSuggestions")
    assert first["ranks"]["trigram"] == 1


@pytest.mark.parametrize(
    ("query", "quoted"),
    [
        ('how is the "Did you mean this?" list built', ["Did you mean this?"]),
        ("how is a selection like 'slow and not network' parsed", ["slow and not network"]),
        ("where does `1true` fail", ["1true"]),
        ("can a function's globals or a generator's frame be reached", []),
        ('"Did you mean this?"', []),  # all one quote: an exact-string search (classify)
    ],
)
def test_the_text_a_question_quotes(query, quoted):
    assert quoted_inside(query) == quoted


HEADERS = '''
def normalise_header(name):
    """The header's name as the registry keys it: words capitalised, joined by dashes."""
    words = name.strip().replace("_", "-").split("-")
    return "-".join(word[:1].upper() + word[1:].lower() for word in words if word)
'''


def test_a_function_copied_into_a_test_helper_is_answered_at_the_source(make_repo, cli):
    """A function whose text is also in a test helper (a copy nearer the root) is one answer
    of a report, named at the source file, as the report's chunks name it: the ranked chunks
    kept the source's copy and the function answer the shallower path."""
    root = make_repo(
        {
            "pkg/core/headers.py": HEADERS,
            "pkg/core/client.py": """
            from .headers import normalise_header


            def send(headers):
                return {normalise_header(k): v for k, v in headers.items()}
            """,
            "tests/headers.py": HEADERS,
        }
    )
    assert cli("index", "--root", root, "--quiet").code == 0
    report = (
        "normalise_header drops the leading dash of a header name\n\n"
        "Sending a header whose name starts with a dash loses the dash: send() returns "
        "'X-Trace' for '-x-trace'. The words of the name are capitalised and joined again, "
        "but an empty first word is skipped.\n\n"
        "Traceback (most recent call last):\n"
        '  File "tests/headers.py", line 4, in normalise_header\n'
        '    return "-".join(word[:1].upper() + word[1:].lower() for word in words if word)\n'
        "AssertionError: '-X-Trace' != 'X-Trace'\n"
    )
    functions = [(f["path"], f["symbol"]) for f in search(cli, root, report)["functions"]]
    assert ("pkg/core/headers.py", "normalise_header") in functions, functions
    assert ("tests/headers.py", "normalise_header") not in functions, functions


def _schema_file(kinds: int) -> str:
    """A zod-like types.ts: one function per kind, each parsing its own kind; every tenth one
    also checks a refinement (what the question below asks about)."""
    out = []
    for i in range(kinds):
        check = (
            f"  if (!refine(input)) throw new RefinementError('refinement {i} failed');\n"
            if i % 10 == 0
            else ""
        )
        out.append(
            f"export function parseKind{i}(input: unknown): number {{\n{check}"
            f"  return typeof input === 'number' ? input + {i} : {i};\n}}\n"
        )
    return "\n".join(out)


SCHEMAS = {
    "src/types.ts": _schema_file(130),
    "src/huge.ts": _schema_file(300).replace("parseKind", "checkKind"),
    "src/small.ts": "\n".join(
        f"export function refinementStep{i}(input: unknown): boolean {{\n"
        f"  // one refinement step, run before the refinement that follows\n"
        f"  return input !== {i};\n}}\n"
        for i in range(6)
    ),
}


def test_a_big_file_gets_more_places_than_a_small_one(make_repo, cli):
    """A file holding much of the code holds much of the answers (zod's 5,000-line types.ts):
    it keeps one more place for each CHUNKS_PER_PLACE chunks up to PER_FILE_MOST, where a
    small file keeps PER_FILE; `--per-file` still caps every file alike."""
    root = make_repo(SCHEMAS)
    assert cli("index", "--root", root, "--quiet").code == 0
    question = "where is a refinement checked and what happens when the refinement fails"
    shown = Counter(r["path"] for r in search(cli, root, question, "--top", "30")["results"])
    assert shown["src/small.ts"] == PER_FILE
    assert CHUNKS_PER_PLACE == 60 and shown["src/types.ts"] == PER_FILE + 2  # 130 chunks
    assert shown["src/huge.ts"] == PER_FILE_MOST == 6  # 300 chunks: not 3 + 5, never a list
    capped = search(cli, root, question, "--top", "20", "--per-file", str(PER_FILE))
    assert Counter(r["path"] for r in capped["results"])["src/types.ts"] == PER_FILE


WIDGETS = {
    "go.mod": "module example.com/widgets\n",
    "server.go": """
        package widgets

        // StartServer starts the widget server.
        func StartServer() {
        \tbootEngine()
        }
    """,
    "engine.go": """
        package widgets

        func bootEngine() {
        \t// the engine behind each widget: its queues, its clocks and its caches, made once
        \tqueues := make(map[string][]int)
        \tclocks := make(map[string]int64)
        \tcaches := make(map[string]string)
        \t_, _, _ = queues, clocks, caches
        }
    """,
    # each in a file of its own: the cap per file does not thin them
    **{
        f"serve{i:02}.go": f"package widgets\n\n// serve{i} serves widget server requests.\n"
        f"func serve{i}() {{}}\n"
        for i in range(34)
    },
}


def test_asking_for_more_results_never_reorders_the_first_ones(make_repo, cli):
    """The editor asks for 20 results, the command line for 10, and each retriever's list was
    read five times as deep as asked: a deeper list changes the fusion. Here the function the
    best result calls is about 90th by its words: at the editor's depth it was found, gained
    as a call neighbour and stood among the first ten, which the command line's ten did not
    hold. Now both rank the same first ten; a longer list adds the rest after them."""
    root = make_repo(WIDGETS)
    assert cli("index", "--root", root, "--no-embed", "--quiet").code == 0
    question = "start the widget server"
    ten = [r["symbol"] for r in search(cli, root, question)["results"]]
    twenty = [r["symbol"] for r in search(cli, root, question, "--top", "20")["results"]]
    longest = search(cli, root, question, "--top", "60")["results"]
    sixty = [r["symbol"] for r in longest]
    assert ten[0] == "StartServer" and len(ten) == 10 and "bootEngine" not in ten
    assert twenty[:10] == ten and sixty[:20] == twenty
    assert "bootEngine" in sixty  # found deeper, after the first ranking
    # --explain says why a result with a higher score can stand below the first ones
    deeper = [r for r in longest if r["placed"]]
    assert deeper and longest[-len(deeper) :] == deeper, "only the results found deeper"
    assert deeper[0]["placed"].startswith("found deeper, after the first ")
