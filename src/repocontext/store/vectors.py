"""Chunk embeddings in sqlite-vec, keyed by the chunk's content hash.

An unchanged chunk is never embedded again: the catalogue maps content hash -> vector, and a
chunk that moves, or a file that is renamed, finds its vector by hash. The index records which
model made the vectors (`embed_model` in meta: name, dimensions, hash of the file); writing
vectors from another model first drops the old ones, so vectors of two models never mix.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING

from .records import ChunkHit
from .schema import HIT_COLUMNS, SCOPE_SQL

if TYPE_CHECKING:
    import numpy as np

    from .database import Store

# numpy is imported where vectors are handled, not with the module: a command-line search that
# needs no vector never pays for it.

_ROLE_ORDER_SQL = (
    "CASE f.role WHEN 'source' THEN 0 WHEN 'doc' THEN 1 WHEN 'tooling' THEN 2 ELSE 3 END"
)


KNN_MAX = 4096  # the largest k sqlite-vec's KNN accepts


class VectorTable:
    def __init__(self, store: Store):
        self.store = store
        self.db = store.db

    # --- identity ----------------------------------------------------------------------------
    def model_key(self) -> str | None:
        return self.store.get_meta("embed_model")

    def model_description(self) -> str | None:
        return self.store.get_meta("embed_model_description")

    def ensure(self, model_key: str, description: str, dims: int) -> bool:
        """Make the table ready for vectors of this model; True if old vectors were dropped."""
        with self.store.guarded(), self.db:
            current = self.model_key()
            if current == model_key and self._table_exists():
                return False
            dropped = current is not None
            self.db.execute("DROP TABLE IF EXISTS vectors")
            self.db.execute("DELETE FROM embeddings")
            self.db.execute(
                f"CREATE VIRTUAL TABLE vectors USING vec0("
                f"embedding float[{int(dims)}] distance_metric=cosine)"
            )
            for key, value in (
                ("embed_model", model_key),
                ("embed_model_description", description),
                ("embed_dims", str(dims)),
            ):
                self.db.execute(
                    "INSERT OR REPLACE INTO meta(key, value) VALUES (?, ?)", (key, value)
                )
        return dropped

    def _table_exists(self) -> bool:
        return self.store._scalar("SELECT count(*) FROM sqlite_schema WHERE name = 'vectors'") == 1

    # --- writing -----------------------------------------------------------------------------
    def missing(self) -> list[tuple]:
        """Chunks whose content has no vector yet, one per content hash: source first, then
        docs, then tests; each row (hash, path, qualname, kind, signature, doc, text)."""
        sql = (
            "SELECT c.content_hash, f.path, c.qualname, c.kind, c.signature, c.doc, c.text, "
            f"min({_ROLE_ORDER_SQL}) AS r "
            "FROM chunks c JOIN files f ON f.id = c.file_id "
            "WHERE NOT EXISTS (SELECT 1 FROM embeddings e WHERE e.content_hash = c.content_hash) "
            "GROUP BY c.content_hash ORDER BY r"
        )
        with self.store.guarded():
            return [row[:7] + (row[7],) for row in self.db.execute(sql)]

    def add(self, hashes: Sequence[str], matrix: np.ndarray) -> None:
        """Store one batch of vectors; a batch is one transaction, so a kill loses at most it."""
        import numpy as np

        with self.store.guarded(), self.db:
            for content_hash, row in zip(hashes, matrix):
                self.db.execute(
                    "INSERT OR IGNORE INTO embeddings(content_hash) VALUES (?)", (content_hash,)
                )
                emb_id = self.store._scalar(
                    "SELECT id FROM embeddings WHERE content_hash = ?", (content_hash,)
                )
                self.db.execute(
                    "INSERT OR REPLACE INTO vectors(rowid, embedding) VALUES (?, ?)",
                    (emb_id, np.asarray(row, dtype=np.float32).tobytes()),
                )

    def collect_garbage(self) -> int:
        """Drop vectors whose content no chunk has any more; returns how many."""
        with self.store.guarded(), self.db:
            stale = [
                r[0]
                for r in self.db.execute(
                    "SELECT id FROM embeddings e WHERE NOT EXISTS "
                    "(SELECT 1 FROM chunks c WHERE c.content_hash = e.content_hash)"
                )
            ]
            if stale and self._table_exists():
                self.db.executemany("DELETE FROM vectors WHERE rowid = ?", [(i,) for i in stale])
            self.db.executemany("DELETE FROM embeddings WHERE id = ?", [(i,) for i in stale])
        return len(stale)

    # --- reading -----------------------------------------------------------------------------
    def count(self) -> int:
        """Vectors stored (cheap: changes whenever vectors are added or collected)."""
        with self.store.guarded():
            return self.store._scalar("SELECT count(*) FROM embeddings") or 0

    def coverage(self) -> tuple[int, int]:
        """(chunks with a vector, chunks) over distinct contents."""
        with self.store.guarded():
            total = self.store._scalar("SELECT count(DISTINCT content_hash) FROM chunks") or 0
            done = (
                self.store._scalar(
                    "SELECT count(*) FROM embeddings e WHERE EXISTS "
                    "(SELECT 1 FROM chunks c WHERE c.content_hash = e.content_hash)"
                )
                or 0
            )
            return done, total

    def knn(self, vector: np.ndarray, k: int, scope: str = "all") -> list[ChunkHit]:
        """Nearest chunks by cosine similarity (sqlite-vec brute force); score = similarity."""
        import numpy as np

        if not self._table_exists():
            return []
        sql = (
            f"SELECT {HIT_COLUMNS}, 1.0 - m.distance FROM ("
            "  SELECT rowid, distance FROM vectors WHERE embedding MATCH ? AND k = ?) m "
            "JOIN embeddings e ON e.id = m.rowid "
            "JOIN chunks c ON c.content_hash = e.content_hash "
            f"JOIN files f ON f.id = c.file_id WHERE 1{SCOPE_SQL[scope]} "
            "ORDER BY m.distance, f.path, c.start_line"
        )
        inner = min(k if scope == "all" else k * 4, KNN_MAX)  # sqlite-vec's limit
        with self.store.guarded():
            rows = self.db.execute(sql, (np.asarray(vector, np.float32).tobytes(), inner))
            return [ChunkHit(*r) for r in rows][:k]

    def matrix(self) -> tuple[np.ndarray, np.ndarray]:
        """All vectors in memory: (embedding ids, float32 matrix), for a long-lived searcher."""
        import numpy as np

        if not self._table_exists():
            return np.zeros(0, dtype=np.int64), np.zeros((0, 0), dtype=np.float32)
        with self.store.guarded():
            rows = list(self.db.execute("SELECT rowid, embedding FROM vectors"))
        if not rows:
            return np.zeros(0, dtype=np.int64), np.zeros((0, 0), dtype=np.float32)
        ids = np.fromiter((r[0] for r in rows), dtype=np.int64, count=len(rows))
        mat = np.frombuffer(b"".join(r[1] for r in rows), dtype=np.float32)
        return ids, mat.reshape(len(rows), -1)

    def of_chunks(self, chunk_ids: Sequence[int]) -> dict[int, np.ndarray]:
        """The vectors of these chunks (those that have one), by chunk id."""
        import numpy as np

        if not chunk_ids or not self._table_exists():
            return {}
        marks = ",".join("?" * len(chunk_ids))
        sql = (
            "SELECT c.id, v.embedding FROM chunks c "
            "JOIN embeddings e ON e.content_hash = c.content_hash "
            f"JOIN vectors v ON v.rowid = e.id WHERE c.id IN ({marks})"
        )
        with self.store.guarded():
            rows = list(self.db.execute(sql, list(chunk_ids)))
        return {cid: np.frombuffer(blob, dtype=np.float32) for cid, blob in rows}

    def hits_for(self, scored: Sequence[tuple[int, float]], scope: str = "all") -> list[ChunkHit]:
        """Chunks for (embedding id, similarity) pairs, in the given order."""
        if not scored:
            return []
        order = {emb_id: i for i, (emb_id, _) in enumerate(scored)}
        score = dict(scored)
        marks = ",".join("?" * len(scored))
        sql = (
            f"SELECT {HIT_COLUMNS}, e.id FROM embeddings e "
            "JOIN chunks c ON c.content_hash = e.content_hash "
            f"JOIN files f ON f.id = c.file_id WHERE e.id IN ({marks}){SCOPE_SQL[scope]}"
        )
        with self.store.guarded():
            rows = list(self.db.execute(sql, [s[0] for s in scored]))
        rows.sort(key=lambda r: (order[r[-1]], r[1], r[2]))
        return [ChunkHit(*r[:-1], score[r[-1]]) for r in rows]  # type: ignore[call-arg]
