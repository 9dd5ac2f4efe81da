"""The index worker against the completion and context threads, for real: rebuilds, vectors
arriving, a branch switch and saved edits, while a typist types and the editor warms.

The session publishes one handle on the index at a time (`CompletionEngine.use_index`); a
build takes the newest when it starts, and a replaced handle is closed on the context thread
after the builds queued before it. Before, the completion thread closed a replaced store while
a build could be reading it, and the index thread cleared the context engine's lexical cache
while a build could be inside it: a build then failed, and the completion went on without its
context, silently. Every build failure is now said in the session's errors, so this test sees
one. The real default model, indexer, embedding model and git; nothing here depends on the
machine's speed (no timing is asserted; only a hang reaches WAIT).
"""

from __future__ import annotations

import threading
from dataclasses import replace

import apsw
import pytest
from conftest import git

from repocontext import Repository
from repocontext.complete.backends.llamacpp import LlamaCppBackend
from repocontext.complete.models import default_model_path
from repocontext.config import GenerationConfig
from repocontext.context.request import CursorRequest
from repocontext.runtime.indexing import EMBED_QUIET
from repocontext.runtime.session import Session

pytest.importorskip("llama_cpp", reason="llama-cpp-python is part of the install")

APP = {
    "pyproject.toml": "[project]\nname = 'shop'\n",
    "shop/__init__.py": "",
    "shop/tax.py": '''
        def compute_tax(amount, rate):
            """Tax owed on `amount` at `rate` percent."""
            return amount * rate / 100
    ''',
    "shop/ledger.py": '''
        class Ledger:
            """Every payment, in order."""

            def record(self, amount):
                """Write one payment down."""
                return amount
    ''',
    "shop/checkout.py": """
        from shop.ledger import Ledger
        from shop.tax import compute_tax


        def checkout(amount):
            subtotal = amount * 2
            tax = compute_tax(subtotal, 7)
            return subtotal + tax
    """,
}
WAIT = 120  # seconds: only a hang reaches it
ROUNDS = 4
KEYS = "    tax = compute_tax(subtotal"


@pytest.fixture(scope="module")
def backend():
    return LlamaCppBackend(str(default_model_path()), n_ctx=2048)


def typed(n: int) -> CursorRequest:
    head = (
        "from shop.ledger import Ledger\nfrom shop.tax import compute_tax\n\n\n"
        "def checkout(amount):\n    subtotal = amount * 2\n"
    )
    line = KEYS[:n]
    return CursorRequest("shop/checkout.py", 7, len(line), head + line)


class Typist(threading.Thread):
    """Types KEYS again and again: a request per key (each cancels the one before), a warming
    and a pause every few keys, until stopped; keeps every reply."""

    def __init__(self, session: Session):
        super().__init__(daemon=True)
        self.session = session
        self.stop = threading.Event()
        self.replies: list[tuple] = []
        self.last = threading.Event()

    def run(self) -> None:
        n = 8
        while not self.stop.is_set():
            n = n + 1 if n < len(KEYS) else 8
            done = threading.Event()

            def on_done(result, error, done=done):
                self.replies.append((result, error))
                done.set()

            self.session.complete(typed(n), lambda text: None, on_done)
            if n % 5 == 0:
                self.session.warm(typed(n))
            done.wait(WAIT)
            if n % 5 == 0:
                # a pause between words: the embedder goes on only in one (EMBED_QUIET)
                self.stop.wait(2 * EMBED_QUIET)
        self.last.set()


def index_step(session: Session, embed: bool) -> dict:
    done = threading.Event()
    report: dict = {}
    session.index(embed, lambda p: None, lambda r: (report.update(r), done.set()))
    assert done.wait(WAIT), "the index step hung"
    return report


