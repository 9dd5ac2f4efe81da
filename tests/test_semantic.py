"""Semantic search with the real ONNX model: vectors keyed by content, the model's identity,
interrupted embedding, and a wrong or broken model refused with one clear line."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import threading
from pathlib import Path

import pytest
from conftest import write_tree
from test_bad_input import KILLED_AT, one_line_error

from repocontext import Repository
from repocontext.bridge import EditorService
from repocontext.config import EmbeddingConfig, load_config
from repocontext.embed.model import EmbeddingModel, load_model
from repocontext.embed.passage import passage_text
from repocontext.errors import ConfigError, EmbeddingModelError
from repocontext.health import check
from repocontext.runtime.session import Session

PROJECT = {
    "net/retry.py": '''
        def backoff_delay(attempt, base=0.5):
            """Wait longer after each failed attempt before trying the network again."""
            return base * (2 ** attempt)
    ''',
    "storage/files.py": '''
        import os
        import tempfile


        def atomic_write(path, data):
            """Write to a temporary file and rename it over the target, so readers never see
            a partly written file."""
            fd, tmp = tempfile.mkstemp(dir=os.path.dirname(path))
            with os.fdopen(fd, "w") as fh:
                fh.write(data)
            os.replace(tmp, path)
    ''',
    "text/colors.py": '''
        def hex_to_rgb(value):
            """Turn '#ff8800' into (255, 136, 0)."""
            value = value.lstrip("#")
            return tuple(int(value[i:i + 2], 16) for i in (0, 2, 4))
    ''',
}


@pytest.fixture
def project(make_repo, cli):
    root = make_repo(PROJECT)
    result = cli("index", "--root", root, "--quiet")
    assert result.code == 0, result.err
    return root


def search(cli, root, *args):
    result = cli("search", "--root", root, "--json", *args)
    assert result.code == 0, result.err
    return result.json()


def test_vector_search_finds_a_paraphrase_with_no_shared_words(project, cli):
    out = search(
        cli,
        project,
        "--modality",
        "vector",
        "--top",
        "1",
        "make sure nobody reads a half-saved document",
    )
    assert out["results"][0]["symbol"] == "atomic_write"
    assert out["results"][0]["ranks"]["vector"] == 1
    colour = search(
        cli,
        project,
        "--modality",
        "vector",
        "--top",
        "1",
        "convert a colour code to red green blue numbers",
    )
    assert colour["results"][0]["symbol"] == "hex_to_rgb"


def test_auto_fuses_vector_with_the_others_and_explains_it(project, cli):
    out = search(cli, project, "how long do we wait before retrying after a failure")
    assert out["strategy"] == "fused"
    first = out["results"][0]
    assert first["symbol"] == "backoff_delay"
    assert first["ranks"]["vector"] is not None
    assert "vector" in first["contributions"]
    assert "embed_query" in out["timings_ms"]


def test_made_up_words_find_nothing_and_a_paraphrase_still_finds_its_answer(project, cli, home):
    """No word of the query is in the code, so only the vectors answer; in a big index their
    nearest chunks clear the model's floor (0.2) for any query (made-up words reach 0.23-0.29
    on this project's src/, bench/results/lone_vectors.md), and the search listed unrelated
    code. The floor at 0 stands in for a big index here. Now nothing is found, and the note
    says why; a paraphrase with no word in common still finds its function, and no note says
    what the graph had no use for."""
    (home / "config.toml").write_text("[embedding]\nmin_similarity = 0.0\n")
    assert search(cli, project, "--modality", "vector", "blorfquz zintavek")["results"]
    out = search(cli, project, "blorfquz zintavek")
    assert out["results"] == []
    assert any("no word of the query is in the code" in n for n in out["notes"]), out["notes"]
    # why nothing: what the retrievers that searched found, not that the graph had no name
    assert not [n for n in out["notes"] if "no identifier" in n], out["notes"]
    out = search(cli, project, "make sure nobody reads a half-saved document")
    assert out["results"][0]["symbol"] == "atomic_write"
    # found: no note that the graph had no identifier to follow (it was on every question)
    assert not [n for n in out["notes"] if "no identifier" in n], out["notes"]
    text = cli("search", "--root", project, "blorfquz zintavek")
    assert text.code == 0 and "no results" in text.out


def test_hybrid_is_plain_rrf_of_bm25_and_vector(project, cli):
    out = search(cli, project, "--modality", "hybrid", "--all-chunks", "rename temporary file")
    top = out["results"][0]
    assert top["symbol"] == "atomic_write"
    expected = sum(1 / (60 + r) for r in (top["ranks"]["bm25"], top["ranks"]["vector"]) if r)
    assert top["score"] == pytest.approx(expected, rel=1e-4)


def test_exact_string_never_runs_the_embedding_model(project, cli):
    out = search(cli, project, '"os.replace(tmp, path)"')
    assert out["intent"] == "exact_match" and out["strategy"] == "direct"
    assert "embed_query" not in out["timings_ms"] and "vector" not in out["timings_ms"]
    assert out["results"][0]["path"] == "storage/files.py"


def test_unchanged_chunks_are_never_embedded_again(project, cli):
    again = cli("index", "--root", project, "--json").json()
    assert again["embedding"]["embedded"] == 0
    os.rename(project / "text/colors.py", project / "text/palette.py")  # same content, new path
    moved = cli("index", "--root", project, "--json").json()
    assert moved["added"] == 1 and moved["removed"] == 1
    assert moved["embedding"]["embedded"] == 0
    (project / "text/palette.py").write_text("def brand_new_helper():\n    return 42\n")
    changed = cli("index", "--root", project, "--json").json()
    assert changed["embedding"]["embedded"] == 1
    repo = Repository(project)
    with repo.open_store() as store:
        done, total = store.vectors.coverage()
        assert done == total == store.vectors.count()  # vectors of vanished content collected


ROUTER_GO = """package router

