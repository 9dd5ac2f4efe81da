"""The KV-cache planner (complete/backends/llamacpp/kvcache.py) without a model.

Each case is one that tests/test_complete.py and tests/test_decoding.py run with the real
model: a key typed, a window slid down, context inserted before the window, a block stopped
by the next key, no room to hold the cache aside, the sliding window's lost cells, a prompt
cut to fit. The plan is carried out on `Cells`, a simulation of llama.cpp's unified cache
(cells with a position, a token and the sequences that share them; a shift moves a cell for
every sequence in it, as llama.cpp's does), and checked by what sequence 0 then holds.
"""

from __future__ import annotations

import pytest

from repocontext.complete.backends.llamacpp import kvcache
from repocontext.complete.backends.llamacpp.kvcache import (
    EVAL_CHUNK,
    EVAL_CHUNK_HEAD,
    EVAL_TAIL,
    CellOp,
    Plan,
    carry_out,
    eval_pieces,
    reuse_plan,
    what_the_cache_can_give,
)

N_CTX = 2048
BOS = 2


class NoSlot(RuntimeError):
    """llama_decode 1: no room for the batch."""


class Cells:
    """llama.cpp's unified KV cache as the plan sees it: `cells` are [position, token, seqs];
    `held` the tokens the backend says sequence 0 holds (llama-cpp-python's input_ids)."""

    def __init__(self, tokens: list[int], n_ctx: int = N_CTX):
        self.n_ctx = n_ctx
        self.cells: list[list] = [[i, t, {0}] for i, t in enumerate(tokens)]
        self.held = list(tokens)
        self.log: list[CellOp] = []

    # --- kvcache.Cache ---
    def apply(self, ops: list[CellOp]) -> None:
        for op in ops:
            self.log.append(op)
            lo = 0 if op.p0 < 0 else op.p0
            hi = float("inf") if op.p1 < 0 else op.p1
            for cell in self.cells:
                pos, _, seqs = cell
                if not lo <= pos < hi:
                    continue
                if op.kind == "remove":
                    seqs.discard(op.seq) if op.seq >= 0 else seqs.clear()
                elif op.kind == "copy":
                    if op.seq in seqs:
                        seqs.add(op.to)
                elif op.seq in seqs:
                    cell[0] += op.delta
            self.cells = [c for c in self.cells if c[2] and c[0] >= 0]

    def hold(self, tokens: list[int]) -> None:
        self.held = list(tokens)

    def truncate(self, keep: int) -> None:
        if keep < len(self.held):
            self.apply([CellOp("remove", 0, keep, -1)])
        self.held = self.held[:keep]

    def held_end(self) -> int:
        return max((p for p, _, s in self.cells if 0 in s), default=-1) + 1

    def lowest(self, seq: int) -> int:
        return min((p for p, _, s in self.cells if seq in s), default=-1)

    # --- what the tests look at ---
    def seq(self, seq: int) -> dict[int, int]:
        return {p: t for p, t, s in self.cells if seq in s}

    def decode(self, tokens: list[int], start: int, end: int) -> None:
        """llama_decode of tokens[start:end] into sequence 0: positions go on one by one, and
        each needs a free cell."""
        assert self.held_end() == start, "llama.cpp: positions must follow sequence 0's last"
        if len(self.cells) + end - start > self.n_ctx:
            raise NoSlot("llama_decode returned 1")
        self.cells += [[i, tokens[i], {0}] for i in range(start, end)]
        self.held = self.held[:start] + tokens[start:end]

    def drop_below(self, seq: int, position: int) -> None:
        """What gemma-3's sliding-window cache does to a sequence's oldest cells."""
        for cell in self.cells:
            if cell[0] < position:
                cell[2].discard(seq)
        self.cells = [c for c in self.cells if c[2]]


