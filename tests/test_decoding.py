"""Token healing and the abort switch, with the real default model (and a real llama-server).

The cases are lines a person types: the cursor is mid-word, and the prompt's last token is a
piece of the word. Greedy decoding with the pinned model is deterministic, so each case's
unhealed answer is the bug it shows (checked too, so that a model change is noticed)."""

from __future__ import annotations

import os
import threading
import time

import pytest
from test_server import server as llama_server  # noqa: F401  (a real llama-server)

from repocontext.complete.backends import Callbacks, Control
from repocontext.complete.backends.http import LlamaServerBackend, healing_grammar
from repocontext.complete.backends.llamacpp import LlamaCppBackend
from repocontext.complete.backends.llamacpp.kvcache import EVAL_CHUNK_HEAD
from repocontext.complete.healing import TokenPieces, back_up
from repocontext.complete.models import default_model_path
from repocontext.complete.steering import SteeringFacts

pytest.importorskip("llama_cpp", reason="llama-cpp-python is part of the install")

UUID_LINE = "import uuid\n\n\ndef new_id(value):\n    return uuid.UU"
RETURN_LINE = "def area(self):\n    r"
RANGE_LINE = "for i in ran"


@pytest.fixture(scope="module")
def backend():
    b = LlamaCppBackend(str(default_model_path()), n_ctx=2048)
    b.pieces.ready(wait=True)
    return b


def typed(prompt: str, healed: bool, max_tokens: int = 10) -> Control:
    line = prompt.split("\n")[-1]
    return Control(
        max_tokens=max_tokens,
        cursor_at=len(prompt),
        heal_chars=len(line) if healed else 0,
        deadline=time.monotonic() + 600,
    )


def test_a_word_cut_inside_a_token_is_finished_not_repeated(backend):
    """`uuid.UU`: unhealed, the model reads `UU` as a token and proposes `UUID`, giving
    `UUUID`; healed, it finishes the word."""
    assert backend.generate(UUID_LINE, typed(UUID_LINE, False)).text.startswith("U")
    healed = backend.generate(UUID_LINE, typed(UUID_LINE, True)).text
    assert ("uuid.UU" + healed).startswith("uuid.UUID(")


@pytest.mark.parametrize(
    "prompt, letters, word", [(RETURN_LINE, "r", "return"), (RANGE_LINE, "ran", "range")]
)
def test_the_first_letters_of_a_word_are_continued_as_that_word(backend, prompt, letters, word):
    """`    r` is not a variable named `r` (` = int(...)`): healed, the letters go on as a word."""
    plain = backend.generate(prompt, typed(prompt, False)).text
    healed = backend.generate(prompt, typed(prompt, True)).text
    assert not plain[:1].isalnum()  # the bug: the typed letters taken as a whole name
    assert (letters + healed).startswith(word)


def test_healing_never_backs_up_past_the_line_being_typed(backend):
    """Only the characters typed on the line may be spelled again: a prompt whose last
    token began on the line before is sent as it is."""
    pieces = backend.pieces.ready()
    prompt = "x = 1\n"
    tokens = backend.tokenize_prompt(prompt)
    kept, backed = back_up(tokens, pieces, prompt, 0, first=1)
    assert kept == tokens and backed == b""
    text = "    r"
    tokens = backend.tokenize_prompt(text)
    kept, backed = back_up(tokens, pieces, text, len(text), first=1)
    assert backed == b"r" and kept == tokens[:-1]


def test_token_pieces_agree_with_the_characters_still_to_spell():
    pieces = TokenPieces([b"", b"r", b"re", b"return", b" r", b"ra", b"x", b"retu", b"\xff"])
    assert sorted(pieces.agreeing(b"re").tolist()) == [1, 2, 3, 7]  # r is a prefix of it
    assert sorted(pieces.agreeing(b"ret").tolist()) == [1, 2, 3, 7]
    assert sorted(pieces.agreeing(b"x").tolist()) == [6]
    assert sorted(pieces.agreeing(b"\xff").tolist()) == [8]


def test_the_healed_answer_streams_without_the_typed_characters(backend):
    seen: list[str] = []
    control = typed(UUID_LINE, True)
    control.hooks = Callbacks(emit=seen.append)
    gen = backend.generate(UUID_LINE, control)
    assert seen and all(not s.startswith("UU") for s in seen)
    assert seen[-1] == gen.text


