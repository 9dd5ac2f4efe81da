"""Decoding steered by what the buffer and the index know: the repository acts on the
distribution of the next token, where a small model listens, not only in the prompt, which it
mostly ignores (bench/results/context_use.md: the callee's own definition in the prompt gave
gemma-3-270m 45 exact first lines against 44 without it).

The run states what it knows in words (`SteeringFacts`: names in scope, the receiver's members,
the signatures of the functions it may call, text to copy from); `Steering` turns that into
logit changes with the model's vocabulary, one source a class:

- `MemberSource`: after `obj.`, the names the receiver's class has (healing.NameBias);
- `ScopeSource`: where a name is used (not defined), a token that would start or go on with a
  name no one defined is pushed down: the buffer's names, the context's, the language's
  builtins and keywords. Monitor-guided decoding (Agrawal et al., NeurIPS 2023) masks such
  identifiers with a static analysis; here it is a penalty, since the buffer is a guess at
  what is in scope and a library's names are not in it;
- `CallSource`: inside `callee(` with a known signature, no `)` before its required
  positional arguments, and a local named like the next parameter is favoured for it;
- `CopySource`: a token n-gram cache (Hellendoorn & Devanbu, FSE 2017) over the prompt and the
  context (also the context the prompt does not hold), interpolated with the model's
  distribution: a continuation seen in the project beats an invented one.

Every source is a bias, never a ban: a confident model still writes a name the buffer does not
show. The strengths were chosen on bench/context_use.py's requests tasks and checked on rich's
(bench/results/context_use.md).
"""

from __future__ import annotations

import bisect
import builtins
import keyword
import re
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Protocol

import numpy as np

from .healing import NameBias, TokenPieces

SCOPE_PENALTY = 3.0  # logits taken from a token that starts or goes on with an unknown name
CALL_PENALTY = 6.0  # logits taken from a `)` that would close a call short of its arguments
PARAM_BONUS = 2.0  # logits added to the spelling of a local named like the next parameter
COPY_WEIGHT = 0.3  # the n-gram cache's share of the mixture at its longest match
COPY_ORDER = 3  # tokens of context an n-gram is looked up by (then fewer, down to 2)
MAX_SCOPE_NAMES = 200_000  # past this, the scope says little: the source stays off
FAVOUR_BONUS = 4.0  # logits added to the next token of a known name from elsewhere
FAVOUR_MIN_LETTERS = 2  # a word begun with at least this many letters
MAX_FAVOURED = 8  # names a begun word may be, at most

SOURCES = ("members", "scope", "calls", "copy")

_WORD = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")
_TRAILING_WORD = re.compile(rb"[A-Za-z_][A-Za-z0-9_]*$|$")
_LEADING_WORD = re.compile(rb"[A-Za-z0-9_]*")
# words after which a name is being defined, not used
_DEFINING = re.compile(
    r"(?:^|[^\w.])(?:def|class|function|func|fn|let|const|var|import|from|as|for|lambda|"
    r"interface|type|struct|enum|package|mod|use|local|module|global|nonlocal)"
    r"\s+(?:[\w, ]*,\s*)?$"
)
# a definition's parameter list, open on this line
_PARAMS_OPEN = re.compile(
    r"^\s*(?:async\s+)?(?:def|function|func|fn)\b[^(]*\(|^\s*(?:local\s+)?function\b[^(]*\("
)
_KEYWORD_ARGUMENTS = {"python", "ruby"}  # languages where `f(name=...)` names a parameter
_LINE_COMMENT = {"python": "#", "ruby": "#", "lua": "--"}  # others: //

_KEYWORDS = {
    "python": set(keyword.kwlist) | set(keyword.softkwlist) | set(dir(builtins)),
    "javascript": set(
        "await break case catch class const continue debugger default delete do else export "
        "extends false finally for function if import in instanceof let new null return super "
        "switch this throw true try typeof undefined var void while with yield async of "
        "Array Boolean Date Error JSON Map Math Number Object Promise RegExp Set String Symbol "
        "console document globalThis parseInt parseFloat isNaN require module exports window "
        "process Buffer setTimeout clearTimeout setInterval clearInterval".split()
    ),
    "go": set(
        "break case chan const continue default defer else fallthrough for func go goto if "
        "import interface map package range return select struct switch type var nil true false "
        "iota append cap clear close complex copy delete imag len make max min new panic print "
        "println real recover any bool byte comparable complex64 complex128 error float32 "
        "float64 int int8 int16 int32 int64 rune string uint uint8 uint16 uint32 uint64 "
        "uintptr".split()
    ),
}
_KEYWORDS["typescript"] = _KEYWORDS["javascript"] | set(
    "abstract any boolean declare enum implements interface keyof namespace never number "
    "private protected public readonly string type unknown void Record Partial Readonly "
    "Required Pick Omit Exclude Extract ReturnType".split()
)
_KEYWORDS["tsx"] = _KEYWORDS["typescript"]