def test_the_index_worker_races_completions_warmings_and_builds_cleanly(make_repo, backend):
    root = make_repo(APP, git=True)
    git(root, "checkout", "-q", "-b", "other")
    (root / "shop/tax.py").write_text(
        "def compute_tax(amount, rate, exempt=False):\n    return 0 if exempt else amount * rate\n"
    )
    git(root, "commit", "-q", "-am", "exempt")
    git(root, "checkout", "-q", "-")
    backend.reset()
    session = Session(
        Repository(root),
        backend=backend,
        generation=replace(GenerationConfig(), max_tokens=4, hard_deadline_ms=10**9),
    )
    typist = Typist(session)
    try:
        assert "error" not in index_step(session, embed=False)  # lexical only: no vectors
        typist.start()
        handles = {id(session.engine.context)}
        for round_ in range(ROUNDS):
            assert "error" not in index_step(session, embed=True)  # vectors arrive
            handles.add(id(session.engine.context))
            Repository(root).index(rebuild=True)  # another process sets the file aside
            assert "error" not in index_step(session, embed=round_ % 2 == 0)
            handles.add(id(session.engine.context))
            git(root, "checkout", "-q", "other" if round_ % 2 == 0 else "-")  # builds catch up
            with (root / "shop/ledger.py").open("a") as fh:  # a saved edit
                fh.write(f"\n\ndef total_{round_}(ledger):\n    return ledger\n")
            assert "error" not in index_step(session, embed=True)
            handles.add(id(session.engine.context))
    finally:
        typist.stop.set()
        assert typist.last.wait(WAIT), "the typist's last completion hung"
    session.engine._pool.submit(lambda: None).result(WAIT)  # the context thread is idle
    try:
        errors = [e for _, e in typist.replies if e is not None]
        assert not errors, errors
        assert not list(session.errors), list(session.errors)
        assert len(typist.replies) >= ROUNDS  # the typist typed through every round
        assert len(handles) > ROUNDS  # each rebuild and each arrival of vectors published one
        assert session.engine.context.vector is not None
        assert not session.engine.context.store.replaced()
    finally:
        session.close()


def test_a_handle_replaced_while_a_build_reads_it_is_closed_after_that_build(make_repo, backend):
    """A build stands still inside its reading of the index (held where it asks the store
    for a file's state, on the context thread) while another process rebuilds the index and
    the index worker publishes the new file. The build then goes on reading the old handle,
    which must still be open: it is closed after that build, not when it was replaced (before,
    the next completion closed it at once, and the held build failed)."""
    root = make_repo(APP, git=True)
    backend.reset()
    session = Session(
        Repository(root),
        backend=backend,
        generation=replace(GenerationConfig(), max_tokens=4, hard_deadline_ms=10**9),
    )
    try:
        assert "error" not in index_step(session, embed=False)
        engine = session.engine
        old = engine.context.store
        reached, release = threading.Event(), threading.Event()
        real_file_state = old.file_state

        def held_file_state(path):
            if threading.current_thread().name.startswith("context") and not reached.is_set():
                reached.set()
                assert release.wait(WAIT)
            return real_file_state(path)

        old.file_state = held_file_state  # the real query, once held on its way
        replies: list[tuple] = []
        done = threading.Event()
        session.complete(
            typed(len("    tax = compute_tax(")),
            lambda text: None,
            lambda r, e: (replies.append((r, e)), done.set()),
        )
        assert reached.wait(WAIT), "the build never read a file's state"
        Repository(root).index(rebuild=True)  # another process sets the file aside
        assert "error" not in index_step(session, embed=False)
        assert engine.context.store is not old  # published while the build still reads old
        warmed = threading.Event()
        session.warm(typed(len("    tax = compute_tax(s")))  # the next key's work meanwhile
        session._completions.submit(warmed.set)
        release.set()
        assert done.wait(WAIT) and warmed.wait(WAIT)
        engine._pool.submit(lambda: None).result(WAIT)  # the queued close has run
        assert replies and replies[0][1] is None
        assert not list(session.errors), list(session.errors)
        with pytest.raises(apsw.ConnectionClosedError):
            old.db.execute("SELECT 1")
    finally:
        release.set()
        session.close()
