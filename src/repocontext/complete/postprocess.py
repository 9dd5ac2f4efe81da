"""Where a suggestion stops and what is left of it once it is cleaned.

Mid-line (text after the cursor): one line, without the part that repeats what follows the
cursor (closing brackets, the rest of the line). At the end of a line: up to a block, ending
at a line that dedents below the cursor's line, at a blank line after some content, or at a
line the suggestion already holds (a small model's repetition loop). A
suggestion that is empty, only whitespace, or a copy of the lines that already follow is
dropped; its last lines are dropped where they are the lines that follow.
"""

from __future__ import annotations

from dataclasses import dataclass

MAX_BLOCK_LINES = 8


@dataclass(frozen=True)
class CursorText:
    before: str  # the current line up to the cursor
    after: str  # the current line after the cursor
    next_lines: tuple[str, ...] = ()  # the lines below, as they are

    @property
    def mid_line(self) -> bool:
        return bool(self.after.strip())

    @property
    def indent(self) -> int:
        return len(self.before) - len(self.before.lstrip())


def stop_index(text: str, cur: CursorText) -> int | None:
    """Where generation should stop (an index into `text`), or None to go on.

    Called as tokens arrive: a last line that is still growing is judged once it has
    content (its indentation is then final) or once a newline completes it.
    """
    if cur.mid_line:
        nl = text.find("\n")
        return nl if nl >= 0 else None
    lines = text.split("\n")
    base = cur.indent if cur.before.strip() else len(cur.before)
    seen_content = bool(lines[0].strip() or cur.before.strip())
    offset = len(lines[0])  # where the newline ending line 0 sits
    for i in range(1, len(lines)):
        line = lines[i]
        complete = i < len(lines) - 1
        if line.strip():
            if len(line) - len(line.lstrip()) < base:
                return offset  # dedents out of the block
            if complete and len(line.strip()) > 3 and line in lines[:i]:
                return offset  # the model has started to repeat itself
            seen_content = True
        elif complete and seen_content:
            return offset  # a blank line after content ends the block
        if i >= MAX_BLOCK_LINES:
            return offset
        offset += 1 + len(line)
    return None


def clean(text: str, cur: CursorText) -> str:
    """The suggestion as it will be shown; "" when there is nothing worth showing."""
    end = stop_index(text, cur)
    if end is not None:
        text = text[:end]
    if cur.mid_line:
        text = _strip_overlap(text.split("\n", 1)[0], cur.after)
        return "" if not text.strip() or _glues(text, cur.after) else _mid_line_end(text, cur)
    text = "\n".join(line.rstrip() for line in text.split("\n")).rstrip()
    if not text.strip():
        return ""
    if _repeats_existing(text, cur):
        return ""
    return _without_repeated_tail(text, cur)


def _glues(text: str, after: str) -> bool:
    """Inserted before `after`, would `text` run into the word there? `0` before `value)`
    made `max(0, 0value)`: never what the model meant, and worse than nothing on screen."""
    return bool(after) and _word_char(after[0]) and _word_char(text.rstrip()[-1:] or " ")


def _word_char(c: str) -> bool:
    return c.isalnum() or c == "_"


def _mid_line_end(text: str, cur: CursorText) -> str:
    """A mid-line suggestion keeps one space at its end where it separates it from the text
    after the cursor (`0, ` before `value)`), which the cleaning of line ends would drop."""
    stripped = text.rstrip()
    keep = text[len(stripped) :][:1] if not cur.after[:1].isspace() else ""
    return stripped + keep


def _strip_overlap(text: str, after: str) -> str:
    """Drop the end of `text` that the rest of the line already holds."""
    rest = after.strip()
    if not rest:
        return text
    if rest in text:
        return text[: text.rindex(rest)]
    for k in range(len(rest), 0, -1):
        if text.endswith(rest[:k]):
            return text[: len(text) - k]
    return text


def _without_repeated_tail(text: str, cur: CursorText) -> str:
    """Drop the suggestion's last lines where they are the lines that follow the cursor (a
    closing bracket or `end` the buffer already has), as llama.vim does."""
    lines = text.split("\n")
    following = [line.strip() for line in cur.next_lines if line.strip()]
    for k in range(1, len(lines)):
        tail = [line.strip() for line in lines[k:] if line.strip()]
        if tail and tail == following[: len(tail)]:
            return "\n".join(lines[:k]).rstrip()
    return text


def _repeats_existing(text: str, cur: CursorText) -> bool:
    """The suggestion is the code that already follows the cursor."""
    first = (cur.before + text.split("\n", 1)[0]).strip()
    following = [line.strip() for line in cur.next_lines[:3] if line.strip()]
    return bool(following) and first == following[0]