@dataclass(frozen=True)
class Signature:
    """What a call needs: its positional parameters' names and how many are required."""

    params: tuple[str, ...]
    required: int


class SignatureTable(Protocol):
    """Signatures by `signatures_in`'s keys: a dict, or RepositorySignatures."""

    def get(self, key: str, /) -> Signature | None: ...


SignatureLookup = Sequence[SignatureTable]  # asked in order


@dataclass
class SteeringFacts:
    """What the run knows when the first token is chosen, in words; `pending`: the context
    build has not finished, so the run is asked again (its members and signatures may come)."""

    before: str = ""  # the line up to the cursor
    language: str | None = None
    names: frozenset[str] = frozenset()  # names in scope
    near: frozenset[str] = frozenset()  # of those, the buffer's (the prompt shows them)
    members: tuple[str, ...] = ()  # after `obj.`: the receiver's members
    member_typed: str = ""  # the member's letters typed so far
    signatures: dict[str, Signature] = field(default_factory=dict)  # the buffer's, the context's
    repository: SignatureTable | None = None  # the index's, read when a call is open
    copy_texts: tuple[str, ...] = ()  # the context's texts, for the n-gram cache
    sources: tuple[str, ...] = SOURCES  # the sources turned on
    pending: bool = False

    @property
    def signature_tables(self) -> tuple[SignatureTable, ...]:
        tables: tuple[SignatureTable, ...] = (self.signatures,)
        return tables + ((self.repository,) if self.repository is not None else ())


def names_in(texts: Iterable[str], language: str | None) -> frozenset[str]:
    """The identifiers of `texts` and the language's keywords and builtins."""
    found: set[str] = set(_KEYWORDS.get(language or "", ()))
    for text in texts:
        found.update(_WORD.findall(text))
    return frozenset(found)


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


class Vocabulary:
    """The model's tokens seen as the start or the rest of a name: each token's leading word
    characters (after one optional space), grouped, so that the tokens that spell a part of a
    name are dictionary look-ups. Built once per model, from `TokenPieces`."""

    def __init__(self, pieces: TokenPieces):
        n = len(pieces.pieces)
        self.pieces = pieces
        self.word = np.zeros(n, dtype=bool)  # begins with a letter or `_`: a name goes on
        self.spaced_word = np.zeros(n, dtype=bool)  # " name...": a name starts after a space
        self.closing = np.zeros(n, dtype=bool)  # holds a `)`
        self._parts: dict[tuple[bool, bytes], list[int]] = {}
        for i, p in enumerate(pieces.pieces):
            if not p:
                continue
            if b")" in p:
                self.closing[i] = True
            spaced = p[:1] == b" "
            body = p[1:] if spaced else p
            m = re.match(rb"[A-Za-z_][A-Za-z0-9_]*", body)
            if m is None:
                continue
            (self.spaced_word if spaced else self.word)[i] = True
            self._parts.setdefault((spaced, m.group()), []).append(i)

    def spelling(self, rests: Iterable[bytes], spaced: bool) -> np.ndarray:
        """Tokens whose word part is a non-empty prefix of one of `rests`, the rest of a name
        still to spell (those that would not leave every name)."""
        ids: list[int] = []
        seen: set[bytes] = set()
        for rest in rests:
            for k in range(1, len(rest) + 1):
                part = rest[:k]
                if part in seen:
                    continue
                seen.add(part)
                ids.extend(self._parts.get((spaced, part), ()))
        return np.asarray(ids, dtype=np.int64)


@dataclass
class Place:
    """Where the next token starts: the line before it (bytes), the bytes token healing still
    makes it spell (the end of what was typed, backed up), and every token so far."""

    line: bytes
    ahead: bytes
    context: list[int]


class Source:
    """One steering source for one generation: `apply` changes the logits in place before a
    token is chosen."""

    name = ""

    def apply(self, logits: np.ndarray, at: Place) -> None:
        raise NotImplementedError

    def consumed(self, token: int) -> None:
        """The token chosen (sources that follow a spelling)."""


