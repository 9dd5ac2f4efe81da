"""One repository, as the entry points see it: its index file, indexing, search and status.

The CLI and (later) the Neovim bridge talk to this object only; it owns which store file
belongs to which root and turns a `--rebuild` into "set the old file aside, start fresh".
"""

from __future__ import annotations

import os
import time
from pathlib import Path

from .errors import IndexMissing
from .index.indexer import Indexer, IndexReport, Progress
from .locations import index_path, resolve_root
from .search.engine import SearchResponse, Searcher
from .store import Store


class Repository:
    def __init__(self, root: str | os.PathLike | None = None):
        self.root = resolve_root(root)
        self.index_file = index_path(self.root)

    def index(self, progress: Progress | None = None, rebuild: bool = False) -> IndexReport:
        """Build or update the index; `rebuild` first moves an unusable file aside (never deletes)."""
        if rebuild and self.index_file.exists():
            aside = self.index_file.with_name(
                f"{self.index_file.name}.old-{time.strftime('%Y%m%d-%H%M%S')}"
            )
            os.replace(self.index_file, aside)
            for suffix in ("-wal", "-shm"):
                side = Path(str(self.index_file) + suffix)
                if side.exists():
                    os.replace(side, Path(str(aside) + suffix))
        with Store(self.index_file) as store:
            return Indexer(self.root, store, progress).run()

    def open_store(self) -> Store:
        if not self.index_file.exists():
            raise IndexMissing(
                f"{self.root} has no index yet; run `repocontext index --root {self.root}` first"
            )
        return Store(self.index_file, create=False)

    def search(self, query: str, **options) -> SearchResponse:
        with self.open_store() as store:
            return Searcher(store).search(query, **options)

    def status(self, list_skipped: bool = False) -> dict:
        out: dict = {"root": str(self.root), "index": str(self.index_file)}
        if not self.index_file.exists():
            out["indexed"] = False
            return out
        with self.open_store() as store:
            out["indexed"] = True
            out.update(store.stats())
            indexed_at = store.get_meta("indexed_at")
            out["indexed_at"] = float(indexed_at) if indexed_at else None
            out["index_bytes"] = self.index_file.stat().st_size
            if list_skipped:
                out["skipped_files"] = [{"path": p, "reason": r} for p, r in store.skipped()]
        return out
