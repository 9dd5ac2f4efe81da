"""`repocontext` on the command line: parse arguments, call the service, print.

Errors reach the user as one line on stderr (`repocontext: what is wrong; what to do`) with a
non-zero exit; a traceback only with REPOCONTEXT_DEBUG=1. Every text that comes from the tree,
an index or a server (names, symbols, snippets' reasons, a server's words in an error) is
printed through `terminal.printable`, so no name can send a terminal escape or fake a line;
`--json` prints the texts themselves. About 690 lines: the parser (the documented contract,
checked against doc/ by tests/test_package.py) and one function per command.
"""

from __future__ import annotations

import argparse
import errno
import json
import os
import stat
import sys
import time
from dataclasses import asdict, replace
from pathlib import Path
from typing import TYPE_CHECKING

from .choices import COMPLETION_MODES as MODES
from .choices import MAX_CONTEXT_BUDGET, MAX_TOP, MODALITIES, PER_FILE, SCOPES
from .config import load_config
from .context.request import CursorRequest
from .errors import IndexCorrupt, QueryError, RepoContextError, redact_url
from .terminal import from_printable, printable

if TYPE_CHECKING:
    from .search.results import SearchResponse, SearchResult
    from .service import Repository

EXIT_ERROR = 1
EXIT_INTERNAL = 70
EXIT_INTERRUPTED = 130


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
    its line or of the file is refused once the text is read (`_cursor_request`)."""
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
        default=PER_FILE,
        action=_InRange,
        low=1,
        why="ask for 1 or more chunks of a file",
        metavar="N",
        help=f"at most N chunks of one file (default {PER_FILE})",
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


def _cmd_index(args) -> int:
    repo = _repository(args.root)
    if not args.no_embed or args.import_file:
        repo.reload_config()  # a broken config file is reported before any work is done
    if args.import_file:
        info = repo.import_index(args.import_file)
        commit = f" of commit {printable(info.commit[:12])}" if info.commit else ""
        print(
            f"imported {printable(args.import_file)}: the index{commit}, {info.files} files, "
            f"exported {printable(str(info.exported_at))} by repocontext "
            f"{printable(str(info.version))}; bringing it up to date",
            flush=True,
        )
    progress = None if args.quiet else _Progress("indexing")
    report = repo.index(progress=progress, rebuild=args.rebuild)
    if progress:
        progress.finish()
    fallback = "" if report.git else _git_fallback(repo.root)
    if fallback:  # git could not list the tree: the list may differ from git's, said once
        print(f"repocontext: note: {printable(fallback)}", file=sys.stderr, flush=True)
    # three short lines: one line of it was 130 columns and wrapped inside a number in an
    # 80-column terminal (only the root's own name can make one longer)
    skipped = " (`status --skipped` lists them)" if report.skipped else ""
    summary = (
        f"indexed {printable(report.root)} in {report.seconds:.2f} s\n"
        f"  {report.files} files: {report.added} added, {report.updated} updated, "
        f"{report.removed} removed, {report.unchanged} unchanged\n"
        f"  {report.chunks_written} chunks written, {report.skipped} skipped{skipped}"
    )
    embed_report = None
    if not args.no_embed:
        if not args.json:
            print(summary, flush=True)  # the lexical index is usable from here on
        progress = None if args.quiet else _Progress("embedding")
        embed_report = repo.embed(progress=progress)
        if progress:
            progress.finish()
    if args.json:
        out = asdict(report)
        out["embedding"] = asdict(embed_report) if embed_report else None
        out["git_fallback"] = fallback
        print(json.dumps(out, indent=2))
    elif embed_report is None:
        print(summary)
    else:
        dropped = (
            " (vectors of the previous model dropped)" if embed_report.dropped_old_model else ""
        )
        print(
            f"embedded {embed_report.embedded} chunks in {embed_report.seconds:.1f} s{dropped}\n"
            f"  with {printable(embed_report.model)}"
        )
    if args.check:
        problems = repo.check()
        for problem in problems:
            print(f"check: {printable(problem)}", file=sys.stderr)
        if problems:
            raise IndexCorrupt(
                f"the index has {len(problems)} problem(s), listed above; run `repocontext "
                "index --rebuild` to build it anew"
            )
        print("check: the index is consistent")
    if args.export:
        info = repo.export_index(args.export)
        vectors = (
            f", vectors of {printable(str(info.embed_description))}"
            if info.embed_model
            else ", no vectors"
        )
        print(f"exported the index to {printable(args.export)}: {info.files} files{vectors}")
    return 0


def _git_fallback(root: Path) -> str:
    """Why the index run just made walked a tree that is in git ("" if it did not)."""
    from .index.scan import fallback_of

    return fallback_of(root)


def _cmd_search(args) -> int:
    repo = _repository(args.root)
    repo.reload_config()  # a broken config file is reported before any work is done
    response = repo.search(
        " ".join(args.query),
        top=args.top,
        scope=args.scope,
        modality=args.modality,
        all_chunks=args.all_chunks,
        per_file=args.per_file,
    )
    if args.json:
        print(json.dumps(response.to_json(), indent=2))
    else:
        print(format_response(response, explain=args.explain))
    return 0


def _repository(root) -> Repository:
    """The service, imported when a command runs: the engines it brings cost a tenth of a
    second that `--help` or a usage error should not pay (see choices.py)."""
    from .service import Repository

    return Repository(root)


def _cursor_request(args, repo: Repository) -> CursorRequest:
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
    from .lang.text import split_lines

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


def _cmd_context(args) -> int:
    repo = _repository(args.root)
    request = replace(_cursor_request(args, repo), budget=args.budget)
    package = repo.context(request)
    if args.json:
        print(json.dumps(package.to_json(), indent=2))
        return 0
    where = f"{printable(package.file)}:{package.line}:{package.col}"
    if not package.retrieved:
        print(f"{where}: no retrieval ({printable(str(package.skip_reason))})")
        return 0
    print(f"{where}: retrieved because " + "; ".join(printable(r) for r in package.reasons))
    if not package.snippets:
        print(f"  no snippets: {printable(str(package.skip_reason))}")
    for i, sn in enumerate(package.snippets, 1):
        print(
            f"{i:2}. {printable(sn.path)}:{sn.start_line}-{sn.end_line}  "
            f"{printable(sn.symbol or '')}  [{printable(sn.source)}] score {sn.score:.2f}, "
            f"{sn.tokens} tokens: {printable(sn.why)}"
        )
    print(f"{package.tokens} of {package.budget} tokens, {package.timings_ms['total']:.1f} ms")
    return 0


def _cmd_complete(args) -> int:
    from .session import Session

    repo = _repository(args.root)
    request = _cursor_request(args, repo)
    session = Session(repo, backend=repo.generation_backend(args.model))
    try:
        result = session.complete_now(request, mode=args.mode)
    finally:
        session.close()
    if args.json:
        print(json.dumps(result.to_json(), indent=2))
        return 0
    print(
        printable(result.suggestion, code=True)
        if result.suggestion
        else f"(no suggestion: {printable(result.status)})"
    )
    t = result.timings_ms
    first = "-" if t["first_token"] is None else f"{t['first_token']:.0f} ms"
    print(
        f"-- first token {first}, total {t['total']:.0f} ms, {result.tokens_evaluated} tokens "
        f"evaluated, {result.tokens_generated} generated, context "
        f"{'injected' if result.context_injected else 'not used'} ({result.snippets} snippets)",
        file=sys.stderr,
    )
    return 0


def _read_text(path) -> str:
    try:
        return path.read_bytes().decode("utf-8", "replace")
    except OSError as exc:
        raise QueryError(
            f"cannot read {path} ({exc.strerror}); pass --stdin with the buffer's text"
        ) from exc


def _cmd_status(args) -> int:
    status = _repository(args.root).status(list_skipped=args.skipped)
    if args.json:
        print(json.dumps(status, indent=2))
        return 0
    print(f"root:  {printable(str(status['root']))}")
    print(f"index: {printable(str(status['index']))}")
    engine = status["engine"]
    print(f"cpu:   {printable(engine['cpu']['summary'])}")
    print(f"llama.cpp: {printable(engine['llama_cpp'])}")
    print(f"       {printable(engine['extra_buffers']['reason'])}")
    if not status["indexed"]:
        print("not indexed yet: run `repocontext index`")
        return 0
    when = time.strftime("%Y-%m-%d %H:%M:%S", time.localtime(status["indexed_at"] or 0))
    print(
        f"files: {status['files']} ({_counts(status['files_by_role'])}), "
        f"{status['chunks']} chunks, {status['symbols']} symbols, "
        f"{status['flagged_files']} flagged generated/minified/latin-1"
    )
    print(f"languages: {_counts(status['files_by_language'])}")
    print(f"skipped: {status['skipped']} ({_counts(status['skipped_by_reason'])})")
    vec = status["vectors"]
    print(
        f"vectors: {vec['embedded']} of {vec['chunks']} chunk contents"
        + (f", by {printable(vec['model'])}" if vec["model"] else " (none yet)")
    )
    print(f"graph: {_counts(status['graph'])}")
    print(f"updated: {when}, {status['index_bytes'] / 1e6:.1f} MB on disk")
    if status.get("incomplete"):
        phases = [
            f"embedding ({vec['missing']} of {vec['chunks']} chunk contents have no vector)"
            if phase == "embedding"
            else phase
            for phase in status["incomplete"]
        ]
        print(
            f"incomplete: {', '.join(phases)} (an index run stopped before it, or files "
            "changed since; `repocontext index` finishes it)"
        )
    for item in status.get("skipped_files", []):
        # a name the index could not store as it is (not UTF-8) is stored quoted already
        path = printable(from_printable(item["path"]))
        print(f"  skipped {path}: {printable(item['reason'])}")
    return 0


def _counts(d: dict) -> str:
    return ", ".join(f"{printable(str(k))}: {v}" for k, v in d.items()) or "none"


def format_response(response: SearchResponse, explain: bool = False) -> str:
    lines = []
    if explain:
        lines.append(
            f"intent {response.intent} (confidence {response.confidence:.2f}, "
            f"rule: {response.rule}), strategy {response.strategy}, "
            f"modality {response.modality}, {response.timings_ms['total']:.1f} ms"
        )
    for note in response.notes:
        lines.append(f"note: {printable(note)}")
    if response.functions:
        lines.append("most likely to need the change:")
        for i, f in enumerate(response.functions[: 10 if explain else 5], 1):
            lines.append(
                f"  {i:2}. {printable(f.path)}:{f.start_line}-{f.end_line}  {printable(f.symbol)}"
            )
            if explain:
                reasons = "; ".join(printable(r) for r in f.reasons)
                lines.append(f"        score {f.score:.4f}; {reasons}")
        lines.append("results:")
    if not response.results:
        lines.append("no results")
    # grouped by file, files in the order of their best result; each result keeps its rank
    by_file: dict[str, list[tuple[int, SearchResult]]] = {}
    for i, r in enumerate(response.results, 1):
        by_file.setdefault(r.path, []).append((i, r))
    for path, ranked in by_file.items():
        role = "" if ranked[0][1].role == "source" else f"  [{printable(ranked[0][1].role)}]"
        lines.append(f"{printable(path)}{role}")
        for i, r in ranked:
            kind = printable(r.kind)
            symbol = f"  {printable(r.symbol)} ({kind})" if r.symbol else f"  ({kind})"
            lines.append(f"  {i:2}. {printable(r.path)}:{r.start_line}-{r.end_line}{symbol}")
            if explain:
                ranks = ", ".join(f"{k} #{v}" for k, v in r.ranks.items() if v is not None)
                contrib = ", ".join(f"{k} {v:.4f}" for k, v in r.contributions.items())
                factors = ", ".join(f"{k} x{v}" for k, v in r.factors.items())
                detail = f"score {r.score:.4f}; ranks: {ranks or 'none'}"
                if contrib:
                    detail += f"; contributions: {contrib}"
                if factors:
                    detail += f"; factors: {factors}"
                if r.rerank:
                    detail += (
                        f"; second stage: the model ranks it {r.rerank['rank']} (score "
                        f"{r.rerank['score']}), the first stage {r.rerank['first_stage_rank']}"
                    )
                lines.append(f"        {detail}")
    return "\n".join(lines)


class _Progress:
    """A phase's progress on stderr, as a percentage. On a terminal: one line, rewritten at
    most ten times a second and cleared at the end. Elsewhere (a log, CI): a line once the
    phase has run `after` seconds, then one every `every` seconds, and its 100 % line; a run
    quicker than `after` prints none. `--quiet` makes none of these."""

    def __init__(self, what: str, stream=None, after: float = 2.0, every: float = 5.0):
        self.what = what
        self.stream = stream if stream is not None else sys.stderr
        self.tty = self.stream.isatty()
        self.after, self.every = after, every
        self.started = time.monotonic()
        self.last = 0.0
        self.shown = False  # a terminal line is on screen
        self.noted = False  # a log line was printed
        self.ended = False

    def __call__(self, done: int, total: int, path: str = "") -> None:
        now = time.monotonic()
        end = done >= total
        percent = 100 if total <= 0 else min(100, done * 100 // total)
        if self.tty:
            if now - self.last >= 0.1 or end:
                self.last = now
                shown = printable(path)[-30:]  # a name from the tree
                line = f"repocontext: {self.what} {percent:3d}% ({done}/{total}) {shown}"
                self.stream.write("\r" + line[:79].ljust(79))
                self.stream.flush()
                self.shown = True
            return
        due = self.last + self.every if self.noted else self.started + self.after
        if self.ended or not (now >= due or (end and self.noted)):
            return
        self.last, self.noted, self.ended = now, True, end
        print(f"repocontext: {self.what} {percent}% ({done} of {total})", file=self.stream)
        self.stream.flush()

    def finish(self) -> None:
        if self.shown:
            self.stream.write("\r" + " " * 79 + "\r")
            self.stream.flush()


def _cmd_models(args: argparse.Namespace) -> int:
    from .complete import catalog
    from .extras import require

    require("local", "`repocontext models` (it reads each GGUF with llama.cpp)")

    config = load_config().generation
    entries = catalog.listing(config, args.measure)
    if args.json:
        current = catalog.in_use(entries, config)
        print(
            json.dumps(
                {
                    "models": [e.to_json() | {"in_use": e is current} for e in entries],
                    "server_url": redact_url(config.server_url) or None,
                }
            )
        )
    else:  # model names and paths from folders and files of this machine
        print("\n".join(printable(line) for line in catalog.report(entries, config).split("\n")))
    return 0


_COMMANDS = {
    "index": _cmd_index,
    "search": _cmd_search,
    "context": _cmd_context,
    "complete": _cmd_complete,
    "status": _cmd_status,
    "models": _cmd_models,
}


if __name__ == "__main__":
    run()
