"""The decoder steered by what the buffer and the index know (complete/steering/).

The pure parts (where a name is used, the signatures read from a buffer, the call open at the
cursor, the vocabulary's name parts) on their own; then each source on the real default model:
the name it picks, the `)` it refuses, the continuation it copies, each failing without the
source, and a confident model overriding a wrong bias."""

from __future__ import annotations

import time

import numpy as np
import pytest

from repocontext.complete.backends import Callbacks, Control
from repocontext.complete.healing import TokenPieces
from repocontext.complete.names import names_in, use_position
from repocontext.complete.signatures import Signature, open_call, signatures_in
from repocontext.complete.steering import SOURCES, CopySource, Place, SteeringFacts, Vocabulary


@pytest.mark.parametrize(
    "prefix, used",
    [
        ("    x = ", True),
        ("    return ", True),
        ("    total = price(", True),
        ("    if ", True),
        ("    ", False),  # a line's start: maybe an assignment's target
        ("def ", False),
        ("class ", False),
        ("    for ", False),
        ("import os, ", False),
        ("    def cell_length(self, ", False),  # a parameter list is new names
        ("    s = 'hello ", False),  # in a string
        ("    x = 1  # see ", False),  # in a comment
        ("    x = obj.", False),  # a member: the members source's
        ("    const ", False),
        ("    func (s *Server) Handle(", False),
        ("    v := ", True),
    ],
)
def test_a_name_is_steered_only_where_it_is_used(prefix, used):
    language = "go" if ":=" in prefix or "func" in prefix else "python"
    assert use_position(prefix, language) is used


def test_signatures_are_read_from_python_javascript_and_go():
    py = signatures_in(
        [
            "def area(width, height, scale=1, *args, key=None):\n    pass\n"
            "class Box:\n    def __init__(self, size, colour='red'):\n        pass\n"
            "    def fill(self, paint):\n        pass\n"
        ],
        "python",
    )
    assert py["area"] == Signature(("width", "height", "scale"), 2)
    assert py["Box"] == Signature(("size", "colour"), 1)
    assert py[".fill"] == Signature(("paint",), 1)  # a method: called as `box.fill(`
    js = signatures_in(
        ["function move(dx, dy = 0) {}\nconst turn = (angle, opts) => {}\n"], "javascript"
    )
    assert js["move"] == Signature(("dx", "dy"), 1)
    assert js["turn"] == Signature(("angle", "opts"), 2)
    go = signatures_in(["func (c *Command) Flags(name string, n int) error {"], "go")
    assert go[".Flags"] == Signature(("name", "n"), 2)
    assert signatures_in(["func Run(args []string) {"], "go")["Run"] == Signature(("args",), 1)


@pytest.mark.parametrize(
    "line, call",
    [
        ("    x = area(", ("area", 0, "")),
        ("    x = shapes.area(", (".area", 0, "")),
        ("    x = area(w, ", ("area", 1, " ")),
        ("    x = area(w, h", ("area", 1, " h")),
        ("    x = area(w, (1, 2), ", ("area", 2, " ")),
        ("    x = area(w, h)", None),
        ("    x = area(w, ')'", ("area", 1, " ')'")),
        ("    x = [a, ", None),
    ],
)
def test_the_call_open_at_the_cursor_and_its_arguments_so_far(line, call):
    assert open_call(line) == call


def test_names_are_the_buffers_identifiers_and_the_languages_builtins():
    names = names_in(["total = compute_total(items)\n"], "python")
    assert {"total", "compute_total", "items", "len", "return", "None"} <= names
    assert "console" not in names


def test_the_vocabulary_spells_the_rest_of_a_name_and_nothing_longer():
    pieces = TokenPieces([b"re", b"request", b" request", b"requests", b"quest", b"(", b")x"])
    vocab = Vocabulary(pieces)
    assert sorted(vocab.spelling([b"request"], spaced=False).tolist()) == [0, 1]
    assert vocab.spelling([b"request"], spaced=True).tolist() == [2]
    assert vocab.closing.tolist() == [False] * 6 + [True]


