"""`repocontext index` (with `--import`, `--check`, `--export`) and `repocontext status`: build
the index and say what it holds; `_Progress`, a phase's percentage on stderr."""

from __future__ import annotations

import json
import sys
import time
from dataclasses import asdict
from pathlib import Path

from ..errors import IndexCorrupt
from ..terminal import from_printable, printable
from .inputs import repository


def cmd_index(args) -> int:
    repo = repository(args.root)
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
        phases = [progress] if progress else []

        def windows_progress(done: int, total: int) -> None:
            if not phases:
                return
            if len(phases) == 1:  # the phase starts now (its clock too): the last gives way
                phases[0].finish()
                phases.append(_Progress("later windows of long definitions"))
            phases[1](done, total)

        embed_report = repo.embed(progress=progress, windows_progress=windows_progress)
        for phase in phases:
            phase.finish()
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
        windowed = (
            f" and {embed_report.windows} later windows of long definitions"
            if embed_report.windows
            else ""
        )
        print(
            f"embedded {embed_report.embedded} chunks{windowed} in {embed_report.seconds:.1f} s"
            f"{dropped}\n  with {printable(embed_report.model)}"
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
    from ..index.scan import fallback_of

    return fallback_of(root)


def cmd_status(args) -> int:
    from ..service import unfinished_phases  # imported when a command runs (inputs.py)

    status = repository(args.root).status(list_skipped=args.skipped)
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
    if left := unfinished_phases(status):
        print(
            f"incomplete: {printable(left)} (an index run stopped before it, or files changed "
            "since; `repocontext index` finishes it)"
        )
    for item in status.get("skipped_files", []):
        # a name the index could not store as it is (not UTF-8) is stored quoted already
        path = printable(from_printable(item["path"]))
        print(f"  skipped {path}: {printable(item['reason'])}")
    return 0


def _counts(d: dict) -> str:
    return ", ".join(f"{printable(str(k))}: {v}" for k, v in d.items()) or "none"


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
            self.shown = False
