"""repocontext's Neovim remote plugin: a thin shim between pynvim and repocontext.bridge.

Every function returns at once (sync=False) or does millisecond work; the engine runs in the
bridge's threads and results reach Lua through `nvim.async_call`, on Neovim's main loop. A
failure in Python becomes a message in Lua, never a traceback in the user's face. A native
crash (llama.cpp) cannot be caught: faulthandler writes it to a file whose path the first reply
tells Lua (lua/repocontext/host.lua), so the editor can say what happened.
"""

from __future__ import annotations

import atexit
import faulthandler
import os
import threading

import pynvim

IMPORT_ERROR: str | None = None


@pynvim.plugin
class RepoContextPlugin:
    def __init__(self, nvim: pynvim.Nvim):
        self.nvim = nvim
        self.crash_log = _enable_crash_log()
        self._said_hello = False
        # The engine is imported in the background: Neovim waits for this host to answer
        # its first call (it starts the host on demand), and the import takes a good part of
        # a second that the editor need not wait for.
        self._service = None
        self._loaded = threading.Event()
        # the one thread not started by repocontext.runtime.threads: it imports the package,
        # which may be missing from this Python (IMPORT_ERROR)
        threading.Thread(target=self._load, daemon=True, name="repocontext-import").start()

    def _load(self) -> None:
        global IMPORT_ERROR
        try:
            from repocontext.bridge import EditorService

            # the editor shows a sign while a model loads: the first key waits for it
            self._service = EditorService(on_loading=lambda p: self._to_lua("on_loading", p))
        except Exception as exc:  # the package is missing from g:python3_host_prog's Python
            IMPORT_ERROR = f"{type(exc).__name__}: {exc}"
        finally:
            self._loaded.set()

    @property
    def service(self):
        self._loaded.wait()
        return self._service

    # --- plumbing ------------------------------------------------------------------------------
    def _to_lua(self, handler: str, payload) -> None:
        """Call require('repocontext')._<handler>(payload) on Neovim's main loop."""
        hello = not self._said_hello
        self._said_hello = True

        def call():
            if hello:
                self.nvim.exec_lua(
                    "require('repocontext.host').hello(...)",
                    {"pid": os.getpid(), "crash_log": self.crash_log},
                )
            self.nvim.exec_lua(f"require('repocontext')._{handler}(...)", payload)

        self.nvim.async_call(call)

    def _guard(self, name: str, fn, *args):
        if self.service is None:
            self._to_lua(
                "on_error",
                f"the repocontext package cannot be imported by "
                f"g:python3_host_prog ({IMPORT_ERROR}); see "
                ":checkhealth repocontext",
            )
            return None
        try:
            return fn(*args)
        except Exception as exc:  # reported as one line; Neovim stays usable
            self._to_lua("on_error", f"{name}: {exc}")
            return None

    def _async(self, name: str, request_id, fn, *args) -> None:
        """Run fn in a thread and send {"id", "result"} or {"id", "error"} to Lua."""

        def run():
            try:
                result = fn(*args)
                self._to_lua("on_result", {"id": request_id, "kind": name, "result": result})
            except Exception as exc:
                self._to_lua("on_result", {"id": request_id, "kind": name, "error": str(exc)})

        if self.service is None:
            self._guard(name, lambda: None)
            return
        # a service was made, so the package imports here (unlike in __init__)
        from repocontext.runtime.threads import start_daemon

        start_daemon(f"repocontext-{name}", run)

    # --- functions Lua calls -------------------------------------------------------------------
    @pynvim.function("RepoContextHello", sync=False)
    def hello(self, args):
        """Start the host (when Lua restarts it) and tell Lua its pid and crash file."""
        self._to_lua("on_hello", None)

    @pynvim.function("RepoContextWarm", sync=False)
    def warm(self, args):
        """Load the model and evaluate the prompt the next keystroke will need (args: the
        same snapshot as RepoContextComplete); a real request cancels it."""
        self._guard("warm", self.service.warm if self.service else None, args[0])

    @pynvim.function("RepoContextCancel", sync=False)
    def cancel(self, args):
        """Stop the completion in flight (args: [path, root?]): keys came faster than the
        debounce, or the user left the place (<Esc>, another buffer or window)."""
        self._guard("cancel", self.service.cancel if self.service else None, *args[:2])

    @pynvim.function("RepoContextComplete", sync=False)
    def complete(self, args):
        req = args[0]
        self._guard(
            "complete",
            self.service.complete if self.service else None,
            req,
            lambda r: self._to_lua("on_update", r),
            lambda r: self._to_lua("on_done", r),
        )

    @pynvim.function("RepoContextNextEdit", sync=False)
    def next_edit(self, args):
        """args: [req]: the buffer and the edit just made (see EditorService.next_edit); the
        places reach Lua's `_on_next_edit` with the request's id and changedtick."""
        self._guard(
            "next edit",
            self.service.next_edit if self.service else None,
            args[0],
            lambda r: self._to_lua("on_next_edit", r),
        )

    @pynvim.function("RepoContextRequest", sync=False)
    def request(self, args):
        """args: [id, kind, payload]; kinds: EditorService.REQUESTS."""
        request_id, kind, payload = args
        self._async(kind, request_id, lambda: self.service.request(kind, payload))

    @pynvim.function("RepoContextIndex", sync=False)
    def index(self, args):
        """args: [path, embed?, root?] (root: the project, as lua/repocontext/roots.lua says)."""
        path = args[0]
        embed = bool(args[1]) if len(args) > 1 else True
        root = args[2] if len(args) > 2 else None
        self._guard(
            "index",
            self.service.index if self.service else None,
            path,
            lambda p: self._to_lua("on_progress", p),
            lambda r: self._to_lua("on_indexed", r),
            embed,
            root,
        )

    @pynvim.function("RepoContextHealth", sync=True)
    def health(self, args):
        from importlib import import_module

        self.service  # noqa: B018 -- waits for the engine's import, and so for IMPORT_ERROR
        out = {"import_error": IMPORT_ERROR, "packages": {}}
        for mod in (
            "apsw",
            "sqlite_vec",
            "tree_sitter_language_pack",
            "onnxruntime",
            "tokenizers",
            "llama_cpp",
            "pynvim",
        ):
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


def _enable_crash_log() -> str | None:
    """Point faulthandler at a file of this process's own; removed again on a clean exit."""
    try:
        from repocontext.locations import crash_log_path  # a light module: platformdirs only

        path = crash_log_path(os.getpid())
        path.parent.mkdir(parents=True, exist_ok=True, mode=0o700)
        dead = [old for old in path.parent.glob("host-*.log") if not _alive(old.stem[5:])]
        for old in sorted(dead, key=lambda p: p.stat().st_mtime)[:-5]:
            old.unlink(missing_ok=True)  # keep the last few reports, not every one ever
        handle = open(path, "w")  # noqa: SIM115 - must stay open for faulthandler
    except Exception:  # no writable place: crashes are still noticed, just not explained
        return None
    faulthandler.enable(file=handle, all_threads=True)

    def clean_exit():
        faulthandler.disable()
        handle.close()
        path.unlink(missing_ok=True)

    atexit.register(clean_exit)
    return str(path)


def _alive(pid: str) -> bool:
    try:
        os.kill(int(pid), 0)
    except (ValueError, ProcessLookupError):
        return False
    except PermissionError:
        return True
    return True
