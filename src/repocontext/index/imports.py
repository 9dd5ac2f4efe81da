"""Resolving import strings to files of the repository (Python, JavaScript/TypeScript, Go).

Python modules are matched by their path under any source root (`src/pkg/mod.py` answers
`import pkg.mod`), relative imports from the importing file's package. JavaScript/TypeScript
resolve relative specifiers with the usual extensions and index files. Go imports name a
package, which is a directory: the target is that directory with a trailing "/". Anything else
(the standard library, third-party packages, C headers) stays unresolved.
"""

from __future__ import annotations

import posixpath
from collections import defaultdict

_JS_SUFFIXES = (
    "",
    ".ts",
    ".tsx",
    ".js",
    ".jsx",
    ".mjs",
    ".cjs",
    "/index.ts",
    "/index.tsx",
    "/index.js",
    "/index.jsx",
)


class ImportResolver:
    def __init__(self, paths: list[str]):
        self.paths = set(paths)
        self.py_by_suffix: dict[str, list[str]] = defaultdict(list)
        self.go_dirs: dict[str, str] = {}  # every suffix of a Go package directory -> it
        for path in paths:
            if path.endswith(".py"):
                parts = path.split("/")
                for i in range(len(parts)):
                    self.py_by_suffix["/".join(parts[i:])].append(path)
            elif path.endswith(".go"):
                directory = posixpath.dirname(path)
                parts = directory.split("/") if directory else []
                for i in range(len(parts)):
                    self.go_dirs.setdefault("/".join(parts[i:]), directory)

    def resolve(self, importer: str, module: str, language: str | None) -> str | None:
        if language == "python":
            return self._python(importer, module)
        if language in ("javascript", "typescript", "tsx"):
            return self._js(importer, module)
        if language == "go":
            return self._go(module)
        return None

    def _python(self, importer: str, module: str) -> str | None:
        if module.startswith("."):
            dots = len(module) - len(module.lstrip("."))
            base = posixpath.dirname(importer)
            for _ in range(dots - 1):
                base = posixpath.dirname(base)
            rest = module[dots:].replace(".", "/")
            stem = posixpath.join(base, rest) if rest else base
            for candidate in (f"{stem}.py", f"{stem}/__init__.py"):
                candidate = candidate.lstrip("/")
                if candidate in self.paths:
                    return candidate
            return None
        stem = module.replace(".", "/")
        for suffix in (f"{stem}.py", f"{stem}/__init__.py"):
            found = self.py_by_suffix.get(suffix)
            if found:
                # several roots may hold the module: take the one sharing most of the importer's path
                return max(found, key=lambda p: (_common_prefix(p, importer), -len(p)))
        return None

    def _js(self, importer: str, module: str) -> str | None:
        if not module.startswith("."):
            return None
        stem = posixpath.normpath(posixpath.join(posixpath.dirname(importer), module))
        for suffix in _JS_SUFFIXES:
            if stem + suffix in self.paths:
                return stem + suffix
        return None

    def _go(self, module: str) -> str | None:
        parts = module.split("/")
        for i in range(len(parts)):  # longest suffix of the import path that is a directory here
            found = self.go_dirs.get("/".join(parts[i:]))
            if found:
                return found + "/"
        return None


def _common_prefix(a: str, b: str) -> int:
    return len(posixpath.commonprefix([a, b]))
