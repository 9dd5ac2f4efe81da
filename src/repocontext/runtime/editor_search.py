"""`:RepoContext search` in the editor: a searcher kept per project for the whole session.

On the command line a question pays for loading its models and reading the vectors from disk
(sqlite-vec scans them: 60-80 ms on Django's 45,750 chunks). The editor keeps both: the models
are loaded once per process, and the kept searcher holds the vectors in memory
(`VectorRetriever`'s cache, reloaded when their number changes), so a question costs the search
itself (bench/results/question_speed.md). The working tree is checked for changes beside the
search rather than before it (a stat per file: about 20 ms on Django); a change found brings
the index up to date and the question is asked again, so the answer is always the tree's as it
is now, as on the command line (`Repository.search`).

The session's other reads of the index for `:RepoContext` (definition, references, context)
use the same kept connection (`reading`), one at a time with the questions, rather than open
the index again for each.
"""

from __future__ import annotations

import threading
from collections.abc import Callable
from typing import TYPE_CHECKING, Any, TypeVar

from .threads import single_pool

if TYPE_CHECKING:
    from ..search.engine import Searcher
    from ..search.results import SearchResponse
    from ..service import Repository
    from ..store import Store

T = TypeVar("T")


class EditorSearch:
    def __init__(self, repo: Repository):
        self.repo = repo
        self._lock = threading.Lock()  # one question at a time on the kept connection
        # (the index file's identity, the searcher's store, the searcher, the tree check's own
        # store: one SQLite connection serves one thread at a time); a rebuilt index is a new file
        self._kept: tuple[tuple[int, int], Store, Searcher, Store] | None = None
        self._checker = single_pool("tree-check")

    def search(self, query: str, **options: Any) -> SearchResponse:
        with self._lock:
            store, searcher, checks = self._searcher()
            checking = self._checker.submit(self.repo.tree_is_stale, checks)
            try:
                response = searcher.search(query, **options)
            finally:
                stale = checking.result()
            if stale:
                self.repo.catch_up(store)
                response = searcher.search(query, **options)
            return response

    def reading(self, read: Callable[[Store], T]) -> T:
        """`read(store)` on the kept connection, between questions (the caller checks the
        tree if it needs to: a look-up does, as `Repository.definition` does)."""
        with self._lock:
            store, _, _ = self._searcher()
            return read(store)

    def close(self) -> None:
        with self._lock:
            self._drop()
        self._checker.shutdown(wait=False)

    def _searcher(self) -> tuple[Store, Searcher, Store]:
        try:
            st = self.repo.index_file.stat()
            identity = (st.st_dev, st.st_ino)
        except OSError:
            identity = (0, 0)  # no index: open_store says what to do
        if self._kept is None or self._kept[0] != identity:
            self._drop()
            store = self.repo.open_store()
            searcher = self.repo.searcher(store, cache_vectors=True)
            self._kept = (identity, store, searcher, self.repo.open_store())
        return self._kept[1], self._kept[2], self._kept[3]

    def _drop(self) -> None:
        if self._kept is not None:
            _, store, searcher, checks = self._kept
            self._kept = None
            searcher.close()
            store.close()
            checks.close()
