"""The gates a suggestion passes before it is shown (complete/gates.py), on the cases a user
reported: another language, broken syntax, a guess, and text the buffer already has. Real
tree-sitter grammars throughout."""

from __future__ import annotations

import math
from dataclasses import replace

import pytest

from repocontext.complete.engine import Suggestion
from repocontext.complete.gates import (
    OFF,
    GateSettings,
    Placement,
    apply,
    line_confidence,
)
from repocontext.complete.outcome import why_hidden
from repocontext.complete.postprocess import CursorText, clean
from repocontext.config import GenerationConfig

SURE = [0.99] * 8  # every line confident: only the syntax and language gates decide
LUA = "local M = {}\n\nfunction M.suspend(self)\n  \nend\n\nreturn M\n".split("\n")
PY = "import sys\n\n\ndef print_version():\n    \n\n\ndef main():\n    pass\n".split("\n")


def at(lines, line, col, language):
    return Placement(lines, line, col, language)


def test_go_code_in_a_lua_file_is_dropped_as_another_language():
    go = "if err != nil {\n    return err\n  }"
    verdict = apply(go, SURE, at(LUA, 4, 2, "lua"), GateSettings())
    assert (verdict.text, verdict.gate) == ("", "language-drop")
    # with the language gate off, the syntax gate still keeps it off the screen
    off = apply(go, SURE, at(LUA, 4, 2, "lua"), GateSettings(language=False, min_confidence=0))
    assert off.text == "" and off.gate == "syntax-drop"
    # no gates: shown as generated (what users saw)
    assert apply(go, SURE, at(LUA, 4, 2, "lua"), OFF).text == go


def test_invalid_lua_from_the_report_is_dropped_and_valid_lua_is_kept():
    bad = "local self.suspending = true"
    assert apply(bad, SURE, at(LUA, 4, 2, "lua"), GateSettings()).text == ""
    good = "self.suspending = true"
    assert apply(good, SURE, at(LUA, 4, 2, "lua"), GateSettings()).text == good


def test_an_unclosed_call_that_swallows_the_file_is_dropped():
    # `scripts/run --check` showed `print(f` as a whole suggestion after `def print_version():`
    where = at(PY, 5, 4, "python")
    assert apply("print(f", SURE, where, GateSettings()).text == ""
    assert apply("print(sys.version)", SURE, where, GateSettings()).text == "print(sys.version)"


def test_a_block_is_cut_back_to_its_last_valid_line():
    where = at(PY, 5, 4, "python")
    text = "v = sys.version\n    print(v)\n    return (v,"
    verdict = apply(text, SURE, where, GateSettings())
    assert verdict.text == "v = sys.version\n    print(v)" and verdict.gate == "syntax-cut"


def test_the_line_the_user_is_still_typing_does_not_count_against_a_suggestion():
    lines = ["def f(a, b):", "    return max(", "", "", "def g():", "    pass"]
    where = at(lines, 2, len(lines[1]), "python")
    # the buffer is already in error on that line; a suggestion that does not close the call
    # leaves it as it was, and one that does fixes it: both are shown
    assert apply("a, b", SURE, where, GateSettings()).text == "a, b"
    assert apply("a, b)", SURE, where, GateSettings()).text == "a, b)"


def test_a_mid_line_suggestion_is_checked_with_the_rest_of_the_line():
    lines = ["x = compute()", "y = x"]
    where = at(lines, 1, len("x = compute("), "python")
    assert apply("a, b", SURE, where, GateSettings()).text == "a, b"
    assert apply("a, b))", SURE, where, GateSettings()).text == ""


def test_low_confidence_drops_a_first_line_and_ends_a_block_at_a_later_one():
    where = at(PY, 5, 4, "python")
    text = "v = sys.version\n    print(v)\n    return v"
    settings = GateSettings(min_confidence=0.4)
    dropped = apply(text, [0.2, 0.9, 0.9], where, settings)
    assert (dropped.text, dropped.gate) == ("", "confidence-drop")
    cut = apply(text, [0.9, 0.9, 0.3], where, settings)
    assert cut.text == "v = sys.version\n    print(v)" and cut.gate == "confidence-cut"
    assert apply(text, [0.9, 0.9, 0.9], where, settings).text == text
    # 0 turns the gate off
    assert apply(text, [0.01] * 3, where, GateSettings(min_confidence=0)).text == text