def generate(
    cells: Cells,
    prompt: list[int],
    reserve: int = 8,
    cache_reuse: int = 16,
    n_swa: int = 0,
    stop_after: int | None = None,
    while_inserting=None,
) -> tuple[Plan, int | None, int, int]:
    """The backend's `_generate` up to the first generated token, on `cells`: the plan, where
    evaluation went on (None: stopped), the tokens reused and the tokens evaluated."""
    p = kvcache.plan(prompt, list(cells.held), cells.n_ctx, reserve, cache_reuse)
    lowest = cells.lowest(0) if n_swa else -1
    p = what_the_cache_can_give(p, cells.n_ctx, n_swa, lowest)
    evaluated = [0]

    def evaluate(start: int, end: int) -> bool:
        if while_inserting is not None:
            while_inserting(cells)
        for i, j in eval_pieces(start, end):
            if stop_after is not None and evaluated[0] >= stop_after:
                return False
            cells.decode(p.tokens, i, j)
            evaluated[0] += j - i
        return True

    start, reused = carry_out(p, cells, n_swa, evaluate)
    if start is None:
        return p, None, reused, evaluated[0]
    cells.hold(p.tokens[:start])
    cells.decode(p.tokens, start, len(p.tokens))
    evaluated[0] += len(p.tokens) - start
    return p, start, reused, evaluated[0]


def holds(cells: Cells, tokens: list[int]) -> bool:
    """Sequence 0 holds exactly `tokens` at positions 0.. and sequence 1 nothing, and the
    bookkeeping says so."""
    return cells.seq(0) == dict(enumerate(tokens)) and not cells.seq(1) and cells.held == tokens


def text(n: int, first: int = 1000) -> list[int]:
    """`n` distinct tokens (code with no repeats: every run is found where it is)."""
    return list(range(first, first + n))


WINDOW = [BOS] + text(400)  # BOS, then 400 tokens of code around the cursor
LINE = text(6, first=9000)  # the line being typed


def warm(prompt: list[int], **kw) -> Cells:
    cells = Cells([])
    generate(cells, prompt, **kw)
    assert holds(cells, prompt)
    return cells


# --- the prefix ---------------------------------------------------------------------------------


def test_a_typed_character_reevaluates_only_the_last_tokens():
    cells = warm(WINDOW + LINE)
    typed = WINDOW + LINE + [9100]
    p, start, reused, evaluated = generate(cells, typed)
    assert (p.reuse, p.moves, p.pending) == (len(WINDOW + LINE), [], 1)
    assert reused == len(WINDOW + LINE) and evaluated == 1 and holds(cells, typed)
    assert cells.log == []  # nothing moved, nothing held, nothing removed


def test_the_same_prompt_again_evaluates_its_last_token_only():
    cells = warm(WINDOW + LINE)
    p, _, reused, evaluated = generate(cells, WINDOW + LINE)
    assert p.reuse == len(WINDOW + LINE) - 1 and evaluated == 1 and holds(cells, WINDOW + LINE)


def test_a_changed_line_drops_the_cache_after_the_common_prefix():
    cells = warm(WINDOW + LINE)
    changed = WINDOW + LINE[:3] + [7, 8]
    p, _, reused, evaluated = generate(cells, changed)
    assert p.reuse == len(WINDOW) + 3 and not p.moves and evaluated == 2
    assert holds(cells, changed)


# --- runs moved left: a window that slid down -------------------------------------------------


def test_a_window_that_slides_down_is_moved_not_evaluated_again():
    """Lines dropped from the window's top: the rest moves left to its new place."""
    cells = warm(WINDOW + LINE)
    slid = [BOS] + WINDOW[31:] + LINE  # 30 tokens of lines gone from the top
    p, start, reused, evaluated = generate(cells, slid)
    assert p.reuse == 1 and p.moves == [(31, 1, len(WINDOW) - 31 + len(LINE) - 1)]
    assert not p.inserts and p.pending == 1
    assert reused == len(slid) - 1 and evaluated == 1 and holds(cells, slid)
    assert [op.kind for op in cells.log] == ["remove", "remove", "shift"]
    # the bookkeeping matches what it holds: the same prompt again reuses it all
    p, _, _, evaluated = generate(cells, slid)
    assert p.reuse == len(slid) - 1 and evaluated == 1 and holds(cells, slid)


def test_a_snippet_dropped_from_the_middle_moves_what_followed_it():
    cells = warm(WINDOW + LINE)
    dropped = WINDOW[:100] + WINDOW[150:] + LINE
    p, _, reused, evaluated = generate(cells, dropped)
    assert p.reuse == 100 and p.moves == [(150, 100, len(dropped) - 101)]
    assert evaluated == 1 and holds(cells, dropped)


