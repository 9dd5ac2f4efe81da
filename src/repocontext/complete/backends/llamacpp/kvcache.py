"""What the KV cache keeps, moves, holds aside and evaluates for a new prompt: a pure planner.

No model and no llama.cpp here: token lists, positions, the context's size (`n_ctx`) and its
sliding window (`n_swa`) in, a plan out (`plan`, `what_the_cache_can_give`). `carry_out` runs
a plan's steps on a `Cache` (native.py's `Native` in backend.py: llama.cpp's calls) and asks
it, between the steps, what it really holds (`held_end`, `lowest`), as numbers.

The cache keeps the prompt's common prefix with what it holds; then, as llama-server's
`--cache-reuse` does, later runs of at least `cache_reuse` cached tokens that the new prompt
goes on with are moved to their new positions instead of being evaluated again
(`llama_memory_seq_add` shifts their keys' rotary positions): the window after lines dropped
from its top, the code after a snippet dropped from the context, and, past one stretch of new
text (a context block that came in or changed), the window after it. llama.cpp requires a
sequence's positions to grow one by one as it is decoded, so the runs are held in a second
sequence sharing the same cells while the new text is decoded (`park`), then shifted right
behind it (`unpark`).

A step on the cache is a `CellOp` (remove, copy or shift a sequence's cells in a range of
positions, -1 for "all"); a step's ops are applied in order.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field, replace
from typing import Literal, Protocol

EVAL_CHUNK = 32
EVAL_CHUNK_HEAD = 128  # the prompt's head, which the next keystroke shares (eval_pieces)
EVAL_TAIL = 64
GRAM = 4  # cached runs are found through their first GRAM tokens

# (cache start, prompt start, length): a cached run found again in the prompt
Run = tuple[int, int, int]


@dataclass(frozen=True)
class CellOp:
    """One call on the KV cache. `remove`: sequence `seq`'s cells in [p0, p1); `copy`: those
    of `seq` to sequence `to`; `shift`: `seq`'s cells in [p0, p1) by `delta` positions. -1
    for p0 or p1: from the start, to the end."""

    kind: Literal["remove", "copy", "shift"]
    seq: int
    p0: int
    p1: int
    to: int = 0
    delta: int = 0


def remove(seq: int, p0: int, p1: int) -> CellOp:
    return CellOp("remove", seq, p0, p1)


def copy(seq: int, to: int, p0: int, p1: int) -> CellOp:
    return CellOp("copy", seq, p0, p1, to=to)


def shift(seq: int, p0: int, p1: int, delta: int) -> CellOp:
    return CellOp("shift", seq, p0, p1, delta=delta)


@dataclass
class Plan:
    """What a prompt gets from the cache: `tokens` (the prompt cut to fit), `cached` (what the
    cache holds), `reuse` (the common prefix kept) and `moves` (the runs moved)."""

    tokens: list[int]
    cached: list[int]
    reuse: int
    moves: list[Run] = field(default_factory=list)

    @property
    def inserts(self) -> bool:
        """New text comes before the runs (a context block): it is evaluated while the cache
        after the prefix is held aside (`park`), and the runs are moved behind it."""
        return bool(self.moves) and self.moves[0][1] > self.reuse

    @property
    def pending(self) -> int:
        """The prompt's tokens neither kept nor moved: what is evaluated."""
        return len(self.tokens) - self.reuse - sum(n for _, _, n in self.moves)


def fit(tokens: list[int], n_ctx: int, reserve: int) -> list[int]:
    """The prompt cut to leave `reserve` tokens for the answer: its first token (BOS or the
    first marker) and its end (the cursor) are kept, the oldest context after the first goes."""
    room = n_ctx - reserve - 1
    if len(tokens) > room:
        tokens = tokens[:1] + tokens[len(tokens) - room + 1 :]
    return tokens


def plan(tokens: list[int], cached: list[int], n_ctx: int, reserve: int, cache_reuse: int) -> Plan:
    """The prefix kept and the runs moved for `tokens` (cut to fit), as the cache's tokens
    `cached` allow; `cache_reuse` 0: the prefix only."""
    tokens = fit(tokens, n_ctx, reserve)
    reuse = common_prefix(cached, tokens[:-1])  # always evaluate the last token again
    moves = reuse_plan(cached, tokens, reuse, cache_reuse) if cache_reuse > 0 else []
    return Plan(tokens, cached, reuse, moves)


