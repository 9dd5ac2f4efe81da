"""The editor's side of the engine, with no editor in it: what the Neovim remote plugin calls.

Dicts in, callbacks out. One `Session` per project root, which the editor decides with its
`root_markers` (it sends `root`: a folder, or "" when no marker is above the file, and then
a folder indexed before, say one the user chose, is still the root; lua/repocontext/roots.lua)
and which is otherwise `locations.find_project_root`. Files in no project share one session that works
on the open buffers alone and never indexes anything (`Repository.buffer_only`). Every
request goes through its root's session (runtime/session.py), which owns the threads, the
`Repository` and the kept connection to the index: nothing here opens an index itself.
Every failure of the background work (completion, indexing) reaches its callback as a short
message. `request` (a `:RepoContext` look-up) is the exception: it raises, and the remote
plugin turns what it raised into the one line the command shows.
"""

from __future__ import annotations

import threading
from collections.abc import Callable
from pathlib import Path

from .config import GenerationConfig
from .context.request import CursorRequest
from .locations import find_project_root, relative_path, resolved
from .runtime.session import Session
from .service import Repository

Callback = Callable[[dict], None]


class BufferLost(Exception):
    """A patch arrived for a version of the buffer this side does not have."""


class EditorService:
    # the look-ups `:RepoContext` sends (RepoContextRequest's kinds)
    REQUESTS = ("search", "context", "definition", "references", "status", "models")
    # what the editor gets of each next-edit place (nextedit.NextEditPlace)
    PLACE_FIELDS = ("path", "line", "col", "end_col", "old_text", "new_text", "new_line",
                    "confidence", "kind", "rule", "distance")  # fmt: skip

    def __init__(self, on_loading: Callback | None = None):
        """`on_loading`: told when a session's model starts and ends loading (Session)."""
        self._on_loading = on_loading
        self._sessions: dict[Path | None, Session] = {}  # None: files in no project
        self._lock = threading.Lock()  # the sessions and the buffers' texts
        # each buffer's text as last sent: (its version, its lines); see lua/repocontext/sync.lua
        self._buffers: dict[tuple, tuple[int, list[str]]] = {}

    def session(self, path: str, root: str | None = None) -> Session:
        """The session for `path`: in the project `root` ("" for none; None: find it)."""
        if root is None:
            found = find_project_root(path)
        elif root == "":  # no marker above it: only a folder indexed before makes a project
            found = find_project_root(path, markers=())
        else:
            found = resolved(Path(root).expanduser())
        if found is not None and not found.is_dir():
            found = None  # a root deleted since it was chosen: the file is in no project now
        with self._lock:
            if found not in self._sessions:  # None: the one session for files in no project
                repo = Repository(found) if found is not None else Repository.buffer_only(path)
                self._sessions[found] = Session(repo)
                self._sessions[found].on_loading = self._on_loading
            return self._sessions[found]

    def complete(self, req: dict, on_update: Callback, on_done: Callback) -> None:
        """Start a completion; a newer call cancels this one. Callbacks run on a worker."""
        base = {
            "id": req.get("id"),
            "changedtick": req.get("changedtick"),
            "bufnr": req.get("bufnr"),
            "alternative": bool(req.get("avoid")),
        }
        session = self.session(req["path"], req.get("root"))

        def done(result, error) -> None:
            if error is not None:
                on_done({**base, "status": "error", "error": error, "suggestion": ""})
            else:  # `hidden`: why nothing is shown, for the statusline (None: something is)
                on_done({**base, **result.to_json(), "hidden": session.hidden_reason(result)})

        try:
            request = self._request(session, req)
        except BufferLost:
            on_done({**base, "status": "error", "error": "buffer resent", "resend": True,
                     "suggestion": ""})  # fmt: skip
            return
        session.complete(
            request,
            lambda text: on_update({**base, "suggestion": text, "partial": True}),
            done,
        )

    def next_edit(self, req: dict, on_done: Callback) -> None:
        """The next places for the edit the editor just saw (issue 53). `req` carries the
        buffer as a completion's does (whole, or a patch: applied here, on the caller's thread,
        in the order the patches were sent) and `before`: {first, last, lines}, the buffer's
        lines [first, last) (0-based) were `lines` before the edit, so that the text before it
        costs the editor only the lines it changed. The places are found on the session's
        worker; `on_done` gets {id, changedtick, bufnr, places} or {..., error}, and a place
        in the edited buffer its line as it is now (`line_text`): the editor applies a place
        only to the line it was proposed for."""
        base = {"id": req.get("id"), "changedtick": req.get("changedtick"),
                "bufnr": req.get("bufnr")}  # fmt: skip
        session = self.session(req["path"], req.get("root"))
        root = session.repo.root
        try:
            after = self._text(req)
        except BufferLost:
            on_done({**base, "places": [], "error": "buffer resent", "resend": True})
            return
        if after is None:
            on_done({**base, "places": []})
            return
        lines = after.split("\n")
        span = req.get("before") or {}
        first, last = int(span.get("first", 0)), int(span.get("last", 0))
        old = [str(x) for x in (span.get("lines") or [])]
        before = "\n".join(lines[:first] + old + lines[last:])
        path = relative_path(root, req["path"])
        buffers = {relative_path(root, p): t for p, t in (req.get("buffers") or {}).items()}

        def done(places, error) -> None:
            if error is not None:
                on_done({**base, "places": [], "error": error})
                return
            out = []
            for p in places:  # the edited buffer's places by its own name, as the editor has it
                here = p.path == path
                place = {name: getattr(p, name) for name in self.PLACE_FIELDS}
                place["path"] = req["path"] if here else str(root / p.path)
                if here and 0 < p.line <= len(lines):
                    place["line_text"] = lines[p.line - 1]
                out.append(place)
            on_done({**base, "places": out})

        sure = req.get("min_confidence")  # a test's or a bench's; else the engine's own
        options = {} if sure is None else {"min_confidence": float(sure)}
        session.next_edit(before, after, path, buffers, done, **options)

    def cancel(self, path: str, root: str | None = None) -> None:
        """Stop the completion in flight for `path`'s project (see Session.cancel)."""
        self.session(path, root).cancel()

    def warm(self, req: dict) -> None:
        """Prepare the next keystroke's prompt here (and load the model); see Session.warm."""
        session = self.session(req["path"], req.get("root"))
        try:
            session.warm(self._request(session, req))
        except BufferLost:
            pass  # the next completion request has the editor send the whole buffer

    def request(self, kind: str, payload: dict) -> dict:
        """A look-up for `:RepoContext`, on the caller's thread: usually milliseconds, but a
        search first brings the index up to date with the working tree (`Repository.search`),
        which re-indexes the files changed since."""
        if kind not in self.REQUESTS:
            raise ValueError(f"unknown request {kind!r}; one of {', '.join(self.REQUESTS)}")
        session = self.session(payload["path"], payload.get("root"))
        repo = session.repo
        if kind == "search":
            out = session.search(payload["query"], top=payload.get("top", 20)).to_json()
        elif kind == "context":
            out = session.context(self._request(session, payload)).to_json()
        elif kind in ("definition", "references"):  # the index's tables, no query text
            look_up = session.definition if kind == "definition" else session.references
            place = None
            if isinstance(payload.get("text"), str) and payload.get("line") is not None:
                from .search.lookups import BufferPlace  # the tree reads the word (lang/)

                place = BufferPlace(
                    payload["text"], int(payload["line"]), int(payload.get("col") or 0)
                )
            relative = relative_path(repo.root, payload["path"])
            out = look_up(payload["word"], relative, place).to_json()
        elif kind == "models":
            out = self._models(repo.config.generation, payload.get("measure"))
        else:
            out = session.status()
        return out | {"root": str(repo.root) if repo.project else None}

    @staticmethod
    def _models(config: GenerationConfig, measure: str | None) -> dict:
        """`:RepoContext model [measure [NAME]]`: what `repocontext models` prints."""
        from .complete import catalog
        from .extras import require

        require("local", ":RepoContext model (it reads each GGUF with llama.cpp)")

        entries = catalog.listing(config, measure)
        return {
            "report": catalog.report(entries, config),
            "models": [e.to_json() for e in entries],
        }

    def index(
        self,
        path: str,
        on_progress: Callback,
        on_done: Callback,
        embed: bool = True,
        root: str | None = None,
    ) -> None:
        """Index `path`'s project; a file in no project is never indexed (its folder may be a
        home directory): `on_done` hears {"outside": True} at once."""
        session = self.session(path, root)
        if not session.repo.project:
            on_done({"root": None, "outside": True, "path": path})
            return
        session.index(embed, on_progress, on_done, first=[relative_path(session.repo.root, path)])

    def errors(self) -> list[str]:
        with self._lock:
            return [e for s in self._sessions.values() for e in s.errors]

    def close(self) -> None:
        for session in self._sessions.values():
            session.close()

    def _text(self, req: dict) -> str | None:
        """The buffer's text: sent whole, or as a patch to the version last sent. Under the
        lock: keystrokes patch it on the host's thread, `:RepoContext context` on its own."""
        key = (req.get("bufnr"), req["path"])
        patch = req.get("patch")
        with self._lock:
            if patch is None:
                text = req.get("text")
                if text is not None and req.get("version") is not None:
                    self._buffers[key] = (int(req["version"]), text.split("\n"))
                return text
            known = self._buffers.get(key)
            if known is None or known[0] != int(patch["base"]):
                self._buffers.pop(key, None)
                raise BufferLost
            lines = known[1]
            for hunk in reversed(patch["hunks"]):  # from the end: in the base's line numbers
                lines[int(hunk["first"]) : int(hunk["last"])] = list(hunk["lines"])
            self._buffers[key] = (int(req["version"]), lines)
            return "\n".join(lines)

    def _request(self, session: Session, req: dict) -> CursorRequest:
        root = session.repo.root
        location = req.get("receiver_location")
        return CursorRequest(
            relative_path(root, req["path"]),
            int(req["line"]),
            int(req["col"]),
            self._text(req),
            req.get("budget"),
            open_buffers={relative_path(root, p): t for p, t in (req.get("buffers") or {}).items()},
            recent_edits=[(relative_path(root, p), int(n)) for p, n in (req.get("edits") or [])],
            yanks=list(req.get("yanks") or []),
            receiver_location=(relative_path(root, location["path"]), int(location["line"]))
            if location and location.get("path")
            else None,
            avoid=req.get("avoid") or None,
        )