def test_the_copy_cache_raises_what_followed_the_same_tokens_and_keeps_the_rest_in_order():
    logits = np.array([0.0, 2.0, 1.0, -1.0], dtype=np.float32)
    source = CopySource([[5, 6, 7, 3, 5, 6, 7, 3]])
    out = logits.copy()
    source.apply(out, Place(b"", b"", [9, 5, 6, 7]))
    assert out[3] > logits[3] + 1  # token 3 followed 5 6 7 twice
    assert list(np.argsort(out[:3])) == list(np.argsort(logits[:3]))
    unchanged = logits.copy()
    source.apply(unchanged, Place(b"", b"", [1, 2, 4]))  # an n-gram the cache never saw
    assert np.array_equal(unchanged, logits)


# --- on the real model ----------------------------------------------------------------------


@pytest.fixture(scope="module")
def backend():
    from repocontext.complete.backends.llamacpp import LlamaCppBackend
    from repocontext.complete.models import default_model_path

    b = LlamaCppBackend(str(default_model_path()), n_ctx=2048)
    b.vocabulary(wait=True)
    return b


def facts(prompt: str, sources: tuple[str, ...], **kw) -> SteeringFacts:
    language = kw.pop("language", "python")
    names = kw.pop("names", None)
    if names is None:
        names = names_in([prompt], language)
    return SteeringFacts(
        before=prompt.rsplit("\n", 1)[-1], language=language, names=names, sources=sources, **kw
    )


def run(backend, prompt: str, steering: SteeringFacts | None, max_tokens: int = 16) -> str:
    """Greedy, healed as the editor asks (the line typed may be backed up), no deadline; from
    an empty KV cache, so that no earlier test's batches change a near tie."""
    backend.reset()
    control = Control(
        max_tokens=max_tokens,
        hooks=Callbacks(steering=lambda: steering),
        cursor_at=len(prompt),
        heal_chars=len(prompt.rsplit("\n", 1)[-1]),
        deadline=time.monotonic() + 600,
    )
    return backend.generate(prompt, control).text


GROW = (
    "from .geometry import scale_point\n\n\n"
    "def grow(point, factor, origin):\n    moved = point\n    return scale_point(moved"
)
SCALE_POINT = "def scale_point(point, factor, origin):\n    return point\n"


def test_a_call_is_not_closed_before_its_required_arguments(backend):
    """The definition says three arguments; the model alone closes the call after two. With
    the signature (from the context, as the index gives it) the `)` waits for the third."""
    signatures = signatures_in([SCALE_POINT], "python")
    plain = run(backend, GROW, facts(GROW, (), signatures=signatures))
    steered = run(backend, GROW, facts(GROW, ("calls",), signatures=signatures))
    assert plain.startswith(", origin)")
    assert steered.startswith(", factor, origin)")


PRINTER = "class App:\n    def fail(self, exc):\n        self.console.print_"
SEEN = "        self.console.print_exception(show_locals=True, width=100)\n"


def test_a_continuation_seen_in_the_project_beats_an_invented_one(backend):
    """The context shows `console.print_exception`; the model alone invents `print_error`.
    The n-gram cache over the context's text (not in the prompt) makes it copy."""
    plain = run(backend, PRINTER, facts(PRINTER, (), copy_texts=(SEEN,)))
    steered = run(backend, PRINTER, facts(PRINTER, ("copy",), copy_texts=(SEEN,)))
    assert plain.startswith("error(")
    assert steered.startswith("exception(")


PROXIES = "def proxies_for(req, env):\n    return resolve_pro"


@pytest.mark.parametrize(
    "prompt, invented, known, name",
    [
        (PROXIES, "xy_for_env(", "resolve_proxies", "xies("),
        (
            "def handle(resp):\n    jar = extract_cook",
            "ies(",
            "extract_cookies_to_jar",
            "ies_to_jar(",
        ),
    ],
)
def test_a_name_begun_is_finished_as_the_repository_defines_it(
    backend, prompt, invented, known, name
):
    """A function defined elsewhere in the repository, begun in a file that does not show it:
    the model alone invents the rest (`resolve_proxy_for_env`); with the index's names it
    finishes the one that exists."""
    near = names_in([prompt], "python")
    repository = (known.encode(),)
    plain = run(backend, prompt, facts(prompt, (), near=near, repository_names=repository))
    steered = run(
        backend, prompt, facts(prompt, ("scope",), near=near, repository_names=repository)
    )
    assert plain.startswith(invented)
    assert steered.startswith(name)