def test_leaving_stops_a_long_prompt_chunk_inside_it_and_the_cache_stays_right(backend):
    """When the user leaves the place, a head chunk (128 tokens) is stopped inside llama.cpp
    by the abort switch, not after it; what the cache holds afterwards is what was evaluated,
    so the next answer is the one a fresh cache gives."""
    prompt = LONG_PROMPT
    backend.reset()
    reference = backend.generate(prompt, Control(max_tokens=6)).text
    backend.reset()

    def left() -> bool:  # the watcher asks from its own thread, while the chunk runs
        return threading.current_thread().name == "abort-watch"

    gen = backend.generate(
        prompt, Control(max_tokens=6, hooks=Callbacks(cancelled=left, abandoned=left))
    )
    assert gen.status == "cancelled" and backend.abort.fired
    assert gen.tokens_evaluated == 0 and backend.llm.n_tokens == 0
    assert backend.generate(prompt, Control(max_tokens=6)).text == reference


def test_a_cache_llama_cpp_refuses_is_forgotten_and_the_key_still_gets_its_answer(backend):
    """If the KV cache's cells stop following the tokens we hold for it, llama.cpp refuses the
    next batch (`llama_decode` -1, its positions are not consecutive). The cells are dropped
    here behind the backend's back, the way such a drift would leave them: the next key gets
    the answer a fresh cache gives, and the key after it too."""
    prompt = LONG_PROMPT
    backend.reset()
    reference = backend.generate(prompt, Control(max_tokens=6)).text
    longer = prompt + " "
    backend.reset()
    reference_longer = backend.generate(longer, Control(max_tokens=6)).text
    backend.generate(prompt, Control(max_tokens=6))
    held = backend.llm.n_tokens
    backend.native.seq_rm(0, 8, -1)  # the cells go, the tokens we hold stay
    assert backend.llm.n_tokens == held
    assert backend.generate(longer, Control(max_tokens=6)).text == reference_longer
    assert backend.generate(prompt, Control(max_tokens=6)).text == reference


def test_a_context_block_with_no_room_beside_the_held_cells_is_evaluated_in_full(backend, caplog):
    """New text before a cached run is evaluated while the whole cache is held aside
    (`_park`). With a long cache and a long new block the two did not fit in the context
    together: llama.cpp found no slot (`llama_decode` 1), and the held cells stayed behind, so
    every long prompt after it failed the same way. Now such a prompt is evaluated in full."""
    old = "".join(f"def helper_{i}(x):\n    return x * {i} + {i * 7}\n\n" for i in range(60))
    new = "".join(f"class Model{i}:\n    name = 'model {i}'\n\n" for i in range(60))
    tail = "def main():\n    total = helper_3("
    prompt = new + old[400:1000] + tail
    backend.reset()
    fresh = backend.generate(prompt, Control(max_tokens=6)).text
    backend.reset()
    backend.generate(old + tail, Control(max_tokens=6))  # about 1,300 cells in the cache
    with caplog.at_level("WARNING", logger="repocontext.complete.backends.llamacpp.backend"):
        gen = backend.generate(prompt, Control(max_tokens=6))
    assert gen.text == fresh and gen.tokens_reused <= 1
    assert not caplog.records  # not the last resort (`generate`'s retry): no refusal at all
    assert backend.generate(old + tail, Control(max_tokens=6)).status != "error"


def test_a_newer_key_lets_the_chunk_running_finish_its_prompt_shares_it(backend):
    """A cancel by the next key stops between chunks: the chunk in flight is the next
    prompt's head too (stopped inside, at 150 ms a key no head chunk would ever finish)."""
    backend.reset()
    asked = []

    def next_key() -> bool:  # a key arrives while the first chunk runs
        asked.append(threading.current_thread().name)
        return len(asked) > 1

    gen = backend.generate(LONG_PROMPT, Control(max_tokens=6, hooks=Callbacks(cancelled=next_key)))
    assert gen.status == "cancelled" and not backend.abort.fired
    assert gen.tokens_evaluated == EVAL_CHUNK_HEAD == backend.llm.n_tokens
    assert "abort-watch" not in asked


LONG_PROMPT = ("def step(state, value):\n    state.total += value\n    return state\n\n" * 30)[
    :2400
] + "def run(values):\n    state = State()\n    for v in values:\n        "


def test_the_healing_grammar_spells_the_text_and_escapes_what_gbnf_would_read():
    assert healing_grammar('a"b\\c\td') == 'root ::= "a\\x22b\\x5cc\\x09d" [^\\x00]*'


@pytest.mark.skipif(
    not os.environ.get("REPOCONTEXT_LLAMA_SERVER"),
    reason="set REPOCONTEXT_LLAMA_SERVER (scripts/test builds and sets it)",
)
def test_a_llama_server_heals_the_same_way(llama_server):  # noqa: F811 (the fixture)
    _, url = llama_server
    b = LlamaServerBackend(url, timeout=60)
    assert b.generate(UUID_LINE, typed(UUID_LINE, False, 8)).text.startswith("U")
    healed = b.generate(UUID_LINE, typed(UUID_LINE, True, 8)).text
    assert ("uuid.UU" + healed).startswith("uuid.UUID(")
    healed = b.generate(RANGE_LINE, typed(RANGE_LINE, True, 8)).text
    assert healed.startswith("ge(")


