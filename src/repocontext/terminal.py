r"""Text from a tree or a server, as the command line may send it to a terminal.

A file name may hold any byte but NUL and "/", and a server's error any character. Sent raw,
ESC ] 52 writes the clipboard, ESC [ 2 J clears the screen, ESC ] 0 sets the window's title,
a newline fakes a line of output, and a carriage return or a right-to-left override (U+202E)
makes the line show something else. `printable` is the one way the command line shows such
text, the way git shows a name (core.quotePath): a text holding a control character (C0,
DEL, C1), a bidirectional control (U+061C, U+200E, U+200F, U+202A-U+202E, U+2066-U+2069), a
line or paragraph separator, or a byte that is not UTF-8 (os.fsdecode's surrogate escapes) is
printed in double quotes with C escapes: `\n`, `\t`, `\033`, the UTF-8 bytes of a character
in octal (`\342\200\256`), `\377` for a byte that is not UTF-8. Any other text is printed as
it is. Unlike git, a name holding `"` or `\` is quoted only when it starts with `"`: that is
enough for a plain name never to read as a quoted one, so two names never print the same and
`from_printable` gives each back. `--json` and the editor get the text itself.
"""

from __future__ import annotations

import re

# What a terminal acts on, or what makes a line show other than what it holds.
_UNSAFE = re.compile(
    "[\x00-\x1f\x7f-\x9f\u061c\u200e\u200f\u2028\u2029\u202a-\u202e\u2066-\u2069\ud800-\udfff]"
)
_UNSAFE_IN_CODE = re.compile(
    "[\x00-\x08\x0b-\x1f\x7f-\x9f\u061c\u200e\u200f\u2028\u2029\u202a-\u202e\u2066-\u2069"
    "\ud800-\udfff]"
)
_C_ESCAPES = {"\a": "a", "\b": "b", "\t": "t", "\n": "n", "\v": "v", "\f": "f", "\r": "r",
              '"': '"', "\\": "\\"}  # fmt: skip
_C_BYTES = {v: k.encode() for k, v in _C_ESCAPES.items()}


def printable(text: str, code: bool = False) -> str:
    """`text` as a terminal may be sent it: as it is, or in double quotes with C escapes when
    it holds anything a terminal acts on (module docstring). `code`: the text is code (a
    suggestion), whose line ends and tabs are kept and which may start with `"`; it is
    quoted whole only when it holds another control character."""
    if code:
        if not _UNSAFE_IN_CODE.search(text):
            return text
    elif not _UNSAFE.search(text) and not text.startswith('"'):
        return text
    out = ['"']
    for char in text:
        if char in _C_ESCAPES:
            out.append("\\" + _C_ESCAPES[char])
        elif "\udc80" <= char <= "\udcff":  # a byte that is not UTF-8, as os.fsdecode keeps it
            out.append(f"\\{ord(char) - 0xDC00:03o}")
        elif "\ud800" <= char <= "\udfff":  # a lone surrogate from a server's JSON
            out.append(f"\\u{ord(char):04x}")
        elif _UNSAFE.match(char):
            out.extend(f"\\{b:03o}" for b in char.encode("utf-8"))
        else:
            out.append(char)
    out.append('"')
    return "".join(out)


def from_printable(shown: str) -> str:
    """The text `printable` showed as `shown` (bytes that are not UTF-8 as os.fsdecode
    gives them); a text that is not a quoted form comes back as it is."""
    if len(shown) < 2 or not shown.startswith('"') or not shown.endswith('"'):
        return shown
    pieces: list[str] = []
    raw = bytearray()
    body, i = shown[1:-1], 0
    while i < len(body):
        char = body[i]
        if char == '"' or _UNSAFE.match(char):
            return shown  # not a quoted form: those are escaped in one
        if char != "\\":
            raw += char.encode("utf-8")
            i += 1
            continue
        escape = body[i + 1 : i + 2]
        if escape in _C_BYTES:
            raw += _C_BYTES[escape]
            i += 2
        elif re.fullmatch("[0-3][0-7][0-7]", body[i + 1 : i + 4]):
            raw.append(int(body[i + 1 : i + 4], 8))
            i += 4
        elif escape == "u" and re.fullmatch("d[89a-f][0-9a-f]{2}", body[i + 2 : i + 6]):
            pieces.append(raw.decode("utf-8", "surrogateescape"))
            raw.clear()
            pieces.append(chr(int(body[i + 2 : i + 6], 16)))
            i += 6
        else:
            return shown
    pieces.append(raw.decode("utf-8", "surrogateescape"))
    return "".join(pieces)
