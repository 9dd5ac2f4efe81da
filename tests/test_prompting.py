"""Prompt layouts, FIM detection, stop rules, cleaning and the type-through cache (no model)."""

from __future__ import annotations

import pytest

from repocontext.complete.cache import CacheKey, SuggestionCache
from repocontext.complete.postprocess import CursorText, clean, stop_index
from repocontext.complete.templates import TEMPLATES, ContextFile, detect_template

CTX = [ContextFile("pkg/tax.py", "def compute_tax(amount, rate):\n    ...")]


@pytest.mark.parametrize(
    "name,expected",
    [
        (
            "qwen",
            "<|repo_name|>repocontext\n<|file_sep|>pkg/tax.py\ndef compute_tax(amount, rate):"
            "\n    ...\n<|file_sep|>app.py\n<|fim_prefix|>x = compute_tax(<|fim_suffix|>)\n"
            "<|fim_middle|>",
        ),
        (
            "starcoder",
            "<repo_name>repocontext<file_sep>pkg/tax.py\ndef compute_tax(amount, rate):"
            "\n    ...\n<file_sep><fim_prefix>app.py\nx = compute_tax(<fim_suffix>)\n"
            "<fim_middle>",
        ),
        (
            "starcoder1",
            "<fim_prefix># pkg/tax.py\n# def compute_tax(amount, rate):\n#     ...\n\n"
            "# app.py\nx = compute_tax(<fim_suffix>)\n<fim_middle>",
        ),
        (
            "codellama",
            "<PRE> # pkg/tax.py\n# def compute_tax(amount, rate):\n#     ...\n\n# app.py\n"
            "x = compute_tax( <SUF>)\n <MID>",
        ),
        (
            "deepseek",
            "<｜fim▁begin｜># pkg/tax.py\n# def compute_tax(amount, rate):\n#     ...\n\n"
            "# app.py\nx = compute_tax(<｜fim▁hole｜>)\n<｜fim▁end｜>",
        ),
        (
            "codegemma",
            "<|file_separator|>pkg/tax.py\ndef compute_tax(amount, rate):\n    ...\n"
            "<|file_separator|>app.py\n<|fim_prefix|>x = compute_tax(<|fim_suffix|>)\n"
            "<|fim_middle|>",
        ),
        (
            "codestral",
            "[SUFFIX])\n[PREFIX]# pkg/tax.py\n# def compute_tax(amount, rate):\n#     ..."
            "\n\n# app.py\nx = compute_tax(",
        ),
        (
            "plain",
            "# pkg/tax.py\n# def compute_tax(amount, rate):\n#     ...\n\n# app.py\n"
            "x = compute_tax(",
        ),
    ],
)
def test_each_template_lays_out_context_then_the_window(name, expected):
    head, tail = TEMPLATES[name].build("app.py", "python", "x = compute_tax(", ")\n", CTX)
    assert head + tail == expected


def test_context_head_is_identical_across_keystrokes():
    """The part before the cursor's text never changes while typing: the KV cache keeps it."""
    for template in TEMPLATES.values():
        a = "".join(template.build("app.py", "python", "x = comp", "", CTX))
        b = "".join(template.build("app.py", "python", "x = compu", "", CTX))
        assert a[: a.index("x = comp")] == b[: b.index("x = comp")]


def test_comments_follow_the_files_language():
    head, _ = TEMPLATES["plain"].build("init.lua", "lua", "local x = ", "", CTX)
    assert head.startswith("-- pkg/tax.py\n-- def compute_tax")
    head, _ = TEMPLATES["plain"].build("main.go", "go", "x := ", "", CTX)
    assert head.startswith("// pkg/tax.py")
    assert TEMPLATES["plain"].build("a.py", "python", "x", "", [])[0] == ""