CART = {
    "shop/cart.py": """
        class ShoppingCart:
            def __init__(self):
                self.line_items = []

            def add_line_item(self, product, quantity):
                self.line_items.append((product, quantity))

            def grand_total_with_tax(self, rate):
                return sum(p.price * q for p, q in self.line_items) * (1 + rate)
    """,
    "shop/checkout.py": """
        from shop.cart import ShoppingCart


        def checkout(products, rate):
            cart = ShoppingCart()
            for product in products:
                cart.add_line_item(product, 1)
            return cart.gr
    """,
}
CART_NAMES = ("__init__", "add_line_item", "grand_total_with_tax", "line_items")


def cart_prompt(typed: str) -> str:
    import textwrap

    text = textwrap.dedent(CART["shop/checkout.py"]).strip("\n")
    return text.rsplit("\n", 1)[0] + "\n" + typed


@pytest.mark.parametrize(
    "typed, invented, member",
    [
        ("    return cart.gr", "oss", "and_total_with_tax"),
        ("    return cart.l", "oad", "ine_items"),
    ],
)
def test_after_a_dot_the_decoder_spells_a_member_the_class_has(backend, typed, invented, member):
    """Without the names, the model invents one (`cart.gross_price`, `cart.load_cart()`);
    with the class's names the same model spells a real one, and ends the word there."""
    prompt = cart_prompt(typed)
    letters = typed.rsplit(".", 1)[1]
    plain = backend.generate(prompt, typed_control(prompt))
    steered = typed_control(prompt)
    members = SteeringFacts(
        before=typed, members=CART_NAMES, member_typed=letters, sources=("members",)
    )
    steered.hooks = Callbacks(steering=lambda: members)
    named = backend.generate(prompt, steered)
    assert plain.text.startswith(invented)
    assert named.text.startswith(member) and not named.text[len(member) :][:1].isalnum()
    assert named.text[len(member) : len(member) + 1] != "_"


def typed_control(prompt: str) -> Control:
    return typed(prompt, True, 10)


def test_the_engine_gives_the_decoder_the_receivers_members_from_the_index(make_repo, backend):
    """The context engine types `cart` as a ShoppingCart and lists what it has; the engine
    passes those names to the decoder at `cart.gr` (with too small a budget for the class's
    outline to be in the prompt, so the names alone do it), and not with member_bias off."""
    from dataclasses import replace

    from repocontext import Repository
    from repocontext.config import GenerationConfig
    from repocontext.context.request import CursorRequest

    root = make_repo(CART)
    repo = Repository(root)
    repo.index()
    engine = repo.completion_engine(backend)
    text = (root / "shop/checkout.py").read_text().rstrip("\n")
    line = text.count("\n") + 1
    request = CursorRequest("shop/checkout.py", line, len(text.split("\n")[-1]), text)
    suggestions = {}
    for on in (True, False):
        engine.config = replace(
            GenerationConfig(),
            hard_deadline_ms=10**9,
            min_confidence=0.0,
            context_budget=1,
            member_bias=on,
        )
        engine.cache = type(engine.cache)()
        s = engine.complete(request, mode="sequential")
        assert s.snippets == 0  # nothing fits in one token: the prompt has no outline
        suggestions[on] = s.suggestion
    assert suggestions[True].startswith("and_total_with_tax")
    assert not suggestions[False].startswith("and_total_with_tax")


def test_prompt_lookup_drafts_confirmed_in_a_batch_give_the_same_line(backend):
    """Where the code repeats, drafted tokens are confirmed in one batch, and the line is the
    one token-by-token decoding gives (greedy: a guess is kept only where the model agrees)."""
    prompt = (
        "def total(order):\n    return order.subtotal + order.shipping_cost + order.tax\n\n\n"
        "def total_again(order):\n    return order.subtotal + order."
    )
    backend.generate(prompt, Control(max_tokens=0))
    plain = backend.generate(prompt, Control(max_tokens=12, drafts=False))
    backend.generate(prompt, Control(max_tokens=0))
    drafted = backend.generate(prompt, Control(max_tokens=12, drafts=True))
    assert drafted.tokens_drafted > 0
    assert drafted.text.split("\n")[0] == plain.text.split("\n")[0]
    assert plain.tokens_drafted == 0
