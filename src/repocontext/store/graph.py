"""References between symbols and files: calls, imports, inheritance; and a centrality, and how
often a name is called on an object (of a given name).

Rows are written with their file (see `Store.replace_file`), so they are as incremental as
the chunks. What needs the whole repository is done after each index run: resolving imports
to files (a new file can make an old import resolvable) and recounting centrality, the number
of distinct files that reference a name, a cheap GROUP BY over an indexed table.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING

from .records import ChunkHit, ReferenceHit
from .schema import HIT_COLUMNS, SCOPE_SQL

if TYPE_CHECKING:
    from .database import Store


class GraphTable:
    def __init__(self, store: Store):
        self.store = store
        self.db = store.db

    # --- maintenance after an index run ------------------------------------------------------
    def imports_to_resolve(
        self, paths: Sequence[str] | None = None
    ) -> list[tuple[int, str, str, str | None]]:
        """(rowid, importing file's path, module, language) of every import, or of the imports
        of `paths`: resolution depends on which files exist, so all are redone after a run that
        added or removed files, and only the rewritten files' after one that did not."""
        sql = (
            "SELECT r.rowid, f.path, r.name, f.language FROM refs r "
            "JOIN files f ON f.id = r.file_id WHERE r.kind = 'import'"
        )
        with self.store.guarded():
            if paths is None:
                return list(self.db.execute(sql))
            out: list[tuple[int, str, str, str | None]] = []
            for at in range(0, len(paths), 500):
                part = list(paths[at : at + 500])
                marks = ",".join("?" * len(part))
                out += self.db.execute(f"{sql} AND f.path IN ({marks})", part)
            return out

    def set_import_targets(self, targets: Sequence[tuple[str | None, int]]) -> None:
        with self.store.guarded(), self.db:
            self.db.executemany("UPDATE refs SET target_path = ? WHERE rowid = ?", targets)

    def recompute_centrality(self, names: Sequence[str] | None = None) -> None:
        """Count again the files referencing each name (every name, or only `names`: those
        of the references a run removed or wrote)."""
        count = (
            "INSERT INTO centrality(name, files) SELECT name, count(DISTINCT file_id) FROM refs "
            "WHERE kind IN ('call', 'inherit', 'import_name')"
        )
        with self.store.guarded(), self.db:
            if names is None:
                self.db.execute("DELETE FROM centrality")
                self.db.execute(count + " GROUP BY name")
                return
            names = list(names)
            for at in range(0, len(names), 500):
                part = names[at : at + 500]
                marks = ",".join("?" * len(part))
                self.db.execute(f"DELETE FROM centrality WHERE name IN ({marks})", part)
                self.db.execute(f"{count} AND name IN ({marks}) GROUP BY name", part)

    # --- reading -----------------------------------------------------------------------------
    def centrality(self, names: Sequence[str]) -> dict[str, int]:
        """Distinct files referencing each name (calls, imports of the name, inheritance)."""
        names = [n for n in set(names) if n]
        if not names:
            return {}
        marks = ",".join("?" * len(names))
        with self.store.guarded():
            return dict(
                self.db.execute(
                    f"SELECT name, files FROM centrality WHERE name IN ({marks})", names
                )
            )

    def member_calls(
        self, names: Sequence[str], receivers: Sequence[str] | None = None
    ) -> dict[str, int]:
        """How often each of `names` is called on an object (`x.name(`) in the index; with
        `receivers`, only on objects of those names (`ctx.exit(`, `self.ctx.exit(`)."""
        names = [n for n in set(names) if n]
        if not names or receivers is not None and not receivers:
            return {}
        marks = ",".join("?" * len(names))
        sql = (
            f"SELECT name, count(*) FROM refs WHERE name IN ({marks}) "
            "AND kind IN ('call', 'member') AND module IS NOT NULL"
        )
        params = list(names)
        if receivers is not None:
            sql += f" AND module IN ({','.join('?' * len(receivers))})"
            params += list(receivers)
        with self.store.guarded():
            return dict(self.db.execute(sql + " GROUP BY name", params))

    def callers(self, names: Sequence[str], limit: int, scope: str = "all") -> list[ChunkHit]:
        """Chunks that call or inherit from one of `names`; score = number of such references."""
        if not names:
            return []
        marks = ",".join("?" * len(names))
        sql = (
            f"SELECT {HIT_COLUMNS}, count(*) AS n FROM refs r "
            "JOIN chunks c ON c.id = r.src_chunk JOIN files f ON f.id = c.file_id "
            f"WHERE r.name IN ({marks}) AND r.kind IN ('call', 'inherit'){SCOPE_SQL[scope]} "
            "GROUP BY c.id ORDER BY n DESC, f.path, c.start_line LIMIT ?"
        )
        with self.store.guarded():
            return [ChunkHit(*row) for row in self.db.execute(sql, (*names, limit))]

    def references_to(self, name: str, limit: int, scope: str = "all") -> list[ReferenceHit]:
        """The chunks whose code names `name` in the graph: calls (on an object too), inherited
        bases and imports of the name, exact case. Each with its number of such edges, the
        first line that holds one, and whether any is more than an import."""
        sql = (
            f"SELECT {HIT_COLUMNS}, count(*) AS n, min(r.line), "
            "max(r.kind IN ('call', 'member', 'inherit')) FROM refs r "
            "JOIN chunks c ON c.id = r.src_chunk JOIN files f ON f.id = c.file_id "
            "WHERE r.name = ? AND r.kind IN ('call', 'member', 'inherit', 'import_name')"
            f"{SCOPE_SQL[scope]} GROUP BY c.id ORDER BY f.path, c.start_line LIMIT ?"
        )
        with self.store.guarded():
            return [
                ReferenceHit(ChunkHit(*row[:11]), row[11], bool(row[12]))
                for row in self.db.execute(sql, (name, limit))
            ]

    def imported_by(self, path: str) -> list[str]:
        """What the file `path` imports, resolved: files, and folders (a Go package)."""
        sql = (
            "SELECT DISTINCT r.target_path FROM refs r JOIN files f ON f.id = r.file_id "
            "WHERE f.path = ? AND r.kind = 'import' AND r.target_path IS NOT NULL"
        )
        with self.store.guarded():
            return [r[0] for r in self.db.execute(sql, (path,))]

    def importers(
        self, paths: Sequence[str], names: Sequence[str], limit: int, scope: str = "all"
    ) -> list[ChunkHit]:
        """Chunks holding an import of one of `paths` (resolved) or of one of `names`.

        Every import sits in some chunk (module-level code is cut into windows), so the
        reference's own chunk is the answer; no per-row lookup by line is needed.
        """
        if not paths and not names:
            return []
        pmarks = ",".join("?" * len(paths)) or "NULL"
        nmarks = ",".join("?" * len(names)) or "NULL"
        sql = (
            f"SELECT {HIT_COLUMNS}, count(*) AS n FROM refs r "
            "JOIN chunks c ON c.id = r.src_chunk JOIN files f ON f.id = c.file_id "
            f"WHERE ((r.kind = 'import' AND r.target_path IN ({pmarks})) "
            f"   OR (r.kind = 'import_name' AND r.name IN ({nmarks}))){SCOPE_SQL[scope]} "
            "GROUP BY c.id ORDER BY n DESC, f.path LIMIT ?"
        )
        with self.store.guarded():
            return [ChunkHit(*row) for row in self.db.execute(sql, (*paths, *names, limit))]

    def importer_counts(self, paths: Sequence[str]) -> dict[str, int]:
        """How many files import each of `paths` (resolved imports)."""
        if not paths:
            return {}
        marks = ",".join("?" * len(paths))
        with self.store.guarded():
            return dict(
                self.db.execute(
                    f"SELECT target_path, count(DISTINCT file_id) FROM refs WHERE target_path IN "
                    f"({marks}) GROUP BY target_path",
                    list(paths),
                )
            )

    def called_names(self, chunk_ids: Sequence[int]) -> list[str]:
        """Names called from the given chunks (their callees, unresolved)."""
        if not chunk_ids:
            return []
        marks = ",".join("?" * len(chunk_ids))
        with self.store.guarded():
            return [
                r[0]
                for r in self.db.execute(
                    f"SELECT DISTINCT name FROM refs WHERE src_chunk IN ({marks}) AND kind = 'call'",
                    list(chunk_ids),
                )
            ]

    def call_neighbours(self, chunk_id: int, name: str | None, most: int) -> set[int]:
        """The function and method chunks one call away from `chunk_id`: the definitions of
        the names it calls, and the chunks of source files that call its `name`. A name with
        more than `most` definitions is not followed either way (`get`, `String`: which one
        is meant is unknown), nor is a name called from more than 3 x `most` chunks (a
        helper everything uses says nothing of any one caller)."""
        called = self.called_names([chunk_id])
        with self.store.guarded():
            definitions = self._function_chunks([*called, *([name] if name else [])])
            out: set[int] = set()
            for callee in called:
                if 0 < len(found := definitions.get(callee, [])) <= most:
                    out.update(found)
            if name and len(definitions.get(name, [])) <= most:
                callers = [
                    r[0]
                    for r in self.db.execute(
                        "SELECT DISTINCT r.src_chunk FROM refs r JOIN files f ON f.id = r.file_id "
                        "WHERE r.name = ? AND r.kind = 'call' AND r.src_chunk IS NOT NULL "
                        "AND f.role = 'source' LIMIT ?",
                        (name, 3 * most + 1),
                    )
                ]
                if len(callers) <= 3 * most:
                    out.update(callers)
        out.discard(chunk_id)
        return out

    def _function_chunks(self, names: Sequence[str]) -> dict[str, list[int]]:
        """{name: ids of the function and method chunks of exactly that name} (the NOCASE
        index finds the candidates; a BINARY comparison would scan every chunk)."""
        wanted = set(names)
        if not wanted:
            return {}
        marks = ",".join("?" * len(wanted))
        out: dict[str, list[int]] = {}
        for chunk_id, found in self.db.execute(
            f"SELECT id, name FROM chunks WHERE name COLLATE NOCASE IN ({marks}) "
            "AND kind IN ('function', 'method')",
            list(wanted),
        ):
            if found in wanted:
                out.setdefault(found, []).append(chunk_id)
        return out

    def definition_paths(self, names: Sequence[str]) -> list[str]:
        if not names:
            return []
        marks = ",".join("?" * len(names))
        with self.store.guarded():
            return [
                r[0]
                for r in self.db.execute(
                    # the NOCASE indexes find the candidates (an OR of two columns, or a
                    # BINARY comparison, scanned every chunk); the exact case is checked after
                    f"SELECT DISTINCT f.path FROM chunks c JOIN files f ON f.id = c.file_id "
                    f"WHERE c.id IN (SELECT id FROM chunks WHERE name COLLATE NOCASE IN "
                    f"({marks}) UNION SELECT id FROM chunks WHERE qualname COLLATE NOCASE IN "
                    f"({marks})) AND (c.name IN ({marks}) OR c.qualname IN ({marks}))",
                    (*names, *names, *names, *names),
                )
            ]

    def counts(self) -> dict[str, int]:
        with self.store.guarded():
            out = dict(self.db.execute("SELECT kind, count(*) FROM refs GROUP BY kind"))
            out["imports_resolved"] = self.store._scalar(
                "SELECT count(*) FROM refs WHERE kind = 'import' AND target_path IS NOT NULL"
            )
            return out
