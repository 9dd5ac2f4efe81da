"""What :checkhealth repocontext reports, computed here and drawn by lua/repocontext/health.lua.

Each check is {"name", "ok", "message", "advice"}: advice says how to fix a failure. Nothing
here raises: a failure is a check that did not pass, one line.
"""

from __future__ import annotations

from .bridge import EditorService
from .errors import RepoContextError, redact_url


def check(path: str, service: EditorService) -> dict:
    checks: list[dict] = []

    def add(name: str, fn) -> None:
        try:
            message = fn()
            checks.append({"name": name, "ok": True, "message": message, "advice": None})
        except Exception as exc:
            text = str(exc)
            advice = text.split("; ", 1)[1] if "; " in text else "see :help repocontext"
            checks.append(
                {"name": name, "ok": False, "message": text.split("; ", 1)[0], "advice": advice}
            )

    repo = None
    try:
        repo = service.session(path).repo
        repo.reload_config()
    except RepoContextError as exc:  # what is wrong; what to do
        message, _, advice = str(exc).partition("; ")
        checks.append(
            {
                "name": "configuration",
                "ok": False,
                "message": message,
                "advice": advice or "fix the config file",
            }
        )
        return {"checks": checks}
    except Exception as exc:  # a fault of ours: one line here too, never a traceback
        checks.append(_internal("engine", exc))
        return {"checks": checks}

    def sqlite():
        from .store import sqlite_versions

        return sqlite_versions()

    def embedding():
        model = repo.embedding_model()
        return f"embedding model {model.identity.describe()} loads"

    def generation():
        from .complete.backends import check_model_file
        from .complete.models import default_model_path
        from .complete.server import LlamaServerBackend

        cfg = repo.config.generation
        if cfg.server_url:
            LlamaServerBackend(cfg.server_url, timeout=2)
            return f"llama-server at {redact_url(cfg.server_url)} answers"
        path = check_model_file(cfg.model_path or str(default_model_path()))
        return f"generation model {path.name} ({path.stat().st_size / 2**20:.0f} MB) is present"

    def index():
        if not repo.project:  # a state, not a fault: the open buffers are used
            return repo.note.split("; ", 1)[0] + "; suggestions use the open buffers only"
        status = repo.status()
        if not status["indexed"]:
            raise RepoContextError(
                f"{repo.root} is not indexed yet; open a file in it or run :RepoContext reindex"
            )
        vec = status["vectors"]
        return (
            f"{repo.root}: {status['files']} files, {status['chunks']} chunks, "
            f"vectors for {vec['embedded']} of {vec['chunks']}"
        )

    add("SQLite and sqlite-vec", sqlite)
    add("embedding model", embedding)
    add("generation model", generation)
    add("index", index)
    try:
        machine = repo.machine()
        loaded = service.loaded_backend(repo)
        if loaded is not None and "cpu" in (described := loaded.describe()):
            machine = described  # what the running in-process model actually got
    except Exception as exc:  # a fault of ours: one line, and the rest of the report
        machine = None
        checks.append(_internal("CPU and llama.cpp", exc))
    return {
        "checks": checks,
        "recent_errors": service.errors()[-5:],
        "root": str(repo.root) if repo.project else None,
        "machine": machine,
    }


def _internal(name: str, exc: Exception) -> dict:
    """A failure that is no RepoContextError (a fault of ours) as a check: one line."""
    return {
        "name": name,
        "ok": False,
        "message": f"internal error ({type(exc).__name__}: {exc})",
        "advice": "please report it with this line; :RepoContext restart may get past it",
    }
