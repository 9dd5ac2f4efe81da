"""Completion context: when to retrieve, what, and never anything stale."""

from __future__ import annotations

import io

import pytest
from conftest import REPO_ROOT, git

from repocontext import Repository
from repocontext.context.packing import short_form
from repocontext.context.request import CursorRequest

APP = {
    "shop/billing/tax.py": '''
        def compute_tax(amount, rate):
            """Tax owed on `amount` at `rate` percent, rounded to cents."""
            cents = round(amount * rate)
            return cents / 100
    ''',
    "shop/legacy/tax.py": '''
        def compute_tax(amount, rate):
            """Old tax rules (a twin in another module)."""
            return amount * rate
    ''',
    "shop/models.py": '''
        class Order:
            """A customer's order."""

            def total(self):
                return 0

            def add_line(self, sku, quantity):
                return None
    ''',
    "shop/checkout.py": """
        from shop.billing.tax import compute_tax
        from shop.models import Order


        def checkout(amount):
            order = Order()
            subtotal = amount * 2
            tax = compute_tax(subtotal, 7)
            return subtotal + tax


        def local_only(values):
            total = 0
            for value in values:
                total = total + value
            return total
    """,
    "tests/test_checkout.py": """
        from shop.checkout import checkout


        def helper_for_tests():
            return 1


        def test_checkout():
            assert checkout(1) == 2
    """,
}


@pytest.fixture
def app(make_repo, cli):
    root = make_repo(APP)
    assert cli("index", "--root", root, "--quiet").code == 0
    return root


def lines_of(root, path):
    return (root / path).read_text().split("\n")


def context(root, path, line, col, text=None, **kw):
    return Repository(root).context(CursorRequest(path, line, col, text, **kw))


def cut(root, path, line, col, extra=""):
    lines = lines_of(root, path)
    lines[line - 1] = lines[line - 1][:col] + extra
    return "\n".join(lines)


def test_imported_callee_brings_its_definition_not_the_twin(app):
    # cursor inside "compute_tax(" on line 8 of checkout.py
    line = lines_of(app, "shop/checkout.py")[7]
    col = line.index("(") + 1
    pkg = context(app, "shop/checkout.py", 8, col, cut(app, "shop/checkout.py", 8, col))
    assert pkg.retrieved and "compute_tax is imported" in pkg.reasons
    first = max(pkg.snippets, key=lambda s: s.score)
    assert (first.path, first.symbol) == ("shop/billing/tax.py", "compute_tax")
    assert "definition" in first.source
    twins = [s for s in pkg.snippets if s.path == "shop/legacy/tax.py"]
    assert all(t.score < first.score for t in twins)


def test_local_code_needs_nothing_and_says_why(app):
    text = cut(app, "shop/checkout.py", 15, len("        total = "))
    pkg = context(app, "shop/checkout.py", 15, len("        total = "), text)
    assert not pkg.retrieved
    assert pkg.skip_reason == "every name near the cursor is defined in this file"
    assert pkg.snippets == []


@pytest.mark.parametrize(
    "path, text",
    [
        ("shop/total.rs", "fn total(items: &[Line], rate: f64) -> f64 {\n    let (sum, n) = fold(items);\n    sum * rate + "),
        ("shop/Total.java", "class Total {\n  double total(List<Line> items, double rate) {\n    for (Line line : items) { rate += line.extra; }\n    return rate * "),
    ],
)  # fmt: skip
def test_a_functions_parameters_and_locals_need_nothing_in_rust_and_java(app, path, text):
    """`items`, `rate`, `sum`: bound by the function, in no other file. Before, only
    `name =` was read as a binding there, so every parameter near the cursor was "not defined
    in this file" and sent a retrieval after it."""
    lines = text.split("\n")
    pkg = context(app, path, len(lines), len(lines[-1]), text)
    assert not pkg.retrieved, pkg.reasons
    assert pkg.skip_reason == "every name near the cursor is defined in this file"


def test_writing_an_import_retrieves(app):
    text = cut(app, "shop/checkout.py", 3, 0, "from shop.billing.tax import comp")
    pkg = context(app, "shop/checkout.py", 3, len("from shop.billing.tax import comp"), text)
    assert pkg.retrieved and "an import statement is being written" in pkg.reasons
    assert any(s.symbol == "compute_tax" for s in pkg.snippets)


def test_attribute_of_an_object_of_an_imported_class_brings_the_class_outline(app):
    text = cut(app, "shop/checkout.py", 7, 0, "    order.")
    pkg = context(app, "shop/checkout.py", 7, len("    order."), text)
    assert any("attribute of order" in r for r in pkg.reasons)
    outline = next(s for s in pkg.snippets if s.symbol == "Order")
    assert "def add_line(self, sku, quantity) ..." in outline.text
    assert "member" in outline.source


