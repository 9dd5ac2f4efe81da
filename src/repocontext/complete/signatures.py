"""The signatures of the functions a call may be to, read from a definition's head: from the
buffer and the retrieved context (`signatures_in`, their text) and from the index
(`RepositorySignatures`, the heads the store keeps); and the call open at the end of a line
(`open_call`). The decoder uses them to keep a call open until its required arguments are
written (complete/steering/calls.py, CallSource).

Keys: `name` a function (or a class, by its constructor), `.name` a method (called as
`x.name(`), `*name` a function of the context called through its module.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Protocol

from .names import code_of


@dataclass(frozen=True)
class Signature:
    """What a call needs: its positional parameters' names and how many are required."""

    params: tuple[str, ...]
    required: int


class SignatureTable(Protocol):
    """Signatures by `signatures_in`'s keys: a dict, or RepositorySignatures."""

    def get(self, key: str, /) -> Signature | None: ...


SignatureLookup = Sequence[SignatureTable]  # asked in order


_PY_DEF = re.compile(r"\bdef\s+([A-Za-z_]\w*)\s*\(", re.S)
_JS_DEF = re.compile(
    r"\bfunction\s*\*?\s*([A-Za-z_$][\w$]*)\s*\(|^\s*(?:async\s+)?([A-Za-z_$][\w$]*)\s*\([^)]*\)\s*\{"
    r"|\b(?:const|let|var)\s+([A-Za-z_$][\w$]*)\s*=\s*(?:async\s*)?\(",
    re.M,
)
_GO_DEF = re.compile(r"\bfunc\s+(?:\([^)]*\)\s*)?([A-Za-z_]\w*)\s*\(")
_PY_CLASS = re.compile(r"\bclass\s+([A-Za-z_]\w*)")


def signatures_in(texts: Iterable[str], language: str | None) -> dict[str, Signature]:
    """The signatures of the functions (and Python classes, by `__init__`) defined in `texts`.
    Read with regular expressions: a definition's head is regular enough, and this runs at
    every key on the buffer's whole text."""
    out: dict[str, Signature] = {}
    for text in texts:
        if language == "python":
            for m in _PY_DEF.finditer(text):
                params = _params_after(text, m.end())
                if params is not None:
                    method = bool(params) and params[0] in ("self", "cls")
                    out.setdefault(("." if method else "") + m[1], _python_signature(params))
            for m in _PY_CLASS.finditer(text):
                init = text.find("def __init__(", m.end())
                nxt = _PY_CLASS.search(text, m.end())
                if init >= 0 and (nxt is None or init < nxt.start()):
                    params = _params_after(text, init + len("def __init__("))
                    if params is not None:
                        out.setdefault(m[1], _python_signature(params))
        elif language in ("javascript", "typescript", "tsx"):
            for m in _JS_DEF.finditer(text):
                name = m[1] or m[2] or m[3]
                if name in ("if", "for", "while", "switch", "catch", "function", "return"):
                    continue
                params = _params_after(text, text.index("(", m.start()) + 1)
                if params is not None:  # `name(...) {` alone on its line: a method
                    out.setdefault(("." if m[2] else "") + name, _js_signature(params))
        elif language == "go":
            for m in _GO_DEF.finditer(text):
                params = _params_after(text, m.end())
                if params is not None:
                    method = m[0].split(m[1])[0].count("(") > 0
                    out.setdefault(("." if method else "") + m[1], _go_signature(params))
    return out


class RepositorySignatures:
    """The repository's definition heads (context.request.RepositoryNames.heads) read as
    signatures when a call to one of them is open, each once: `get` takes the keys of
    `signatures_in` (`name` a function or a class by its constructor, `.name` a method, `*name` a
    function called through its module). Of several definitions of a name, the one that needs
    the fewest arguments (a `)` refused too early is worse than one let through)."""

    def __init__(self, heads: Mapping[str, tuple[tuple[str, str | None, bool], ...]]):
        self.heads = heads
        self._read: dict[str, Signature | None] = {}

    def get(self, key: str) -> Signature | None:
        if key not in self._read:
            self._read[key] = self._signature(key)
        return self._read[key]

    def _signature(self, key: str) -> Signature | None:
        name = key.lstrip(".*")
        want_method = key.startswith(".")
        found: list[Signature] = []
        for head, language, constructor in self.heads.get(name, ()):
            read = _head_signature(head, language, constructor)
            if read is not None and read[1] == want_method:
                found.append(read[0])
        if key.startswith("*") and len(found) > 1:
            return None  # called through a module: only a name defined once is sure
        return min(found, key=lambda sig: sig.required) if found else None


