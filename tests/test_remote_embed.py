"""Embeddings from a real llama-server started with `--embedding` (built by
scripts/llama-server.sh), bound to 127.0.0.1: the index records the server's model as it
records the local one, never mixes the two, and a server that is down is one clear line."""

from __future__ import annotations

import time

import pytest
from test_search import PROJECT
from test_server import SERVER, free_port, start_llama_server, stop_llama_server

pytestmark = pytest.mark.skipif(
    not SERVER, reason="set REPOCONTEXT_LLAMA_SERVER (scripts/test builds and sets it)"
)
QUESTION = "how does a response raise an error for a bad status"


@pytest.fixture(scope="module")
def embedding_server():
    """gemma-3-270m with mean pooling: any GGUF serves embeddings this way (640 dims)."""
    proc, url = start_llama_server("--embedding", "--pooling", "mean")
    yield url
    stop_llama_server(proc)


def use_server(home, url: str, dims: int = 640) -> None:
    (home / "config.toml").write_text(
        f'[embedding]\nname = "gemma-270m-mean"\ndims = {dims}\nserver_url = "{url}"\n'
    )


def search(cli, root, *args):
    result = cli("search", "--root", root, "--json", *args)
    assert result.code == 0, result.err
    return result.json()


def test_the_index_embeds_through_the_server_and_records_its_model(
    embedding_server, make_repo, cli, home
):
    use_server(home, embedding_server)
    root = make_repo(PROJECT)
    indexed = cli("index", "--root", root, "--quiet")
    assert indexed.code == 0, indexed.err
    assert "with gemma-270m-mean (640 dims, from a server" in indexed.out
    status = cli("status", "--root", root, "--json").json()
    assert status["vectors"]["model"].startswith("gemma-270m-mean (640 dims, from a server")
    out = search(cli, root, QUESTION)
    assert not [n for n in out["notes"] if "vector search is off" in n]
    assert any(r["ranks"]["vector"] for r in out["results"])

    # the local model again: the server's vectors are never compared with its queries...
    (home / "config.toml").unlink()
    notes = search(cli, root, QUESTION)["notes"]
    assert any("vector search is off" in n and "gemma-270m-mean" in n for n in notes)
    # ...and the next index drops them before writing its own
    again = cli("index", "--root", root, "--quiet")
    assert again.code == 0, again.err
    assert "vectors of the previous model dropped" in again.out
    assert (
        cli("status", "--root", root, "--json")
        .json()["vectors"]["model"]
        .startswith("all-MiniLM-L6-v2-int8")
    )


def test_a_server_with_other_dimensions_or_none_is_one_clear_line(
    embedding_server, make_repo, cli, home
):
    root = make_repo(PROJECT)
    use_server(home, embedding_server, dims=384)
    wrong = cli("index", "--root", root, "--quiet")
    assert wrong.code == 1
    assert "returns 640-dimensional vectors but the config says 384" in wrong.err
    assert "Traceback" not in wrong.err

    use_server(home, f"http://127.0.0.1:{free_port()}")  # nothing listens there
    t0 = time.monotonic()
    down = cli("index", "--root", root, "--quiet")
    assert down.code == 1
    assert "did not answer /v1/embeddings (" in down.err or "did not answer" in down.err
    assert "clear [embedding] server_url" in down.err
    assert len(down.err.strip().splitlines()) == 1
    assert time.monotonic() - t0 < 60  # retried a few times, not forever
    # the lexical index was written before the embedding failed: search still answers
    out = search(cli, root, "def fetch")
    assert out["results"][0]["symbol"] == "fetch"


@pytest.mark.parametrize("value", ["localhost:8080", "ftp://x"])
def test_a_server_url_that_is_no_http_address_is_refused_at_load(cli, home, make_repo, value):
    (home / "config.toml").write_text(f'[embedding]\nserver_url = "{value}"\n')
    root = make_repo(PROJECT)
    result = cli("index", "--root", root, "--quiet")
    assert result.code != 0
    assert "`embedding.server_url`" in result.err and "http://" in result.err