def test_line_confidence_is_the_geometric_mean_of_each_lines_tokens():
    text = "ab\n    cd"
    #        a      b      \n+ind  c      d
    spans = [(0, 1, math.log(0.5)), (1, 2, math.log(0.5)), (2, 7, 0.0), (7, 8, math.log(0.25))]
    spans.append((8, 9, math.log(1.0)))
    conf = line_confidence(text, spans)
    assert conf[0] == pytest.approx(0.5)
    assert conf[1] == pytest.approx(0.5)  # sqrt(0.25 * 1): the newline and indent say little
    assert line_confidence("x\n\ny", [(0, 1, 0.0), (1, 3, -5.0), (3, 4, 0.0)])[1] == 1.0


def test_a_suggestion_whose_last_lines_are_already_below_the_cursor_is_trimmed():
    cur = CursorText("    if ok:", "", ("        return 1", "    end_of_block()", ""))
    text = "\n        log()\n        return 1\n    end_of_block()"
    assert clean(text, cur) == "\n        log()"


def test_unknown_languages_are_not_gated():
    where = at(["some text"], 1, 9, "markdown")
    assert apply(" and (more", SURE, where, GateSettings()).text == " and (more"


def test_a_block_that_stretches_the_unfinished_line_s_error_is_cut_to_its_first_line():
    # at `(` the line is unfinished; a one-line suggestion may leave it so, but a block whose
    # last line opens a string that never closes takes the code below into the error
    lines = ["def f(a, b):", "    return max(", "", "", "def g():", "    pass"]
    where = at(lines, 2, len(lines[1]), "python")
    verdict = apply('a,\n        b,\n        "unterminated', SURE, where, GateSettings())
    assert verdict.text == "a," and verdict.gate == "syntax-cut"


def test_each_reason_for_showing_nothing_is_said_in_words_and_in_a_few_characters():
    """What `:RepoContext status` and the statusline say when nothing is shown: the gate that
    hid a suggestion, or why there was none (complete/outcome.py)."""
    config = replace(GenerationConfig(), min_confidence=0.45, hard_deadline_ms=2000)

    def why(**fields):
        hidden = why_hidden(Suggestion("", **{"status": "empty", **fields}), config)
        return hidden and (hidden.code, hidden.reason, hidden.short)

    unsure = {"gate": "confidence-drop", "ungated": " x + 1", "tokens_generated": 3}
    assert why(**unsure, line_confidence=[0.3199]) == (
        "confidence-drop",
        "hidden: the model was unsure (confidence 0.31 < 0.45)",
        "hidden: unsure",
    )
    # a blank first line is sure (1.0): the figure is that of the line that fell short
    assert why(**unsure, line_confidence=[1.0, 0.2])[1].endswith("(confidence 0.20 < 0.45)")
    strict = replace(config, min_confidence=1.0)  # floored: never "1.00 < 1"
    hidden = why_hidden(Suggestion("", **unsure, line_confidence=[0.999]), strict)
    assert hidden is not None and hidden.reason.endswith("(confidence 0.99 < 1)")
    assert why(gate="syntax-drop", tokens_generated=5) == (
        "syntax-drop",
        "hidden: it would break the file's syntax, however it was cut",
        "hidden: syntax",
    )
    assert why(gate="language-drop", tokens_generated=9) == (
        "language-drop",
        "hidden: it was code in another language",
        "hidden: language",
    )
    assert why(status="deadline", tokens_generated=2) == (
        "deadline",
        "nothing was ready within hard_deadline_ms (2000 ms)",
        "∅ deadline",
    )
    # a gate that hid what the deadline left is the reason: it is what the user missed
    assert why(status="deadline", **unsure, line_confidence=[0.1])[0] == "confidence-drop"
    assert why(tokens_generated=0) == ("empty", "the model proposed nothing here", "∅")
    assert why(tokens_generated=4) == (
        "nothing-new",
        "the model proposed only blank space or what the file already has",
        "∅",
    )
    # shown (cut or not, from the cache too) or cancelled by a newer key: no reason
    assert why_hidden(Suggestion(" y", gate="syntax-cut"), config) is None
    assert why_hidden(Suggestion(" y", source="cache"), config) is None
    assert why(status="cancelled", tokens_generated=3) is None