class MemberSource(Source):
    """After `obj.`: healing.NameBias, the receiver's members spelled as the model would."""

    name = "members"

    def __init__(self, bias: NameBias):
        self.bias = bias

    def apply(self, logits: np.ndarray, at: Place) -> None:
        if self.bias.active:
            logits[:] = self.bias.apply(logits)

    def consumed(self, token: int) -> None:
        self.bias.consumed(token)


def _in_string_or_comment(line: str, language: str | None) -> bool:
    quote: str | None = None
    comment = _LINE_COMMENT.get(language or "", "//")
    i = 0
    while i < len(line):
        ch = line[i]
        if quote is not None:
            if ch == "\\":
                i += 1
            elif ch == quote:
                quote = None
        elif ch in "\"'`":
            quote = ch
        elif line.startswith(comment, i):
            return True
        i += 1
    return quote is not None


def use_position(prefix: str, language: str | None) -> bool:
    """Is a name written after `prefix` (the line before it) a use of a name, not a new one?
    Line starts (an assignment's target?), member access, definitions, parameter lists,
    strings and comments are left to the model."""
    if not prefix.strip() or prefix.rstrip().endswith((".", "->", "::", "{")):
        return False
    if prefix.endswith(".") or _DEFINING.search(prefix):
        return False
    if _in_string_or_comment(prefix, language):
        return False
    params = _PARAMS_OPEN.search(prefix)
    if params is not None and _depth(prefix[params.end() :]) >= 0:
        return False
    return True


def _depth(text: str) -> int:
    depth = 0
    for ch in text:
        if ch in "([{":
            depth += 1
        elif ch in ")]}":
            depth -= 1
    return depth


class ScopeSource(Source):
    """Where a name is used, the tokens that would start or go on with a name not in scope
    lose `SCOPE_PENALTY`. Digits, strings and punctuation are never touched."""

    name = "scope"

    def __init__(
        self,
        vocab: Vocabulary,
        names: frozenset[str],
        language: str | None,
        signatures: dict[str, Signature] | None = None,
        tables: SignatureLookup = (),
        near: frozenset[str] = frozenset(),
        tokenize: Callable[[bytes], list[int]] | None = None,
    ):
        """`names`: every name in scope; `near`: those the prompt shows (the buffer's), which
        the model is left to spell itself."""
        self.vocab = vocab
        self.near = {n.encode() for n in near}
        self.tokenize = tokenize or (lambda text: [])
        self._first: dict[bytes, int | None] = {}
        self.signatures = tables or (signatures or {},)
        params = {p for sig in (signatures or {}).values() for p in sig.params}
        self.names = sorted(n.encode() for n in names | params)
        self.language = language
        # by the letters typed: the tokens that spell on a known name (None: no known name
        # begins so, and the model is left alone)
        self._allowed: dict[bytes, np.ndarray | None] = {}
        self._names_mask = vocab.word | vocab.spaced_word

    def apply(self, logits: np.ndarray, at: Place) -> None:
        word = _TRAILING_WORD.search(at.line)
        typed = word.group() if word else b""
        prefix = at.line[: len(at.line) - len(typed)]
        text = prefix.decode("utf-8", "replace")
        if _in_string_or_comment(text, self.language):
            return
        ahead = _LEADING_WORD.match(at.ahead)
        word_so_far = typed + (ahead.group() if ahead else b"")
        if len(word_so_far) >= FAVOUR_MIN_LETTERS and not text.rstrip().endswith("."):
            self._favour(logits, typed, word_so_far, text)
        if not use_position(text, self.language) or self._maybe_keyword(text):
            return
        if typed not in self._allowed:
            self._allowed[typed] = self._spelling(typed)
        allowed = self._allowed[typed]
        if allowed is None:
            return
        # a name goes on (`typed` so far), or starts, with or without its space before it
        mask = (self.vocab.word if typed else self._names_mask).copy()
        mask[allowed] = False
        logits[mask] -= SCOPE_PENALTY

    def _favour(self, logits: np.ndarray, typed: bytes, word: bytes, text: str) -> None:
        """A word begun (`word`: its letters typed and those still to spell) that few known
        names begin with, none of them the buffer's: the next token of each one's spelling
        gets FAVOUR_BONUS. The model knows the buffer's names (it reads them); a name from
        elsewhere in the repository it can only guess."""
        if _DEFINING.search(text) or _PARAMS_OPEN.search(text):
            return
        lo = bisect.bisect_left(self.names, word)
        hi = bisect.bisect_left(self.names, word + b"\xff", lo)
        if lo == hi or hi - lo > MAX_FAVOURED:
            return
        names = self.names[lo:hi]
        if any(n in self.near for n in names):
            return
        for name in names:
            rest = name[len(typed) :]
            if rest not in self._first:
                ids = self.tokenize(rest) if rest else []
                self._first[rest] = ids[0] if ids else None
            first = self._first[rest]
            if first is not None:
                logits[first] += FAVOUR_BONUS

    def _maybe_keyword(self, text: str) -> bool:
        """An argument's start in a call whose signature is unknown may be a keyword argument
        (`json.dump(tree, fh, ensure_ascii=`), a name no buffer shows: left to the model."""
        if self.language not in _KEYWORD_ARGUMENTS:
            return False
        call = _open_call(text)
        return (
            call is not None
            and not call[2].strip()
            and signature_for(self.signatures, call[0]) is None
        )

    def _spelling(self, typed: bytes) -> np.ndarray | None:
        lo = bisect.bisect_left(self.names, typed)
        hi = bisect.bisect_left(self.names, typed + b"\xff", lo)
        if typed and lo == hi:
            return None
        rests = [n[len(typed) :] for n in self.names[lo:hi]]
        if typed:
            return self.vocab.spelling(rests, spaced=False)
        return np.concatenate(
            [self.vocab.spelling(rests, spaced=False), self.vocab.spelling(rests, spaced=True)]
        )


