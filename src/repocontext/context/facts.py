"""The type facts of files other than the buffer, read and parsed on demand and kept by
content (a file is parsed again only when its text changed), and, for Go, of a whole package:
its files' facts merged (lang/typefacts/go.py)."""

from __future__ import annotations

import posixpath
from collections import OrderedDict
from collections.abc import Callable

from ..index.imports import ImportResolver
from ..lang.languages import language_for
from ..lang.symbols import parse
from ..lang.typefacts import FileFacts, file_facts

FACTS_CACHE = 64  # files


class FileFactsCache:
    def __init__(self, imports: ImportResolver, read: Callable[[str], str | None]):
        self.imports = imports
        self.read = read  # a file's text as the user sees it (its buffer, else the disk)
        self._facts: OrderedDict[str, tuple[int, FileFacts | None]] = OrderedDict()
        self._checked: dict[str, FileFacts | None] = {}  # files looked at in this request

    def new_request(self) -> None:
        """Files are read once per request (their text may have changed since the last)."""
        self._checked = {}

    def facts(self, path: str) -> FileFacts | None:
        """The facts of a file; for Go, of the package (the directory) the file belongs to."""
        if path.endswith("/") or path.endswith(".go"):
            return self.package(
                posixpath.dirname(path.rstrip("/")) if path.endswith(".go") else path.rstrip("/")
            )
        return self._file(path)

    def package(
        self, directory: str, override: dict[str, FileFacts] | None = None
    ) -> FileFacts | None:
        files = sorted(
            p
            for p in self.imports.paths
            if posixpath.dirname(p) == directory
            and p.endswith(".go")
            and not p.endswith("_test.go")
        )
        parts = []
        for p in files + [p for p in (override or {}) if p not in files]:
            facts = (override or {}).get(p) or self._file(p)
            if facts is not None:
                parts.append((p, facts))
        if not parts:
            return None
        key = "pkg:" + directory
        stamp = hash(tuple((p, id(f)) for p, f in parts))
        cached = self._facts.get(key)
        if cached is not None and cached[0] == stamp and not override:
            return cached[1]
        from ..lang.typefacts.go import merge_package

        merged = merge_package(parts)
        if not override:
            self._remember(key, stamp, merged)
        return merged

    def _remember(self, key: str, stamp: int, facts: FileFacts | None) -> None:
        self._facts[key] = (stamp, facts)
        self._facts.move_to_end(key)
        if len(self._facts) > FACTS_CACHE:
            self._facts.popitem(last=False)

    def _file(self, path: str) -> FileFacts | None:
        if path in self._checked:  # read once per request, not once per look-up
            return self._checked[path]
        self._checked[path] = facts = self._file_now(path)
        return facts

    def _file_now(self, path: str) -> FileFacts | None:
        text = self.read(path)
        if text is None:
            return None
        stamp = hash(text)
        cached = self._facts.get(path)
        if cached is not None and cached[0] == stamp:
            self._facts.move_to_end(path)
            return cached[1]
        language = language_for(path)
        source = text.encode("utf-8", "surrogatepass")
        root = parse(source, language) if language else None
        facts = file_facts(root, source, language)
        self._remember(path, stamp, facts)
        return facts
