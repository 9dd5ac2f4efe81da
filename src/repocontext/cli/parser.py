"""The command line's arguments: `build_parser`, the documented contract (doc/repocontext.txt's
|repocontext-cli|, doc/architecture.md's command-line contract; tests/test_package.py checks
that every command and option is documented). A usage error is one line, exit 2."""

from __future__ import annotations

import argparse

from ..choices import (
    CHUNKS_PER_PLACE,
    MAX_CONTEXT_BUDGET,
    MAX_TOP,
    MODALITIES,
    PER_FILE,
    PER_FILE_MOST,
    SCOPES,
)
from ..choices import COMPLETION_MODES as MODES
from ..terminal import printable


class _Parser(argparse.ArgumentParser):
    """argparse, but a usage error is one line like every other error."""

    def error(self, message: str):
        self.exit(2, f"repocontext: {printable(message)}; see `{self.prog} --help`\n")


class _InRange(argparse.Action):
    """An integer option with its range: a value outside it is a usage error (exit 2), one
    line that names the option, the value and what is allowed (`why`: a reason in place of
    the range). Nothing is clamped: a value is used as given or refused."""

    def __init__(self, *args, low: int, high: int | None = None, unit: str = "", why: str = "",
                 **kwargs):  # fmt: skip
        super().__init__(*args, **kwargs)
        self.low, self.high, self.unit, self.why = low, high, unit, why

    def __call__(self, parser, namespace, value, option_string=None):
        if value < self.low or (self.high is not None and value > self.high):
            allowed = self.why or f"ask for {self.low} to {self.high} {self.unit}"
            parser.error(f"{option_string} is {value}; {allowed}")
        setattr(namespace, self.dest, value)


def _cursor_arguments(p: argparse.ArgumentParser) -> None:
    """Where the cursor is: shared by `context` and `complete` (doc/repocontext.txt's
    |repocontext-cli|, doc/architecture.md's command-line contract). A cursor past the end of
    its line or of the file is refused once the text is read (`inputs.py:cursor_request`)."""
    p.add_argument("--root", help="repository root (default: the current directory)")
    p.add_argument("--file", required=True, help="the buffer's file, relative to the root")
    p.add_argument(
        "--line",
        type=int,
        required=True,
        action=_InRange,
        low=1,
        why="lines count from 1",
        help="cursor line, 1-based",
    )
    p.add_argument(
        "--col",
        type=int,
        required=True,
        action=_InRange,
        low=0,
        why="columns count from 0 (a byte offset)",
        help="cursor column, 0-based byte offset",
    )


def build_parser() -> argparse.ArgumentParser:
    parser = _Parser(
        prog="repocontext",
        description="Index a repository and search it: definitions, words, exact strings.",
    )
    sub = parser.add_subparsers(
        dest="command", required=True, metavar="COMMAND", parser_class=_Parser
    )

    p = sub.add_parser("index", help="build or update the index of a repository")
    p.add_argument("--root", help="repository root (default: the current directory)")
    p.add_argument(
        "--no-embed",
        action="store_true",
        help="skip computing embeddings now (lexical, symbol and graph index only)",
    )
    fresh = p.add_mutually_exclusive_group()
    fresh.add_argument(
        "--rebuild",
        action="store_true",
        help="set the existing index file aside (renamed, not deleted) and build anew",
    )
    fresh.add_argument(
        "--import",
        dest="import_file",
        metavar="FILE",
        help="first install the index exported to FILE (same version, schema and embedding "
        "model; the current one is set aside), then bring it up to date with this checkout",
    )
    p.add_argument(
        "--check",
        action="store_true",
        help="then check the index: SQLite's integrity check and repocontext's invariants",
    )
    p.add_argument(
        "--export",
        metavar="FILE",
        help="then write the index to FILE, for another machine's --import (a team's CI)",
    )
    p.add_argument("--json", action="store_true", help="print the report as JSON")
    p.add_argument("--quiet", action="store_true", help="no progress on stderr")

    p = sub.add_parser("search", help="search the index")
    p.add_argument("query", nargs="+", help="what to look for")
    p.add_argument("--root", help="repository root (default: the current directory)")
    p.add_argument(
        "--top",
        type=int,
        default=10,
        action=_InRange,
        low=1,
        high=MAX_TOP,
        unit="results",
        help=f"number of results, 1 to {MAX_TOP} (default 10)",
    )
    p.add_argument(
        "--scope",
        choices=SCOPES,
        default=None,
        help="all files, source only, or tests only (default: all, tests ranked low)",
    )
    p.add_argument(
        "--modality",
        choices=MODALITIES,
        default="auto",
        help="one retriever, or auto (classify the question and fuse)",
    )
    p.add_argument(
        "--per-file",
        type=int,
        default=None,
        action=_InRange,
        low=1,
        why="ask for 1 or more chunks of a file",
        metavar="N",
        help=f"at most N chunks of one file (default {PER_FILE}, and one more for each "
        f"{CHUNKS_PER_PLACE} chunks of a big file, up to {PER_FILE_MOST})",
    )
    p.add_argument(
        "--all-chunks",
        action="store_true",
        help="every matching chunk, however many of one file",
    )
    p.add_argument("--json", action="store_true", help="print one JSON object")
    p.add_argument("--explain", action="store_true", help="show why each result ranked there")

    p = sub.add_parser("context", help="the snippets a completion at a cursor would get")
    _cursor_arguments(p)
    p.add_argument(
        "--budget",
        type=int,
        default=None,
        action=_InRange,
        low=1,
        high=MAX_CONTEXT_BUDGET,
        unit="tokens",
        help=f"tokens of context, 1 to {MAX_CONTEXT_BUDGET} (default: [generation] "
        "context_budget, 384)",
    )
    p.add_argument(
        "--stdin",
        action="store_true",
        help="read the buffer's current text (unsaved edits) from standard input",
    )
    p.add_argument("--json", action="store_true", help="print one JSON object")

    p = sub.add_parser("complete", help="a completion at a cursor, with its timings")
    _cursor_arguments(p)
    p.add_argument("--model", help="a GGUF model file (default: the configured one)")
    p.add_argument(
        "--mode",
        choices=MODES,
        default="parallel",
        help="parallel: generate at once and inject context when ready (default); "
        "local: no retrieval; sequential: retrieve, then generate",
    )
    p.add_argument(
        "--stdin",
        action="store_true",
        help="read the buffer's current text (unsaved edits) from standard input",
    )
    p.add_argument("--json", action="store_true", help="print one JSON object")

    p = sub.add_parser("models", help="the generation models this machine has, and their cost")
    p.add_argument(
        "--measure",
        nargs="?",
        const="",
        metavar="NAME",
        help="time one here (the one in use, or the first whose name holds NAME)",
    )
    p.add_argument("--json", action="store_true", help="print one JSON object")

    p = sub.add_parser("status", help="what the index holds")
    p.add_argument("--root", help="repository root (default: the current directory)")
    p.add_argument("--skipped", action="store_true", help="list every skipped file and why")
    p.add_argument("--json", action="store_true", help="print one JSON object")
    return parser
