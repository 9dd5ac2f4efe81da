"""The user's neighbourhood of a tree, indexed first: on 100,000 files a first index takes
minutes, and the files that the open buffer's completions and searches need are few.

In order: the open files; the files they import (resolved as the import graph resolves them);
the other files of their folders (where their importers and siblings usually sit); the files
the last commits changed (what the team works on). The rest keeps the scan's order.
"""

from __future__ import annotations

import os
import posixpath
import subprocess
from collections.abc import Sequence
from pathlib import Path

from ..lang.chunking import analyze_file
from ..lang.languages import language_for
from .git import run_git
from .imports import ImportResolver
from .reading import RefusedFile, read_in_root, source_text
from .scan import MAX_FILE_BYTES

RECENT_COMMITS = 50  # commits whose files count as recently changed
FOLDER_FILES = 200  # files of one folder taken, at most (a flat folder of generated files)


def neighbourhood(root: Path, open_files: Sequence[str], files: Sequence[str]) -> list[str]:
    """Paths of `files` in the order to index them first (not every file: the rest follows)."""
    present = set(files)
    opened = [f for f in dict.fromkeys(open_files) if f in present]
    if not opened:
        return _recently_changed(root, present)
    resolver = ImportResolver(list(files))
    imported = [t for f in opened for t in _imports_of(root, f, resolver) if t in present]
    by_folder: dict[str, list[str]] = {}
    wanted = {posixpath.dirname(f) for f in opened + imported}
    for f in files:
        folder = posixpath.dirname(f)
        if folder in wanted:
            by_folder.setdefault(folder, []).append(f)
    siblings = [f for folder in by_folder.values() for f in folder[:FOLDER_FILES]]
    order = opened + imported + siblings + _recently_changed(root, present)
    return list(dict.fromkeys(order))


def _imports_of(root: Path, rel: str, resolver: ImportResolver) -> list[str]:
    try:
        text = source_text(read_in_root(root, rel, MAX_FILE_BYTES)[:MAX_FILE_BYTES])[0]
    except (OSError, RefusedFile):
        return []
    language = language_for(rel)
    try:
        analysis = analyze_file(text, language)
    except Exception:  # a grammar crash: the indexer falls back the same way
        return []
    out = []
    for ref, _ in analysis.references:
        modules = [ref.name] if ref.kind == "import" else []
        if ref.kind == "import_name" and ref.module:
            # `from django.db import models`: the name may be a module of that package
            joined = ref.module + ("" if ref.module.endswith(".") else ".")
            modules.append(joined + ref.name)
        for module in modules:
            target = resolver.resolve(rel, module, language)
            if target:
                out.append(target)
    return out


def _recently_changed(root: Path, present: set[str]) -> list[str]:
    try:
        done = run_git(root, "log", f"-{RECENT_COMMITS}", "--name-only", "--no-ext-diff",
                       "--no-textconv", "--format=", timeout=10)  # fmt: skip
    except (OSError, subprocess.TimeoutExpired):
        return []
    if done.returncode != 0:
        return []
    names = os.fsdecode(done.stdout).splitlines()
    return [p for p in dict.fromkeys(names) if p in present]