def test_open_buffer_text_wins_over_the_index(app):
    buffer = (app / "shop/billing/tax.py").read_text().replace("rounded to cents", "UNSAVED EDIT")
    col = lines_of(app, "shop/checkout.py")[7].index("(") + 1
    pkg = context(
        app,
        "shop/checkout.py",
        8,
        col,
        cut(app, "shop/checkout.py", 8, col),
        open_buffers={"shop/billing/tax.py": buffer},
    )
    snippet = next(s for s in pkg.snippets if s.path == "shop/billing/tax.py")
    assert "UNSAVED EDIT" in snippet.text


def test_file_changed_or_deleted_on_disk_since_indexing(app):
    tax = app / "shop/billing/tax.py"
    tax.write_text('\n\ndef compute_tax(amount, rate):\n    """Changed on disk."""\n    return 0\n')
    col = lines_of(app, "shop/checkout.py")[7].index("(") + 1
    text = cut(app, "shop/checkout.py", 8, col)
    pkg = context(app, "shop/checkout.py", 8, col, text)
    snippet = next(s for s in pkg.snippets if s.path == "shop/billing/tax.py")
    assert "Changed on disk." in snippet.text and snippet.start_line == 3
    tax.unlink()
    (app / "shop/legacy/tax.py").unlink()
    pkg = context(app, "shop/checkout.py", 8, col, text)
    assert not [s for s in pkg.snippets if "tax.py" in s.path]


def test_branch_switch_reindexes_before_snippets_are_used(make_repo):
    root = make_repo(APP, git=True)
    Repository(root).index()
    git(root, "checkout", "-q", "-b", "feature")
    (root / "shop/billing/tax.py").write_text(
        'def compute_tax(amount, rate):\n    """Feature branch rules."""\n    return 1\n'
    )
    git(root, "commit", "-qam", "feature")
    col = lines_of(root, "shop/checkout.py")[7].index("(") + 1
    pkg = context(root, "shop/checkout.py", 8, col, cut(root, "shop/checkout.py", 8, col))
    snippet = next(s for s in pkg.snippets if s.path == "shop/billing/tax.py")
    assert "Feature branch rules." in snippet.text
    with Repository(root).open_store() as store:
        assert store.get_meta("git_head") == git(root, "rev-parse", "HEAD").strip()


def test_tight_budget_keeps_signatures_and_docstrings(app):
    col = lines_of(app, "shop/checkout.py")[7].index("(") + 1
    text = cut(app, "shop/checkout.py", 8, col)
    roomy = context(app, "shop/checkout.py", 8, col, text, budget=1024)
    tight = context(app, "shop/checkout.py", 8, col, text, budget=40)
    full = next(s for s in roomy.snippets if s.path == "shop/billing/tax.py")
    short = next(s for s in tight.snippets if s.path == "shop/billing/tax.py")
    assert "cents = round" in full.text and "cents = round" not in short.text
    assert short.text.startswith("def compute_tax(amount, rate):")
    assert "Tax owed" in short.text
    assert tight.tokens <= 40
    zero = context(app, "shop/checkout.py", 8, col, text, budget=0)
    assert zero.snippets == [] and zero.skip_reason == "the budget is 0"


def test_order_is_stable_between_keystrokes(app):
    line = lines_of(app, "shop/checkout.py")[7]
    col = line.index("(") + 1
    first = context(app, "shop/checkout.py", 8, col, cut(app, "shop/checkout.py", 8, col))
    second = context(app, "shop/checkout.py", 8, col + 1, cut(app, "shop/checkout.py", 8, col, "s"))
    assert [(s.path, s.start_line, s.text) for s in first.snippets] == [
        (s.path, s.start_line, s.text) for s in second.snippets
    ]
    assert [s.path for s in first.snippets] == sorted(s.path for s in first.snippets)


def test_tests_only_when_the_cursor_is_in_a_test(app):
    text = cut(app, "shop/checkout.py", 7, 0, "    helper_for_tests(")
    pkg = context(app, "shop/checkout.py", 7, len("    helper_for_tests("), text)
    assert not [s for s in pkg.snippets if s.path.startswith("tests/")]
    text = cut(app, "tests/test_checkout.py", 10, 0, "    checkout(")
    pkg = context(app, "tests/test_checkout.py", 10, len("    checkout("), text)
    assert any(s.symbol == "checkout" for s in pkg.snippets)


@pytest.mark.parametrize(
    "path,text,line,col,finds",
    [
        ("shop/checkout.py", "x = 1\n", 50, 99, None),  # cursor beyond the end
        ("shop/checkout.py", "", 1, 0, None),  # empty buffer
        ("notes/unknown.xyz", "compute_tax(\n", 1, 12, "compute_tax"),  # unknown language
        ("new/not_on_disk.py", "from shop.models import Order\nOrder(", 2, 6, "Order"),
        ("shop/checkout.py", "def (((:\n  ]]] compute_tax( ::\n" * 30, 2, 20, "compute_tax"),
        # one 100 KB line: only its tail is read (a bounded cost per key), and that tail
        # starts inside the string, so the cursor reads as in one: nothing is looked up
        ("shop/big.py", "x = '" + "a" * 100_000 + "' + compute_tax(", 1, 100_020, None),
    ],
)
def test_odd_buffers_give_a_valid_context(app, path, text, line, col, finds):
    """Odd buffers still give a package within budget: the definition the text calls where
    there is one to find (any language, a file not on disk, broken syntax), else no snippet
    and the reason why."""
    pkg = context(app, path, line, col, text)
    assert pkg.tokens <= pkg.budget
    assert pkg.to_json()["file"] == path
    if finds is None:
        assert not pkg.snippets and pkg.skip_reason
    else:
        assert pkg.retrieved and finds in [s.symbol for s in pkg.snippets]