def window_holds(lowest: int, position: int, n_swa: int) -> bool:
    """Does the sliding-window cache (gemma-3's) still hold a sequence from `position` on,
    given `lowest`, the lowest position it holds (-1: none)? It keeps each sequence's
    positions as one range and lets the oldest go, a window behind the sequence's last
    position, when new tokens need cells: a run moved up from there, or a prefix whose window
    reaches back there, would be attended with cells missing. No window (`n_swa` 0): yes."""
    if not n_swa:
        return True
    return lowest <= position or lowest < 0


def room_to_park(cached: int, tokens: int, reuse: int, n_ctx: int) -> bool:
    """Can the cache hold every cell held aside (`park`, `cached` of them) and the prompt's new
    tokens (`tokens` in all) at once? When it cannot, llama.cpp finds no slot for them
    (`llama_decode` 1)."""
    return cached + tokens - reuse <= n_ctx


def what_the_cache_can_give(p: Plan, n_ctx: int, n_swa: int, lowest: int) -> Plan:
    """`plan`'s prefix and runs, cut to what llama.cpp can still give (`lowest`: the lowest
    position sequence 0 holds): no runs to move behind new text without room to hold them
    meanwhile, none whose first cells the window cache let go, and no prefix at all when the
    window the first new token attends is no longer all there."""
    reuse, moves = p.reuse, p.moves
    if (
        moves
        and moves[0][1] > reuse
        and not room_to_park(len(p.cached), len(p.tokens), reuse, n_ctx)
    ):
        moves = []
    if moves and not window_holds(lowest, moves[0][0], n_swa):
        moves = []
    first = reuse if not moves or moves[0][1] > reuse else moves[-1][1] + moves[-1][2]
    window_from = max(0, first - n_swa)
    if window_from < reuse and not window_holds(lowest, window_from, n_swa):
        return replace(p, reuse=0, moves=[])
    return replace(p, reuse=reuse, moves=moves)


def drop_outside(seq: int, reuse: int, moves: list[Run]) -> list[CellOp]:
    """Drop from `seq` every cell after `reuse` that is in none of the runs of `moves`."""
    ops = []
    kept_end = reuse
    for c, _, n in moves:
        if c > kept_end:
            ops.append(remove(seq, kept_end, c))
        kept_end = c + n
    ops.append(remove(seq, kept_end, -1))
    return ops


def place(reuse: int, moves: list[Run]) -> tuple[list[CellOp], int]:
    """Keep the cached runs of `moves`, drop every other cached cell after `reuse`, and shift
    the runs to their positions in the new prompt; and where the prompt's tokens still to
    evaluate begin. Every run moves left (or stays): from the left, none lands on cells not
    yet moved."""
    ops = drop_outside(0, reuse, moves)
    ops += [shift(0, c, c + n, p - c) for c, p, n in moves if p != c]
    return ops, moves[-1][1] + moves[-1][2]


def park(reuse: int) -> list[CellOp]:
    """Hold what the cache has after `reuse` in sequence 1 and drop it from sequence 0, so that
    the text inserted before the runs can be evaluated at consecutive positions (llama.cpp
    requires them). All of it is held, not only the runs: a newer key that stops the insertion
    gets the cache back as it was (`restore`), so that a context block tried in a pause never
    costs the window the key needs. The cells are shared, not copied. (llama-cpp-python's own
    removals, with a sequence of -1, touch sequence 0 only.) gemma-3's sliding-window cache
    counts a held cell that lies a window behind sequence 1's last one as free (llama.cpp's
    find_slot), and may give it to the new text: the backend checks what came back
    (`held_end`) and evaluates again what did not (`settle`)."""
    return [remove(1, -1, -1), copy(0, 1, reuse, -1), remove(0, reuse, -1)]


def restore(reuse: int) -> list[CellOp]:
    """The insertion was stopped: what it evaluated goes, what was held comes back."""
    return [remove(0, reuse, -1), copy(1, 0, -1, -1), remove(1, -1, -1)]


