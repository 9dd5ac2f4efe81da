"""The read side of the index: lexical and symbol queries over chunks and files.

Mixed into `Store` (database.py), which owns the connection, its locks and every write; these
are the queries the retrievers, the context engine and the look-ups ask (about twenty, each
one statement). The vectors and the graph have tables of their own (vectors.py, graph.py).
"""

from __future__ import annotations

from collections.abc import Sequence
from contextlib import AbstractContextManager
from typing import Any

import apsw

from .records import ChunkHit, FileState
from .schema import HIT_COLUMNS, SCOPE_SQL

TRIGRAM_CANDIDATES = 5000  # chunks a literal search reads at most (trigram_search)
# What a literal is looked for in: a chunk's doc comment lines (`lead`), then its text, as the
# trigram table holds them (ChunkRecord.literal_text)
_LITERAL_TEXT = "CASE WHEN c.lead IS NULL THEN c.text ELSE c.lead || char(10) || c.text END"
# A literal found in the doc comment only is shown from the comment's first line
_LITERAL_START = (
    "CASE WHEN c.lead IS NULL OR instr(lower(c.text), lower(?1)) > 0 THEN c.start_line "
    "ELSE c.start_line - 1 - length(c.lead) + length(replace(c.lead, char(10), '')) END"
)
_LITERAL_COLUMNS = HIT_COLUMNS.replace("c.start_line", _LITERAL_START, 1)


