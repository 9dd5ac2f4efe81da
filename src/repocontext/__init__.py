"""repocontext: repository-aware local code completion and code search.

The public face of the engine; the layers below are importable but these names are the API.
They are loaded on first use (PEP 562), so that importing a submodule, which the command line
and the editor's Python host do at start, does not import the whole engine.
"""

from __future__ import annotations

import importlib

_WHERE = {
    "IndexBusy": ".errors",
    "IndexCorrupt": ".errors",
    "IndexForeign": ".errors",
    "IndexMissing": ".errors",
    "IndexTooNew": ".errors",
    "NotAProject": ".errors",
    "QueryError": ".errors",
    "RepoContextError": ".errors",
    "RootError": ".errors",
    "Repository": ".service",
    "Searcher": ".search.engine",
    "SearchResponse": ".search.results",
    "SearchResult": ".search.results",
    "Store": ".store",
}

__all__ = sorted(_WHERE)
__version__ = "0.1.0"


def __getattr__(name: str):
    if name not in _WHERE:
        raise AttributeError(f"module 'repocontext' has no attribute {name!r}")
    value = getattr(importlib.import_module(_WHERE[name], __name__), name)
    globals()[name] = value
    return value
