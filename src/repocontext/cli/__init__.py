"""`repocontext` on the command line: parse arguments, call the service, print.

Errors reach the user as one line on stderr (`repocontext: what is wrong; what to do`) with a
non-zero exit; a traceback only with REPOCONTEXT_DEBUG=1. Every text that comes from the tree,
an index or a server (names, symbols, snippets' reasons, a server's words in an error) is
printed through `terminal.printable`, so no name can send a terminal escape or fake a line;
`--json` prints the texts themselves.

Here `run` and `main` (parse, dispatch, errors to exit codes); beside it:
  parser.py      the arguments (the documented contract, checked against doc/ by
                 tests/test_package.py)
  inputs.py      what a command reads: the repository at --root, the buffer at the cursor
  index.py       `index` (with --import, --check, --export), `status`, the progress on stderr
  search.py      `search`, and its results as text
  completion.py  `context`, `complete`, `models`
  __main__.py    `python -m repocontext.cli`
"""

from __future__ import annotations

import os
import sys

from ..errors import RepoContextError
from ..terminal import printable
from .completion import cmd_complete, cmd_context, cmd_models
from .index import cmd_index, cmd_status
from .parser import build_parser
from .search import cmd_search, format_response

__all__ = ["build_parser", "format_response", "main", "run"]

EXIT_ERROR = 1
EXIT_INTERNAL = 70
EXIT_INTERRUPTED = 130


def run() -> None:
    """The `repocontext` program. After a search its process ends without tearing down what it
    loaded (ONNX Runtime's sessions, numpy), its output flushed first: that teardown was about
    50 ms of a 0.5 s question (bench/results/cli_speed.md), and a search leaves nothing to
    finish (its files are closed, its threads joined or idle). Other commands exit as usual."""
    argv = sys.argv[1:]
    code = main(argv)
    if argv[:1] == ["search"]:
        try:
            sys.stdout.flush()
            sys.stderr.flush()
        except BrokenPipeError:
            pass
        os._exit(code)
    sys.exit(code)


def main(argv: list[str] | None = None) -> int:
    try:
        args = build_parser().parse_args(argv)
    except SystemExit as exc:  # --help, or a usage error already printed as one line
        return int(exc.code or 0)
    try:
        return _COMMANDS[args.command](args)
    except RepoContextError as exc:
        print(f"repocontext: {printable(str(exc))}", file=sys.stderr)
        return EXIT_ERROR
    except KeyboardInterrupt:
        print(
            "repocontext: interrupted; what was written is consistent, run the command again "
            "to finish",
            file=sys.stderr,
        )
        return EXIT_INTERRUPTED
    except BrokenPipeError:
        return 0
    except Exception as exc:  # the last line of defence: one line, never a traceback
        if os.environ.get("REPOCONTEXT_DEBUG"):
            raise
        print(
            f"repocontext: internal error ({printable(f'{type(exc).__name__}: {exc}')}); "
            "please report it, and rerun with REPOCONTEXT_DEBUG=1 for details",
            file=sys.stderr,
        )
        return EXIT_INTERNAL


_COMMANDS = {
    "index": cmd_index,
    "search": cmd_search,
    "context": cmd_context,
    "complete": cmd_complete,
    "status": cmd_status,
    "models": cmd_models,
}