def test_runs_shorter_than_cache_reuse_are_evaluated_again_and_0_keeps_the_prefix_only():
    cells = warm(WINDOW + LINE)
    short = WINDOW[:100] + WINDOW[150:160] + [5, 6]  # a run of 10 < 16
    p, _, _, evaluated = generate(cells, short)
    assert p.moves == [] and evaluated == 12 and holds(cells, short)
    cells = warm(WINDOW + LINE)
    p, _, _, _ = generate(cells, [BOS] + WINDOW[31:] + LINE, cache_reuse=0)
    assert p.reuse == 1 and p.moves == [] and p.pending == len(WINDOW) - 31 + len(LINE)


# --- runs moved right: context inserted before the window ---------------------------------------


CONTEXT = text(40, first=5000)  # a context block of 40 tokens


def test_context_inserted_before_the_window_costs_the_context_not_the_window():
    """Issue 20: the cached window is held in sequence 1 while the block is evaluated, then
    moved behind it."""
    cells = warm(WINDOW + LINE)
    prompt = [BOS] + CONTEXT + WINDOW[1:] + LINE
    p, start, reused, evaluated = generate(cells, prompt)
    assert p.inserts and p.reuse == 1 and p.moves == [(1, 41, len(prompt) - 42)]
    assert p.pending == len(CONTEXT) + 1
    assert evaluated == len(CONTEXT) + 1 and reused == len(prompt) - 1 - len(CONTEXT)
    assert holds(cells, prompt)
    kinds = [op.kind for op in cells.log]
    assert kinds == ["remove", "copy", "remove"] + ["remove"] + ["shift", "copy", "remove"]
    p, _, _, evaluated = generate(cells, prompt)  # the same prompt again reuses it all
    assert evaluated == 1 and holds(cells, prompt)


def test_a_changed_block_moves_the_window_behind_the_new_block():
    """A block that changed: the old one is dropped, the window moves by the difference."""
    first = [BOS] + CONTEXT + WINDOW[1:] + LINE
    cells = warm(first)
    other = [BOS] + text(70, first=6000) + WINDOW[1:] + LINE
    p, _, reused, evaluated = generate(cells, other)
    assert p.inserts and p.moves == [(41, 71, len(WINDOW) - 1 + len(LINE) - 1)]
    assert evaluated == 71 and holds(cells, other)


def test_runs_moving_left_and_right_after_new_text_are_moved_without_overlapping():
    """After the new text, the first run moves right; a later one, after a snippet dropped,
    moves left: right-movers go from the right, left-movers from the left."""
    cached = [BOS] + text(300)
    cells = warm(cached)
    new = text(5, first=7000)
    prompt = [BOS] + new + cached[1:101] + cached[151:] + [42]
    p, _, reused, evaluated = generate(cells, prompt)
    assert p.moves == [(1, 6, 100), (151, 106, 150)]
    assert evaluated == 6 and holds(cells, prompt)


def test_reuse_plan_moves_runs_left_and_right_past_one_stretch_of_new_text():
    cached = list(range(100))
    # 10 tokens dropped after a kept head of 5: one run moves left by 10
    assert reuse_plan(cached, cached[:5] + cached[15:] + [999], 5, 16) == [(15, 5, 85)]
    # a snippet of 20 dropped in the middle, then the rest follows: still one move
    slid = cached[:5] + cached[5:40] + cached[60:] + [999]
    assert reuse_plan(cached, slid, 40, 16) == [(60, 40, 40)]
    # new text (a context block) before the window: the window moves right, behind it
    assert reuse_plan(cached, cached[:5] + [500, 501] + cached[5:] + [999], 5, 16) == [(5, 7, 95)]
    # ... but only a long run (min_after_insert) is worth the detour
    assert reuse_plan(cached, cached[:5] + [500] + cached[5:40] + [999], 5, 16) == []
    # runs shorter than the minimum are evaluated again
    assert reuse_plan(cached, cached[:5] + cached[15:25] + [999], 5, 16) == []


# --- a block stopped by the next key ------------------------------------------------------------