def restored(cached: list[int], reuse: int, held_end: int) -> tuple[list[CellOp], list[int]]:
    """After `restore`: all of the held cells came back (`held_end`, one past the last position
    sequence 0 holds, is the cache's length), or none, where the window cache took some of
    them meanwhile; the further ops and the tokens the cache then holds."""
    if held_end != len(cached):
        return [remove(0, reuse, -1)], cached[:reuse]
    return [], cached


def unpark(reuse: int, moves: list[Run]) -> tuple[list[CellOp], int]:
    """Drop the held cells that are in no run, shift the runs to their places after the
    inserted text and give them back to sequence 0; and where the prompt's tokens still to
    evaluate begin. Runs moving left go first from the left, runs moving right first from the
    right: a run's range never takes in another run's cells (the shifts only ever grow the
    gaps between them)."""
    ops = drop_outside(1, reuse, moves)
    left = [m for m in moves if m[1] < m[0]]
    right = [m for m in moves if m[1] > m[0]]
    ops += [shift(1, c, c + n, p - c) for c, p, n in left + right[::-1]]
    ops += [copy(1, 0, -1, -1), remove(1, -1, -1)]
    return ops, moves[-1][1] + moves[-1][2]


def after_insert(reuse: int, moves: list[Run], held_by_1: bool) -> tuple[list[CellOp], int]:
    """The inserted text is evaluated: the runs come back behind it (`unpark`) where sequence 1
    still holds their first cells (`held_by_1`: `window_holds` of sequence 1 at the first
    run's cache start); else the window cache gave held cells to the new text, and the held
    ones go (the runs are evaluated again). The ops, and where evaluation goes on."""
    if held_by_1:
        return unpark(reuse, moves)
    return [remove(1, -1, -1)], moves[0][1]


def checked(start: int, held_end: int, fallback: int) -> tuple[list[CellOp], int] | None:
    """After runs were moved: does sequence 0 end where the prompt's evaluation is to begin
    (`held_end`, one past the last position llama.cpp says it holds)? None: yes. Else a moved
    run had lost cells: what sequence 0 holds from `fallback` on goes, and evaluation begins
    there (the ops, and `fallback`)."""
    if held_end == start:
        return None
    return [remove(0, fallback, -1)], fallback


class Cache(Protocol):
    """What carrying a plan out asks of the cache: native.Native for llama.cpp's (a simulation
    of its cells in tests/test_kvcache.py)."""

    def apply(self, ops: list[CellOp]) -> None:
        """The steps, in order."""
        ...

    def hold(self, tokens: list[int]) -> None:
        """Sequence 0's cells now hold `tokens` (the bookkeeping evaluation goes on from)."""
        ...

    def truncate(self, keep: int) -> None:
        """Drop sequence 0's cells after the first `keep`."""
        ...

    def held_end(self) -> int:
        """One past the last position sequence 0 holds, as llama.cpp counts it."""
        ...

    def lowest(self, seq: int) -> int:
        """The lowest position `seq` holds (-1: none), as llama.cpp counts it."""
        ...


def carry_out(
    p: Plan, cache: Cache, n_swa: int, evaluate: Callable[[int, int], bool]
) -> tuple[int | None, int]:
    """The plan's prefix kept and runs moved (`place`, or `park` and `unpark` around the new
    text before them, which `evaluate(start, end)` evaluates), then checked against what the
    cache says it holds: a run that lost cells is evaluated again. Where the prompt's
    evaluation goes on, and how many of its tokens were reused; (None, 0) when `evaluate`
    was stopped (False) while the new text was evaluated: the cache is given back as it was
    (`give_back`)."""
    tokens, reuse, moves = p.tokens, p.reuse, p.moves
    if p.inserts:
        # text inserted before the runs (a new context block): evaluated first, the runs held
        # aside meanwhile and moved after it
        cache.apply(park(reuse))
        cache.hold(tokens[:reuse])
        if not evaluate(reuse, moves[0][1]):
            give_back(cache, reuse, p.cached)  # stopped: the cache goes back to what it held
            return None, 0
        lowest = cache.lowest(1) if n_swa else -1
        ops, start = after_insert(reuse, moves, window_holds(lowest, moves[0][0], n_swa))
        fallback = moves[0][1]
    elif moves:
        ops, start = place(reuse, moves)
        fallback = reuse
    else:
        cache.truncate(reuse)
        return reuse, reuse
    cache.apply(ops)
    lost = checked(start, cache.held_end(), fallback)
    if lost is not None:  # a moved run had lost cells: evaluate it again
        ops, start = lost
        cache.apply(ops)
        moves = []
    return start, reuse + sum(n for _, _, n in moves)


