"""Building and updating a repository's index: scan, read, chunk, write; incremental and resumable.

A second run reads nothing it does not need: a file whose size and mtime match the index is
not opened; one whose stat changed is read and hashed, and only rewritten if the hash changed.
Files are written in transactions of up to a second's work, each file whole, so a run killed at
any point leaves a usable index and the next run picks up where it stopped. The stat recorded is the one taken *before* reading,
and a file modified in the last two seconds gets no stat shortcut at all, so a change made
during or right after the scan is always seen by the next run. Each run ends by leaving a
stamp of the tree (index/fresh.py) that lets a search tell cheaply whether it must `refresh`.
An index cut by another chunker version (lang/chunking.py CHUNKER_VERSION) has every file read
and cut again on its next run, changed or not.
What happens to one file (read, hash, redact, chunk; no database) is index/prepare.py, which
the worker processes run.
"""

from __future__ import annotations

import itertools
import json
import multiprocessing
import os
import time
from collections import deque
from collections.abc import Callable, Iterator, Sequence
from concurrent.futures import ProcessPoolExecutor
from dataclasses import dataclass, field
from pathlib import Path

from ..errors import IndexBusy, IndexDiskFull
from ..lang.chunking import CHUNKER_VERSION, MAX_CHUNK_FACTOR
from ..store import Store
from .fresh import (
    CHUNKER_META,
    TREE_STAMP,
    cut_by_another_chunker,
    make_stamp,
    read_stamp,
    tree_changed,
)
from .imports import ImportResolver
from .neighbourhood import neighbourhood
from .prepare import (
    CHILDREN_SAFE,
    Prepared,
    follow_parent,
    no_working_folder_imports,
    os_reason,
    prepare_batch,
    prepare_file,
)
from .roles import CONFIG_FILES, RoleRules, configured_test_roots
from .scan import display_path, git_head, scan, stat_skip_reason, tree_moved

Progress = Callable[[int, int, str], None]  # (done, total, path)

# Reasons that depend on a file's content alone: kept while its stat stays the same, so a
# binary or a key file is not read again by every run.
COARSE_NOTE = (
    "indexed coarsely (plain windows, no symbols): its symbols would have cost over "
    f"{MAX_CHUNK_FACTOR} times its size"
)
_CONTENT_REASONS = ("binary", "holds a private key", "larger than")
TEST_ROOTS = "test_roots"  # meta: the configured test roots and the stat of their sources
GRAPH_PENDING = "graph_pending"  # meta: "1" from the first file written until the graph is
PARALLEL_MIN_FILES = 300  # below this, starting worker processes costs more than it saves
MAX_WORKERS = 4
BATCH_FILES = 16  # files a worker prepares per task


@dataclass
class IndexReport:
    root: str
    git: bool
    files: int = 0  # files in the index after the run
    added: int = 0
    updated: int = 0
    unchanged: int = 0
    removed: int = 0
    skipped: int = 0
    chunks_written: int = 0
    seconds: float = 0.0
    skipped_by_reason: dict[str, int] = field(default_factory=dict)


