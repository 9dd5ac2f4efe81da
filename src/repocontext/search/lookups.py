"""The editor's definition and references look-ups: calls on the index, not questions.

`:RepoContext definition` and `references` (and their jumps) know the name under the cursor
and the file it is in: nothing is to be guessed from query text, and no intent classified.

- A **definition** is a row of the symbol table with that name (exact case; a long one cut into
  windows counts once, at its first), ranked by where the current file sees it from: the file
  itself, then the files it imports (the graph's resolved imports; a Go import, the package's
  folder), then the rest; among equals `retrievers.definition_order`: source before tests,
  types and functions before constants, shallow paths first. While a first index is under way
  the files it has not reached are read too (index/unindexed.py), as a search does.
- **References** are the graph's edges to the name: calls (on an object too), inherited bases,
  imports of it; the chunks that use it before those that only import it. The graph knows names,
  not which definition a call reaches: a method and a function of the same name share theirs.
  Where it holds fewer than THIN_GRAPH chunks (a language whose calls it does not read, a
  function passed as a value), or the name is a type's (written in signatures and annotations,
  which the graph does not record), the chunks whose text holds the name as a whole identifier
  (exact case, through the trigram index) follow them, marked textual: `flags` has "textual",
  the rank is under `trigram` rather than `graph`, and a note says how many.

Both answer a `SearchResponse` (strategy "direct"), the shape the editor renders for a search.
Asked from a buffer (`BufferPlace`), the tree reads the word first (lang/locals.py): a keyword
is refused with a line that says so, and a name the function around the cursor binds (a
parameter, a local variable) is answered from that function, flagged "local": the binding
that reaches the cursor is the definition, its lines the references. The index knows neither.
A name the buffer imports under another (`compute_tax as ct`) is looked up by its own (the references' query is
then that name); one it imports from outside the index (`fmt`, `os.path`) is said to be that
import's. A field, which the index does not hold, is found where the buffer declares it
(lang/members.py).
"""

from __future__ import annotations

import re
import time
from dataclasses import dataclass, replace
from pathlib import Path

from ..choices import RETRIEVERS
from ..errors import QueryError
from ..index.roles import file_role
from ..index.unindexed import definitions_outside_index, first_index_running
from ..lang.languages import language_for
from ..lang.locals import ImportedName, LocalName, WordAt, imported_from, word_at
from ..lang.members import FieldAt, fields_named, member_lines
from ..store import ChunkHit, Store
from .results import SearchResponse, SearchResult, raw_result
from .retrievers import _ROLE_ORDER, definition_order, trigram_match

DEFINITIONS_TOP = 10
REFERENCES_TOP = 30
# Fewer chunks than this referring to a name in the graph: the textual matches are added.
THIN_GRAPH = 3
# a type's uses in signatures and annotations are no edges of the graph (its calls, bases and
# imports are): for a name the index defines as one of these, the textual matches are added
_TYPES = frozenset({"class", "struct", "interface", "trait", "enum", "type"})
# a container's chunk is its outline: its members' signatures, which name the members
_CONTAINERS = frozenset({"class", "struct", "interface", "trait", "impl", "enum", "module"})


@dataclass(frozen=True)
class BufferPlace:
    """Where a look-up was asked: the buffer's text (saved or not) and the cursor in it
    (1-based line, byte column, as Neovim's cursor)."""

    text: str
    line: int
    col: int