def _head_signature(
    head: str, language: str | None, constructor: bool
) -> tuple[Signature, bool] | None:
    """A definition's head read as (its signature, whether it is a method)."""
    at = head.find("(")
    if at < 0:
        return None
    if language == "go":
        method = head.lstrip().startswith("func (")
        if method:
            at = head.find("(", head.find(")") + 1)
        params = _params_after(head, at + 1)
        return (_go_signature(params), method) if params is not None else None
    params = _params_after(head, at + 1)
    if params is None:
        return None
    if language == "python":
        method = bool(params) and params[0] in ("self", "cls") and not constructor
        return _python_signature(params), method
    if language in ("javascript", "typescript", "tsx"):
        method = not head.lstrip().startswith(("function", "export", "const", "let", "var"))
        return _js_signature(params), method and not constructor
    return None


def callable_by_attribute(signatures: dict[str, Signature]) -> dict[str, Signature]:
    """The context's functions also as `*name`: called through their module
    (`render.render_lines(`, Go's `cobra.NewCommand(`), which a buffer's own function of the
    same name (`subprocess.run(` beside a `def run`) is not."""
    return {"*" + k: v for k, v in signatures.items() if not k.startswith((".", "*"))}


def signature_for(signatures: SignatureLookup, callee: str) -> Signature | None:
    """`callee` as `_open_call` gives it: `name` for `name(`, `.name` for `x.name(`. The
    buffer's and the context's first, then the repository's."""
    for table in signatures:
        sig = (
            (table.get(callee) or table.get("*" + callee[1:]))
            if callee.startswith(".")
            else table.get(callee)
        )
        if sig is not None:
            return sig
    return None


def _params_after(text: str, start: int) -> list[str] | None:
    """The top-level comma-separated parts from `start` to the `)` that closes it."""
    depth = 0
    parts: list[str] = []
    part: list[str] = []
    for i in range(start, min(len(text), start + 2000)):
        ch = text[i]
        if ch in "([{":
            depth += 1
        elif ch in ")]}":
            if depth == 0:
                parts.append("".join(part).strip())
                return [p for p in parts if p]
            depth -= 1
        elif ch == "," and depth == 0:
            parts.append("".join(part).strip())
            part = []
            continue
        part.append(ch)
    return None


def _python_signature(params: list[str]) -> Signature:
    names: list[str] = []
    required = 0
    for i, p in enumerate(params):
        if p.startswith("*") or p == "/":
            break
        name = p.split(":")[0].split("=")[0].strip()
        if i == 0 and name in ("self", "cls"):
            continue
        names.append(name)
        if "=" not in p:
            required = len(names)
    return Signature(tuple(names), required)


def _js_signature(params: list[str]) -> Signature:
    names: list[str] = []
    required = 0
    for p in params:
        if p.startswith("...") or p.startswith("{") or p.startswith("["):
            break
        name = p.split(":")[0].split("=")[0].strip().rstrip("?")
        names.append(name)
        if "=" not in p and "?" not in p.split(":")[0]:
            required = len(names)
    return Signature(tuple(names), required)


def _go_signature(params: list[str]) -> Signature:
    names = [p.split()[0] for p in params if p and not p.split()[-1].startswith("...")]
    return Signature(tuple(names), len(names))


def open_call(line: str) -> tuple[str, int, str] | None:
    """The innermost call open at the end of `line` whose `(` is on it: (callee, commas at its
    level, the current argument's text)."""
    stack: list[tuple[int, int]] = []  # (position of the opener, commas)
    code, in_string = code_of(line)
    if in_string:
        return None
    for i, ch in code:
        if ch in "([{":
            stack.append((i, 0))
        elif ch in ")]}":
            if stack:
                stack.pop()
        elif ch == "," and stack:
            at, commas = stack[-1]
            stack[-1] = (at, commas + 1)
    if not stack:
        return None
    at, commas = stack[-1]
    if line[at] != "(":
        return None
    callee = re.search(r"(\.\s*)?([A-Za-z_]\w*)\s*$", line[:at])
    if callee is None:
        return None
    current = line[at + 1 :].rsplit(",", 1)[-1] if commas else line[at + 1 :]
    return ("." if callee[1] else "") + callee[2], commas, current
