"""What a command reads besides its options: the repository at `--root` (`repository`) and,
for `context` and `complete`, the buffer and the cursor in it (`cursor_request`), checked
before any work is done."""

from __future__ import annotations

import errno
import stat
import sys
from pathlib import Path
from typing import TYPE_CHECKING

from ..context.request import CursorRequest
from ..errors import QueryError

if TYPE_CHECKING:
    from ..service import Repository


def repository(root) -> Repository:
    """The service, imported when a command runs: the engines it brings cost a tenth of a
    second that `--help` or a usage error should not pay (see choices.py)."""
    from ..service import Repository

    return Repository(root)


def cursor_request(args, repo: Repository) -> CursorRequest:
    """The cursor arguments checked, and the buffer's text: from standard input (`--stdin`),
    else from the file, which must then be a regular file inside the root (a FIFO would hang
    the read, a device would never end). A cursor past the end of the text is refused with
    the text's real size (the editor's own requests are clamped instead: lang/text.py)."""
    path = Path(args.file).expanduser()
    full = path if path.is_absolute() else repo.root / path
    try:
        resolved = full.resolve()
    except RuntimeError as exc:  # a symlink loop (Python < 3.13; later ones stat() finds)
        raise _symlink_loop(args.file) from exc
    try:
        rel = resolved.relative_to(repo.root).as_posix()
    except ValueError:
        raise QueryError(
            f"--file {args.file} is outside the repository root {repo.root}; pass a file of "
            "the repository (or --root for the repository it belongs to)"
        ) from None
    try:
        st = full.stat()
    except FileNotFoundError:
        st = None
    except OSError as exc:
        if exc.errno == errno.ELOOP:
            raise _symlink_loop(args.file) from exc
        raise QueryError(f"--file {args.file} cannot be read ({exc.strerror})") from exc
    if st is not None and not stat.S_ISREG(st.st_mode):
        raise QueryError(
            f"--file {args.file} is not a regular file; pass a source file of the repository"
        )
    if args.stdin:
        stream = getattr(sys.stdin, "buffer", None)  # None when stdin is a text stream
        try:
            text = stream.read().decode("utf-8") if stream is not None else sys.stdin.read()
        except UnicodeDecodeError as exc:
            raise QueryError(
                f"standard input is not UTF-8 text (byte {exc.start}); send the buffer as UTF-8"
            ) from exc
    elif st is None:
        raise QueryError(
            f"--file {args.file} does not exist; pass --stdin with the buffer's text for a "
            "file not yet saved"
        )
    else:
        text = _read_text(full)
    _check_cursor(args, text)
    return CursorRequest(file=rel, line=args.line, col=args.col, text=text)


def _symlink_loop(file: str) -> QueryError:
    return QueryError(
        f"--file {file} is a symlink loop (it, or a folder on its way, points back at itself); "
        "pass a real file of the repository"
    )


def _check_cursor(args, text: str) -> None:
    """--line and --col inside the text, as Neovim counts it: the lines of the buffer (a
    final newline ends the last line, it does not start another), and a column from 0 to the
    byte length of its line (the end of a line is a place for the cursor)."""
    from ..lang.text import split_lines

    lines = split_lines(text) or [""]
    where = "standard input" if args.stdin else args.file
    if args.line > len(lines):
        count = "1 line" if len(lines) == 1 else f"{len(lines)} lines"
        raise QueryError(
            f"--line is {args.line} but {where} has {count}; pass a line from 1 to {len(lines)}"
        )
    length = len(lines[args.line - 1].encode("utf-8"))
    if args.col > length:
        raise QueryError(
            f"--col is {args.col} but line {args.line} of {where} is {length} bytes long; "
            f"pass a column from 0 to {length}"
        )


def _read_text(path) -> str:
    try:
        return path.read_bytes().decode("utf-8", "replace")
    except OSError as exc:
        raise QueryError(
            f"cannot read {path} ({exc.strerror}); pass --stdin with the buffer's text"
        ) from exc
