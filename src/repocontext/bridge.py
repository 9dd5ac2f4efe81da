"""The editor's side of the engine, with no editor in it: what the Neovim remote plugin calls.

One `EditorService` per editor. It finds the repository of a buffer (the nearest directory with
a .git, else the buffer's directory), keeps one `Repository`, completion engine and searcher
per root, and runs everything in its own threads: completions on one worker where a newer
request cancels the older one, indexing on another. Results come back through callbacks the
caller provides, so the remote plugin can hand them to Lua without ever blocking the editor.
Every failure becomes a short message; nothing here raises into the editor.
"""

from __future__ import annotations

import logging
import threading
import time
import traceback
from collections import deque
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

from .complete.engine import CancelToken, CompletionRequest
from .context.request import ContextRequest
from .errors import RepoContextError
from .locations import index_path
from .service import Repository

log = logging.getLogger(__name__)

Callback = Callable[[dict], None]


def find_root(path: str | Path) -> Path:
    """The nearest ancestor holding .git, else the nearest one already indexed, else the
    file's own directory."""
    p = Path(path).expanduser().resolve()
    start = p if p.is_dir() else p.parent
    ancestors = (start, *start.parents)
    for candidate in ancestors:
        if (candidate / ".git").exists():
            return candidate
    for candidate in ancestors:
        if index_path(candidate).exists():
            return candidate
    return start