def definition(
    store: Store, word: str, path: str | None = None, *, top: int = DEFINITIONS_TOP,
    root: Path | None = None, place: BufferPlace | None = None,
) -> SearchResponse:  # fmt: skip
    """Where `word` is defined, as seen from the file `path` (root-relative; None: nowhere).
    `root`: the tree, read where a first index has not reached yet; `place`: the buffer."""
    started = time.perf_counter()
    name = lookup_name(word)
    at = _word_at(word, path, place)
    local = at.local
    parameter = _parameter(store, at.argument_of, name, path) if at.argument_of else None
    if parameter is not None:
        said = [f"`{name}` names a parameter of `{at.argument_of}`"]
        return _response(name, "find_definition", "ast", "parameter", [parameter], said, started)
    if local is not None and path is not None:
        said = [f"`{name}` is local to {_function(local)}: its binding that reaches this line"]
        return _response(
            name, "find_definition", "ast", "local name",
            [_local_result(path, local, local.bound_at)], said, started,
        )  # fmt: skip
    # `self.root`, `c.lines` where the type the cursor is in declares that field: the field,
    # not a function of that name elsewhere (the index holds no fields)
    fields = _fields_of(name, path, place) if at.member else []
    if fields and fields[0].around:
        return _field_response(name, path, [f for f in fields if f.around][:top], started)
    notes: list[str] = []
    found = store.symbols_named([name], 500)  # by name or qualified name, any case
    hits = _first_window_of_each([h for h in found if name in (h.name, h.qualname)])
    if root is not None and first_index_running(store):
        extra = definitions_outside_index(root, store, [name])
        notes.append(
            "the index is still being built: "
            + (f"{len(extra)} definition(s) found in files it has not reached yet (git grep)"
               if extra else "files it has not reached yet were searched too (git grep)")
        )  # fmt: skip
        hits += extra
    imported = store.graph.imported_by(path) if path else []
    order = definition_order([name])
    hits.sort(key=lambda h: (_seen_from(h.path, path, imported), *order(h)))
    results = [
        raw_result(replace(h, score=1.0 / (1 + rank)), "ast", rank)
        for rank, h in enumerate(hits[:top])
    ]
    if not results:
        brought = _import_of(name, path, place)
        if brought is not None and brought.original not in (None, name):
            # `from shop.tax import compute_tax as ct`: ct's definition is compute_tax's
            renamed = definition(store, brought.original or "", path, top=top, root=root)
            if renamed.results:
                alias = f"`{name}` is `{brought.original}`, imported from `{brought.module}`"
                return replace(renamed, query=name, notes=[alias, *renamed.notes])
        fields = fields or _fields_of(name, path, place)
        if fields:
            return _field_response(name, path, fields[:top], started)
        module = _module_named(name, imported)
        if module is not None:
            said = [f"`{name}` is the module this file imports, `{module}`"]
            results = [_buffer_result(module, 1, name, "module", name)]
            return _response(name, "find_definition", "ast", "module", results, said, started)
        other = sorted({h.name or h.qualname or "" for h in found} - {"", name})
        notes.append(
            f"no definition of `{name}` in the index"
            + (f" (differently spelt: {', '.join(f'`{n}`' for n in other[:3])})" if other else "")
            + (f"; this file imports it from `{brought.module}`" if brought else "")
        )
    return _response(name, "find_definition", "ast", "definition by name", results, notes, started)


def references(
    store: Store, word: str, path: str | None = None, *, top: int = REFERENCES_TOP,
    place: BufferPlace | None = None,
) -> SearchResponse:  # fmt: skip
    """The chunks that refer to `word`: the graph's, then, where it is thin, textual ones.
    `path` (root-relative) is the file asked from: its own chunks come first. `place`: the
    buffer, where a local name is answered from its function."""
    started = time.perf_counter()
    name = lookup_name(word)
    at = _word_at(word, path, place)
    local = at.local
    fields = _fields_of(name, path, place) if at.member else []
    if fields and fields[0].around and path is not None and place is not None:
        return _field_references(store, name, path, place, fields[0], top, started)
    if local is not None and path is not None:
        uses = [_local_result(path, local, line) for line in local.lines]
        said = [f"`{name}` is local to {_function(local)}: its {len(uses)} line(s) there"]
        return _response(name, "find_references", "ast", "local name", uses, said, started)
    notes: list[str] = []
    edges = store.graph.references_to(name, limit=top * 10)
    brought = _import_of(name, path, place) if not edges else None
    if brought is not None and brought.original not in (None, name):
        # `compute_tax as ct`: the graph knows the calls by the function's own name; the
        # answer keeps that name as its query, the name its lines hold
        renamed = references(store, brought.original or "", path, top=top)
        if renamed.results:
            alias = f"`{name}` is `{brought.original}`, imported from `{brought.module}`"
            return replace(renamed, notes=[alias, *renamed.notes])
    edges.sort(
        key=lambda e: (
            not e.uses,
            e.hit.path != path,
            _ROLE_ORDER.get(e.hit.role, 3),
            e.hit.path,
            e.line,
        )
    )
    results = [raw_result(e.hit, "graph", rank) for rank, e in enumerate(edges[:top])]
    if (len(edges) < THIN_GRAPH or _names_a_type(store, name)) and len(results) < top:
        seen = {e.hit.chunk_id for e in edges}
        textual = [h for h in _textual(store, name, top * 4) if h.chunk_id not in seen]
        textual.sort(key=lambda h: (h.path != path, _ROLE_ORDER.get(h.role, 3), h.path))
        textual = textual[: top - len(results)]
        for rank, hit in enumerate(textual):
            result = raw_result(hit, "trigram", rank)
            result.flags = ",".join(f for f in (hit.flags, "textual") if f)
            results.append(result)
        if textual:
            notes.append(
                f"the graph holds {len(edges)} reference(s) to `{name}`; {len(textual)} "
                "chunk(s) that only name it in their text follow, marked textual"
            )
    if not results:
        notes.append(f"nothing in the index refers to `{name}`")
    return _response(
        name, "find_references", "graph", "references by name", results, notes, started
    )


