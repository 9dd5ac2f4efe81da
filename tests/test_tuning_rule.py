"""The ship rule of bench/tuning.py (issue 52): a tuned value ships only if, held out, it beats
what shipped before on the mean over repositories *and* lowers no language's mean over its own
repositories, so that a language with few repositories is not outvoted by one with many."""

import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "bench"))

import search_sets  # noqa: E402
import tuning  # noqa: E402

pytestmark = pytest.mark.unit

# four Python repositories, two Go ones
LANGUAGE = {"click": "python", "jinja2": "python", "attrs": "python", "urllib3": "python",
            "chi": "go", "gin": "go"}  # fmt: skip


def test_each_family_starts_from_what_the_code_ships():
    """The first configuration of a family is the baseline a tuned value must beat; a stale one
    (issue 36's grid kept the values from before its tuning) measures against code that no
    longer ships."""
    now = tuning.code_values()
    for family in tuning.FAMILIES:
        assert family.configs[0] == {k: now[k] for k in family.grid}, family.name


def test_a_value_that_raises_the_mean_but_lowers_go_does_not_ship():
    # "b" gains 0.3 in every Python repository and loses 0.2 in each Go one: mean +0.133
    means = {
        "a": {"click": 1.0, "jinja2": 1.0, "attrs": 1.0, "urllib3": 1.0, "chi": 1.2, "gin": 1.2},
        "b": {"click": 1.3, "jinja2": 1.3, "attrs": 1.3, "urllib3": 1.3, "chi": 1.0, "gin": 1.0},
    }
    d = tuning.decide(means, ["a", "b"], LANGUAGE)
    assert d["best"] == "b"
    assert all(choice == "b" for choice in d["held-out"].values())  # Python outvotes each fold
    assert d["held-out mean"] > d["shipped-before mean"]  # the old rule alone would ship it
    assert d["lowered"] == ["go"]
    assert d["ships"] == "a"
    assert d["languages"]["go"] == {"repositories": 2, "before": 1.2, "held-out": 1.0, "best": 1.0}
    assert d["languages"]["python"]["held-out"] == pytest.approx(1.3)


def test_a_value_that_raises_every_language_ships():
    means = {
        "a": {"click": 1.0, "jinja2": 1.0, "attrs": 1.0, "urllib3": 1.0, "chi": 1.0, "gin": 1.0},
        "b": {"click": 1.3, "jinja2": 1.0, "attrs": 1.0, "urllib3": 1.0, "chi": 1.5, "gin": 0.9},
    }
    # gin alone loses, but Go's mean over chi and gin rises (1.0 -> 1.2)
    d = tuning.decide(means, ["a", "b"], LANGUAGE)
    assert d["lowered"] == []
    assert d["ships"] == "b"


def test_no_gain_on_the_mean_ships_nothing_even_with_no_language_lower():
    means = {
        "a": {"click": 1.0, "jinja2": 1.0, "attrs": 1.0, "urllib3": 1.0, "chi": 1.0, "gin": 1.0},
        "b": dict.fromkeys(LANGUAGE, 1.0),
    }
    d = tuning.decide(means, ["a", "b"], LANGUAGE)
    assert d["best"] == "a" and d["ships"] == "a" and d["lowered"] == []


def test_a_held_out_repository_gets_what_its_fold_would_ship_rule_included():
    """A repository the tuning never saw gets what the procedure would ship without it: the
    best over the other repositories only where the ship rule holds on them. A fold's best
    that the rule would block was measured as if it shipped, and the held-out figures moved
    with near ties of families that ship nothing."""
    # "b" lowers Go in every fold: no fold would ship it, though each fold's best is "b"
    means = {
        "a": {"click": 1.0, "jinja2": 1.0, "attrs": 1.0, "urllib3": 1.0, "chi": 1.2, "gin": 1.2},
        "b": {"click": 1.3, "jinja2": 1.3, "attrs": 1.3, "urllib3": 1.3, "chi": 1.0, "gin": 1.0},
    }
    d = tuning.decide(means, ["a", "b"], LANGUAGE)
    assert set(d["held-out"].values()) == {"b"}
    assert set(d["fold ships"].values()) == {"a"}
    # "b" better in every language: every fold would ship it, as the whole run does
    means["b"] = {"click": 1.3, "jinja2": 1.2, "attrs": 1.2, "urllib3": 1.1, "chi": 1.3, "gin": 1.2}
    d = tuning.decide(means | {"a": dict.fromkeys(LANGUAGE, 1.0)}, ["a", "b"], LANGUAGE)
    assert d["ships"] == "b" and set(d["fold ships"].values()) == {"b"}
    # "b" gains in chi only and loses in gin: the best of five folds, shipped by none
    means = {
        "a": dict.fromkeys(LANGUAGE, 1.0),
        "b": {"click": 1.0, "jinja2": 1.0, "attrs": 1.0, "urllib3": 1.0, "chi": 1.3, "gin": 0.9},
    }
    d = tuning.decide(means, ["a", "b"], LANGUAGE)
    assert d["ships"] == "a"
    assert [r for r, c in d["held-out"].items() if c == "b"] == [
        "click", "jinja2", "attrs", "urllib3", "gin"
    ]  # fmt: skip
    assert set(d["fold ships"].values()) == {"a"}