// Walk visits every route of the router.
func Walk(r *Router) error {
	return r.visit(nil)
}
"""


def test_a_changed_doc_comment_above_an_unchanged_body_is_embedded_again(make_repo, cli):
    """A Go doc comment sits above its function, outside the chunk's text, and is embedded
    with it: edited, the vector must follow it (it kept the old words when vectors were keyed
    by the chunk's text alone)."""
    root = make_repo({"go.mod": "module example.com/router\n", "router.go": ROUTER_GO})
    assert cli("index", "--root", root, "--quiet").code == 0
    assert cli("index", "--root", root, "--json").json()["embedding"]["embedded"] == 0
    new_doc = "Walk lists each registered route, nested routers included, for printing."
    (root / "router.go").write_text(
        ROUTER_GO.replace("Walk visits every route of the router.", new_doc)
    )
    again = cli("index", "--root", root, "--json").json()
    assert again["embedding"]["embedded"] == 1
    with Repository(root).open_store() as store:
        ((chunk_id, doc, text),) = store.db.execute(
            "SELECT id, doc, text FROM chunks WHERE qualname = 'Walk'"
        ).fetchall()
        assert doc == new_doc
        stored = store.vectors.of_chunks([chunk_id])[chunk_id][0]  # the start of its passage
    model = load_model(load_config().embedding)
    fresh = model.embed_passages([passage_text("router.go", "Walk", "function", None, doc, text)])
    assert float(stored @ fresh[0]) > 0.999


def test_a_doc_comments_tags_are_not_embedded_its_prose_is():
    """The model reads 128 tokens of a passage: a JSDoc's `@param {string} name` lines repeat
    the signature, and its prose says what the definition is for."""
    doc = "Register a subcommand by name.\nIts options follow the parent's.\n@param {string} name\n@api private"
    text = passage_text(
        "lib/command.js", "Command.command", "method", None, doc, "command(name) {}"
    )
    assert "Register a subcommand by name.\nIts options follow the parent's." in text
    assert "@param" not in text and "@api" not in text
    assert "@api" not in passage_text("lib/a.js", "f", "function", None, "@api private", "f() {}")


def test_index_records_the_models_identity(project):
    with Repository(project).open_store() as store:
        key = store.vectors.model_key()
        model = load_model(load_config().embedding)
        assert key == model.identity.key()
        assert model.identity.name == "all-MiniLM-L6-v2-int8" and model.identity.dims == 384
        assert len(model.identity.file_sha256) == 64


# A long Go method whose first 128 tokens are about sessions; its last lines compress.
SERVER_GO = """package server

import (
	"compress/gzip"
	"net/http"
	"strings"
	"time"
)

// Handle serves one request of a session.
func (s *Server) Handle(w http.ResponseWriter, r *http.Request) {
	cookie, err := r.Cookie("session")
	if err != nil || cookie.Value == "" {
		cookie = &http.Cookie{Name: "session", Value: s.newSessionID(), Path: "/"}
		http.SetCookie(w, cookie)
	}
	sess := s.sessions.Load(cookie.Value)
	if sess == nil {
		sess = s.sessions.Create(cookie.Value, time.Now().Add(s.ttl))
	}
	if sess.Expired(time.Now()) {
		s.sessions.Delete(cookie.Value)
		http.Redirect(w, r, "/login", http.StatusSeeOther)
		return
	}
	sess.Touch(time.Now())
	user := sess.User()
	if user == nil && !s.public(r.URL.Path) {
		http.Redirect(w, r, "/login", http.StatusSeeOther)
		return
	}
	body := s.render(r.URL.Path, user)
	if strings.Contains(r.Header.Get("Accept-Encoding"), "gzip") && len(body) > 1400 {
		w.Header().Set("Content-Encoding", "gzip")
		w.Header().Add("Vary", "Accept-Encoding")
		zw := gzip.NewWriter(w)
		defer zw.Close()
		zw.Write(body)
		return
	}
	w.Write(body)
}

// newSessionID makes a random session identifier.
func (s *Server) newSessionID() string {
	return randomHex(16)
}

// public reports whether a path is served without a login.
func (s *Server) public(path string) bool {
	return strings.HasPrefix(path, "/static/") || path == "/login"
}
"""

TEMPLATES_GO = """package server

import "os"

// SaveTemplate writes a page template to disk.
func SaveTemplate(path string, data []byte) error {
	return os.WriteFile(path, data, 0o644)
}

// LoadTemplate reads a page template from disk.
func LoadTemplate(path string) ([]byte, error) {
	return os.ReadFile(path)
}
"""

GZIP_QUESTION = "send the body gzip-compressed when the client accepts that encoding"


def test_a_long_functions_logic_past_what_the_model_reads_is_found_by_meaning(make_repo, cli, home):
    """The model reads 128 tokens of a passage; the later windows of a long source passage
    are embedded too, and a chunk is as near as its nearest window. Without them the method
    whose last lines compress is not found at all (the import block naming gzip is)."""
    files = {"go.mod": "module example.com/server\n", "server.go": SERVER_GO}
    root = make_repo({**files, "templates.go": TEMPLATES_GO})
    assert cli("index", "--root", root, "--json").json()["embedding"]["windows"] >= 1
    found = search(cli, root, "--modality", "vector", GZIP_QUESTION)["results"]
    assert found[0]["symbol"] == "Server.Handle"
    repo = Repository(root)
    with repo.open_store() as store:
        searcher = repo.searcher(store, cache_vectors=True)  # the editor's way: in memory
        try:
            assert searcher.search(GZIP_QUESTION, modality="vector").results[0].symbol == (
                "Server.Handle"
            )
        finally:
            searcher.close()

    write_config(home, "[embedding]\nwindows = 0\n")
    assert cli("index", "--root", root, "--json").json()["embedding"]["windows"] == 0
    found = search(cli, root, "--modality", "vector", GZIP_QUESTION)["results"]
    assert "Server.Handle" not in [r["symbol"] for r in found]

    write_config(home, "")
    assert cli("index", "--root", root, "--json").json()["embedding"]["windows"] >= 1
    (root / "server.go").unlink()  # its windows go with its vectors
    cli("index", "--root", root, "--quiet")
    with repo.open_store() as store:
        ids, rows = store.vectors.matrix()
        assert len(ids) == len(set(ids.tolist())) == store.vectors.count()


KILLED_AT_WINDOWS = """
import os, signal, sys
from repocontext import Repository
from repocontext.bridge import EditorService

def windows_progress(done, total):
    os.kill(os.getpid(), signal.SIGKILL)  # every vector committed, no window yet

Repository(sys.argv[1]).embed(windows_progress=windows_progress)
"""


def test_status_counts_the_chunks_still_to_window_until_an_index_finishes_them(
    make_repo, cli, home
):
    """An embedding stopped after the vectors, before the later windows: search works, and
    `status` says the windows are what is left (not "complete"), until the next index."""
    files = {"go.mod": "module example.com/server\n", "server.go": SERVER_GO}
    root = make_repo({**files, "templates.go": TEMPLATES_GO})
    assert cli("index", "--root", root, "--no-embed", "--quiet").code == 0
    proc = subprocess.run([sys.executable, "-c", KILLED_AT_WINDOWS, str(root)], timeout=300)
    assert proc.returncode == -signal.SIGKILL
    status = cli("status", "--root", root, "--json").json()
    vectors = status["vectors"]
    assert vectors["missing"] == 0 and vectors["embedded"] == vectors["chunks"]
    with Repository(root).open_store() as store:
        source = len(store.vectors.unwindowed())
    assert vectors["windows_pending"] == source > 0
    assert status["incomplete"] == ["windows"]
    text = cli("status", "--root", root).out
    assert f"incomplete: windows ({source} source chunks not yet read past" in text, text
    health = index_health(root / "server.go")  # :checkhealth's line: works, with a warning
    assert health["ok"] and f"incomplete: windows ({source} source chunks" in health["warn"]
    assert ":RepoContext reindex finishes it" in health["warn"]

    write_config(home, "[embedding]\nwindows = 0\n")  # none would be made: nothing is left
    assert cli("status", "--root", root, "--json").json()["incomplete"] == []
    write_config(home, "")
    assert cli("index", "--root", root, "--json").json()["embedding"]["windows"] >= 1
    status = cli("status", "--root", root, "--json").json()
    assert status["vectors"]["windows_pending"] == 0 and status["incomplete"] == []
    assert index_health(root / "server.go")["warn"] is None
    write_config(home, "[embedding]\nwindows = 3\n")  # made as 7 said: all of them again
    assert cli("status", "--root", root, "--json").json()["vectors"]["windows_pending"] == source


def index_health(path: Path) -> dict:
    """The index line of :checkhealth repocontext, as the editor gets it."""
    service = EditorService()
    try:
        return next(c for c in check(str(path), service)["checks"] if c["name"] == "index")
    finally:
        service.close()


def test_the_editor_hears_of_the_later_windows_after_the_vectors(make_repo):
    """The phase after the vectors (the later windows of long source passages) has its own
    progress, to its end: the statusline did not stop at "embed 100%" while work went on."""
    root = make_repo(PROJECT)
    session = Session(Repository(root))
    progress: list[dict] = []
    done = threading.Event()
    session.index(True, progress.append, lambda r: done.set())
    try:
        assert done.wait(300)
        phases = [p["phase"] for p in progress]
        assert "embed" in phases and "windows" in phases, phases
        assert phases.index("windows") > max(i for i, p in enumerate(phases) if p == "embed")
        last = [p for p in progress if p["phase"] == "windows"][-1]
        assert last["done"] == last["total"] > 0 and last["percent"] == 100
    finally:
        session.close()


def test_the_later_windows_of_a_passage_cover_the_rest_of_it_once_headed():
    """Cut by the model's own tokens: a passage it reads whole has none; a long one's windows
    follow each other with a little overlap, each headed by the chunk's path and name, the
    last ending where the passage ends, at most `[embedding] windows` of them."""
    model = load_model(load_config().embedding)
    header = "server.go Server.Handle (method)"
    assert model.later_windows("func short() {}", header) == []
    passage = header + "\n" + SERVER_GO
    windows = model.later_windows(passage, header)
    assert len(windows) >= 2
    assert all(w.startswith(header + "\n") for w in windows)
    assert passage.rstrip().endswith(windows[-1].splitlines()[-1].strip())
    bodies = [w[len(header) + 1 :] for w in windows]
    for before, after in zip(bodies, bodies[1:]):
        assert after[:20] in before  # the overlap: a line cut at a window's end is read whole
    assert len(model.later_windows(passage * 20, header)) == model.config.windows


def test_a_catalogue_id_used_again_does_not_inherit_windows_of_other_words(make_repo, cli):
    """A repocontext before windows collected a passage's vector and catalogue row but not its
    windows; SQLite then gives the next passage the same id. Its vector must not come with
    the old passage's windows."""
    root = make_repo({"go.mod": "module example.com/server\n", "server.go": SERVER_GO})
    assert cli("index", "--root", root, "--json").json()["embedding"]["windows"] >= 1
    with Repository(root).open_store() as store:
        db = store.db
        (last,) = db.execute("SELECT max(embedding_id) FROM windows WHERE parts > 0").fetchone()
        assert last == db.execute("SELECT max(id) FROM embeddings").fetchone()[0]
        with db:  # what the older version's garbage collection did
            db.execute("DELETE FROM vectors WHERE rowid = ?", (last,))
            db.execute("DELETE FROM embeddings WHERE id = ?", (last,))
        model = load_model(load_config().embedding)
        store.vectors.add(["a-new-passage"], model.embed_passages(["func Other() {}"]))
        assert (
            db.execute("SELECT id FROM embeddings WHERE content_hash = 'a-new-passage'").fetchone()[
                0
            ]
            == last
        )
        ids, _ = store.vectors.matrix()
        assert ids.tolist().count(last) == 1  # its own vector, no window of Server.Handle


def write_config(home: Path, text: str) -> None:
    (home / "config.toml").write_text(text)


def test_a_query_with_another_model_is_refused_and_index_reembeds(project, cli, home):
    write_config(home, '[embedding]\nname = "some-other-model"\n')
    line = one_line_error(cli("search", "--root", project, "--modality", "vector", "wait"))
    assert "configured model is some-other-model" in line and "`repocontext index`" in line
    auto = search(cli, project, "how long do we wait before retrying")
    assert any("vector search is off" in n for n in auto["notes"])
    assert all(r["ranks"]["vector"] is None for r in auto["results"])
    reembed = cli("index", "--root", project, "--json").json()
    assert reembed["embedding"]["dropped_old_model"] is True
    with Repository(project).open_store() as store:
        assert reembed["embedding"]["embedded"] == store.vectors.coverage()[1]
    assert search(
        cli, project, "--modality", "vector", "how long to wait before retrying the network"
    )["results"]


def test_missing_model_keeps_the_lexical_index_and_says_how_to_fix(make_repo, cli, home):
    write_config(home, '[embedding]\nmodel_path = "/nonexistent/model.onnx"\n')
    root = make_repo(PROJECT)
    result = cli("index", "--root", root)
    assert result.code == 1
    assert "indexed" in result.out  # the lexical index was written and reported first
    assert (
        result.err.strip()
        .splitlines()[-1]
        .startswith("repocontext: the embedding model file /nonexistent/model.onnx is missing")
    )
    assert search(cli, root, "--modality", "bm25", "temporary")["results"]
    auto = search(cli, root, "how long do we wait before retrying")
    assert any("no vectors yet" in n for n in auto["notes"])


def test_corrupt_model_file_and_wrong_dimensions(tmp_path):
    bad = tmp_path / "model.onnx"
    bad.write_bytes(b"this is not an onnx model" * 100)
    with pytest.raises(EmbeddingModelError, match="damaged or not an ONNX model"):
        EmbeddingModel(EmbeddingConfig(model_path=str(bad)))
    real = load_config().embedding
    with pytest.raises(
        EmbeddingModelError, match="produces 384-dimensional vectors but the config says 512"
    ):
        EmbeddingModel(EmbeddingConfig(model_path=real.model_path, dims=512))
    with pytest.raises(EmbeddingModelError, match="tokenizer file"):
        EmbeddingModel(
            EmbeddingConfig(model_path=real.model_path, tokenizer_path=str(tmp_path / "none.json"))
        )


def test_the_query_session_loads_its_graph_optimised_once_and_survives_a_damaged_cache(
    tmp_path, monkeypatch
):
    """A command-line search creates one session; its graph is optimised once and cached,
    its weights in a file of their own (loaded in about a third of the time)."""
    import numpy as np

    monkeypatch.setenv("REPOCONTEXT_MODELS", str(tmp_path))
    config = load_config().embedding
    first = EmbeddingModel(config)
    (graph,) = (tmp_path / "embedding").glob("*.onnx")
    weights = graph.with_suffix(".weights")
    assert graph.stat().st_size < 1_000_000 < weights.stat().st_size
    query = first.embed_query("how are redirects handled")
    # the cached graph gives the vectors the model itself gives
    passage = first.embed_passages([config.query_prefix + "how are redirects handled"])[0]
    assert np.allclose(query, passage, atol=1e-4)
    graph.write_bytes(b"damaged")
    again = EmbeddingModel(config)  # falls back to the model, and caches it again
    assert np.allclose(again.embed_query("how are redirects handled"), query, atol=1e-4)
    assert graph.stat().st_size > 10_000 and weights.stat().st_size > 1_000_000
    assert not list((tmp_path / "embedding").glob("*.partial"))


def test_what_a_process_killed_while_making_the_cache_left_is_removed(tmp_path, monkeypatch):
    """A process killed while it optimised the graph left `<graph>.<pid>.partial` (90 MB of
    weights) for ever. The next process that makes the cache removes what dead processes
    left, and leaves a running one's alone."""
    monkeypatch.setenv("REPOCONTEXT_MODELS", str(tmp_path))
    config = load_config().embedding
    EmbeddingModel(config)
    (graph,) = (tmp_path / "embedding").glob("*.onnx")
    dead = graph.with_name(f"{graph.name}.99999999.partial")  # no process has this pid
    dead.mkdir()
    (dead / graph.with_suffix(".weights").name).write_bytes(bytes(1000))
    dead_file = graph.with_name(f"{graph.name}.99999998.partial")  # as releases before left
    dead_file.write_bytes(b"half a graph")
    running = graph.with_name(f"{graph.name}.{os.getppid()}.partial")
    running.mkdir()
    graph.write_bytes(b"damaged")  # so that the next load makes the cache again
    EmbeddingModel(config)
    assert not dead.exists() and not dead_file.exists()
    assert running.is_dir()


def test_a_graph_kept_whole_by_an_earlier_release_is_kept_again_with_its_weights_apart(
    tmp_path, monkeypatch
):
    """Releases before kept the optimised graph in one 90 MB file, with its stamp: that file
    is replaced by the graph and its weights, not left beside them."""
    import numpy as np

    from repocontext.embed.runtime import onnxruntime
    from repocontext.store.stamps import write_stamp

    monkeypatch.setenv("REPOCONTEXT_MODELS", str(tmp_path))
    config = load_config().embedding
    right = EmbeddingModel(config).embed_query("where is the session cookie signed")
    (graph,) = (tmp_path / "embedding").glob("*.onnx")
    stamp = graph.with_suffix(".verified")
    sha = json.loads(stamp.read_text())["sha256"]
    for made in (
        graph,
        stamp,
        graph.with_suffix(".weights"),
        graph.with_suffix(".weights.verified"),
    ):
        made.unlink()
    ort = onnxruntime()
    options = ort.SessionOptions()
    options.graph_optimization_level = ort.GraphOptimizationLevel.ORT_ENABLE_EXTENDED
    options.optimized_model_filepath = str(graph)  # the weights inside, as before
    ort.InferenceSession(config.resolved().model_path, options, ["CPUExecutionProvider"])
    graph.chmod(0o600)
    write_stamp(graph, stamp, sha)
    assert graph.stat().st_size > 1_000_000
    again = EmbeddingModel(config).embed_query("where is the session cookie signed")
    assert np.allclose(again, right, atol=1e-4)
    assert graph.stat().st_size < 1_000_000 < graph.with_suffix(".weights").stat().st_size


@pytest.mark.parametrize(
    "text,message",
    [
        ('[embedding]\nmodle_path = "x"\n', "unknown option `embedding.modle_path`"),
        ('[embedding]\ndims = "384"\n', "`embedding.dims` in"),
        ("[embeddings]\n", "unknown section [embeddings]"),
        ("[embedding\n", "cannot read the config file"),
        ('[embedding]\npooling = "max"\n', "`embedding.pooling`"),
        ("[embedding]\nwindows = 64\n", "`embedding.windows`"),
    ],
)
def test_config_errors_name_the_option(home, make_repo, cli, text, message):
    write_config(home, text)
    with pytest.raises(ConfigError, match=message.replace("[", r"\[").replace("(", r"\(")):
        load_config()
    root = make_repo({"a.py": "x = 1\n"})
    assert message.split("`")[0] in one_line_error(cli("index", "--root", root))
    assert message.split("`")[0] in one_line_error(cli("status", "--root", root))


def test_interrupted_embedding_is_usable_and_resumed(tmp_path, home):
    root = tmp_path / "many"
    write_tree(
        root,
        {
            f"pkg/m{i}.py": "\n\n".join(
                f'def task_{i}_{j}(value):\n    """Step {j} of job {i}: scale the value."""\n'
                f"    return value * {j}"
                for j in range(30)
            )
            for i in range(60)
        },
    )
    repo = Repository(root)
    repo.index()
    # the embedding process kills itself once 64 vectors are committed: no race to lose
    proc = subprocess.run([sys.executable, "-c", KILLED_AT, "embed", str(root), "64"], timeout=300)
    assert proc.returncode == -signal.SIGKILL
    with repo.open_store() as store:
        partial, total = store.vectors.coverage()
    assert 0 < partial < total == 1800
    response = repo.search("scale the value for job 7", modality="vector")
    assert response.results and any("vectors cover" in n for n in response.notes)
    fused = repo.search("scale the value for job 7")  # said beside the other retrievers' hits
    assert fused.results and any("vectors cover" in n for n in fused.notes), fused.notes
    report = repo.embed()
    assert report.embedded == total - partial
    with repo.open_store() as store:
        assert store.vectors.coverage() == (total, total)


@pytest.mark.parametrize(
    "query", ["!!! ??? ...", "y" * 10_000, "как записать файл целиком", "ファイルを安全に書き込む"]
)
def test_odd_queries_through_the_vector_retriever(project, cli, query):
    for modality in ("vector", "hybrid", "auto"):
        out = search(cli, project, "--modality", modality, query)
        assert out["results"] or out["notes"], (modality, out)  # an answer, or why none