class ChunkQueries:
    """The queries of `Store`; what they need of it is declared here."""

    db: apsw.Connection
    _term_counts: dict[tuple[str, int], int]

    def guarded(self) -> AbstractContextManager[None]:
        raise NotImplementedError  # Store.guarded

    def _scalar(self, sql: str, params: Sequence[Any] = ()) -> Any:
        raise NotImplementedError  # Store._scalar

    def bm25_search(
        self, match: str, weights: Sequence[float], limit: int, scope: str = "all"
    ) -> list[ChunkHit]:
        """FTS5 BM25 over the five columns, weighted per column (BM25F in spirit).

        Scores are returned positive, higher is better.
        """
        wsql = ", ".join(str(float(w)) for w in weights)
        # Rank inside FTS5 first and join only the few rows kept; a scope filter needs more
        # candidates since it drops some after ranking.
        inner = limit if scope == "all" else limit * 8
        sql = (
            f"SELECT {HIT_COLUMNS}, m.s FROM ("
            f"  SELECT rowid, -bm25(chunks_fts, {wsql}) AS s FROM chunks_fts"
            "   WHERE chunks_fts MATCH ? ORDER BY s DESC LIMIT ?) m "
            "JOIN chunks c ON c.id = m.rowid JOIN files f ON f.id = c.file_id "
            f"WHERE 1{SCOPE_SQL[scope]} ORDER BY m.s DESC LIMIT ?"
        )
        return self._hits(sql, (match, inner, limit))

    def term_counts(self, matches: Sequence[str], cap: int) -> list[int]:
        """How many chunks each FTS5 expression matches, counted up to `cap`: how common a
        term is, at a bounded cost (the counting stops at `cap` rows), kept for later queries."""
        counts = []
        with self.guarded():
            for match in matches:
                count = self._term_counts.get((match, cap))
                if count is None:
                    count = self._scalar(
                        "SELECT count(*) FROM (SELECT rowid FROM chunks_fts "
                        "WHERE chunks_fts MATCH ? LIMIT ?)",
                        (match, cap),
                    )
                    if len(self._term_counts) > 20_000:
                        self._term_counts.clear()
                    self._term_counts[(match, cap)] = count
                counts.append(count)
        return counts

    def trigram_search(
        self, match: str, literal: str, limit: int, scope: str = "all"
    ) -> list[ChunkHit]:
        """Chunks containing `literal` (ASCII case-insensitive), in their text or in the doc
        comment above it, as grep would find it; a chunk found by its doc comment alone starts
        at the comment's first line.

        The trigram table stores no positions (detail=none, a third of the size), so `match`
        (an AND of the literal's trigrams) only narrows the candidates; instr() on the chunk
        text confirms each one. Score: occurrences of the literal in the chunk. At most
        TRIGRAM_CANDIDATES candidates are read, the first indexed: a literal found in every
        copy of a vendored project must not cost a read of each.
        """
        sql = (
            f"SELECT {_LITERAL_COLUMNS}, "
            f"(length({_LITERAL_TEXT}) - length(replace(lower({_LITERAL_TEXT}), lower(?1), '')))"
            " * 1.0 / max(length(?1), 1) AS s "
            "FROM (SELECT rowid FROM chunks_tri WHERE chunks_tri MATCH ?2 LIMIT ?4) t "
            "JOIN chunks c ON c.id = t.rowid JOIN files f ON f.id = c.file_id "
            f"WHERE instr(lower({_LITERAL_TEXT}), lower(?1)) > 0"
            f"{SCOPE_SQL[scope]} ORDER BY s DESC, f.path, c.start_line LIMIT ?3"
        )
        return self._hits(sql, (literal, match, limit, TRIGRAM_CANDIDATES))

    def symbols_named(self, names: Sequence[str], limit: int, scope: str = "all") -> list[ChunkHit]:
        """Chunks that define one of `names` (case-insensitive), by simple or qualified name."""
        if not names:
            return []
        marks = ",".join("?" * len(names))
        sql = (
            f"SELECT {HIT_COLUMNS}, 0.0 FROM chunks c JOIN files f ON f.id = c.file_id "
            f"WHERE c.id IN (SELECT id FROM chunks WHERE name COLLATE NOCASE IN ({marks}) "
            f"UNION SELECT id FROM chunks WHERE qualname COLLATE NOCASE IN ({marks}))"
            f"{SCOPE_SQL[scope]} LIMIT ?"
        )
        return self._hits(sql, (*names, *names, limit))

    def _hits(self, sql: str, params: Sequence) -> list[ChunkHit]:
        with self.guarded():
            return [ChunkHit(*row) for row in self.db.execute(sql, params)]

    def symbols_with_prefix(self, prefix: str, limit: int, scope: str = "all") -> list[ChunkHit]:
        """Definitions whose name starts with `prefix` (a word being typed), shortest first.

        A range on the NOCASE name index rather than LIKE: LIKE cannot use that index, and a
        scan of every chunk costs tens of milliseconds on a large repository.
        """
        if len(prefix) < 3:
            return []
        sql = (
            f"SELECT {HIT_COLUMNS}, 0.0 FROM chunks c JOIN files f ON f.id = c.file_id "
            "WHERE c.name COLLATE NOCASE >= ?1 AND c.name COLLATE NOCASE < ?2"
            f"{SCOPE_SQL[scope]} ORDER BY length(c.name), f.path LIMIT ?3"
        )
        return self._hits(sql, (prefix, prefix + "\U0010ffff", limit))

    def definition_heads(self, limit: int = 200_000) -> list[tuple[str, str, str, str]]:
        """Every named definition's (name, qualified name, head, path): the names and
        signatures the decoder is steered with (complete/steering/), read once per index
        version. Tests are left out: their helpers are not what the code calls."""
        sql = (
            "SELECT c.name, coalesce(c.qualname, c.name), coalesce(c.signature, ''), f.path "
            "FROM chunks c JOIN files f ON f.id = c.file_id WHERE c.name IS NOT NULL"
            f"{SCOPE_SQL['src']} LIMIT ?"
        )
        with self.guarded():
            return [tuple(row) for row in self.db.execute(sql, (limit,))]

    def source_hashes(self) -> dict[str, str]:
        """Each source file's content hash (tests, generated and vendored files left out):
        which files' lines the completion copies from have changed since it last read them."""
        sql = f"SELECT f.path, f.content_hash FROM files f WHERE 1 = 1{SCOPE_SQL['src']}"
        with self.guarded():
            return {str(path): str(digest) for path, digest in self.db.execute(sql)}

    def source_chunks_of(self, paths: Sequence[str]) -> list[tuple[str, int, int, str]]:
        """(path, start line, end line, text) of every chunk of `paths`: their lines, as the
        index holds them, for the completion's copy of lines the repository has written."""
        out: list[tuple[str, int, int, str]] = []
        for i in range(0, len(paths), 500):
            part = list(paths[i : i + 500])
            marks = ",".join("?" * len(part))
            sql = (
                "SELECT f.path, c.start_line, c.end_line, c.text FROM chunks c "
                f"JOIN files f ON f.id = c.file_id WHERE f.path IN ({marks})"
            )
            with self.guarded():
                out.extend(tuple(row) for row in self.db.execute(sql, part))
        return out

    def members_of(
        self, class_names: Sequence[str], paths: Sequence[str] | None = None, limit: int = 20
    ) -> list[ChunkHit]:
        """Container chunks (class outlines) named one of `class_names`, in `paths` if given."""
        if not class_names:
            return []
        marks = ",".join("?" * len(class_names))
        params: list = list(class_names) * 2
        # COLLATE NOCASE lets the name index answer; the exact match is checked after it
        where = (
            f"c.name COLLATE NOCASE IN ({marks}) AND c.name IN ({marks}) AND c.kind IN "
            "('class', 'struct', 'interface', 'trait', 'impl', 'enum', 'module', 'type')"
        )
        if paths:
            where += f" AND f.path IN ({','.join('?' * len(paths))})"
            params += list(paths)
        sql = (
            f"SELECT {HIT_COLUMNS}, 0.0 FROM chunks c JOIN files f ON f.id = c.file_id "
            f"WHERE {where} LIMIT ?"
        )
        return self._hits(sql, (*params, limit))

    def definitions_at(self, targets: Sequence[tuple[str, str]]) -> list[ChunkHit]:
        """The chunks that define each (path, qualname): a class's outline, a method."""
        if not targets:
            return []
        pairs = " OR ".join("(f.path = ? AND c.qualname = ?)" for _ in targets)
        params = [x for pair in targets for x in pair]
        sql = (
            f"SELECT {HIT_COLUMNS}, 0.0 FROM chunks c JOIN files f ON f.id = c.file_id "
            f"WHERE c.qualname COLLATE NOCASE IN ({','.join('?' * len(targets))}) "
            f"AND ({pairs}) "
            "ORDER BY f.path, c.start_line"
        )
        return self._hits(sql, (*[q for _, q in targets], *params))

    def class_at(self, path: str, line: int) -> ChunkHit | None:
        """The type definition (class, struct, interface, ...) whose header holds `line`."""
        sql = (
            f"SELECT {HIT_COLUMNS}, 0.0 FROM chunks c JOIN files f ON f.id = c.file_id "
            "WHERE f.path = ?1 AND c.start_line <= ?2 AND c.end_line >= ?2 AND c.kind IN "
            "('class', 'struct', 'interface', 'trait', 'enum', 'type') "
            "ORDER BY c.end_line - c.start_line LIMIT 1"
        )
        hits = self._hits(sql, (path, line))
        return hits[0] if hits else None

    def chunk_at(self, path: str, line: int) -> ChunkHit | None:
        """The innermost chunk holding `line` of `path` (a method before its class)."""
        sql = (
            f"SELECT {HIT_COLUMNS}, 0.0 FROM chunks c JOIN files f ON f.id = c.file_id "
            "WHERE f.path = ?1 AND c.start_line <= ?2 AND c.end_line >= ?2 "
            "ORDER BY c.end_line - c.start_line LIMIT 1"
        )
        hits = self._hits(sql, (path, line))
        return hits[0] if hits else None

    def chunks_in(self, paths: Sequence[str], kinds: Sequence[str] = ()) -> list[ChunkHit]:
        """Every chunk of the given files (of the given kinds, if any), in file and line order:
        the rest of a file the search found through one chunk."""
        if not paths:
            return []
        where = f"f.path IN ({','.join('?' * len(paths))})"
        if kinds:
            where += f" AND c.kind IN ({','.join('?' * len(kinds))})"
        sql = (
            f"SELECT {HIT_COLUMNS}, 0.0 FROM chunks c JOIN files f ON f.id = c.file_id "
            f"WHERE {where} ORDER BY f.path, c.start_line"
        )
        return self._hits(sql, (*paths, *kinds))

    def paths_ending_with(self, suffix: str, limit: int = 5) -> list[str]:
        """Indexed paths equal to `suffix` or ending with "/" + it (a stack frame's file)."""
        with self.guarded():
            rows = self.db.execute(
                "SELECT path FROM files WHERE path = ?1 OR substr(path, -length(?1) - 1) = "
                "'/' || ?1 ORDER BY length(path) LIMIT ?2",
                (suffix, limit),
            )
            return [r[0] for r in rows]

    def paths_present(self, paths: Sequence[str]) -> set[str]:
        """Those of `paths` that the index holds."""
        found: set[str] = set()
        with self.guarded():
            for at in range(0, len(paths), 500):
                part = paths[at : at + 500]
                marks = ",".join("?" * len(part))
                rows = self.db.execute(f"SELECT path FROM files WHERE path IN ({marks})", part)
                found.update(r[0] for r in rows)
        return found

    def classes_named(self, name: str, limit: int = 10) -> list[ChunkHit]:
        """Type definitions (class, struct, interface, ...) with this exact name."""
        sql = (
            f"SELECT {HIT_COLUMNS}, 0.0 FROM chunks c JOIN files f ON f.id = c.file_id "
            "WHERE c.name COLLATE NOCASE = ?1 AND c.name = ?1 AND c.kind IN ('class', "
            "'struct', 'interface', 'trait', "
            "'enum', 'type') ORDER BY f.role = 'source' DESC, f.path LIMIT ?2"
        )
        return self._hits(sql, (name, limit))

    def file_state(self, path: str) -> FileState | None:
        with self.guarded():
            row = self.db.execute(
                "SELECT id, size, mtime_ns, content_hash FROM files WHERE path = ?", (path,)
            ).fetchone()
            return FileState(*row) if row else None

    def chunk_hashes(self, chunk_ids: Sequence[int]) -> dict[int, str]:
        """Each chunk's content hash (of its text): identical chunks share one."""
        if not chunk_ids:
            return {}
        marks = ",".join("?" * len(chunk_ids))
        sql = f"SELECT id, content_hash FROM chunks WHERE id IN ({marks})"
        with self.guarded():
            return dict(self.db.execute(sql, chunk_ids))

    def first_pieces(self, chunk_ids: Sequence[int]) -> dict[int, int]:
        """Each chunk's definition, as the id of its first piece: the chunker cuts a long
        definition into windows that carry its name and kind, each touching or overlapping the
        one before (lang/chunking.py). Two definitions of one name in a file (a Python `def`
        under `if` and another under `else`) do not touch, and stay two. A chunk that is no
        piece is its own first."""
        if not chunk_ids:
            return {}
        marks = ",".join("?" * len(chunk_ids))
        sql = f"""SELECT c.id, c.file_id, c.qualname, c.kind, c.start_line, c.end_line
                  FROM chunks c JOIN (SELECT DISTINCT file_id, qualname, kind FROM chunks
                                      WHERE id IN ({marks}) AND qualname IS NOT NULL) d
                  ON c.file_id = d.file_id AND c.qualname = d.qualname AND c.kind = d.kind
                  ORDER BY c.file_id, c.qualname, c.kind, c.start_line, c.id"""
        with self.guarded():
            rows: list[Any] = self.db.execute(sql, list(chunk_ids)).fetchall()
        first: dict[int, int] = {}
        definition, head, reach = None, 0, 0
        for chunk_id, file_id, qualname, kind, start, end in rows:
            if (file_id, qualname, kind) != definition or start > reach + 1:
                definition, head, reach = (file_id, qualname, kind), chunk_id, end
            reach = max(reach, end)
            first[chunk_id] = head
        return {chunk_id: first.get(chunk_id, chunk_id) for chunk_id in chunk_ids}

    def chunks_per_file(self, paths: Sequence[str]) -> dict[str, int]:
        """How many chunks each of these files has in the index."""
        if not paths:
            return {}
        marks = ",".join("?" * len(paths))
        sql = f"""SELECT f.path, count(*) FROM files f JOIN chunks c ON c.file_id = f.id
                  WHERE f.path IN ({marks}) GROUP BY f.id"""
        with self.guarded():
            return dict(self.db.execute(sql, list(paths)))

    def chunk_texts(self, chunk_ids: Sequence[int]) -> dict[int, str]:
        if not chunk_ids:
            return {}
        marks = ",".join("?" * len(chunk_ids))
        with self.guarded():
            rows = self.db.execute(f"SELECT id, text FROM chunks WHERE id IN ({marks})", chunk_ids)
            return dict(rows)
