"""Search through the CLI contract: definitions before call sites, exact strings, explain, JSON."""

from __future__ import annotations

import pytest

from repocontext.search.intent import classify

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
    out = search(cli, project, "--top", "3", "how are redirects handled")
    assert set(out) == {
        "query", "intent", "confidence", "strategy", "results", "timings_ms", "modality", "rule",
        "notes",
    }  # fmt: skip
    assert out["strategy"] in ("direct", "fused")
    assert isinstance(out["timings_ms"]["total"], float)
    assert len(out["results"]) <= 3
    for r in out["results"]:
        assert set(r) == {
            "path", "start_line", "end_line", "symbol", "kind", "score", "ranks", "role", "flags",
            "contributions", "factors",
        }  # fmt: skip
        assert set(r["ranks"]) == {"bm25", "vector", "trigram", "ast", "graph"}
        assert r["start_line"] <= r["end_line"]
        assert "\\\\" not in r["path"] and not r["path"].startswith("/")


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


def test_best_chunk_per_file_unless_all_chunks(project, cli):
    few = search(cli, project, "response")
    paths = [r["path"] for r in few["results"]]
    assert len(paths) == len(set(paths))
    many = search(cli, project, "--all-chunks", "response")
    assert len(many["results"]) > len(few["results"])


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
        ("where is parseConfig defined", "find_definition", 0.95),
        ("who calls parse_config", "find_references", 0.90),
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