def test_a_context_block_stopped_by_the_next_key_gives_the_window_back():
    """Stopped while the block is evaluated: what it evaluated goes, the held window comes
    back, and the key's prompt without the block costs what it types."""
    cells = warm(WINDOW + LINE)
    block = text(200, first=5000)
    p, start, reused, evaluated = generate(
        cells, [BOS] + block + WINDOW[1:] + LINE, stop_after=EVAL_CHUNK_HEAD
    )
    assert start is None and reused == 0 and 0 < evaluated < len(block)
    assert holds(cells, WINDOW + LINE)
    p, _, _, evaluated = generate(cells, WINDOW + LINE)
    assert p.pending == 1 and evaluated == 1 and holds(cells, WINDOW + LINE)


def test_a_stopped_block_whose_held_cells_the_window_took_keeps_the_prefix_only():
    """The window cache gave held cells to the block before it was stopped: sequence 0 does
    not end where the cache did (`held_end`), so none of the held cells are kept, only the
    prefix, and the tokens held say so."""
    assert kvcache.restored([BOS, 5, 6, 7], 1, 4) == ([], [BOS, 5, 6, 7])
    assert kvcache.restored([BOS, 5, 6, 7], 1, 3) == ([CellOp("remove", 0, 1, -1)], [BOS])
    cells = warm(WINDOW + LINE)
    p, start, _, _ = generate(
        cells,
        [BOS] + text(200, first=5000) + WINDOW[1:] + LINE,
        n_swa=64,
        stop_after=EVAL_CHUNK_HEAD,
        while_inserting=lambda c: c.drop_below(1, 10**6),
    )
    assert start is None and holds(cells, [BOS])


# --- no room to hold the cache aside ----------------------------------------------------------


def test_a_context_block_with_no_room_beside_the_held_cells_is_evaluated_in_full():
    """Holding the cache aside needs room for it and the new text at once; without it the
    block and the window are evaluated (before: llama_decode 1, and every key after it)."""
    cached = [BOS] + text(1300)
    cells = warm(cached)
    prompt = [BOS] + text(800, first=5000) + cached[400:1000] + [42]
    p = kvcache.plan(prompt, cached, N_CTX, 8, 16)
    assert p.inserts and not kvcache.room_to_park(len(cached), len(prompt), p.reuse, N_CTX)
    p, start, reused, evaluated = generate(cells, prompt)
    assert p.moves == [] and reused <= 1 and evaluated == len(prompt) - 1
    assert holds(cells, prompt)
    with pytest.raises(NoSlot):  # what happened without the check
        cells = warm(cached)
        p = kvcache.plan(prompt, cached, N_CTX, 8, 16)
        carry_out(p, cells, 0, lambda i, j: cells.decode(prompt, i, j) or True)


def test_room_to_park_counts_the_held_cells_and_the_new_tokens():
    assert kvcache.room_to_park(1000, 1048, 0, 2048)
    assert not kvcache.room_to_park(1000, 1049, 0, 2048)
    assert kvcache.room_to_park(1000, 1049, 1, 2048)


# --- gemma-3's sliding window -------------------------------------------------------------------


def test_no_window_holds_everything():
    assert kvcache.window_holds(300, 0, 0)
    assert kvcache.window_holds(300, 300, 512) and kvcache.window_holds(-1, 0, 512)
    assert not kvcache.window_holds(301, 300, 512)


def test_runs_whose_first_cells_the_window_let_go_are_not_moved():
    cells = warm(WINDOW + LINE)
    cells.drop_below(0, 20)  # the window let positions 0..19 go
    p = kvcache.plan([BOS] + WINDOW[11:] + LINE, cells.held, N_CTX, 8, 16)
    assert p.moves[0][0] == 11
    given = what_the_cache_can_give(p, N_CTX, 512, cells.lowest(0))
    assert given.moves == [] and given.reuse == 0  # the prefix's window reaches back too