def _open_call(line: str) -> tuple[str, int, str] | None:
    """The innermost call open at the end of `line` whose `(` is on it: (callee, commas at its
    level, the current argument's text)."""
    stack: list[tuple[int, int]] = []  # (position of the opener, commas)
    quote: str | None = None
    i = 0
    while i < len(line):
        ch = line[i]
        if quote is not None:
            if ch == "\\":
                i += 1
            elif ch == quote:
                quote = None
        elif ch in "\"'`":
            quote = ch
        elif ch in "([{":
            stack.append((i, 0))
        elif ch in ")]}":
            if stack:
                stack.pop()
        elif ch == "," and stack:
            at, commas = stack[-1]
            stack[-1] = (at, commas + 1)
        i += 1
    if quote is not None or not stack:
        return None
    at, commas = stack[-1]
    if line[at] != "(":
        return None
    callee = re.search(r"(\.\s*)?([A-Za-z_]\w*)\s*$", line[:at])
    if callee is None:
        return None
    current = line[at + 1 :].rsplit(",", 1)[-1] if commas else line[at + 1 :]
    return ("." if callee[1] else "") + callee[2], commas, current


class CallSource(Source):
    """Inside `callee(` with a known signature: a `)` short of the required positional
    arguments loses `CALL_PENALTY`; at an argument's start, a name in scope equal to the
    parameter's gets `PARAM_BONUS` on its first token."""

    name = "calls"

    def __init__(
        self,
        vocab: Vocabulary,
        signatures: SignatureLookup,
        names: frozenset[str],
        tokenize: Callable[[bytes], list[int]],
        defining: Callable[[str], bool],
    ):
        self.vocab = vocab
        self.signatures = signatures
        self.names = names
        self.tokenize = tokenize
        self.defining = defining  # the line defines a function: its `(` is no call
        self._first: dict[bytes, int | None] = {}

    def apply(self, logits: np.ndarray, at: Place) -> None:
        text = at.line.decode("utf-8", "replace")
        call = _open_call(text)
        if call is None:
            return
        callee, commas, current = call
        sig = signature_for(self.signatures, callee)
        if sig is None or self.defining(text):
            return
        written = commas + (1 if current.strip() else 0)
        if written < sig.required:
            logits[self.vocab.closing] -= CALL_PENALTY
        if current.strip() or commas >= len(sig.params):
            return
        param = sig.params[commas]
        if param not in self.names:
            return
        # after `,` the name comes with its space; after `(` or `, ` without
        spelled = (b" " if commas and not current else b"") + param.encode()
        first = self._first.get(spelled, -1)
        if first == -1:
            ids = self.tokenize(spelled)
            first = ids[0] if ids else None
            self._first[spelled] = first
        if first is not None:
            logits[first] += PARAM_BONUS


