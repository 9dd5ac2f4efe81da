"""Chunk embeddings in sqlite-vec, keyed by the chunk's content hash.

An unchanged chunk is never embedded again: the catalogue maps content hash -> vector, and a
chunk that moves, or a file that is renamed, finds its vector by hash. The index records which
model made the vectors (`embed_model` in meta: name, dimensions, hash of the file); writing
vectors from another model first drops the old ones, so vectors of two models never mix.

A passage longer than the model reads (128 tokens for the default) has its later windows
embedded too, in `window_vectors`, and a chunk is as close to a query as its closest window:
a long function's logic past its first lines (logrus's `Entry.log`, gin's
`findCaseInsensitivePathRec`) was invisible to the meaning retriever. `windows` lists the
passages whose later windows were embedded (none, for a short one), so an index made before
them gets them on its next embedding run; a window's rowid is its passage's catalogue id times
`WINDOW_SLOTS` plus its place, so no other table maps one to the other.
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
WINDOW_SLOTS = 64  # rowids per passage in window_vectors: its later windows are 1..63


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
                self._ensure_windows(dims)  # an index made before windows were embedded
                return False
            dropped = current is not None
            for table in ("vectors", "window_vectors", "windows"):
                self.db.execute(f"DROP TABLE IF EXISTS {table}")
            self.db.execute("DELETE FROM embeddings")
            self.db.execute(
                f"CREATE VIRTUAL TABLE vectors USING vec0("
                f"embedding float[{int(dims)}] distance_metric=cosine)"
            )
            self._ensure_windows(dims)
            for key, value in (
                ("embed_model", model_key),
                ("embed_model_description", description),
                ("embed_dims", str(dims)),
            ):
                self.db.execute(
                    "INSERT OR REPLACE INTO meta(key, value) VALUES (?, ?)", (key, value)
                )
        return dropped

    def _ensure_windows(self, dims: int) -> None:
        self.db.execute(
            "CREATE TABLE IF NOT EXISTS windows("
            "embedding_id INTEGER PRIMARY KEY, parts INTEGER NOT NULL)"
        )
        self.db.execute(
            f"CREATE VIRTUAL TABLE IF NOT EXISTS window_vectors USING vec0("
            f"embedding float[{int(dims)}] distance_metric=cosine)"
        )

    def _table_exists(self, name: str = "vectors") -> bool:
        return self.store._scalar("SELECT count(*) FROM sqlite_schema WHERE name = ?", (name,)) == 1

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
            written = []
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
                written.append(emb_id)
            if written and self._table_exists("windows"):  # an id an older version reused
                marks = ",".join("?" * len(written))
                self._drop_windows(
                    [
                        i
                        for (i,) in self.db.execute(
                            f"SELECT embedding_id FROM windows WHERE embedding_id IN ({marks})",
                            written,
                        )
                    ]
                )

    def unwindowed(self, roles: Sequence[str] = ("source",)) -> list[tuple]:
        """Passages with a vector whose later windows were not looked at yet, in files of these
        roles; each row (embedding id, path, qualname, kind, signature, doc, text)."""
        if not self._table_exists("windows"):
            return []
        sql = (
            "SELECT e.id, f.path, c.qualname, c.kind, c.signature, c.doc, c.text "
            f"{_passages_in(roles, unwindowed=True)} GROUP BY e.id ORDER BY e.id"
        )
        with self.store.guarded():
            return list(self.db.execute(sql, list(roles)))

    def windows_pending(self, most: int, roles: Sequence[str] = ("source",)) -> int:
        """How many passages an embedding run would still window (those `unwindowed` lists;
        every one when `[embedding] windows` changed since they were made; none when it is
        0): what `status` reports while the later windows follow the first vectors."""
        if most <= 0:
            return 0
        made_as = self.store.get_meta("embed_windows")
        redo = not self._table_exists("windows") or made_as not in (None, str(most))
        sql = f"SELECT count(DISTINCT e.id) {_passages_in(roles, unwindowed=not redo)}"
        with self.store.guarded():
            return self.store._scalar(sql, list(roles)) or 0

    def keep_windows_for(self, most: int) -> None:
        """Forget every later window when `[embedding] windows` changed since they were made:
        the passages are windowed again as it now says (none, for 0)."""
        if not self._table_exists("windows") or self.store.get_meta("embed_windows") == str(most):
            return
        with self.store.guarded(), self.db:
            self.db.execute("DELETE FROM windows")
            self.db.execute("DELETE FROM window_vectors")
            self.db.execute(
                "INSERT OR REPLACE INTO meta(key, value) VALUES ('embed_windows', ?)", (str(most),)
            )

    def add_windows(self, windows: dict[int, np.ndarray]) -> None:
        """The later windows' vectors of these passages (by embedding id; no rows: a passage
        the model reads whole), in one transaction."""
        import numpy as np

        with self.store.guarded(), self.db:
            for emb_id, matrix in windows.items():
                parts = min(len(matrix), WINDOW_SLOTS - 1)
                for part in range(parts):
                    self.db.execute(
                        "INSERT OR REPLACE INTO window_vectors(rowid, embedding) VALUES (?, ?)",
                        (
                            emb_id * WINDOW_SLOTS + part + 1,
                            np.asarray(matrix[part], dtype=np.float32).tobytes(),
                        ),
                    )
                self.db.execute(
                    "INSERT OR REPLACE INTO windows(embedding_id, parts) VALUES (?, ?)",
                    (emb_id, parts),
                )

    def _drop_windows(self, emb_ids: Sequence[int]) -> None:
        """Forget these passages' later windows (in the caller's transaction)."""
        if not emb_ids or not self._table_exists("windows"):
            return
        slots = ",".join("?" * (WINDOW_SLOTS - 1))
        self.db.executemany(
            f"DELETE FROM window_vectors WHERE rowid IN ({slots})",
            [tuple(i * WINDOW_SLOTS + p for p in range(1, WINDOW_SLOTS)) for i in emb_ids],
        )
        self.db.executemany("DELETE FROM windows WHERE embedding_id = ?", [(i,) for i in emb_ids])

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
            self._drop_windows(stale)
            self.db.executemany("DELETE FROM embeddings WHERE id = ?", [(i,) for i in stale])
        return len(stale)

    # --- reading -----------------------------------------------------------------------------
    def count(self) -> int:
        """Vectors stored (cheap: changes whenever vectors are added or collected)."""
        with self.store.guarded():
            return self.store._scalar("SELECT count(*) FROM embeddings") or 0

    def stored(self) -> tuple[int, int]:
        """(passages with a vector, passages whose later windows were looked at), in one
        query: changes whenever vectors or windows are added or collected."""
        windowed = "(SELECT count(*) FROM windows)" if self._table_exists("windows") else "0"
        with self.store.guarded():
            row = self.db.execute(f"SELECT (SELECT count(*) FROM embeddings), {windowed}")
            passages, windows = next(row)
            return passages, windows

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
        """Nearest chunks by cosine similarity (sqlite-vec brute force), each as near as the
        nearest window of its passage; score = similarity."""
        import numpy as np

        if not self._table_exists():
            return []
        inner = min(k if scope == "all" else k * 4, KNN_MAX)  # sqlite-vec's limit
        blob = np.asarray(vector, np.float32).tobytes()
        nearest = "SELECT rowid, distance FROM {} WHERE embedding MATCH ? AND k = ?"
        with self.store.guarded():
            best = {
                emb_id: 1.0 - distance
                for emb_id, distance in self.db.execute(nearest.format("vectors"), (blob, inner))
            }
            if self._table_exists("window_vectors"):
                for rowid, distance in self.db.execute(
                    nearest.format("window_vectors"), (blob, inner)
                ):
                    emb_id = rowid // WINDOW_SLOTS
                    best[emb_id] = max(best.get(emb_id, -1.0), 1.0 - distance)
        scored = sorted(best.items(), key=lambda pair: -pair[1])[:inner]
        return self.hits_for(scored, scope)[:k]

    def matrix(self) -> tuple[np.ndarray, np.ndarray]:
        """All vectors in memory, later windows included, for a long-lived searcher:
        (embedding ids, float32 matrix), sorted by id, so a passage's rows are adjacent."""
        import numpy as np

        if not self._table_exists():
            return np.zeros(0, dtype=np.int64), np.zeros((0, 0), dtype=np.float32)
        with self.store.guarded():
            rows = list(self.db.execute("SELECT rowid, embedding FROM vectors"))
            if rows and self._table_exists("window_vectors"):
                rows += self.db.execute(
                    f"SELECT rowid / {WINDOW_SLOTS}, embedding FROM window_vectors"
                )
        if not rows:
            return np.zeros(0, dtype=np.int64), np.zeros((0, 0), dtype=np.float32)
        ids = np.fromiter((r[0] for r in rows), dtype=np.int64, count=len(rows))
        mat = np.frombuffer(b"".join(r[1] for r in rows), dtype=np.float32)
        order = np.argsort(ids, kind="stable")
        return ids[order], mat.reshape(len(rows), -1)[order]

    def of_chunks(self, chunk_ids: Sequence[int]) -> dict[int, np.ndarray]:
        """The vectors of these chunks (those that have one), by chunk id: one row for the
        passage's start, one for each later window."""
        import numpy as np

        if not chunk_ids or not self._table_exists():
            return {}
        marks = ",".join("?" * len(chunk_ids))
        sql = (
            "SELECT c.id, e.id, v.embedding FROM chunks c "
            "JOIN embeddings e ON e.content_hash = c.content_hash "
            f"JOIN vectors v ON v.rowid = e.id WHERE c.id IN ({marks})"
        )
        with self.store.guarded():
            rows = list(self.db.execute(sql, list(chunk_ids)))
            later: dict[int, list[bytes]] = {}
            if rows and self._table_exists("windows"):
                emb_ids = sorted({r[1] for r in rows})
                parts = list(
                    self.db.execute(
                        "SELECT embedding_id, parts FROM windows WHERE parts > 0 AND "
                        f"embedding_id IN ({','.join('?' * len(emb_ids))})",
                        emb_ids,
                    )
                )
                rowids = [e * WINDOW_SLOTS + p for e, n in parts for p in range(1, n + 1)]
                for i in range(0, len(rowids), 500):
                    batch = rowids[i : i + 500]
                    for rowid, blob in self.db.execute(
                        "SELECT rowid, embedding FROM window_vectors WHERE rowid IN "
                        f"({','.join('?' * len(batch))})",
                        batch,
                    ):
                        later.setdefault(rowid // WINDOW_SLOTS, []).append(blob)
        found = {}
        for cid, emb_id, blob in rows:
            blobs = [blob, *later.get(emb_id, [])]
            found[cid] = np.frombuffer(b"".join(blobs), dtype=np.float32).reshape(len(blobs), -1)
        return found

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


def _passages_in(roles: Sequence[str], unwindowed: bool) -> str:
    """FROM and WHERE of the passages with a vector in files of `roles` (one `?` each), only
    those whose later windows were not looked at yet if `unwindowed`."""
    marks = ",".join("?" * len(roles))
    sql = (
        "FROM embeddings e JOIN chunks c ON c.content_hash = e.content_hash "
        f"JOIN files f ON f.id = c.file_id WHERE f.role IN ({marks})"
    )
    if unwindowed:
        sql += " AND NOT EXISTS (SELECT 1 FROM windows w WHERE w.embedding_id = e.id)"
    return sql
