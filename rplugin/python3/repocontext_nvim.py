"""repocontext's Neovim remote plugin: a thin shim between pynvim and repocontext.bridge.

Every function returns at once (sync=False) or does millisecond work; the engine runs in the
bridge's threads and results reach Lua through `nvim.async_call`, on Neovim's main loop. A
failure in Python becomes a message in Lua, never a traceback in the user's face.
"""

from __future__ import annotations

import pynvim

try:
    from repocontext.bridge import EditorService
    IMPORT_ERROR = None
except Exception as exc:  # the package is missing from g:python3_host_prog's Python
    EditorService = None
    IMPORT_ERROR = f"{type(exc).__name__}: {exc}"


@pynvim.plugin
class RepoContextPlugin:
    def __init__(self, nvim: pynvim.Nvim):
        self.nvim = nvim
        self.service = EditorService() if EditorService else None

    # --- plumbing ------------------------------------------------------------------------------
    def _to_lua(self, handler: str, payload) -> None:
        """Call require('repocontext')._<handler>(payload) on Neovim's main loop."""
        def call():
            self.nvim.exec_lua(f"require('repocontext')._{handler}(...)", payload)
        self.nvim.async_call(call)

    def _guard(self, name: str, fn, *args):
        if self.service is None:
            self._to_lua("on_error", f"the repocontext package cannot be imported by "
                                     f"g:python3_host_prog ({IMPORT_ERROR}); see "
                                     ":checkhealth repocontext")
            return None
        try:
            return fn(*args)
        except Exception as exc:  # reported as one line; Neovim stays usable
            self._to_lua("on_error", f"{name}: {exc}")
            return None

    def _async(self, name: str, request_id, fn, *args) -> None:
        """Run fn in a thread and send {"id", "result"} or {"id", "error"} to Lua."""
        import threading

        def run():
            try:
                result = fn(*args)
                self._to_lua("on_result", {"id": request_id, "kind": name, "result": result})
            except Exception as exc:
                self._to_lua("on_result", {"id": request_id, "kind": name, "error": str(exc)})

        if self.service is None:
            self._guard(name, lambda: None)
            return
        threading.Thread(target=run, daemon=True, name=f"repocontext-{name}").start()

    # --- functions Lua calls -------------------------------------------------------------------
    @pynvim.function("RepoContextComplete", sync=False)
    def complete(self, args):
        req = args[0]
        self._guard("complete", self.service.complete if self.service else None, req,
                    lambda r: self._to_lua("on_update", r), lambda r: self._to_lua("on_done", r))

    @pynvim.function("RepoContextRequest", sync=False)
    def request(self, args):
        """args: [id, kind, payload]; kinds: search, context, definition, references, status."""
        request_id, kind, payload = args
        svc = self.service
        calls = {
            "search": lambda: svc.search(payload["path"], payload["query"], payload.get("top", 20)),
            "context": lambda: svc.context(payload),
            "definition": lambda: svc.definition(payload["path"], payload["word"]),
            "references": lambda: svc.references(payload["path"], payload["word"]),
            "status": lambda: svc.status(payload["path"]),
        }
        self._async(kind, request_id, calls[kind])

    @pynvim.function("RepoContextIndex", sync=False)
    def index(self, args):
        path = args[0]
        embed = bool(args[1]) if len(args) > 1 else True
        self._guard("index", self.service.index if self.service else None, path,
                    lambda p: self._to_lua("on_progress", p),
                    lambda r: self._to_lua("on_indexed", r), embed)

    @pynvim.function("RepoContextHealth", sync=True)
    def health(self, args):
        from importlib import import_module

        out = {"import_error": IMPORT_ERROR, "packages": {}}
        for mod in ("apsw", "sqlite_vec", "tree_sitter_language_pack", "onnxruntime",
                    "tokenizers", "llama_cpp", "pynvim"):
            try:
                import_module(mod)
                out["packages"][mod] = None
            except Exception as exc:
                out["packages"][mod] = f"{type(exc).__name__}: {exc}"
        if self.service is None:
            return out
        from repocontext.health import check

        out.update(check(args[0] if args else ".", self.service))
        return out