def give_back(cache: Cache, reuse: int, cached: list[int]) -> None:
    """The insertion was stopped: what it evaluated goes, what was held comes back (all of
    it, or none where the window cache took some of it meanwhile)."""
    cache.apply(restore(reuse))
    ops, held = restored(cached, reuse, cache.held_end())
    cache.apply(ops)
    cache.hold(held)


def eval_pieces(start: int, end: int) -> list[tuple[int, int]]:
    """The chunks in which prompt tokens [start, end) are evaluated: the last `EVAL_TAIL`
    tokens (the line being typed, and what follows it in the prompt) in chunks of `EVAL_CHUNK`,
    the rest before them in chunks of up to `EVAL_CHUNK_HEAD`. The next keystroke's prompt
    shares that head, so a cancel noticed one big chunk later loses nothing there, and big
    chunks evaluate faster."""
    pieces = []
    head_end = max(start, end - EVAL_TAIL)
    for i in range(start, head_end, EVAL_CHUNK_HEAD):
        pieces.append((i, min(i + EVAL_CHUNK_HEAD, head_end)))
    for i in range(head_end, end, EVAL_CHUNK):
        pieces.append((i, min(i + EVAL_CHUNK, end)))
    return pieces


def reuse_plan(
    cached: list[int], prompt: list[int], start: int, min_run: int, min_after_insert: int = 64
) -> list[tuple[int, int, int]]:
    """Runs of `cached` found again in `prompt` after its kept part: (cache start, prompt
    start, length), each at least `min_run` tokens, the prompt's last token excluded (always
    evaluated). They follow the kept part directly (text removed before them: a window that
    slid down, a snippet dropped), or follow one stretch of new text (a context block that
    changed or came in before the window): then the first run is at least `min_after_insert`
    tokens, and the new text is evaluated before the runs are moved behind it (`park`).
    Runs are found through an index of the cache's GRAM-token sequences, the run after new
    text through one of its `min_after_insert`-token sequences (one lookup per prompt token,
    however repetitive the code): a prompt of 1,500 tokens is planned in a few milliseconds."""
    index: dict[tuple[int, ...], list[int]] = {}
    for i in range(start, len(cached) - GRAM + 1):
        index.setdefault(tuple(cached[i : i + GRAM]), []).append(i)
    limit = len(prompt) - 1

    def extend(c: int, p: int, n: int) -> int:
        while c + n < len(cached) and p + n < limit and cached[c + n] == prompt[p + n]:
            n += 1
        return n

    def run_at(head_c: int, head_p: int) -> tuple[int, int, int] | None:
        best = None
        for c in index.get(tuple(prompt[head_p : head_p + GRAM]), ()):
            if c < head_c:
                continue
            n = extend(c, head_p, GRAM)
            if best is None or n > best[2]:
                best = (c, head_p, n)
            if n >= min_run:
                break  # the first long enough run from the left, as llama-server takes it
        return best if best is not None and best[2] >= min_run else None

    def run_after_new_text(head_c: int, head_p: int) -> tuple[int, int, int] | None:
        width = max(min_run, min_after_insert, GRAM)
        anchors: dict[tuple[int, ...], int] = {}
        for i in range(head_c, len(cached) - width + 1):
            anchors.setdefault(tuple(cached[i : i + width]), i)
        for p in range(head_p + 1, limit - width + 1):
            c = anchors.get(tuple(prompt[p : p + width]))
            if c is not None:
                return (c, p, extend(c, p, width))
        return None

    moves: list[tuple[int, int, int]] = []
    head_c, head_p = start, start
    while head_p + GRAM <= limit:
        found = run_at(head_c, head_p)
        if found is None and not moves:
            found = run_after_new_text(head_c, head_p)
        if found is None:
            break  # the prompt goes on with new text: everything after it is evaluated
        moves.append(found)
        head_c, head_p = found[0] + found[2], found[1] + found[2]
    return moves


def common_prefix(a: list[int], b: list[int]) -> int:
    n = min(len(a), len(b))
    i = 0
    while i < n and a[i] == b[i]:
        i += 1
    return i
