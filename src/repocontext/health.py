"""What :checkhealth repocontext reports, computed here and drawn by lua/repocontext/health.lua.

Each check is {"name", "ok", "message", "advice"}: advice says how to fix a failure. Nothing
here raises: a failure is a check that did not pass, one line.
"""

from __future__ import annotations

import functools
from pathlib import Path

from .bridge import EditorService
from .errors import RepoContextError, redact_url
from .service import require_local, unfinished_phases


def check(path: str, service: EditorService) -> dict:
    checks: list[dict] = []

    def add(name: str, fn) -> None:
        try:
            message = fn()
            warn = None
            if isinstance(message, tuple):  # (message, a warning: it works, but see this)
                message, warn = message
            checks.append(
                {"name": name, "ok": True, "message": message, "advice": None, "warn": warn}
            )
        except Exception as exc:
            text = str(exc)
            advice = text.split("; ", 1)[1] if "; " in text else "see :help repocontext"
            checks.append(
                {"name": name, "ok": False, "message": text.split("; ", 1)[0], "advice": advice}
            )

    repo = None
    try:
        session = service.session(path)
        repo = session.repo
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

    @functools.cache
    def server():
        """The configured server's backend, asked once for both checks that need it."""
        from .complete.backends import server_backend

        return server_backend(repo.config.generation, timeout=2)

    def generation():
        from .complete.backends import check_model_file
        from .complete.models import default_model_path

        cfg = repo.config.generation
        if cfg.server_url:
            backend = server()
            return f"{backend.name} at {redact_url(cfg.server_url)} answers"
        require_local(bool(cfg.model_path))
        path = check_model_file(cfg.model_path or str(default_model_path()))
        return f"generation model {path.name} ({path.stat().st_size / 2**20:.0f} MB) is present"

    def layout():
        """The configured model's family and prompt layout, and a warning where the lines
        after the cursor the config asks for cannot reach it (no fill-in-the-middle)."""
        from .complete.catalog import describe
        from .complete.models import default_model_path
        from .complete.templates import TEMPLATES
        from .config import GenerationConfig

        cfg = repo.config.generation
        if cfg.server_url:
            backend = server()
            fim, name = backend.template.fim, backend.template.name
            model = backend.describe().get("model") or "the server's model"
            message = f"{model}: prompt layout {name}" + ("" if fim else ", no FIM")
        else:
            require_local(bool(cfg.model_path))
            path = Path(cfg.model_path).expanduser() if cfg.model_path else default_model_path()
            entry = describe(path.name, "config", path)
            if entry.problem:
                raise RepoContextError(f"{path.name}: {entry.problem}; pick another model_path")
            fim = TEMPLATES[cfg.template].fim if cfg.template != "auto" else entry.fim
            name = cfg.template if cfg.template != "auto" else entry.layout
            about = ", ".join(x for x in (entry.architecture, entry.parameters) if x)
            message = f"{path.name} ({about}): prompt layout {name}" + ("" if fim else ", no FIM")
        if not fim and cfg.suffix_lines > GenerationConfig().suffix_lines:
            return message, (
                f"suffix_lines is {cfg.suffix_lines}, but a model without fill-in-the-middle "
                "never sees the text after the cursor: use a FIM code model (Qwen2.5-Coder, "
                "StarCoder2, DeepSeek-Coder; `repocontext models` lists those you have)"
            )
        return message

    def index():
        if not repo.project:  # a state, not a fault: the open buffers are used
            return repo.note.split("; ", 1)[0] + "; suggestions use the open buffers only"
        status = repo.status()
        if not status["indexed"]:
            raise RepoContextError(
                f"{repo.root} is not indexed yet; open a file in it or run :RepoContext reindex"
            )
        vec = status["vectors"]
        message = (
            f"{repo.root}: {status['files']} files, {status['chunks']} chunks, "
            f"vectors for {vec['embedded']} of {vec['chunks']}"
        )
        if left := unfinished_phases(status):  # search works; questions find less meanwhile
            return message, (
                f"incomplete: {left}; an index run is under way or stopped before it: "
                ":RepoContext reindex finishes it"
            )
        return message

    add("SQLite and sqlite-vec", sqlite)
    add("embedding model", embedding)
    add("generation model", generation)
    add("prompt layout", layout)
    add("index", index)
    try:
        machine = repo.machine()
        engine = session.loaded  # never loads one
        if engine is not None and "cpu" in (described := engine.backend.describe()):
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
