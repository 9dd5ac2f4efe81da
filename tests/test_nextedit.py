"""The next edit (issue 53): an edit recognised as a replacement, and the places it applies to
next, on small Python, Go and TypeScript buffers. No model, no Neovim, no index."""

from __future__ import annotations

from repocontext.nextedit import explain, propose, propose_record

PY = """\
def count(items):
    return len(items)


def counter(xs):
    # count the items
    n = count(xs)
    label = "count"
    return count(xs) + n
"""


def _edit(text: str, old: str, new: str) -> str:
    assert text.count(old) == 1, old
    return text.replace(old, new)


def _lines(places) -> list[tuple[int, str]]:
    return [(p.line, p.new_line) for p in places]


def test_a_rename_at_a_python_definition_proposes_each_use_nearest_first():
    after = _edit(PY, "def count(", "def total(")
    places = propose(PY, after, "m.py")
    assert _lines(places) == [
        (7, "    n = total(xs)"),
        (9, "    return total(xs) + n"),
    ]
    first = places[0]
    assert (first.col, first.end_col, first.old_text, first.new_text) == (8, 13, "count", "total")
    assert first.kind == "rename" and first.rule == "rename-definition"
    assert first.distance == 6


def test_a_rename_touches_no_substring_no_string_and_no_comment():
    after = _edit(PY, "def count(", "def total(")
    changed = {p.line for p in propose(PY, after, "m.py")}
    assert 5 not in changed  # def counter(xs)
    assert 6 not in changed  # the comment
    assert 8 not in changed  # the string


def test_a_local_rename_stays_in_its_function():
    text = "def f(value):\n    return value + 1\n\n\ndef g(value):\n    return value * 2\n"
    after = _edit(text, "def f(value)", "def f(amount)")
    assert _lines(propose(text, after, "m.py")) == [(2, "    return amount + 1")]


def test_a_rename_at_a_go_definition_proposes_its_calls():
    text = (
        "package main\n\n"
        "func parseArgs(s string) []string { return nil }\n\n"
        "func run() {\n"
        '\tparseArgs("a")\n'
        '\tmsg := "parseArgs failed" // parseArgs\n'
        "\tparseArgsX := 1\n"
        '\tparseArgs("b")\n'
        "\t_ = msg\n"
        "\t_ = parseArgsX\n"
        "}\n"
    )
    after = _edit(text, "func parseArgs(", "func splitArgs(")
    assert _lines(propose(text, after, "main.go")) == [
        (6, '\tsplitArgs("a")'),
        (9, '\tsplitArgs("b")'),
    ]


def test_a_renamed_typescript_method_is_renamed_where_it_is_called_as_a_member():
    text = (
        "class Box {\n"
        "  size(): number { return 1; }\n"
        "  twice(): number { return this.size() * 2; }\n"
        "}\n"
        "const size = 3;\n"
        "const b = new Box();\n"
        "console.log(b.size(), size, 'size');\n"
    )
    after = _edit(text, "  size(): number", "  length(): number")
    assert explain(text, after, "box.ts").member
    assert _lines(propose(text, after, "box.ts")) == [
        (3, "  twice(): number { return this.length() * 2; }"),
        (7, "console.log(b.length(), size, 'size');"),
    ]


def test_an_argument_added_at_one_call_is_proposed_at_the_others():
    text = (
        "package main\n\n"
        "func run(a, b int) {\n"
        "\tx := add(a, b)\n"
        "\ty := add(x, b)\n"
        "\tz := add(x)\n"
        "\t_ = other(a, b)\n"
        "\t_ = y + z\n"
        "}\n"
    )
    after = _edit(text, "x := add(a, b)", "x := add(a, b, 0)")
    rep = explain(text, after, "m.go")
    assert rep is not None and rep.rule == "arguments-insert"
    places = propose(text, after, "m.go", min_confidence=0.0)
    # add(x) has another count of arguments; other(a, b) is another function
    assert _lines(places) == [(5, "\ty := add(x, b, 0)")]
    assert places[0].old_text == "(x, b)" and places[0].new_text == "(x, b, 0)"


def test_an_unrelated_edit_proposes_nothing():
    assert propose(PY, PY + "\n\ndef more():\n    pass\n", "m.py") == []  # new lines
    after = _edit(PY, "return len(items)", "return len(items) or 0")
    assert propose(PY, after, "m.py", min_confidence=0.0) == []  # no other place like it
    assert propose(PY, PY, "m.py") == []  # no edit


def test_a_name_qualified_once_is_not_proposed_where_it_is_qualified_already():
    text = (
        "class A:\n"
        "    def go(self):\n"
        "        a = helper(1)\n"
        "        b = self.helper(2)\n"
        "        c = helper(3)\n"
        "        return a, b, c\n"
    )
    after = _edit(text, "a = helper(1)", "a = self.helper(1)")
    places = propose(text, after, "m.py", min_confidence=0.0)
    assert _lines(places) == [(5, "        c = self.helper(3)")]


def test_a_recorded_edit_proposes_as_the_two_buffers_do():
    after = _edit(PY, "def count(", "def total(")
    recorded = propose_record(after, "m.py", 1, 4, "count", "total")
    assert recorded == propose(PY, after, "m.py")
    # a record that does not match the buffer proposes nothing
    assert propose_record(after, "m.py", 1, 4, "count", "tally") == []
