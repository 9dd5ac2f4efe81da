"""Ghost text first, embeddings after: a completion never waits for indexing or embedding.

The real default model (gemma-3-270m through llama.cpp), the real indexer and the real
embedding model. No test here depends on how fast the machine is: the indexer and the
embedder are held where they report progress (on their own thread, with an event), and the
completion must come back while they are held; a completion is held the same way, in its own
update callback, to show that the embedder waits for it.
"""

from __future__ import annotations

import threading
from dataclasses import replace

import pytest

from repocontext import Repository
from repocontext.complete.backends.llamacpp import LlamaCppBackend
from repocontext.complete.models import default_model_path
from repocontext.config import GenerationConfig
from repocontext.context.request import CursorRequest
from repocontext.runtime.session import Session

pytest.importorskip("llama_cpp", reason="llama-cpp-python is part of the install")

APP = {
    "pyproject.toml": "[project]\nname = 'shop'\n",
    "shop/tax.py": '''
        def compute_tax(amount, rate):
            """Tax owed on `amount` at `rate` percent."""
            return amount * rate / 100
    ''',
    "shop/checkout.py": """
        from shop.tax import compute_tax


        def checkout(amount):
            subtotal = amount * 2
            tax = compute_tax(subtotal, 7)
            return subtotal + tax
    """,
}
WAIT = 120  # seconds: only a hang reaches it; nothing here waits for the machine's speed
UNREACHABLE_MS = 10**9


@pytest.fixture(scope="module")
def backend():
    return LlamaCppBackend(str(default_model_path()), n_ctx=2048)


@pytest.fixture
def session(make_repo, backend):
    """A session on a project never indexed, with a deadline no machine reaches."""
    root = make_repo(APP)
    backend.reset()
    s = Session(
        Repository(root),
        backend=backend,
        generation=replace(GenerationConfig(), max_tokens=8, hard_deadline_ms=UNREACHABLE_MS),
    )
    yield s
    s.close()


class Held:
    """A progress callback that holds its thread at the first report of `phase` until
    released: the indexer or the embedder stands still there, deterministically."""

    def __init__(self, phase: str):
        self.phase = phase
        self.reached = threading.Event()
        self.release = threading.Event()
        self.reports: list[dict] = []

    def __call__(self, report: dict) -> None:
        self.reports.append(report)
        if report["phase"] == self.phase and not self.reached.is_set():
            self.reached.set()
            assert self.release.wait(WAIT), "the test never released the held phase"


class Reply:
    def __init__(self):
        self.done = threading.Event()
        self.result = None
        self.error = None

    def __call__(self, result, error) -> None:
        self.result, self.error = result, error
        self.done.set()


def complete(session: Session, request: CursorRequest, on_update=lambda text: None) -> Reply:
    reply = Reply()
    session.complete(request, on_update, reply)
    return reply


def checkout_request(typed: str = "    tax = compute_tax(") -> CursorRequest:
    """At the call of a function defined in another file (shop/tax.py)."""
    text = (
        "from shop.tax import compute_tax\n\n\ndef checkout(amount):\n    subtotal = amount * 2\n"
        + typed
    )
    return CursorRequest("shop/checkout.py", 6, len(typed.encode()), text)


def indexed(session: Session):
    done = threading.Event()
    reports: list[dict] = []
    return done, reports, lambda r: (reports.append(r), done.set())


def test_a_completion_does_not_wait_for_the_first_index(session):
    held = Held("index")
    done, reports, on_done = indexed(session)
    session.index(True, held, on_done)
    assert held.reached.wait(WAIT)  # the indexer stands at its first file
    reply = complete(session, checkout_request())
    assert reply.done.wait(WAIT), "the completion waited for the index"
    assert reply.error is None and reply.result.status in ("ok", "empty")
    assert reply.result.snippets == 0  # from the buffer alone: nothing is indexed yet
    held.release.set()
    assert done.wait(WAIT) and "error" not in reports[0]


