"""Lines and cursors as the editor and tree-sitter count them.

Neovim sends a cursor as a 1-based line and a 0-based byte column; the engine works in
characters. Every place that reads a cursor goes through `cursor_in`, so a cursor past the
end of a line or of the buffer (the editor can send one after a deletion) is clamped the same
way everywhere.
"""

from __future__ import annotations


def split_lines(text: str) -> list[str]:
    """Lines as tree-sitter counts them: on "\\n" only (str.splitlines also splits on \\f,
    \\x1c...), a trailing "\\r" dropped."""
    lines = text.split("\n")
    if lines and lines[-1] == "":
        lines.pop()
    return [line[:-1] if line.endswith("\r") else line for line in lines]


def cursor_in(lines: list[str], line: int, byte_col: int) -> tuple[int, int]:
    """(line clamped to the buffer, 1-based; the character index of `byte_col` in it)."""
    line = min(max(line, 1), max(len(lines), 1))
    current = lines[line - 1] if lines else ""
    raw = current.encode("utf-8")
    return line, len(raw[: max(byte_col, 0)].decode("utf-8", "ignore"))