def lookup_name(word: str) -> str:
    """The name a look-up is for: the word under the cursor, the last part of a qualified one
    (`Session.send`, `fmt::Display`); a word that is no name is a QueryError."""
    name = word.strip().replace("::", ".").rsplit(".", 1)[-1]
    if not name:
        raise QueryError("no name to look up: put the cursor on one")
    if not name.replace("$", "_").isidentifier():
        raise QueryError(f"`{word.strip()[:80]}` is not a name to look up")
    return name


def _word_at(word: str, path: str | None, place: BufferPlace | None) -> WordAt:
    """What the buffer's tree says of the word under the cursor (nothing without a buffer);
    a keyword is a QueryError."""
    if place is None or path is None:
        return WordAt()
    at = word_at(place.text, language_for(path), place.line, place.col, word.strip())
    if at.keyword:
        raise QueryError(f"`{word.strip()}` is a keyword, not a name: put the cursor on a name")
    return at


def _import_of(name: str, path: str | None, place: BufferPlace | None) -> ImportedName | None:
    """The import that brings `name` into the buffer, where a buffer was sent."""
    if place is None or path is None:
        return None
    return imported_from(place.text, language_for(path), name)


def _parameter(store: Store, callee: str, name: str, path: str | None) -> SearchResult | None:
    """Where the function `callee` (a class: its `__init__`) declares the parameter `name`,
    as the index holds it: the definition seen first from `path` whose head names it."""
    hits = [h for h in store.symbols_named([callee], 50) if h.name == callee]
    if any(h.kind == "class" for h in hits):
        hits += store.symbols_named([f"{callee}.__init__"], 50)
    hits = [h for h in _first_window_of_each(hits) if h.kind in ("function", "method")]
    imported = store.graph.imported_by(path) if path else []
    order = definition_order([callee])
    hits.sort(key=lambda h: (_seen_from(h.path, path, imported), *order(h)))
    texts = store.chunk_texts([h.chunk_id for h in hits])
    whole = re.compile(rf"(?<![\w$]){re.escape(name)}(?![\w$])")
    for hit in hits:
        for i, line in enumerate(texts.get(hit.chunk_id, "").split("\n")):
            if whole.search(line.split("#", 1)[0]):
                at = hit.start_line + i
                return raw_result(replace(hit, start_line=at, end_line=at, score=1.0), "ast", 0)
            if re.search(r"\)\s*(->[^:]*)?:\s*(#.*)?$", line):
                break  # the head ends here: not a parameter of this one
    return None


# the file that is a folder's module (`pkg/__init__.py`, `lib/index.ts`, `src/mod.rs`)
_PACKAGE_FILES = ("__init__", "index", "mod", "lib")


def _module_named(name: str, imported: list[str]) -> str | None:
    """The file the buffer imports whose module is called `name` (`from .utils import x`:
    utils.py; `from . import formatting`; a package's `__init__.py`), if one is."""
    for found in imported:
        parts = found.rsplit("/", 2)
        stem = parts[-1].rsplit(".", 1)[0]
        if stem == name or (stem in _PACKAGE_FILES and len(parts) > 1 and parts[-2] == name):
            return found
    return None


def _fields_of(name: str, path: str | None, place: BufferPlace | None) -> list[FieldAt]:
    """The buffer's fields of that name (the index holds no fields), where a buffer was sent."""
    if place is None or path is None:
        return []
    return fields_named(place.text, language_for(path), name, place.line, place.col)


def _field_response(
    name: str, path: str | None, fields: list[FieldAt], started: float
) -> SearchResponse:
    said = [f"`{name}` is a field of {_owner(fields[0])}, declared in this file"]
    results = [_field_result(path or "", f) for f in fields]
    return _response(name, "find_definition", "ast", "field", results, said, started)


def _owner(field: FieldAt) -> str:
    return f"`{field.owner}`" if field.owner else "a type"


def _field_result(path: str, field: FieldAt) -> SearchResult:
    symbol = f"{field.owner}.{field.name}" if field.owner else field.name
    return _buffer_result(path, field.line, symbol, "field", field.name)


def _function(local: LocalName) -> str:
    named = f"`{local.function}`" if local.function else "the function"
    return f"{named} (line {local.function_line})"


def _local_result(path: str, local: LocalName, line: int) -> SearchResult:
    return _buffer_result(path, line, local.function or "(function)", "local", local.name)