def test_a_name_the_buffer_shows_is_left_to_the_model(backend):
    """The prompt holds `resolve_proxy_for_env`: the model spells buffer names on its own, and
    one of them among the candidates means no name is favoured."""
    prompt = "def resolve_proxy_for_env(r):\n    pass\n\n\n" + PROXIES
    near = names_in([prompt], "python")
    repository = (b"resolve_proxies",)
    steered = run(
        backend, prompt, facts(prompt, ("scope",), near=near, repository_names=repository)
    )
    assert steered.startswith("xy_for_env(")


DISCOUNT = (
    "def compute(order_lines, discount_rate):\n"
    "    gross = sum(l.amount for l in order_lines)\n"
    "    return gross * (1 - "
)


def test_a_confident_model_overrides_a_wrong_bias(backend):
    """A bias, never a ban: told that `discount_rate` is not in scope (a name the analysis
    missed), the model, sure of it, still writes it."""
    wrong = names_in([DISCOUNT], "python") - {"discount_rate"}
    steered = run(backend, DISCOUNT, facts(DISCOUNT, SOURCES, names=wrong))
    assert steered.startswith("discount_rate)")


def engine_answer(make_repo, backend, files, path, generation, use_repository):
    """Through the product's engine on a real index of `files`: the suggestion at the end of
    `path`, asked twice (the first build reads the index's names and lines), and the engine."""
    from repocontext import Repository
    from repocontext.config import Config, ContextConfig
    from repocontext.context.request import CursorRequest

    root = make_repo(files)
    config = Config(generation=generation, context=ContextConfig(use_repository=use_repository))
    repo = Repository(root, config=config)
    repo.index()
    engine = repo.completion_engine(backend)
    text = (root / path).read_text().rstrip("\n")
    line = text.count("\n") + 1
    request = CursorRequest(path, line, len(text.split("\n")[-1]), text)
    engine.complete(request, mode="sequential")
    engine.cache = type(engine.cache)()
    backend.reset()
    return engine.complete(request, mode="sequential"), engine


UTILS = {
    "net/utils.py": """
        def resolve_proxies(request, proxies, trust_env=True):
            return proxies
    """,
    "net/session.py": """
        def proxies_for(req, env):
            return resolve_pro
    """,
}


@pytest.mark.parametrize("use_repository", [True, False])
def test_the_repository_steers_the_editors_completion_and_the_switch_turns_it_off(
    make_repo, backend, use_repository
):
    """Through the engine, with no room for a definition in the prompt: the index's names
    finish `resolve_pro` as the repository spells it. With
    `[context] use_repository = false` no context is built and the model invents, as a plain
    local completer would."""
    from dataclasses import replace

    from repocontext.config import GenerationConfig

    # a budget of one token: no definition fits in the prompt, the names alone steer (scope_bias
    # turned on: it is off by default)
    generation = replace(
        GenerationConfig(),
        hard_deadline_ms=10**9,
        min_confidence=0.0,
        context_budget=1,
        scope_bias=True,
    )
    s, engine = engine_answer(
        make_repo, backend, UTILS, "net/session.py", generation, use_repository
    )
    assert (engine.repository is not None) is use_repository
    if use_repository:
        assert s.suggestion.startswith("xies(")
    else:
        assert s.snippets == 0 and not s.context_injected
        assert not s.suggestion.startswith("xies")
    engine.close()


SPAN = "class Span:\n    def __init__(self, text):\n        self.text = text\n\n    def cell_length(self"


def test_a_method_is_declared_as_the_repository_declares_it_elsewhere(backend):
    """`def cell_length(self` in a class: the model alone closes it `):`; the copy source, given
    the repository's other `cell_length` (a base class's, `same_name_heads`), writes its
    return annotation too."""
    from repocontext.complete.run import same_name_heads
    from repocontext.context.request import RepositoryNames

    heads = {"cell_length": (("def cell_length(self) -> int", "python", False),)}
    texts = same_name_heads("    def cell_length(self", RepositoryNames(frozenset(heads), heads))
    assert texts == ("def cell_length(self) -> int:",)
    assert same_name_heads("    x = cell_length(", RepositoryNames(frozenset(heads), heads)) == ()
    plain = run(backend, SPAN, facts(SPAN, (), copy_texts=texts))
    steered = run(backend, SPAN, facts(SPAN, ("copy",), copy_texts=texts))
    assert plain.startswith("):")
    assert steered.startswith(") -> int:")