class Indexer:
    """Brings one store up to date with the files under one root."""

    def __init__(
        self,
        root: Path,
        store: Store,
        progress: Progress | None = None,
        first: Sequence[str] = (),
    ):
        """`first`: the open files (relative paths): a long run indexes their neighbourhood
        before the rest (index/neighbourhood.py)."""
        self.root = root
        self.store = store
        self.progress = progress
        self.first = list(first)
        self._written: list[str] = []  # files this run rewrote (not added)
        self._ref_names: set[str] = set()  # names their old and new versions reference
        self._removed_secrets: dict[str, list[tuple[str, str]]] = {}

    def run(self, touch: bool = True) -> IndexReport:
        """Bring the index up to date. `touch`: record the time of the run even when nothing
        changed (an explicit index run; a search's refresh does not, so that what is cached
        against that time stays valid)."""
        started = time.perf_counter()
        started_ns = time.time_ns()
        with self.store.write_lock():
            previous = read_stamp(self.store)
            known_skips = previous["skipped"] if previous else {}
            # no stamp while the run is under way: one killed before its end is redone
            self.store.set_meta(TREE_STAMP, "")
            result = scan(self.root)
            report = IndexReport(root=str(self.root), git=result.git)
            states = self.store.file_states()
            # cut by another chunker: every file is read and cut again, as if each had changed
            # (its chunks' vectors are kept where their text is the same: they are by text)
            recut = cut_by_another_chunker(self.store, CHUNKER_VERSION)
            skipped = dict(result.skipped)
            old_reasons = dict(self.store.skipped())
            # notes on files this run will not read again (secrets removed, cut coarsely) stay
            removed_secrets: dict[str, list[tuple[str, str]]] = {}
            for key, reason in old_reasons.items():
                if reason.startswith(("a secret (", COARSE_NOTE)) and ":" in key:
                    removed_secrets.setdefault(key.rsplit(":", 1)[0], []).append((key, reason))
            self._removed_secrets = removed_secrets
            present: set[str] = set()
            stats: dict[str, tuple[int, int]] = {}  # files read or skipped: their stat
            to_read: list[tuple[str, int, int, str | None]] = []
            total = len(result.files)
            done = 0
            root = str(self.root)
            # Phase 1, here: stat every file; unchanged ones cost one lstat and nothing more.
            for rel in result.files:
                try:
                    st = os.lstat(os.path.join(root, rel))
                except FileNotFoundError:
                    continue  # deleted (git may still list it): it simply is not there
                except OSError as exc:
                    skipped[display_path(rel)] = os_reason(exc, "stat")
                    continue
                why = stat_skip_reason(st)
                if why:
                    skipped[rel] = why
                    stats[rel] = (st.st_size, st.st_mtime_ns)
                    continue
                state = states.get(rel)
                reason = old_reasons.get(display_path(rel), "")
                if (
                    state is None
                    and reason.startswith(_CONTENT_REASONS)
                    and known_skips.get(rel) == [st.st_size, st.st_mtime_ns]
                ):
                    skipped[display_path(rel)] = reason  # skipped for its content, untouched
                    stats[rel] = (st.st_size, st.st_mtime_ns)
                    done += 1
                    continue
                if (
                    state
                    and not recut
                    and state.size == st.st_size
                    and state.mtime_ns == st.st_mtime_ns
                ):
                    report.unchanged += 1
                    present.add(rel)
                    skipped.update(removed_secrets.get(rel, ()))
                    done += 1
                    continue
                old_hash = state.content_hash if state and not recut else None
                to_read.append((rel, st.st_size, st.st_mtime_ns, old_hash))
                stats[rel] = (st.st_size, st.st_mtime_ns)
            # The graph and the vectors' garbage are brought up to date after the files; say so
            # first, so a run killed in between leaves the next one a note to finish them.
            pending_before = self.store.get_meta(GRAPH_PENDING) == "1"
            if to_read or set(states) - set(result.files):
                self.store.set_meta(GRAPH_PENDING, "1")
            if self.first and len(to_read) >= PARALLEL_MIN_FILES:
                rank = {
                    p: i for i, p in enumerate(neighbourhood(self.root, self.first, result.files))
                }
                to_read.sort(key=lambda item: rank.get(item[0], len(rank)))  # stable: the rest
            # Phase 2: read, hash, parse and chunk (in worker processes when there is a lot),
            # writing each file as its result arrives.
            batch = self.store.batch()
            try:
                for prepared in self._prepare_all(to_read):
                    done += 1
                    if self.progress:
                        self.progress(done, total, prepared.rel)
                    batch.tick()
                    if self._apply(prepared, states, skipped, report):
                        present.add(prepared.rel)
            except BaseException:
                # Ctrl-C or an error mid-file: drop the open batch (at most a second of work)
                # so no file is left half-written; the next run redoes it.
                batch.rollback()
                raise
            batch.commit()
            if recut:
                self.store.set_meta(CHUNKER_META, str(CHUNKER_VERSION))
            gone = [p for p in states if p not in present]
            self.store.delete_files(gone)
            report.removed = sum(1 for p in gone if display_path(p) not in skipped)
            if old_reasons != skipped:
                self.store.record_skipped(skipped)
            rules = RoleRules.for_tree(self.root, result.files, self._test_roots())
            self.store.set_roles({rel: rules.role(rel) for rel in present})
            if (
                report.added
                or report.updated
                or report.removed
                or self.store.get_meta(GRAPH_PENDING) == "1"
            ):
                # Files added or removed can change any import's target; rewritten files
                # change only their own imports, and the counts of the names they reference.
                whole = report.added or report.removed or pending_before
                self._update_graph(sorted(present), None if whole else self._written)
                self.store.vectors.collect_garbage()
                self.store.set_meta(GRAPH_PENDING, "0")
            self.store.set_meta("root", str(self.root))
            self.store.set_meta("git_head", git_head(self.root) or "")
            if touch or report.added or report.updated or report.removed:
                self.store.set_meta("indexed_at", str(time.time()))
            left_out = {
                r: stats[r]
                for r in result.files
                if r in stats and r not in present and display_path(r) in skipped
            }
            self.store.set_meta(
                TREE_STAMP,
                make_stamp(self.root, result.folders, result.watch, left_out, started_ns),
            )
        report.files = len(present)
        report.skipped = len(skipped)
        for reason in skipped.values():
            report.skipped_by_reason[reason] = report.skipped_by_reason.get(reason, 0) + 1
        report.seconds = time.perf_counter() - started
        return report

    def _test_roots(self) -> set[str]:
        """The test roots the project's configuration names, read again only when one of its
        configuration files changed (by stat): an unchanged tree is not read at all."""
        signature = {}
        for name in CONFIG_FILES:
            try:
                st = os.stat(self.root / name)
                signature[name] = [st.st_size, st.st_mtime_ns]
            except OSError:
                pass
        known = json.loads(self.store.get_meta(TEST_ROOTS) or "null")
        if known is not None and known.get("signature") == signature:
            return set(known["roots"])
        roots = configured_test_roots(self.root)
        self.store.set_meta(
            TEST_ROOTS, json.dumps({"signature": signature, "roots": sorted(roots)})
        )
        return roots

    def _update_graph(self, paths: list[str], written: list[str] | None = None) -> None:
        """Resolve imports against the files now present, then recount centrality: all of
        them, or (`written`) those of the rewritten files and the names they reference."""
        resolver = ImportResolver(paths)
        targets = [
            (resolver.resolve(importer, module, language), rowid)
            for rowid, importer, module, language in self.store.graph.imports_to_resolve(written)
        ]
        self.store.graph.set_import_targets(targets)
        self.store.graph.recompute_centrality(None if written is None else sorted(self._ref_names))

    def _prepare_all(self, to_read: list[tuple[str, int, int, str | None]]) -> Iterator[Prepared]:
        root = str(self.root)
        workers = min(os.cpu_count() or 1, MAX_WORKERS)
        if len(to_read) < PARALLEL_MIN_FILES or workers < 2 or not CHILDREN_SAFE:
            for item in to_read:
                yield prepare_file(root, *item)
            return
        # spawn, not fork: the editor process that calls this has threads of its own.
        no_working_folder_imports()
        ctx = multiprocessing.get_context("spawn")
        with ProcessPoolExecutor(
            max_workers=workers,
            mp_context=ctx,
            initializer=follow_parent,
            initargs=(os.getpid(),),
        ) as pool:
            # A window of batches in flight, not the whole list at once (Executor.map): the
            # workers outpace the writer, and every prepared file not yet written waits in
            # memory (a 30,000-file run peaked at 550 MB that way).
            batches = iter(
                [to_read[i : i + BATCH_FILES] for i in range(0, len(to_read), BATCH_FILES)]
            )
            window = deque(
                pool.submit(prepare_batch, root, b) for b in itertools.islice(batches, workers * 4)
            )
            while window:
                done = window.popleft().result()
                for batch in itertools.islice(batches, 1):
                    window.append(pool.submit(prepare_batch, root, batch))
                yield from done

    def _apply(
        self, prepared: Prepared, states: dict, skipped: dict[str, str], report: IndexReport
    ) -> bool:
        """Write one prepared file; False if it was skipped."""
        rel = prepared.rel
        if prepared.vanished:
            return False
        if prepared.skip_reason is not None:
            skipped[display_path(rel)] = prepared.skip_reason
            return False
        if prepared.record is None:  # same content, new stat
            self.store.update_file_stat(rel, prepared.size, prepared.mtime_ns)
            report.unchanged += 1
            skipped.update(self._removed_secrets.get(rel, ()))
            return True
        old_names = self.store.replace_file(prepared.record, prepared.chunks, prepared.refs)
        if rel in states:
            self._written.append(rel)
            self._ref_names |= old_names
            self._ref_names.update(r.name for r in prepared.refs)
        for line, kinds in prepared.secrets:
            skipped[f"{rel}:{line}"] = f"a secret ({kinds}) removed from this line"
        if "coarse" in prepared.record.flags.split(","):
            skipped[f"{rel}:1"] = COARSE_NOTE
        report.chunks_written += len(prepared.chunks)
        if rel in states:
            report.updated += 1
        else:
            report.added += 1
        return True


def catch_up(root: Path, store: Store) -> bool:
    """After a branch switch or a pull (HEAD moved), bring the index up to date before it is
    trusted. False when there was nothing to do, or it cannot be done now (another writer
    holds the index, or it is read-only): per-snippet checks against the disk still guard.
    An index cut by another chunker version is not reason enough here: this runs on the
    completion's context thread, and reading every file again is the editor's background
    index run's work (it starts when a file of the root is opened)."""
    if not tree_moved(root, store):
        return False
    return refresh(root, store, check=False)


def refresh(root: Path, store: Store, check: bool = True) -> bool:
    """Before a search: bring the index up to date with the working tree if anything in it
    changed since the last run (`check`: look first, index/fresh.py). False when nothing did,
    or when it cannot be done now: another process is writing the index (the search then
    answers from the index as it is, without waiting), the index is read-only, or the disk
    holding it is full (what was committed is whole and still answers; `repocontext index`
    says what to do)."""
    if store.readonly or (
        check
        and not tree_moved(root, store)
        and not tree_changed(root, store)
        and not cut_by_another_chunker(store, CHUNKER_VERSION)
    ):
        return False
    try:
        Indexer(root, store).run(touch=False)
    except (IndexBusy, IndexDiskFull):
        return False
    return True