class CopySource(Source):
    """A token n-gram cache over the prompt and the context, mixed with the model's
    distribution: p = (1 - w) p_model + w p_cache, w growing with the match's length and
    count. Only the tokens the cache has seen change; the rest keep their order."""

    name = "copy"

    def __init__(self, sequences: Sequence[Sequence[int]]):
        self.table: dict[tuple[int, ...], dict[int, int]] = {}
        for seq in sequences:
            for order in range(2, COPY_ORDER + 1):
                for i in range(order, len(seq)):
                    key = tuple(seq[i - order : i])
                    counts = self.table.setdefault(key, {})
                    counts[seq[i]] = counts.get(seq[i], 0) + 1

    def apply(self, logits: np.ndarray, at: Place) -> None:
        context = at.context
        for order in range(COPY_ORDER, 1, -1):
            if len(context) < order:
                continue
            counts = self.table.get(tuple(context[-order:]))
            if not counts:
                continue
            total = sum(counts.values())
            weight = COPY_WEIGHT * (order / COPY_ORDER) * total / (total + 1)
            top = float(np.max(logits))
            log_z = top + float(np.log(np.exp(logits - top).sum()))
            for token, count in counts.items():
                p_model = float(np.exp(logits[token] - log_z))
                mixed = (1 - weight) * p_model + weight * count / total
                logits[token] = log_z + np.log(mixed / (1 - weight))
            return


class Steering:
    """One generation's sources. `line_start`: the line's text before the first generated
    token (the healed bytes off); `healed`: those bytes, which the first tokens spell again.
    The backend reports each token with `consumed`."""

    def __init__(
        self,
        sources: list[Source],
        line_start: bytes,
        detokenize: Callable[[list[int]], bytes],
        prompt: Sequence[int],
        healed: bytes = b"",
    ):
        self.sources = sources
        self.line_start = line_start
        self.healed = healed
        self.detokenize = detokenize
        self.generated: list[int] = []
        self.at = Place(line_start.rsplit(b"\n", 1)[-1], healed, list(prompt))

    def __bool__(self) -> bool:
        return bool(self.sources)

    def replace(self, sources: list[Source]) -> None:
        """Sources built again with more facts (the context arrived): same names replaced."""
        names = {s.name for s in sources}
        self.sources = [s for s in self.sources if s.name not in names] + sources

    def apply(self, logits: np.ndarray) -> np.ndarray:
        out = np.array(logits, dtype=np.float32, copy=True)
        for source in self.sources:
            source.apply(out, self.at)
        return out

    def consumed(self, token: int) -> None:
        for source in self.sources:
            source.consumed(token)
        self.generated.append(token)
        self.at.context.append(token)
        spelled = self.detokenize(self.generated)
        self.at.line = (self.line_start + spelled).rsplit(b"\n", 1)[-1]
        self.at.ahead = self.healed[len(spelled) :] if self.healed.startswith(spelled) else b""

    @property
    def spelling_a_name(self) -> bool:
        """A member is being spelled (prompt-lookup drafts wait)."""
        return any(isinstance(s, MemberSource) and s.bias.active for s in self.sources)


def build_sources(
    facts: SteeringFacts,
    vocab: Vocabulary | None,
    tokenize: Callable[[bytes], list[int]],
    prompt: Sequence[int],
    healed: bytes = b"",
    first: bool = True,
    word_start: np.ndarray | None = None,
) -> list[Source]:
    """The sources `facts` call for; `first`: the generation's first token (members are
    steered only from there: NameBias follows a spelling from its start). `vocab` None: not
    built yet, only the members steer (`word_start`: TokenPieces', for their word end)."""
    on = set(facts.sources)
    sources: list[Source] = []
    if first and "members" in on and facts.members:
        bias = NameBias(tokenize, facts.members, facts.member_typed, healed, word_start)
        sources.append(MemberSource(bias))
    if vocab is None:
        return sources
    names = facts.names
    if "scope" in on and names and len(names) <= MAX_SCOPE_NAMES:
        tables = facts.signature_tables
        scope = ScopeSource(
            vocab, names, facts.language, facts.signatures, tables, facts.near, tokenize
        )
        sources.append(scope)
    if "calls" in on and (facts.signatures or facts.repository is not None):
        tables = facts.signature_tables
        sources.append(CallSource(vocab, tables, names, tokenize, _defines_here))
    if "copy" in on:
        sequences = [list(prompt)] + [tokenize(t.encode()) for t in facts.copy_texts]
        sources.append(CopySource(sequences))
    return sources


def _defines_here(line: str) -> bool:
    params = _PARAMS_OPEN.search(line)
    return params is not None and _depth(line[params.end() :]) >= 0