class EditorService:
    def __init__(self):
        self._repos: dict[Path, Repository] = {}
        self._engines: dict[Path, object] = {}
        self._lock = threading.Lock()
        self._complete_pool = ThreadPoolExecutor(max_workers=1, thread_name_prefix="complete")
        self._work_pool = ThreadPoolExecutor(max_workers=1, thread_name_prefix="index")
        self._current: CancelToken | None = None
        self.latencies: deque[dict] = deque(maxlen=50)
        self.errors: deque[str] = deque(maxlen=20)
        self.last_speculation = None  # the last speculative suggestion (for status and tests)

    # --- repositories --------------------------------------------------------------------------
    def repository(self, path: str) -> Repository:
        root = find_root(path)
        with self._lock:
            repo = self._repos.get(root)
            if repo is None:
                repo = self._repos[root] = Repository(root)
            return repo

    def _engine(self, repo: Repository):
        with self._lock:
            engine = self._engines.get(repo.root)
        if engine is None:
            engine = repo.completion_engine()
            with self._lock:
                self._engines[repo.root] = engine
        return engine

    def loaded_backend(self, repo: Repository):
        """The generation backend already loaded for `repo`, if any (never loads one)."""
        with self._lock:
            engine = self._engines.get(repo.root)
        return getattr(engine, "backend", None)

    # --- completion ----------------------------------------------------------------------------
    def complete(self, req: dict, on_update: Callback, on_done: Callback) -> None:
        """Start a completion; a newer call cancels this one. Callbacks run on a worker thread."""
        if self._current is not None:
            self._current.cancel()
        token = self._current = CancelToken()
        self._complete_pool.submit(self._complete, req, token, on_update, on_done)

    def _complete(self, req: dict, token: CancelToken, on_update: Callback,
                  on_done: Callback) -> None:
        base = {"id": req.get("id"), "changedtick": req.get("changedtick"),
                "bufnr": req.get("bufnr")}
        if token.cancelled:
            on_done({**base, "status": "cancelled", "suggestion": ""})
            return
        try:
            repo = self.repository(req["path"])
            engine = self._engine(repo)
            rel = _relative(repo.root, req["path"])
            request = CompletionRequest(
                rel, int(req["line"]), int(req["col"]), req["text"],
                open_buffers={_relative(repo.root, p): t
                              for p, t in (req.get("buffers") or {}).items()},
                recent_edits=[(_relative(repo.root, p), int(n))
                              for p, n in (req.get("edits") or [])],
                yanks=list(req.get("yanks") or []),
                receiver_location=_location(repo.root, req.get("receiver_location")),
            )
            last = [0.0]

            def update(text: str) -> None:
                now = time.monotonic()
                if now - last[0] > 0.03 and not token.cancelled:  # at most ~30 updates/s
                    last[0] = now
                    on_update({**base, "suggestion": text, "partial": True})

            result = engine.complete(request, cancel=token, on_update=update)
            out = {**base, **result.to_json()}
            self.latencies.append({"total": result.timings_ms.get("total"),
                                   "first_token": result.timings_ms.get("first_token"),
                                   "source": result.source})
            on_done(out)
            if result.suggestion and "\n" not in result.suggestion and not token.cancelled:
                # Speculate: prepare the suggestion that follows, as if this one is accepted.
                # It lands in the engine's cache; the next keystroke cancels it if it is wrong.
                # Single-line suggestions only: accepting several lines moves the prompt's window,
                # and the speculative prompt would then push the real next keystroke's prompt
                # out of the KV cache (measured: first ghost text p95 214 ms -> 2,141 ms).
                self.last_speculation = engine.complete(accepted(request, result.suggestion),
                                                        cancel=token)
        except RepoContextError as exc:
            self._fail(on_done, base, str(exc))
        except Exception as exc:  # never let an engine bug reach the editor as a traceback
            log.debug("completion failed:\n%s", traceback.format_exc())
            self._fail(on_done, base, f"internal error ({type(exc).__name__}: {exc})")

    def _fail(self, on_done: Callback, base: dict, message: str) -> None:
        self.errors.append(message)
        on_done({**base, "status": "error", "error": message, "suggestion": ""})

    # --- lookups (run on the caller's thread: each takes milliseconds) -------------------------
    def search(self, path: str, query: str, top: int = 20) -> dict:
        repo = self.repository(path)
        return repo.search(query, top=top).to_json() | {"root": str(repo.root)}

    def context(self, req: dict) -> dict:
        repo = self.repository(req["path"])
        rel = _relative(repo.root, req["path"])
        package = repo.context(ContextRequest(
            rel, int(req["line"]), int(req["col"]), req.get("text"), int(req.get("budget", 384)),
            receiver_location=_location(repo.root, req.get("receiver_location"))))
        return package.to_json() | {"root": str(repo.root)}

    def definition(self, path: str, word: str) -> dict:
        repo = self.repository(path)
        response = repo.search(f"def {word}", top=10, modality="ast")
        return response.to_json() | {"root": str(repo.root)}

    def references(self, path: str, word: str) -> dict:
        repo = self.repository(path)
        response = repo.search(f"who calls {word}", top=30, modality="graph")
        return response.to_json() | {"root": str(repo.root)}

    def status(self, path: str) -> dict:
        repo = self.repository(path)
        out = repo.status()
        lat = [x["total"] for x in self.latencies if x.get("total") is not None]
        out["recent_latency_ms"] = sorted(lat)[len(lat) // 2] if lat else None
        out["recent_errors"] = list(self.errors)[-5:]
        cfg = repo.config
        out["generation"] = {"model": cfg.generation.model_path or "gemma-3-270m (default)",
                             "server": cfg.generation.server_url or None}
        return out

    # --- indexing ------------------------------------------------------------------------------
    def index(self, path: str, on_progress: Callback, on_done: Callback,
              embed: bool = True) -> None:
        self._work_pool.submit(self._index, path, on_progress, on_done, embed)

    def _index(self, path: str, on_progress: Callback, on_done: Callback, embed: bool) -> None:
        try:
            repo = self.repository(path)
            last = [0.0]

            def progress(done: int, total: int, _path: str = "") -> None:
                now = time.monotonic()
                if now - last[0] > 0.5 or done == total:
                    last[0] = now
                    on_progress({"phase": "index", "done": done, "total": total,
                                 "root": str(repo.root)})

            report = repo.index(progress=progress)
            out = {"root": str(repo.root), "files": report.files, "added": report.added,
                   "updated": report.updated, "removed": report.removed,
                   "seconds": round(report.seconds, 2)}
            if embed:
                def embed_progress(done: int, total: int) -> None:
                    now = time.monotonic()
                    if now - last[0] > 0.5 or done == total:
                        last[0] = now
                        on_progress({"phase": "embed", "done": done, "total": total,
                                     "root": str(repo.root)})
                try:
                    out["embedded"] = repo.embed(progress=embed_progress).embedded
                except RepoContextError as exc:
                    out["embed_error"] = str(exc)
            on_done(out)
        except RepoContextError as exc:
            self.errors.append(str(exc))
            on_done({"error": str(exc)})
        except Exception as exc:
            log.debug("index failed:\n%s", traceback.format_exc())
            self.errors.append(f"internal error ({type(exc).__name__}: {exc})")
            on_done({"error": f"internal error ({type(exc).__name__}: {exc})"})

    def close(self) -> None:
        for engine in self._engines.values():
            engine.close()
        self._complete_pool.shutdown(wait=False, cancel_futures=True)
        self._work_pool.shutdown(wait=False, cancel_futures=True)


def accepted(request: CompletionRequest, suggestion: str) -> CompletionRequest:
    """The request the editor would send once `suggestion` is accepted at the cursor."""
    lines = request.text.split("\n")
    line = min(max(request.line, 1), len(lines))
    current = lines[line - 1].encode("utf-8")
    head, tail = current[:request.col].decode("utf-8", "ignore"), current[request.col:].decode(
        "utf-8", "ignore")
    inserted = (head + suggestion).split("\n")
    new_lines = lines[:line - 1] + inserted[:-1] + [inserted[-1] + tail] + lines[line:]
    return CompletionRequest(request.file, line + len(inserted) - 1,
                             len(inserted[-1].encode("utf-8")), "\n".join(new_lines),
                             request.open_buffers, request.recent_edits, request.yanks)


def _location(root: Path, location) -> tuple[str, int] | None:
    """A language server's {"path", "line"} (absolute path, 1-based) as the engine takes it."""
    if not location or not location.get("path"):
        return None
    return _relative(root, location["path"]), int(location.get("line", 1))


def _relative(root: Path, path: str) -> str:
    p = Path(path).expanduser()
    try:
        return p.resolve().relative_to(root).as_posix()
    except ValueError:
        return p.as_posix()