ORDERS = "import logging\n\nfrom .models import Order\n\nlogger = logging.getL"
PAYMENTS_LOGGER = 'logger = logging.getLogger("acme.payments")'


def test_a_line_the_repository_writes_is_followed_where_the_model_invents(backend):
    """`logger = logging.getL`: the model alone writes `getLogger()`-like text of its own
    (`stLogger()`); given the line the project's other files write three times, it writes that
    line to its end, the project's logger name included."""
    lines = ((PAYMENTS_LOGGER, 3),)
    plain = run(backend, ORDERS, facts(ORDERS, (), lines=lines))
    steered = run(backend, ORDERS, facts(ORDERS, ("lines",), lines=lines))
    assert not plain.startswith('ogger("acme.payments")')
    assert steered.split("\n")[0] == 'ogger("acme.payments")'


def test_a_confident_model_writes_its_own_line_over_a_likely_one(backend):
    """A line written 8 times elsewhere that begins as the typed one (likely enough to be
    followed) says `tax_rate`; the model, sure of the parameter it reads two lines above,
    still writes `discount_rate`."""
    from repocontext.complete.steering import LINE_SURE, LineSource, Place

    lines = (("return gross * (1 - tax_rate)", 8),)
    source = LineSource(lines, backend._tokenize_bytes)
    source._choose(Place(DISCOUNT.rsplit("\n", 1)[-1].encode(), b"", []))
    assert source.sure >= LINE_SURE  # followed, not left out as unlikely
    steered = run(backend, DISCOUNT, facts(DISCOUNT, ("lines",), lines=lines))
    assert steered.startswith("discount_rate)")


PAYMENTS = {
    "shop/payments.py": f"import logging\n\n{PAYMENTS_LOGGER}\n",
    "shop/refunds.py": f"import logging\n\n{PAYMENTS_LOGGER}\n",
    "shop/invoices.py": f"import logging\n\n{PAYMENTS_LOGGER}\n",
    "shop/orders.py": ORDERS + "\n",
}


@pytest.mark.parametrize("use_repository", [True, False])
def test_the_repository_lines_steer_the_editors_completion_and_the_switch_turns_them_off(
    make_repo, backend, use_repository
):
    """Through the engine, on a real index: three other files write the project's logger
    line, and `logging.getL` in a fourth is finished as they write it. With
    `[context] use_repository = false` only the buffer's own lines steer: the model invents."""
    from dataclasses import replace

    from repocontext.config import GenerationConfig

    generation = replace(GenerationConfig(), hard_deadline_ms=10**9, min_confidence=0.0)
    s, engine = engine_answer(
        make_repo, backend, PAYMENTS, "shop/orders.py", generation, use_repository
    )
    assert (engine.repository_lines is not None) is use_repository
    if use_repository:
        assert s.suggestion.split("\n")[0] == 'ogger("acme.payments")'
    else:
        assert not s.suggestion.startswith('ogger("acme.payments")')
    engine.close()


def test_the_index_lines_follow_a_saved_file_and_leave_a_removed_one(make_repo):
    """The lines are read per index version, and again only for the files whose content
    changed: a line saved in one file is there after the next index run, a removed file's
    lines are gone, and the object published before is left as it was (the completion
    thread may be reading it)."""
    from repocontext import Repository
    from repocontext.context.engine import ContextEngine

    root = make_repo(PAYMENTS)
    repo = Repository(root)
    repo.index()
    context = ContextEngine(root, repo.open_store())
    first = context.repository_lines()
    assert [(c.text, c.count) for c in first.starting("logger = logging.getLogger(", None)] == [
        (PAYMENTS_LOGGER, 3)
    ]
    assert context.repository_lines() is first  # the same index version: kept
    (root / "shop/refunds.py").write_text(
        'import logging\n\nlogger = logging.getLogger("acme.refunds")\n'
    )
    (root / "shop/invoices.py").unlink()
    repo.index()
    second = context.repository_lines()
    assert second is not first
    assert sorted(
        (c.text, c.count) for c in second.starting("logger = logging.getLogger(", None)
    ) == [
        ('logger = logging.getLogger("acme.payments")', 1),
        ('logger = logging.getLogger("acme.refunds")', 1),
    ]
    assert [(c.text, c.count) for c in first.starting("logger = logging.getLogger(", None)] == [
        (PAYMENTS_LOGGER, 3)
    ]
    context.close()