def test_the_rule_reads_held_out_scores_per_language():
    before = {"click": 1.0, "chi": 1.0, "express": 1.0, "zod": 1.0}
    held = {"click": 2.0, "chi": 1.0, "express": 1.2, "zod": 0.9}
    language = {"click": "python", "chi": "go", "express": "javascript", "zod": "typescript"}
    ships, lowered = tuning.ship_rule(held, before, language)
    assert (ships, lowered) == (False, ["typescript"])
    assert tuning.language_means(held, language)["javascript"] == 1.2
    held["zod"] = 1.0  # equal is not lower
    assert tuning.ship_rule(held, before, language) == (True, [])


def test_a_family_with_queries_in_some_repositories_only_is_judged_on_those():
    # no Go repository has such queries: Go can neither block nor count
    means = {"a": {"click": 1.0, "attrs": 1.0}, "b": {"click": 1.5, "attrs": 1.5}}
    d = tuning.decide(means, ["a", "b"], LANGUAGE)
    assert d["ships"] == "b" and set(d["languages"]) == {"python"}


def test_languages_are_grouped_with_js_and_ts_also_together():
    repos = {"express": {"language": "javascript"}, "zod": {"language": "typescript"},
             "chi": {"language": "go"}, "cJSON": {"language": "c"},
             "click": {"language": "python"}, "spring": {"language": "java"}}  # fmt: skip
    assert search_sets.language_groups(repos) == [
        ("python", ["click"]),
        ("go", ["chi"]),
        ("javascript", ["express"]),
        ("typescript", ["zod"]),
        ("js/ts", ["express", "zod"]),
        ("c", ["cJSON"]),
        ("java", ["spring"]),
    ]


def test_per_25_is_the_mean_over_repositories_of_each_ones_share():
    def rows(ranks):
        return [{"ranks": {"ours held-out": r}} for r in ranks]

    # 2 of 4 in the top 5 (12.5 per 25) and 1 of 2 (12.5): 12.5
    by_repo = {"chi": rows([1, 6, 3, None]), "mux": rows([2, None])}
    assert search_sets.per_25(by_repo, "ours held-out", 5) == "12.5"
    # 4 of 4 (25) and 0 of 1 (0): 12.5, where 4 of 5 pooled would be 20
    by_repo = {"chi": rows([1, 2, 3, 4]), "mux": rows([None])}
    assert search_sets.per_25(by_repo, "ours held-out", 5) == "12.5"
    assert search_sets.per_25(by_repo, "ours held-out", 1) == "3.1"


def test_the_c_set_loads_with_its_language_and_corpus():
    repos = search_sets.load_repositories({"cJSON"})
    assert repos["cJSON"]["language"] == "c"
    (spec,) = repos["cJSON"]["corpora"]
    assert spec.startswith("github:DaveGamble/cJSON@")
    assert len(repos["cJSON"]["corpora"][spec]) == 27


def test_a_missing_corpus_names_the_fetch_to_run(tmp_path, monkeypatch):
    monkeypatch.setenv("REPOCONTEXT_MIRROR", str(tmp_path))
    spec = "github:nobody/nothing@" + "0" * 40
    lines = search_sets.missing_corpora({"nothing": {"language": "go", "corpora": {spec: []}}})
    assert len(lines) == 1 and "`fetch github:nobody/nothing`" in lines[0]
    with pytest.raises(SystemExit, match="fetch github:nobody/nothing"):
        search_sets.corpus_root(spec)
