"""Embedding the chunks that have no vector yet: source first, in batches sorted by length.

Runs after the lexical index is committed, so search works (without the vector retriever)
while it goes on, and yields between batches to whoever passes `pause` (the editor: while a
completion runs). Each batch is its own transaction: an interrupted run keeps what it finished
and the next run embeds only the rest, since vectors are keyed by content hash.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import dataclass

from ..embed.model import EmbeddingModel
from ..embed.passage import passage_text
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
    seconds: float = 0.0
    # (seconds since start, chunks embedded) when each role group finished: "source", ...
    milestones: dict[str, tuple[float, int]] | None = None


def embed_missing(
    store: Store,
    model: EmbeddingModel,
    progress: EmbedProgress | None = None,
    batch_size: int | None = None,
    pause: Pause | None = None,
) -> EmbedReport:
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
    report.seconds = time.perf_counter() - started
    return report