def test_a_prefix_whose_window_reaches_cells_let_go_is_not_kept():
    """The first new token attends a window back: if the cache no longer holds all of it,
    nothing is kept."""
    cells = warm(WINDOW + LINE)
    typed = WINDOW + LINE + [9100]
    p = kvcache.plan(typed, cells.held, N_CTX, 8, 16)
    assert p.reuse == 407 and not p.moves
    assert what_the_cache_can_give(p, N_CTX, 512, 0).reuse == 407  # all there
    assert what_the_cache_can_give(p, N_CTX, 512, 100).reuse == 0  # the window reaches 0
    assert what_the_cache_can_give(p, N_CTX, 300, 107).reuse == 407  # it reaches 407 - 300
    assert what_the_cache_can_give(p, N_CTX, 300, 108).reuse == 0
    assert what_the_cache_can_give(p, N_CTX, 0, 108).reuse == 407  # no sliding window


def test_held_cells_the_window_gave_to_the_new_text_are_evaluated_again():
    """While the block is evaluated, the window cache takes held cells a window behind
    sequence 1's last one: the runs are not moved back, the window is evaluated again."""
    cells = warm(WINDOW + LINE)
    prompt = [BOS] + CONTEXT + WINDOW[1:] + LINE
    p, start, _, evaluated = generate(
        cells, prompt, n_swa=512, while_inserting=lambda c: c.drop_below(1, 5)
    )
    assert p.inserts and start == 1 + len(CONTEXT)
    assert evaluated == len(prompt) - 1 and holds(cells, prompt)


def test_a_moved_run_that_lost_cells_is_evaluated_again():
    """llama.cpp says where sequence 0 ends after the move (`held_end`); a run that lost
    cells ends short, and what follows the prefix is evaluated again."""
    assert kvcache.checked(100, 100, 1) is None
    ops, start = kvcache.checked(100, 90, 1)
    assert start == 1 and ops == [CellOp("remove", 0, 1, -1)]
    cells = warm(WINDOW + LINE)
    slid = [BOS] + WINDOW[31:] + LINE
    p = kvcache.plan(slid, cells.held, N_CTX, 8, 16)
    cells.drop_below(0, 0)  # nothing lost yet ...
    cells.cells = [c for c in cells.cells if c[0] < 300]  # ... but the run's tail is gone
    start, reused = carry_out(p, cells, 0, lambda i, j: True)
    assert start == 1 and reused == 1 and cells.seq(0) == {0: BOS}


# --- a prompt longer than the context ---------------------------------------------------------


def test_a_prompt_longer_than_the_context_keeps_its_first_token_and_its_end():
    prompt = [BOS] + text(3000)
    cut = kvcache.fit(prompt, 256, 8)
    assert len(cut) == 256 - 8 - 1 and cut[0] == BOS and cut[-1] == prompt[-1]
    assert cut[1:] == prompt[len(prompt) - len(cut) + 1 :]
    assert kvcache.fit(prompt[:200], 256, 8) == prompt[:200]
    cells = Cells([], n_ctx=256)
    p, _, _, evaluated = generate(cells, prompt, reserve=8)
    assert evaluated == len(cut) < 256 and holds(cells, cut)


def test_a_warming_cuts_the_prompt_as_the_request_after_it_will():
    """A warming generates nothing but reserves what the request will (`Control.reserve`)."""
    prompt = [BOS] + text(3000)
    assert kvcache.plan(prompt, [], 256, 64, 16).tokens == kvcache.fit(prompt, 256, 64)
    assert len(kvcache.plan(prompt, [], 256, 0, 16).tokens) == 255


# --- evaluation in pieces ---------------------------------------------------------------------


def test_a_prompt_is_evaluated_in_large_chunks_and_near_the_cursor_in_small_ones():
    """The head, which the next keystroke shares, goes fastest in large chunks; the last
    tokens, which the next keystroke changes, in small ones, between which a cancel is seen."""
    pieces = eval_pieces(10, 620)
    assert pieces[0][0] == 10 and pieces[-1][1] == 620
    assert all(a[1] == b[0] for a, b in zip(pieces, pieces[1:]))  # in order, nothing twice
    tail = [p for p in pieces if p[0] >= 620 - EVAL_TAIL]
    assert sum(j - i for i, j in tail) == EVAL_TAIL and max(j - i for i, j in tail) <= EVAL_CHUNK
    assert max(j - i for i, j in pieces) == EVAL_CHUNK_HEAD
    assert eval_pieces(600, 620) == [(600, 620)]  # a keystroke: one small chunk
    assert eval_pieces(5, 5) == []
