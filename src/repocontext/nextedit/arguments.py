"""A call's argument list changed at one call, and the same change at another call.

`argument_change` reads how one call's arguments became another's as one operation (an
argument inserted, deleted, replaced or wrapped at an index, or the whole list replaced);
`apply_argument` does it to another call with as many arguments, or says it does not apply.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from .syntax import Argument, Call

# the token shapes of edits.py, enough to tell boundaries and compare lists
_TOKEN = re.compile(
    r"""(?:[^\W\d]|\$)[\w$]*|\d[\w.]*|"(?:\\.|[^"\\])*"?|'(?:\\.|[^'\\])*'?|`[^`]*`?|\S"""
)


def token_spans(text: str) -> list[tuple[int, int]]:
    return [m.span() for m in _TOKEN.finditer(text)]


def token_texts(text: str) -> list[str]:
    return _TOKEN.findall(text)


@dataclass(frozen=True)
class ArgumentChange:
    """How one call's argument list changed: `op` is insert, delete, replace, wrap or all."""

    op: str
    index: int = 0
    count: int = 0  # how many arguments the calls it applies to hold
    old: str = ""  # replace: the old argument; all: the old list's text
    new: str = ""  # insert, replace: the argument; all: the new list's text
    before: str = ""  # wrap: the text put before the argument
    after: str = ""  # and after it


def argument_change(old: Call, new: Call) -> ArgumentChange | None:
    """How `old`'s arguments became `new`'s, as one operation another call can take."""
    a = [x.text for x in old.arguments]
    b = [x.text for x in new.arguments]
    if len(b) == len(a) + 1:
        for i in range(len(b)):
            if b[:i] + b[i + 1 :] == a:
                return ArgumentChange("insert", i, len(a), new=b[i])
    if len(a) == len(b) + 1:
        for i in range(len(a)):
            if a[:i] + a[i + 1 :] == b:
                return ArgumentChange("delete", i, len(a), old=a[i])
    if len(a) == len(b):
        differ = [i for i in range(len(a)) if a[i] != b[i]]
        if len(differ) == 1:
            i = differ[0]
            at = b[i].find(a[i]) if a[i] else -1
            if at >= 0 and _tokens_whole(b[i], at, len(a[i])):
                before, after = b[i][:at], b[i][at + len(a[i]) :]
                return ArgumentChange("wrap", i, len(a), old=a[i], before=before, after=after)
            return ArgumentChange("replace", i, len(a), old=a[i], new=b[i])
    old_text = old_call_text(old)
    new_text = old_call_text(new)
    return ArgumentChange("all", 0, len(a), old=old_text, new=new_text)


def old_call_text(call: Call) -> str:
    return ", ".join(x.text for x in call.arguments)


def _tokens_whole(text: str, at: int, length: int) -> bool:
    """Whether text[at:at+length] starts and ends on token boundaries."""
    found = token_spans(text)
    bounds = {start for start, _ in found} | {end for _, end in found}
    return at in bounds and at + length in bounds


def apply_argument(change: ArgumentChange, call: Call, line: str) -> str | None:
    """The text between the parentheses of `call` after the change; None where it does not
    apply (another count of arguments, another old argument, already changed)."""
    args = call.arguments
    inner = line[call.open + 1 : call.close]
    base = call.open + 1
    if change.op == "all":
        same = token_texts(inner) == token_texts(change.old)
        return change.new if same else None
    if len(args) != change.count:
        return None
    i = change.index
    if change.op == "insert":
        if not args:
            return change.new
        if i < len(args):
            return _splice(inner, args[i].start - base, args[i].start - base, change.new + ", ")
        return _splice(inner, args[-1].end - base, args[-1].end - base, ", " + change.new)
    arg: Argument = args[i]
    if change.op == "delete":
        if len(args) == 1:
            return ""
        if i < len(args) - 1:
            return _splice(inner, arg.start - base, args[i + 1].start - base, "")
        return _splice(inner, args[i - 1].end - base, arg.end - base, "")
    if change.op == "replace":
        if arg.text != change.old:
            return None
        return _splice(inner, arg.start - base, arg.end - base, change.new)
    if change.op == "wrap":
        if arg.text.startswith(change.before) and arg.text.endswith(change.after):
            return None  # wrapped already
        if _shape(arg.text) != _shape(change.old):
            # `shouldNotHaveHeader(x)` → `utils.shouldNotHaveHeader(x)` says nothing of a
            # string argument elsewhere (`utils.'hey'`), nor `String(req.id)` of `'1'`
            return None
        wrapped = change.before + arg.text + change.after
        return _splice(inner, arg.start - base, arg.end - base, wrapped)
    return None


def _shape(text: str) -> str:
    """What an argument starts with: a name, a literal, or another token."""
    first = token_texts(text)[:1]
    if not first:
        return ""
    if first[0][:1] in "\"'`" or first[0][:1].isdigit():
        return "literal"
    return "name" if re.match(r"(?:[^\W\d]|\$)", first[0]) else first[0]


def _splice(text: str, start: int, end: int, new: str) -> str:
    return text[:start] + new + text[end:]
