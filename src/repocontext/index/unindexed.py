"""Definitions in files a first index has not reached yet, so search by name answers from the
first second of a large repository's first index rather than minutes later.

On 100,000 files the first index takes minutes of both cores. Until it has run once to the
end, a definition search also asks git for the lines that hold the name as a whole word
(`git grep -F -w`: a literal search, one to two seconds over 760 MB). Files with a line where
a definition keyword comes right before the name (`def NAME`, `func (r *T) NAME`) or an
assignment after it are parsed first, with the indexer's own tree-sitter analysis, and only a
real definition of that name is returned; files that merely mention a keyword before it
(`:class:` in a docstring) only when those gave nothing. Files the index already holds are
left to it, and the path and secret rules of the scan apply (a secret's line is redacted
before parsing). A tree without git gets no such answers.
"""

from __future__ import annotations

import re
import subprocess
from collections.abc import Sequence
from pathlib import Path

from ..store import ChunkHit, Store
from .git import run_git
from .prepare import prepare_file
from .roles import file_role
from .skip_rules import path_skip_reason

MAX_FILES = 12  # files parsed per query, at most (each a few milliseconds)
GREP_TIMEOUT_S = 10.0
_KEYWORDS = (
    r"def|class|function|func|type|interface|struct|enum|trait|fn|const|let|var|local|module|"
    r"object|record|typedef|macro"
)
# The keyword right before the name: `def NAME`, `func (r *T) NAME`, `function M.NAME`.
_DEFINES = re.compile(rf"\b(?:{_KEYWORDS})\s+(?:\([^)]*\)\s*)?(?:\w+[.:])*$")
_MENTIONS_KEYWORD = re.compile(rf"\b(?:{_KEYWORDS})\b")


def first_index_running(store: Store) -> bool:
    """True until an index run has once reached its end (the index is partial before)."""
    return store.get_meta("indexed_at") is None


def definitions_outside_index(root: Path, store: Store, names: Sequence[str]) -> list[ChunkHit]:
    """Chunks defining one of `names` (exact case) in files the index does not hold yet."""
    names = [n for n in dict.fromkeys(names) if n and n.isidentifier()]
    if not names:
        return []
    # run in the root: git searches below it and names files relative to it, also where the
    # project is a folder of a larger repository
    command = ["grep", "-n", "-I", "-w", "-F", "--untracked", "--no-color", "--no-textconv"]
    for name in names:
        command += ["-e", name]
    try:
        done = run_git(root, *command, timeout=GREP_TIMEOUT_S)
    except (OSError, subprocess.TimeoutExpired):
        return []
    if done.returncode != 0:  # 1: nothing found; other: not a git tree, git missing
        return []
    strength: dict[str, int] = {}  # path -> 2: a line that defines the name; 1: may
    for raw in done.stdout.splitlines():
        path, _, rest = raw.decode("utf-8", "surrogateescape").partition(":")
        _, _, line = rest.partition(":")
        found = _how_likely_defined(line, names)
        if found > strength.get(path, 0):
            strength[path] = found
    paths = [p for p in strength if path_skip_reason(p) is None]
    present = store.paths_present(paths)
    paths = sorted(
        (p for p in paths if p not in present), key=lambda p: (-strength[p], p.count("/"), p)
    )
    hits: list[ChunkHit] = []
    for path in paths[:MAX_FILES]:
        if strength[path] < 2 and hits:
            break  # the likely files gave an answer: the rest only mention the name
        hits += _definitions_in(root, path, names)
    return hits


def _how_likely_defined(line: str, names: Sequence[str]) -> int:
    """2: a definition keyword (or nothing) right before a name and an assignment after
    it; 1: a keyword somewhere before it (a decorated or exported definition, a docstring's
    `:class:`); 0: a use."""
    best = 0
    for name in names:
        at = line.find(name)
        if at < 0:
            continue
        before, after = line[:at], line[at + len(name) :].lstrip()
        if _DEFINES.search(before) or (not before.strip() and after[:1] in ("=", ":")):
            return 2
        if _MENTIONS_KEYWORD.search(before):
            best = 1
    return best


def _definitions_in(root: Path, path: str, names: Sequence[str]) -> list[ChunkHit]:
    """The file read, checked, redacted and chunked exactly as the indexer does."""
    prepared = prepare_file(str(root), path, 0, 0, None)
    if prepared.record is None:  # vanished, or skipped: binary, too large, a private key
        return []
    return [
        ChunkHit(
            0,
            path,
            c.start_line,
            c.end_line,
            c.kind,
            c.name,
            c.qualname,
            c.signature,
            file_role(path),
            prepared.record.flags,
            0.0,
        )  # fmt: skip
        for c in prepared.chunks
        if c.name in names or c.qualname in names
    ]
