"""The second stage: a cross-encoder reorders the first stage's best few, where that pays.

Off by default (`[search] rerank`). The first stage fuses ranks from indexes that each read the
query alone; a cross-encoder (embed/reranker.py) reads the question and a candidate's code
together. What it buys was measured with leave-one-repository-out validation on 15
repositories (bench/results/search_sets.md): on top of the first stage as tuned there, the same
top five by construction and no more questions answered first (41 of 103 against 42 held out;
before that tuning it had gained a few); on pasted bug reports nothing at any pool size tried (10, 20, 30 candidates),
so a long text never pays for it; definitions, references and exact strings are answered by
their own index ("direct"), and a message found verbatim has stronger evidence than any model:
never reranked. Its cost: one network run per candidate, about 40 ms each at RERANK_TOKENS on
2 cores, plus about 0.1 s to load the model once per process: 88% of an editor question's time
on Django (bench/results/question_speed.md). That is why it is off unless asked for.

It reorders only the first stage's top five (RERANK_CANDIDATES), after the cap of chunks per
file (engine: reordered before it, the chunk of a file the cap drops could change, and with it
the five), so the five results a person reads first are always the first stage's five, and the
results after them keep their order:
it can move an answer up inside them but never push one out. With a pool of eight it pushed
answers out on corpora it was never tuned on (issue 36), and the validation chose eight for two
held-out repositories and lost a top-5 answer in each: a pool over five is not tried any more.
It abstains (the first stage's order stands) when its best score leads the next by less than
ABSTAIN_MARGIN; the validation kept that at 0 (margins of 1 and 3 gained nothing held out).

The final order blends the model's rank with the first stage's, each as 1 / (BLEND_K + rank):
the model alone dropped answers the retrievers agreed on (measured: pure model order gained
less than the blend on questions, and lost on reports). The model's share carries the first
stage's demotions (a test, a doc, a generated file): the model reads relevance, not policy.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING

from ..store import Store

if TYPE_CHECKING:
    from ..embed.reranker import CrossEncoder
    from .results import SearchResult

RERANK_CANDIDATES = 5  # the top five are the first stage's, in the model's order
RERANK_TOKENS = 192  # query and code together: a method's signature, doc and first lines
BLEND_K = 10
# The model abstains (the first stage's order stands) when its best score leads the next by
# less than this: it cannot tell them apart. Kept at 0 by leave-one-repository-out validation.
ABSTAIN_MARGIN = 0.0
RERANK_INTENTS = ("understand_code", "find_similar")


class SecondStage:
    """Reorders `results` for a question with the model `load()` returns (None, or an error
    such as the one line of a missing `rerank` extra: the first stage's order stands, with a
    note that says why)."""

    def __init__(self, store: Store, load: Callable[[], CrossEncoder | None]):
        self.store = store
        self._load = load
        self._model: CrossEncoder | None = None
        self.problem: str | None = None

    def model(self) -> CrossEncoder | None:
        if self._model is None and self.problem is None:
            try:
                self._model = self._load()
            except Exception as exc:  # a damaged file: search still answers, with a note
                self.problem = str(exc)
            else:
                if self._model is None:  # a loader that says "none here" without a reason
                    self.problem = "no reranker is installed (`pip install repocontext[rerank]`)"
        return self._model

    def rerank(self, query: str, results: list[SearchResult]) -> list[SearchResult]:
        model = self.model()
        pool = results[:RERANK_CANDIDATES]
        if model is None or len(pool) < 2:
            return results
        texts = self.store.chunk_texts([r.chunk_id for r in pool])
        passages = [
            f"{r.path} {r.symbol or ''} ({r.kind})\n{texts.get(r.chunk_id, '')}" for r in pool
        ]
        scores = model.score(query, passages)
        best, second = sorted(scores, reverse=True)[:2]
        if best - second < ABSTAIN_MARGIN:
            return results
        by_model = sorted(range(len(pool)), key=lambda i: -scores[i])
        model_rank = {i: rank for rank, i in enumerate(by_model)}
        blended = {
            i: 1.0 / (BLEND_K + i) + _demotion(pool[i]) / (BLEND_K + model_rank[i])
            for i in range(len(pool))
        }
        slots = [r.score for r in pool]  # the top places keep their scores; who holds them moves
        order = sorted(range(len(pool)), key=lambda i: (-blended[i], i))
        for slot, i in enumerate(order):
            res = pool[i]
            res.rerank = {"score": round(float(scores[i]), 3), "rank": model_rank[i] + 1,
                          "first_stage_rank": i + 1}  # fmt: skip
            res.score = slots[slot]
        return [pool[i] for i in order] + results[len(pool) :]


def _demotion(res: SearchResult) -> float:
    """The product of the first stage's demoting factors (role, flags, archive path)."""
    factor = 1.0
    for value in res.factors.values():
        if value < 1.0:
            factor *= value
    return factor