def _buffer_result(path: str, line: int, symbol: str, kind: str, name: str) -> SearchResult:
    """A line of the buffer, read from its tree (a local's, a field's): the index's scores and
    ranks do not apply; `kind` is its flag too."""
    return SearchResult(
        path=path,
        start_line=line,
        end_line=line,
        symbol=symbol,
        kind=kind,
        score=1.0,
        ranks=dict.fromkeys(RETRIEVERS),
        role=file_role(path),
        flags=kind,
        name=name,
    )


def _seen_from(found: str, path: str | None, imported: list[str]) -> int:
    """0: the file asked from; 1: a file (or a Go package's folder) it imports; 2: elsewhere."""
    if found == path:
        return 0
    folder = found.rsplit("/", 1)[0] + "/" if "/" in found else ""
    return 1 if found in imported or folder in imported else 2


def _first_window_of_each(hits: list[ChunkHit]) -> list[ChunkHit]:
    """One chunk per definition: a long one is cut into windows that share its name."""
    first: dict[tuple, ChunkHit] = {}
    for hit in sorted(hits, key=lambda h: (h.path, h.start_line)):
        first.setdefault((hit.path, hit.qualname or hit.name, hit.kind), hit)
    return list(first.values())


def _field_references(
    store: Store, name: str, path: str, place: BufferPlace, field: FieldAt, top: int,
    started: float,
) -> SearchResponse:  # fmt: skip
    """A field of the type the cursor is in (`self.root`): the buffer's lines that read or
    write it as a member, then the other files' chunks that read a member of that name
    (`.root`, `->root`; which type's, the index cannot say), marked textual. The graph
    records no member reads, and the name bare (`root`) matched every local of that name."""
    symbol = f"{field.owner}.{name}" if field.owner else name
    lines = sorted({field.line, *member_lines(place.text, language_for(path), name)})
    results = [_buffer_result(path, line, symbol, "field", name) for line in lines][:top]
    elsewhere = [h for h in _textual(store, name, top * 4, member=True) if h.path != path]
    elsewhere.sort(key=lambda h: (_ROLE_ORDER.get(h.role, 3), h.path, h.start_line))
    for rank, hit in enumerate(elsewhere[: top - len(results)]):
        result = raw_result(hit, "trigram", rank)
        result.flags = ",".join(f for f in (hit.flags, "textual") if f)
        results.append(result)
    said = [
        f"`{name}` is a field of {_owner(field)}: this file's {len(lines)} line(s) that use it"
        + (f", then {len(results) - len(lines)} chunk(s) elsewhere that read a `.{name}`"
           if len(results) > len(lines) else "")
    ]  # fmt: skip
    return _response(name, "find_references", "ast", "field", results, said, started)


def _names_a_type(store: Store, name: str) -> bool:
    return any(h.kind in _TYPES for h in store.symbols_named([name], 50) if h.name == name)


def _textual(store: Store, name: str, limit: int, member: bool = False) -> list[ChunkHit]:
    """Chunks whose text holds `name` as a whole identifier, exact case, beyond a definition's
    own head; scored by how many times. `member`: only as a member after a dot or an arrow
    (`.root`, `->root`), each chunk given as its first line that reads one (where the editor
    lists it). Names under 3 characters: none (no trigram)."""
    if len(name) < 3:
        return []
    hits = [
        h
        for h in store.trigram_search(trigram_match(name), name, limit)
        if h.kind not in _CONTAINERS
    ]
    texts = store.chunk_texts([h.chunk_id for h in hits])
    before = r"(?:\.|->)\s*" if member else r"(?<![\w$])"
    whole = re.compile(rf"{before}{re.escape(name)}(?![\w$])")
    out = []
    for hit in hits:
        lines = texts.get(hit.chunk_id, "").split("\n")
        head = 1 if name in (hit.name, hit.qualname) else 0  # a definition's head is no use
        counts = [len(whole.findall(line)) for line in lines[head:]]
        if not any(counts):
            continue
        found = replace(hit, score=float(sum(counts)))
        if member:
            first = hit.start_line + head + next(i for i, n in enumerate(counts) if n)
            found = replace(found, start_line=first, end_line=first)
        out.append(found)
    return out


def _response(
    name: str, intent: str, modality: str, rule: str, results: list[SearchResult],
    notes: list[str], started: float,
) -> SearchResponse:  # fmt: skip
    return SearchResponse(
        query=name,
        intent=intent,
        confidence=1.0,
        strategy="direct",
        results=results,
        timings_ms={"total": round((time.perf_counter() - started) * 1000, 3)},
        modality=modality,
        rule=rule,
        notes=notes,
    )