def test_cli_context_json_and_stdin(app, cli, monkeypatch):
    col = lines_of(app, "shop/checkout.py")[7].index("(") + 1
    monkeypatch.setattr("sys.stdin", io.StringIO(cut(app, "shop/checkout.py", 8, col)))
    out = cli(
        "context",
        "--root",
        app,
        "--file",
        "shop/checkout.py",
        "--line",
        "8",
        "--col",
        col,
        "--stdin",
        "--json",
        "--budget",
        "512",
    ).json()
    assert set(out) == {
        "file", "line", "col", "retrieved", "skip_reason", "snippets", "tokens", "budget",
        "timings_ms", "reasons", "query", "receiver",
    }  # fmt: skip
    assert out["budget"] == 512 and out["retrieved"] is True
    for s in out["snippets"]:
        assert set(s) == {
            "path", "start_line", "end_line", "symbol", "source", "score", "tokens", "text", "why",
        }  # fmt: skip
    human = cli(
        "context", "--root", app, "--file", "shop/checkout.py", "--line", "15", "--col", "8"
    )
    assert "no retrieval" in human.out
    bad = cli(
        "context",
        "--root",
        app,
        "--file",
        "shop/checkout.py",
        "--line",
        "1",
        "--col",
        "0",
        "--budget",
        "-5",
    )
    assert bad.code == 2 and "--budget is -5" in bad.err  # a usage error


def test_short_form_keeps_signature_and_docstring():
    body = 'def f(a):\n    """Doc line one.\n    more."""\n    x = 1\n    y = 2\n    return x\n'
    assert short_form(body) == 'def f(a):\n    """Doc line one.\n    more."""\n    ...'


def test_the_buffer_is_parsed_incrementally_and_agrees_with_a_fresh_parse():
    from repocontext.context.cursor import BufferAnalyses, CursorView
    from repocontext.lang.chunking import analyze_file

    text = (REPO_ROOT / "src/repocontext/bridge.py").read_text()
    cache = BufferAnalyses()
    lines = text.split("\n")
    steps = []
    # a new line in the middle, then characters typed on it, then a line deleted near the top
    lines.insert(100, "        value = self.repository(path)")
    steps.append(("\n".join(lines), 101))
    lines[100] += ".search("
    steps.append(("\n".join(lines), 101))
    del lines[10]
    steps.append(("\n".join(lines), 100))
    for buffer, line in steps:
        view = CursorView.of("src/repocontext/bridge.py", buffer, line, 0, cache)
        fresh = analyze_file(buffer, "python")
        same_line_only = buffer is steps[1][0]
        if not same_line_only:  # an edited tree, parsed again: the same as from scratch
            assert [(c.start_line, c.end_line, c.qualname) for c in view.analysis.chunks] == [
                (c.start_line, c.end_line, c.qualname) for c in fresh.chunks
            ]
            assert view.analysis.root.text == fresh.root.text
    # typing within one line reuses the analysis as it is
    a = CursorView.of("src/repocontext/bridge.py", steps[0][0], 101, 0, cache).analysis
    b = CursorView.of("src/repocontext/bridge.py", steps[1][0], 101, 0, cache).analysis
    assert a is b


@pytest.mark.parametrize(
    "language, before, kind, code",
    [
        ("python", 'print(f"{conn.', "code", "conn."),
        ("python", "return f'{n} rows from {conn.", "code", "conn."),
        ("python", "f\"{d['k']} {user.", "code", "user."),
        ("python", 'f"{x:>{width.', "code", "width."),
        ("python", 'f"{x!r} and {y.', "code", "y."),
        ("python", 'print(f"{{conn.', "string", ""),
        ("python", 'x = "{conn.', "string", ""),
        ("python", 'rf"\\d{n}" + y.', "code", 'rf"\\d{n}" + y.'),
        ("python", 'x = 1  # f"{a.', "comment", ""),
        ("typescript", "log(`can't reach ${conn.", "code", "conn."),
        ("typescript", "log(`can't reach $ conn.", "string", ""),
        ("typescript", "const s = `${a}` + b.", "code", "const s = `${a}` + b."),
        ("javascript", "x(); // `${a.", "comment", ""),
        ("javascript", "/* x */ a.", "code", "/* x */ a."),
    ],
)
def test_interpolations_are_code_and_the_rest_of_a_string_is_not(language, before, kind, code):
    from repocontext.lang.literals import line_state

    state = line_state(before, language)
    assert state.kind == kind
    if kind == "code":
        assert before[state.code_start :] == code
    assert line_state(before, "lua") is None  # no interpolations: the caller's own reading
