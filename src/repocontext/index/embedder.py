"""Embedding the chunks that have no vector yet: source first, in batches sorted by length.

Runs after the lexical index is committed, so search works (without the vector retriever)
while it goes on, and yields between batches to whoever passes `pause` (the editor: while a
completion runs). Each batch is its own transaction: an interrupted run keeps what it finished
and the next run embeds only the rest, since vectors are keyed by content hash. When every
chunk has its vector, the later windows of long source passages follow (store/vectors.py):
search has the whole index meanwhile, and they only sharpen it.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import dataclass

from ..embed.model import EmbeddingModel
from ..embed.passage import passage_header, passage_text
from ..store import Store

EmbedProgress = Callable[[int, int], None]  # (embedded so far, to embed)
# Called between batches; returns when the embedding may go on. The editor's session blocks
# in it while completions run, so that batches of passages (every core) do not compete with
# the model for the CPU the user is waiting on.
Pause = Callable[[], object]


@dataclass
class EmbedReport:
    model: str
    embedded: int = 0
    already: int = 0
    dropped_old_model: bool = False
    windows: int = 0  # later windows of long passages embedded
    seconds: float = 0.0
    # (seconds since start, chunks embedded) when each role group finished: "source", ...
    milestones: dict[str, tuple[float, int]] | None = None


def embed_missing(
    store: Store,
    model: EmbeddingModel,
    progress: EmbedProgress | None = None,
    batch_size: int | None = None,
    pause: Pause | None = None,
    windows_progress: EmbedProgress | None = None,
) -> EmbedReport:
    """`progress`: (chunks embedded, chunks to embed); `windows_progress`: then (passages
    windowed, passages to window), the later windows' phase."""
    started = time.perf_counter()
    identity = model.identity
    report = EmbedReport(model=identity.describe(), milestones={})
    with store.write_lock():
        report.dropped_old_model = store.vectors.ensure(
            identity.key(), identity.describe(), identity.dims
        )
        rows = store.vectors.missing()
        done_before, _ = store.vectors.coverage()
        report.already = done_before
        total = len(rows)
        size = batch_size or model.config.batch_size
        if progress and total:
            progress(0, total)  # the phase has started: 0 %
        for role_rank, role in enumerate(("source", "doc", "tooling", "test")):
            group = [r for r in rows if r[7] == role_rank]
            # similar lengths together: less padding, so less attention work per batch
            texts = [(passage_text(r[1], r[2], r[3], r[4], r[5], r[6]), r[0]) for r in group]
            texts.sort(key=lambda t: len(t[0]))
            for i in range(0, len(texts), size):
                if pause is not None:
                    pause()  # the write lock stays held: no other writer is waiting on it
                batch = texts[i : i + size]
                matrix = model.embed_passages([t for t, _ in batch])
                store.vectors.add([h for _, h in batch], matrix)
                report.embedded += len(batch)
                if progress:
                    progress(report.embedded, total)
            report.milestones = report.milestones or {}
            report.milestones[role] = (time.perf_counter() - started, report.embedded)
        report.windows = _embed_later_windows(store, model, size, pause, windows_progress)
    report.seconds = time.perf_counter() - started
    return report


def _embed_later_windows(
    store: Store,
    model: EmbeddingModel,
    size: int,
    pause: Pause | None,
    progress: EmbedProgress | None = None,
) -> int:
    """The later windows of the source passages not looked at yet, about `size` to a batch;
    a passage the model reads whole is recorded with none. Returns how many were embedded."""
    import numpy as np

    store.vectors.keep_windows_for(model.config.windows)
    if model.config.windows <= 0:
        return 0
    made = 0
    owners: list[int] = []  # passages of this batch
    texts: list[tuple[int, str]] = []  # (passage, window)
    rows = store.vectors.unwindowed()
    if progress and rows:
        progress(0, len(rows))
    for i, (emb_id, path, qualname, kind, signature, doc, body) in enumerate(rows):
        passage = passage_text(path, qualname, kind, signature, doc, body)
        owners.append(emb_id)
        texts += [
            (emb_id, w) for w in model.later_windows(passage, passage_header(path, qualname, kind))
        ]
        if len(texts) < size and i + 1 < len(rows):
            continue
        if pause is not None:
            pause()
        matrix = model.embed_passages([w for _, w in texts])
        mine = np.array([owner for owner, _ in texts], dtype=np.int64)
        store.vectors.add_windows({owner: matrix[mine == owner] for owner in owners})
        made += len(texts)
        owners, texts = [], []
        if progress:
            progress(i + 1, len(rows))
    return made
