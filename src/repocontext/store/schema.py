"""The index's schema, one migration per version; `database.Store` applies them in order.

Version 2 added the graph (references between symbols and files) and the embeddings catalogue;
the sqlite-vec table itself is created when the first vectors are written, because its width
is the embedding model's. Version 3 keeps a definition's doc comment lines as written
(`chunks.lead`), which exact-string search reads with the chunk's text.
"""

from __future__ import annotations

APPLICATION_ID = 0x52435458  # "RCTX"
SCHEMA_VERSION = 3
SQLITE_MAGIC = b"SQLite format 3\x00"

FTS_TOKENIZER = "porter unicode61 tokenchars '_' remove_diacritics 2"
# Column order of chunks_fts; weights passed to bm25() follow it.
FTS_COLUMNS = ("path", "name", "signature", "doc", "body")

_MIGRATIONS: dict[int, str] = {
    1: f"""
    CREATE TABLE meta(key TEXT PRIMARY KEY, value TEXT NOT NULL) WITHOUT ROWID;
    CREATE TABLE files(
        id INTEGER PRIMARY KEY,
        path TEXT NOT NULL UNIQUE,
        language TEXT,
        size INTEGER NOT NULL,
        mtime_ns INTEGER NOT NULL,
        content_hash TEXT NOT NULL,
        role TEXT NOT NULL DEFAULT 'source',
        flags TEXT NOT NULL DEFAULT ''
    );
    CREATE TABLE chunks(
        id INTEGER PRIMARY KEY,
        file_id INTEGER NOT NULL REFERENCES files(id) ON DELETE CASCADE,
        start_line INTEGER NOT NULL,
        end_line INTEGER NOT NULL,
        kind TEXT NOT NULL,
        name TEXT,
        qualname TEXT,
        signature TEXT,
        doc TEXT,
        text TEXT NOT NULL,
        content_hash TEXT NOT NULL
    );
    CREATE INDEX chunks_file ON chunks(file_id);
    CREATE INDEX chunks_name ON chunks(name COLLATE NOCASE);
    CREATE INDEX chunks_qualname ON chunks(qualname COLLATE NOCASE);
    CREATE TABLE skipped(path TEXT PRIMARY KEY, reason TEXT NOT NULL) WITHOUT ROWID;
    CREATE VIRTUAL TABLE chunks_fts USING fts5(
        {", ".join(FTS_COLUMNS)}, content='', contentless_delete=1, tokenize="{FTS_TOKENIZER}");
    CREATE VIRTUAL TABLE chunks_tri USING fts5(
        body, content='', contentless_delete=1, tokenize='trigram', detail='none');
    """,
}

_MIGRATIONS[2] = """
CREATE TABLE refs(
    file_id INTEGER NOT NULL REFERENCES files(id) ON DELETE CASCADE,
    src_chunk INTEGER,            -- the chunk the reference sits in (NULL: none)
    kind TEXT NOT NULL,           -- call | import | import_name | inherit
    name TEXT NOT NULL,           -- simple name called / inherited / imported; module for import
    module TEXT,                  -- for import_name: the module it comes from
    target_path TEXT,             -- for import: the file it resolves to, when known
    line INTEGER NOT NULL
);
CREATE INDEX refs_name ON refs(name, kind);
CREATE INDEX refs_file ON refs(file_id);
CREATE INDEX refs_src ON refs(src_chunk);
CREATE INDEX refs_target ON refs(target_path) WHERE target_path IS NOT NULL;
CREATE TABLE centrality(name TEXT PRIMARY KEY, files INTEGER NOT NULL) WITHOUT ROWID;
CREATE TABLE embeddings(id INTEGER PRIMARY KEY, content_hash TEXT NOT NULL UNIQUE);
CREATE INDEX chunks_hash ON chunks(content_hash);
"""
_MIGRATIONS[3] = """
ALTER TABLE chunks ADD COLUMN lead TEXT;  -- its doc comment's lines (lang/chunking.py Chunk.lead)
"""
MIGRATIONS = _MIGRATIONS

# The columns every query returns, in ChunkHit's order, and the --scope filters.
HIT_COLUMNS = """c.id, f.path, c.start_line, c.end_line, c.kind, c.name, c.qualname, c.signature,
    f.role, f.flags"""

SCOPE_SQL = {
    "all": "",
    "src": " AND f.role = 'source'",
    "tests": " AND f.role = 'test'",
}
