"""The package's exceptions, one hierarchy, translated once at the boundary.

    RepoContextError            anything the user can act on; str(exc) is the one line to show
    ├── RootError               the repository root does not exist or is not a directory
    │   └── NotAProject         a file outside any project: the open buffers only, no index
    ├── IndexError_             the index file cannot be used
    │   ├── IndexCorrupt        a repocontext index that SQLite cannot read
    │   ├── IndexForeign        a file at the index path that is not a repocontext index
    │   ├── IndexTooNew         written by a newer repocontext (schema version ahead of ours)
    │   └── IndexBusy           another process is writing the index
    ├── IndexMissing            no index yet for this root
    ├── QueryError              the search question cannot be run as asked
    ├── ConfigError             the config file is unreadable or has a wrong option
    ├── EmbeddingModelError     the embedding model or its tokenizer cannot be loaded
    ├── ModelMismatch           the index was embedded by another model than the configured one
    └── GenerationError         the generation model or server cannot be used

Errors from apsw, tree-sitter and the OS are caught where they happen (store, parser,
scanner) and re-raised as one of these with `raise ... from exc`, so the CLI and the editor
bridge only ever have to print `str(exc)`.
"""

from __future__ import annotations


class RepoContextError(Exception):
    """Base class: the message says what is wrong and what to do."""


class RootError(RepoContextError):
    """The repository root is unusable."""


class NotAProject(RootError):
    """A file outside any project (no marker above it): completion uses the open buffers
    only, and nothing is indexed or written for its folder."""


class IndexError_(RepoContextError):
    """The index file cannot be used as it is (named with a trailing _ to leave the builtin alone)."""


class IndexCorrupt(IndexError_):
    """The index is a damaged repocontext database."""


class IndexForeign(IndexError_):
    """Something that is not a repocontext index sits at the index path; it is never overwritten."""


class IndexTooNew(IndexError_):
    """The index was written by a newer version of repocontext."""


class IndexBusy(IndexError_):
    """Another `repocontext index` holds the write lock; `pid` is its process id when known."""

    def __init__(self, message: str, pid: int | None = None):
        super().__init__(message)
        self.pid = pid


class IndexImportRefused(IndexError_):
    """An exported index this repocontext cannot use as it is (`index --import`): another
    version, schema or embedding model."""


class IndexMissing(RepoContextError):
    """There is no index for this root yet."""


class QueryError(RepoContextError):
    """The query cannot be run (for example, nothing searchable in it for the chosen modality)."""


class ConfigError(RepoContextError):
    """The configuration file cannot be used; the message names the option."""


class EmbeddingModelError(RepoContextError):
    """The embedding model is missing, damaged or does not match its configuration."""


class ModelMismatch(RepoContextError):
    """The index's vectors come from another embedding model than the configured one."""


class GenerationError(RepoContextError):
    """The generation model cannot be loaded, or the llama-server cannot be reached."""
