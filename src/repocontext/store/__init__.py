"""The SQLite file of one repository; the only package that writes SQL.

database.Store   opening, schema migrations, locking, writing files and chunks
queries          the lexical and symbol queries (mixed into Store)
vectors          embeddings in sqlite-vec, keyed by content hash
graph            references (calls, imports, inheritance) and centrality
schema, records  the tables, and the plain records that cross this boundary
files            private folders and files, the lock files beside the index
"""

from .database import Store, sqlite_versions
from .files import index_writer
from .records import ChunkHit, ChunkRecord, FileRecord, FileState, ReferenceHit, RefRecord

__all__ = [
    "ChunkHit",
    "ChunkRecord",
    "FileRecord",
    "FileState",
    "RefRecord",
    "ReferenceHit",
    "Store",
    "index_writer",
    "sqlite_versions",
]