def test_a_completion_does_not_wait_for_embeddings_and_gets_the_index_meanwhile(session):
    held = Held("embed")
    done, reports, on_done = indexed(session)
    session.index(True, held, on_done)
    assert held.reached.wait(WAIT)  # the lexical index is written; no vector is
    assert session.repo.status()["vectors"]["embedded"] == 0
    reply = complete(session, checkout_request())
    assert reply.done.wait(WAIT), "the completion waited for the embeddings"
    assert reply.error is None and not done.is_set()
    # the context comes from the lexical index, written before the embedder started
    engine = session.engine
    assert engine.context is not None
    kept = _wait_for(lambda: engine.last_context.get("shop/checkout.py"))
    assert "shop/tax.py" in {s.path for s in kept.snippets}  # the definition, from the index
    # the next request on the file starts with that context (the model, not the cache)
    engine.cache = type(engine.cache)()
    again = complete(session, checkout_request())
    assert again.done.wait(WAIT) and again.error is None
    assert again.result.context_injected and again.result.snippets >= 1
    assert session.repo.status()["vectors"]["embedded"] == 0  # still held: nothing embedded
    held.release.set()
    assert done.wait(WAIT)
    assert reports[0]["embedded"] == session.repo.status()["vectors"]["chunks"] > 0
    assert engine.context.vector is not None  # and the vectors are searched from now on


def test_an_engine_made_before_the_index_existed_takes_it_up(session):
    """The editor warms (and so makes the engine) on opening a file, before the index exists:
    the engine must not stay without context for the rest of the session."""
    first = complete(session, checkout_request())
    assert first.done.wait(WAIT) and first.error is None
    assert session.engine.context is None  # no index yet
    done, reports, on_done = indexed(session)
    session.index(False, lambda p: None, on_done)
    assert done.wait(WAIT) and "error" not in reports[0]
    assert session.engine.context is not None


def test_embedding_waits_while_a_completion_runs_then_resumes(session):
    """A completion held in its first streamed update is running: the embedder, which has
    started its phase, must not embed a batch until the completion has ended."""
    session.repo.index()  # the lexical index exists; the vectors do not
    streaming = threading.Event()
    release = threading.Event()

    def on_update(text: str) -> None:
        if not streaming.is_set():
            streaming.set()
            assert release.wait(WAIT)

    # straight-line code: the model surely goes on after it (tests/test_complete.py)
    request = CursorRequest("shop/calc.py", 4, len("w = x +"), "x = 1\ny = 2\nz = 3\nw = x +")
    reply = complete(session, request, on_update)
    assert streaming.wait(WAIT)  # the completion is running, and held
    embedding = threading.Event()
    batches: list[int] = []

    def on_progress(report: dict) -> None:
        if report["phase"] == "embed":
            embedding.set()
            if report["done"] > 0:
                batches.append(report["done"])

    done, reports, on_done = indexed(session)
    session.index(True, on_progress, on_done)
    assert embedding.wait(WAIT)  # the embedding phase has begun (0 %)
    # held by the running completion: no batch goes through (a short, bounded look; a fault
    # would embed this project's few chunks in well under that)
    assert not done.wait(3) and batches == []
    assert session.repo.status()["vectors"]["embedded"] == 0
    release.set()
    assert reply.done.wait(WAIT) and reply.error is None
    assert done.wait(WAIT), "the embedding did not resume after the completion"
    assert batches and reports[0]["embedded"] > 0


def _wait_for(probe, seconds: float = WAIT):
    """The probe's value once it has one (polling a state, not sleeping a fixed time)."""
    ready = threading.Event()
    value = None
    for _ in range(int(seconds * 20)):
        value = probe()
        if value:
            return value
        ready.wait(0.05)
    raise AssertionError("the state was never reached")


def test_a_file_outside_any_project_completes_from_the_buffer_alone(tmp_path, backend, home):
    folder = tmp_path / "loose"
    folder.mkdir()
    repo = Repository.buffer_only(folder / "calc.py")  # a new buffer: not even on disk
    backend.reset()
    session = Session(
        repo,
        backend=backend,
        generation=replace(GenerationConfig(), max_tokens=3, hard_deadline_ms=UNREACHABLE_MS),
    )
    request = CursorRequest("calc.py", 4, len("w = x +"), "x = 1\ny = 2\nz = 3\nw = x +")
    reply = complete(session, request)
    assert reply.done.wait(WAIT) and reply.error is None
    assert reply.result.suggestion == " y + z"  # greedy decoding (tests/test_complete.py)
    assert reply.result.snippets == 0 and session.engine.context is None
    done, reports, on_done = indexed(session)
    session.index(True, lambda p: None, on_done)
    assert done.wait(WAIT) and reports[0]["project"] is False and "error" not in reports[0]
    session.close()
    assert not list(home.rglob("*.sqlite*"))  # nothing was written for the folder
