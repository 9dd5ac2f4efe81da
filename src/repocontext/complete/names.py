"""What the code around the cursor says about names, read from its text alone: the names a
piece of code mentions, and whether a name written at a place is a use of one (which the
decoder may steer, complete/steering/) or a new one (which it leaves to the model).

Regular expressions and a small scanner, not a parse: this runs at every token generated, on
the line being written, which is rarely a whole statement yet.
"""

from __future__ import annotations

import builtins
import keyword
import re
from collections.abc import Iterable

_WORD = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")
# words after which a name is being defined, not used (`for a, ` too)
DEFINING = re.compile(
    r"(?:^|[^\w.])(?:def|class|function|func|fn|let|const|var|import|from|as|for|lambda|"
    r"interface|type|struct|enum|package|mod|use|local|module|global|nonlocal)"
    r"\s+(?:[\w, ]*,\s*)?$"
)
# a definition's parameter list, open on this line
PARAMS_OPEN = re.compile(
    r"^\s*(?:async\s+)?(?:def|function|func|fn)\b[^(]*\(|^\s*(?:local\s+)?function\b[^(]*\("
)
KEYWORD_ARGUMENTS = {"python", "ruby"}  # languages where `f(name=...)` names a parameter
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


def names_in(texts: Iterable[str], language: str | None) -> frozenset[str]:
    """The identifiers of `texts` and the language's keywords and builtins."""
    found: set[str] = set(_KEYWORDS.get(language or "", ()))
    for text in texts:
        found.update(_WORD.findall(text))
    return frozenset(found)


def code_of(line: str) -> tuple[list[tuple[int, str]], bool]:
    """The characters of `line` outside its strings, with their places, and whether the line
    ends inside a string (quotes paired on the line, a backslash escaping)."""
    out: list[tuple[int, str]] = []
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
        else:
            out.append((i, ch))
        i += 1
    return out, quote is not None


def in_string_or_comment(line: str, language: str | None) -> bool:
    """Does `line` end inside a string or a line comment?"""
    comment = _LINE_COMMENT.get(language or "", "//")
    code, in_string = code_of(line)
    return in_string or any(line.startswith(comment, i) for i, _ in code)


def use_position(prefix: str, language: str | None) -> bool:
    """Is a name written after `prefix` (the line before it) a use of a name, not a new one?
    Line starts (an assignment's target?), member access, definitions, parameter lists,
    strings and comments are left to the model."""
    if not prefix.strip() or prefix.rstrip().endswith((".", "->", "::", "{")):
        return False
    if prefix.endswith(".") or DEFINING.search(prefix):
        return False
    if in_string_or_comment(prefix, language):
        return False
    return not defines_here(prefix)


def defines_here(line: str) -> bool:
    """Does `line` end inside the parameter list of a function it defines?"""
    params = PARAMS_OPEN.search(line)
    return params is not None and depth_of(line[params.end() :]) >= 0


def depth_of(text: str) -> int:
    """Brackets opened less brackets closed."""
    depth = 0
    for ch in text:
        if ch in "([{":
            depth += 1
        elif ch in ")]}":
            depth -= 1
    return depth
