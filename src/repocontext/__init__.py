"""repocontext: repository-aware local code completion and code search.

The public face of the engine; the layers below are importable but these names are the API.
"""

from .errors import (
    IndexBusy,
    IndexCorrupt,
    IndexForeign,
    IndexMissing,
    IndexTooNew,
    QueryError,
    RepoContextError,
    RootError,
)
from .search.engine import Searcher, SearchResponse, SearchResult
from .service import Repository
from .store import Store

__all__ = [
    "IndexBusy",
    "IndexCorrupt",
    "IndexForeign",
    "IndexMissing",
    "IndexTooNew",
    "QueryError",
    "RepoContextError",
    "Repository",
    "RootError",
    "SearchResponse",
    "SearchResult",
    "Searcher",
    "Store",
]

__version__ = "0.1.0"
