"""Where a cursor stands in its line: in code, in a string, or in a comment; and, in code
inside a string (a Python f-string's `{...}`, a JavaScript template literal's `${...}`),
where that code begins.

`f"{user.` is code after `{`: the receiver `user` is typed like any other, while `f"{{user.`
and `"{user."` are text. The line is read left to right once, with a stack of what is open
(strings, their interpolations, brackets inside those), so nested quotes and braces are
followed: `f"{d['k']} {user.` is code at its end.

Only the cursor's line is read (a string opened on a line above is not seen), and only for
the languages that have interpolations; `line_state` answers None for the others.
"""

from __future__ import annotations

from dataclasses import dataclass

# lower-cased; `t`: template strings (Python 3.14)
_PY_PREFIXES = frozenset("r u f b t br rb fr rf tr rt".split())
_JS = ("javascript", "typescript", "tsx")


@dataclass(frozen=True)
class LineState:
    kind: str  # "code" | "string" | "comment"
    code_start: int = 0  # where the code the cursor is in begins (after `{` or `${`)


@dataclass
class _Frame:
    kind: str  # "code" | "string" | "spec" (a format spec: `{x:>{width}}`)
    start: int = 0  # code: its first character
    quote: str = ""  # string: its closing quote
    braces: bool = False  # string: `{` opens code (f-string), `${` (template literal)
    raw: bool = False
    depth: int = 0  # code: brackets open inside it


def line_state(before: str, language: str | None) -> LineState | None:
    """What the end of `before` (the line up to the cursor) is in; None for a language
    without interpolations (the caller keeps its own reading)."""
    if language == "python":
        return _scan(before, python=True)
    if language in _JS:
        return _scan(before, python=False)
    return None


def _scan(text: str, python: bool) -> LineState:
    stack = [_Frame("code")]
    i, n = 0, len(text)
    while i < n:
        top = stack[-1]
        ch = text[i]
        if top.kind == "code":
            if python and ch == "#" or not python and text.startswith("//", i):
                return LineState("comment")
            if not python and text.startswith("/*", i):
                end = text.find("*/", i + 2)
                if end < 0:
                    return LineState("comment")
                i = end + 2
                continue
            if ch in "'\"" or (ch == "`" and not python):
                quote = text[i : i + 3] if python and text[i : i + 3] == ch * 3 else ch
                prefix = _python_prefix(text, i) if python else ""
                stack.append(
                    _Frame(
                        "string",
                        quote=quote,
                        braces=("f" in prefix or "t" in prefix) if python else ch == "`",
                        raw="r" in prefix,
                    )
                )
                i += len(quote)
                continue
            if ch in "([{":
                top.depth += 1
            elif ch in ")]}":
                if top.depth == 0 and ch == "}" and len(stack) > 1:
                    stack.pop()  # the end of an interpolation: back in its string
                    if stack[-1].kind == "spec":
                        stack.pop()
                elif top.depth > 0:
                    top.depth -= 1
            elif python and len(stack) > 1 and top.depth == 0:
                if ch == "!" and text[i + 1 : i + 2] in ("r", "s", "a"):
                    i += 2  # a conversion: `{x!r}`
                    continue
                if ch == ":" and text[i + 1 : i + 2] != "=":
                    stack.append(_Frame("spec"))  # `{x:>10}`: text up to its `}`
            i += 1
            continue
        # in a string or a format spec
        if top.kind == "spec":
            if ch == "{":
                stack.append(_Frame("code", start=i + 1))
            elif ch == "}":
                stack.pop()  # the spec
                stack.pop()  # its interpolation
            i += 1
            continue
        if ch == "\\" and not top.raw:
            i += 2
            continue
        if text.startswith(top.quote, i):
            stack.pop()
            i += len(top.quote)
            continue
        if top.braces and python and ch in "{}":
            if text[i + 1 : i + 2] == ch:  # `{{`, `}}`: a brace, as text
                i += 2
                continue
            if ch == "{":
                stack.append(_Frame("code", start=i + 1))
        elif top.braces and not python and text.startswith("${", i):
            stack.append(_Frame("code", start=i + 2))
            i += 2
            continue
        i += 1
    top = stack[-1]
    if top.kind == "code":
        return LineState("code", top.start)
    return LineState("string")


def _python_prefix(text: str, quote_at: int) -> str:
    """The string prefix before a quote (`f`, `rb`...), lower-cased; "" when the letters
    there end a longer name (`elif"` is not a prefix)."""
    j = quote_at
    while j > 0 and quote_at - j < 2 and text[j - 1].isalpha():
        j -= 1
    prefix = text[j:quote_at].lower()
    if j > 0 and (text[j - 1].isalnum() or text[j - 1] == "_"):
        return ""
    return prefix if prefix in _PY_PREFIXES else ""