@pytest.mark.parametrize(
    "tokens,metadata,expected",
    [
        ({"<|fim_prefix|>", "<|repo_name|>"}, {"general.name": "Qwen2.5 Coder 1.5B"}, "qwen"),
        ({"<fim_prefix>", "<file_sep>"}, {"general.architecture": "starcoder2"}, "starcoder"),
        ({"<fim_prefix>"}, {"general.name": "Refact 1.6B fim"}, "starcoder1"),
        ({"<｜fim▁begin｜>"}, {"general.name": "deepseek-coder-1.3b-base"}, "deepseek"),
        ({"<|fim_prefix|>", "<|file_separator|>"}, {"general.name": "codegemma-2b"}, "codegemma"),
        ({"[PREFIX]", "[SUFFIX]"}, {"general.name": "Codestral-22B"}, "codestral"),
        ({"▁<PRE>"}, {"general.name": "CodeLlama-7b"}, "codellama"),
        (
            set(),
            {"general.name": "codellama", "tokenizer.ggml.fim_pre_token_id": "32007"},
            "codellama",
        ),
        (set(), {"general.name": "Gemma 3 270m", "general.architecture": "gemma3"}, "plain"),
        (set(), {}, "plain"),
    ],
)
def test_fim_detection_from_tokens_and_metadata(tokens, metadata, expected):
    assert detect_template(tokens, metadata).name == expected


def test_mid_line_stops_at_the_line_end_and_drops_what_follows_the_cursor():
    cur = CursorText("total = compute_tax(", ")", ())
    assert stop_index("amount, 7)\nprint(total)", cur) == len("amount, 7)")
    assert clean("amount, 7)\nprint(total)", cur) == "amount, 7"
    cur = CursorText("x = [", "]", ())
    assert clean("1, 2, 3]", cur) == "1, 2, 3"


def test_a_mid_line_suggestion_never_runs_into_the_word_after_the_cursor():
    """Typed `max(0, ` before `value)`: `0` would make `max(0, 0value)`; `0, ` is an argument
    before it, with the space that separates them kept."""
    cur = CursorText("    return max(0, ", "value)", ())
    assert clean("0", cur) == ""
    assert clean("0value)", cur) == ""
    assert clean("0, value)", cur) == "0, "
    assert clean("limit, value)", cur) == "limit, "
    cur = CursorText("f(", " x)", ())  # a space after the cursor already separates them
    assert clean("a", cur) == "a"
    assert clean("a,  x)", cur) == "a,"


def test_end_of_line_takes_a_block_and_stops_at_a_dedent_or_blank_line():
    cur = CursorText("    def area(self):", "", ())
    text = "\n        return self.w * self.h\n\n    def perimeter(self):"
    assert clean(text, cur) == "\n        return self.w * self.h"
    cur = CursorText("        if x:", "", ())
    assert clean("\n            y = 1\n        else:\n            y = 2\n    return y", cur) == (
        "\n            y = 1\n        else:\n            y = 2"
    )
    cur = CursorText("", "", ())
    many = "\n".join(f"line{i}" for i in range(20))
    assert clean(many, cur).count("\n") == 7  # at most 8 lines


def test_a_repeated_line_ends_the_suggestion():
    cur = CursorText("c = a +", "", ())
    text = " b\nprint(c)\nprint(a)\nprint(c)\nprint(b)"
    assert clean(text, cur) == " b\nprint(c)\nprint(a)"


def test_stop_waits_for_a_growing_last_line():
    cur = CursorText("    def f(self):", "", ())
    assert stop_index("\n        ret", cur) is None
    assert stop_index("\n        return 1\n", cur) is None  # the blank line is not complete yet
    assert stop_index("\n        return 1\n\n", cur) == len("\n        return 1")


@pytest.mark.parametrize("text", ["", "   ", "\n\n  \n"])
def test_empty_or_whitespace_suggestions_are_dropped(text):
    assert clean(text, CursorText("x = ", "", ())) == ""


def test_a_suggestion_that_repeats_the_next_line_is_dropped():
    cur = CursorText("    ", "", ("    return total",))
    assert clean("return total", cur) == ""
    assert clean("total += 1", cur) == "total += 1"


def test_typing_through_a_suggestion_reuses_it():
    cache = SuggestionCache(size=2)
    key = CacheKey("a.py", 3, "d")
    cache.put(key, "x = comp", "ute_tax(amount)")
    assert cache.get(key, "x = comp") == "ute_tax(amount)"
    assert cache.get(key, "x = compu") == "te_tax(amount)"
    assert cache.get(key, "x = compute_tax(") == "amount)"
    assert cache.get(key, "x = compx") is None
    assert cache.get(CacheKey("a.py", 4, "d"), "x = comp") is None
    cache.put(CacheKey("b.py", 1, "d"), "y", "1")
    cache.put(CacheKey("c.py", 1, "d"), "z", "2")
    assert cache.get(key, "x = comp") is None  # evicted, least recently used
