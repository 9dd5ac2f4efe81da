"""Search's tuned weights, as families of knobs, and leave-one-repository-out choice among them.

A weight chosen on the queries it is then measured on looks better than it is (issue 36: the
function answer's 0.78 on its dev set was 0.43 on reports it had not seen). So each weight is
chosen as a user's unseen repository would get it: for each repository of the dev sets, the
configuration that scores best on all the *other* repositories is the one measured on it.

A family is a small joint grid over knobs that act on the same queries (the fusion of
questions, of messages, of reports, the second stage, the function answer, BM25's cut-off);
families are tuned one at a time from the shipped values (coordinate-wise), because a joint
grid over all of them would be too large to run on two cores. Each grid's first values are the
ones the code ships (`code_values`; issue 36's tuned values since that issue), the baseline a
tuned value is measured against.

The objective of a repository is the mean over its queries of the family's measure, so that a
repository with many queries does not outvote the others; ties keep the shipped value.

A value ships (`decide`) only if tuning helps repositories it never saw: each repository under
its own held-out choice beats what shipped before on the mean over the repositories, and no
language's held-out mean (the mean over that language's repositories) is lower than under what
shipped before (issue 52: with 9 of 15 repositories in Python, a mean over repositories let
Python outvote a language with fewer of them).
"""

from __future__ import annotations

import itertools
from collections.abc import Callable, Collection
from dataclasses import dataclass, field
from types import SimpleNamespace

from repocontext.search import engine, functions, fusion, intent, rerank, retrievers


@dataclass(frozen=True)
class Knob:
    name: str
    get: Callable[[object], object]
    set: Callable[[object, object], None]  # (searcher, value)


def _module_knob(module, attr: str) -> Knob:
    return Knob(attr, lambda s: getattr(module, attr), lambda s, v: setattr(module, attr, v))


def _dict_knob(name: str, module, attr: str, key: str) -> Knob:
    def put(s, v):
        table = dict(getattr(module, attr))
        table[key] = v
        setattr(module, attr, table)

    return Knob(name, lambda s: getattr(module, attr)[key], put)


KNOBS = {
    k.name: k
    for k in [
        Knob("rrf_k", lambda s: s.k, lambda s, v: setattr(s, "k", v)),
        _dict_knob("question_profile", intent, "WEIGHT_PROFILES", "understand_code"),
        _module_knob(engine, "WITH_A_LITERAL"),
        _module_knob(engine, "LONG_WEIGHTS"),
        _dict_knob("traceback", engine, "REPORT_EVIDENCE", "traceback"),
        _dict_knob("error_message", engine, "REPORT_EVIDENCE", "error_message"),
        _dict_knob("code", engine, "REPORT_EVIDENCE", "code"),
        _module_knob(rerank, "RERANK_CANDIDATES"),
        _module_knob(rerank, "BLEND_K"),
        _module_knob(rerank, "ABSTAIN_MARGIN"),
        Knob("fn_K", lambda s: functions.K, lambda s, v: setattr(functions, "K", v)),
        _module_knob(functions, "NAMED_WEIGHT"),
        _module_knob(functions, "FRAME_WEIGHT"),
        _module_knob(functions, "SIMILAR_WEIGHT"),
        _module_knob(functions, "CALLEE_WEIGHT"),
        _module_knob(retrievers, "COMMON_TERM_CHUNKS"),
        _module_knob(retrievers, "BM25_WEIGHTS"),
        _module_knob(fusion, "NEIGHBOUR_WEIGHT"),
    ]
}


def _profile(semantic, text, structural, graph) -> dict[str, float]:
    return {"semantic": semantic, "text": text, "structural": structural, "graph": graph}


def _long(text, semantic, structural, graph) -> dict[str, float]:
    return {"text": text, "semantic": semantic, "structural": structural, "graph": graph}


def label(config: dict) -> str:
    parts = []
    for name, value in config.items():
        if isinstance(value, dict) and value and set(value) <= set(_profile(0, 0, 0, 0)):
            value = "/".join(f"{v:g}" for v in value.values())
        elif isinstance(value, dict):  # per language (NEIGHBOUR_WEIGHT)
            value = " ".join(f"{k}:{v:g}" for k, v in value.items()) or "none"
        parts.append(f"{name}={value}")
    return ", ".join(parts)


@dataclass
class Family:
    """A grid of knob values, measured on queries of `kinds` by `measure` (a row's score)."""

    name: str
    kinds: tuple[str, ...]
    grid: dict[str, list]
    measure: str  # "chunk" (hit@5 + 0.5 hit@1), "report" (file@5 + function@10), "function"
    # the function answer is recomputed from one search's ranked chunks: no search per config
    recompute_functions: bool = False
    second_stage: bool = False  # measured with the second stage (off by default since issue 36)
    why: str = ""
    configs: list[dict] = field(default_factory=list)

    def __post_init__(self):
        names = list(self.grid)
        seen = set()
        for values in itertools.product(*(self.grid[n] for n in names)):
            config = dict(zip(names, values))
            if config.get("RERANK_CANDIDATES") == 0:  # off: its other knobs do nothing
                config = {n: (v if n == "RERANK_CANDIDATES" else self.grid[n][0])
                          for n, v in config.items()}  # fmt: skip
            key = label(config)
            if key not in seen:
                seen.add(key)
                self.configs.append(config)


QUESTION_KINDS = ("question",)
ALL_KINDS = ("identifier", "question", "message", "references", "bug_report")

FAMILIES = [
    Family(
        "fusion k",
        ALL_KINDS,
        {"rrf_k": [20, 40, 60]},
        "mixed",
        why="reciprocal-rank fusion's k: how much the first ranks of each retriever count",
    ),
    Family(
        "question weights",
        QUESTION_KINDS,
        {
            "question_profile": [
                _profile(0.35, 0.35, 0.2, 0.1),
                _profile(0.5, 0.2, 0.2, 0.1),
                _profile(0.6, 0.1, 0.2, 0.1),
                _profile(0.4, 0.3, 0.3, 0.0),
                _profile(0.3, 0.3, 0.3, 0.1),
            ]
        },
        "chunk",
        why="a plain-language question: meaning, words, names and the graph",
    ),  # fmt: skip
    Family(
        "message weights",
        ("message",),
        {
            "WITH_A_LITERAL": [
                {"text": 0.2, "semantic": 0.2, "structural": 0.1, "graph": 0.1},
                {"text": 0.1, "semantic": 0.1, "structural": 0.05, "graph": 0.05},
                {"text": 0.4, "semantic": 0.4, "structural": 0.2, "graph": 0.1},
            ]
        },
        "chunk",
        why="beside a message found verbatim, the other retrievers",
    ),  # fmt: skip
    Family(
        "report weights",
        ("bug_report",),
        {
            "LONG_WEIGHTS": [
                _long(0.4, 0.3, 0.3, 0.05),
                _long(0.6, 0.2, 0.2, 0.05),
                _long(0.3, 0.5, 0.2, 0.05),
                _long(0.3, 0.3, 0.5, 0.05),
                _long(0.4, 0.4, 0.1, 0.0),
            ]
        },
        "report",
        why="a pasted report's words (text), meaning (semantic), named identifiers "
        "(structural) and the graph",
    ),  # fmt: skip
    Family(
        "report evidence",
        ("bug_report",),
        {"traceback": [1.0, 0.5, 2.0], "error_message": [1.0, 0.5, 2.0], "code": [0.3, 0.0, 1.0]},
        "report",
        why="a report's traceback frames, its error line found verbatim, and the "
        "definitions its code calls",
    ),  # fmt: skip
    Family(
        "second stage",
        QUESTION_KINDS,
        {
            "RERANK_CANDIDATES": [5, 0, 3],
            "BLEND_K": [10, 3, 30],
            "ABSTAIN_MARGIN": [0.0, 1.0, 3.0],
        },
        "chunk",
        why="the cross-encoder's pool, its blend with the first stage, and when it "
        "abstains (RERANK_CANDIDATES 0: off; a pool over five is not tried: it can push an "
        "answer out of the first stage's top five, which issue 36 rules out)",
        second_stage=True,
    ),  # fmt: skip
    Family(
        "function answer",
        ("bug_report",),
        {
            "fn_K": [5, 2, 10],
            "NAMED_WEIGHT": [0.25, 0.5, 1.0],
            "FRAME_WEIGHT": [0.5, 0.25, 1.0],
            "SIMILAR_WEIGHT": [0.5, 1.0, 2.0],
            "CALLEE_WEIGHT": [0.5, 0.25, 1.0],
        },
        "function",
        recompute_functions=True,
        why="the function answer's evidence: rank constant, named, frames, similar, callees",
    ),  # fmt: skip
    Family(
        "BM25 columns",
        ALL_KINDS,
        {
            "BM25_WEIGHTS": [
                (2.0, 6.0, 3.0, 2.0, 1.0),
                (2.0, 6.0, 3.0, 1.0, 1.0),
                (2.0, 6.0, 3.0, 1.0, 1.5),
                (2.0, 6.0, 2.0, 1.0, 1.0),
                (2.0, 6.0, 3.0, 2.0, 1.5),
                (2.0, 6.0, 3.0, 3.0, 1.0),
            ]
        },
        "mixed",
        why="BM25's column weights (path, name, signature, doc, body): a Go or JavaScript "
        "doc comment is in the doc column only, a Python docstring in both doc and body",
    ),  # fmt: skip
    Family(
        "call neighbours",
        ALL_KINDS,
        # Go's only: the same weight for every language lowered C and JavaScript, and one
        # language at a time only Go's gained on the top five (search_sets.md, fourteenth
        # session)
        {"NEIGHBOUR_WEIGHT": [{"go": 0.2}, {}, {"go": 0.1}, {"go": 0.3}]},
        "mixed",
        why="what a Go function one call away from the best few source chunks gains",
    ),
    Family(
        "BM25 cut-off",
        ALL_KINDS,
        {"COMMON_TERM_CHUNKS": [5000, 1000, 20000]},
        "mixed",
        why="a query word in this many chunks or more is left out of BM25",
    ),
]


def shipped(searcher) -> dict:
    """The values the code ships with, to restore after each configuration."""
    return {name: knob.get(searcher) for name, knob in KNOBS.items()}


def code_values() -> dict:
    """The values the code ships with, without a searcher (each one copies fusion.RRF_K). Each
    family's first configuration is these (a test holds it so): what shipped before a tuning,
    which a tuned value must beat in every language to replace."""
    return shipped(SimpleNamespace(k=fusion.RRF_K))


def apply(searcher, config: dict) -> None:
    for name, value in config.items():
        KNOBS[name].set(searcher, value)


def score(row: dict, measure: str) -> float:
    """One query's score under a family's measure."""
    if measure == "mixed":
        measure = "report" if row["kind"] == "bug_report" else "chunk"
    if measure == "chunk":
        r = row["rank"]
        return float(r is not None and r <= 5) + 0.5 * float(r == 1)
    if measure == "report":
        f, fn = row["file"], row["function"]
        return float(f is not None and f <= 5) + float(fn is not None and fn <= 10)
    fn = row["function"]
    return float(fn is not None and fn <= 10) + 0.5 * float(fn == 1)


def repo_means(
    results: dict[str, dict[str, list[dict]]], measure: str
) -> dict[str, dict[str, float]]:
    """{config label: {repository: mean score}} from {config label: {repository: rows}}."""
    out: dict[str, dict[str, float]] = {}
    for config, by_repo in results.items():
        out[config] = {
            repo: sum(score(r, measure) for r in rows) / len(rows)
            for repo, rows in by_repo.items()
            if rows
        }
    return out


def choose(
    means: dict[str, dict[str, float]], order: list[str], without: Collection[str] = ()
) -> str:
    """The configuration with the best mean over repositories (all but those `without`); the
    first in `order` (the shipped one first) among equals."""

    def total(config: str) -> float:
        per_repo = [v for repo, v in means[config].items() if repo not in without]
        return sum(per_repo) / max(1, len(per_repo))

    best = order[0]
    for config in order[1:]:
        if total(config) > total(best) + 1e-9:
            best = config
    return best


def language_means(per_repo: dict[str, float], language_of: dict[str, str]) -> dict[str, float]:
    """{language: mean over its repositories} of {repository: score}."""
    groups: dict[str, list[float]] = {}
    for repo, value in per_repo.items():
        groups.setdefault(language_of[repo], []).append(value)
    return {lang: sum(values) / len(values) for lang, values in groups.items()}


def ship_rule(
    held_out: dict[str, float], before: dict[str, float], language_of: dict[str, str]
) -> tuple[bool, list[str]]:
    """Whether tuning a family carried to repositories it never saw, from each repository's
    score under its own fold's choice (`held_out`) and under what shipped before (`before`):
    the mean over the repositories is higher, and no language's mean is lower. Also the
    languages whose held-out mean is lower (those that block the value, where the mean rose)."""
    gain = _mean(held_out) > _mean(before) + 1e-9
    held_by, before_by = language_means(held_out, language_of), language_means(before, language_of)
    lowered = sorted(lang for lang in before_by if held_by[lang] < before_by[lang] - 1e-9)
    return gain and not lowered, lowered


def _mean(values: dict[str, float]) -> float:
    return sum(values.values()) / max(1, len(values))


def decide(
    means: dict[str, dict[str, float]], order: list[str], language_of: dict[str, str]
) -> dict:
    """One family's choices from {config label: {repository: mean score}}, `order` the configs'
    labels with the shipped one first, `language_of` every repository's language: the best over
    all, each repository's held-out choice, each repository's score under that choice and under
    what shipped before, per language the same as means, the languages whose held-out mean is
    lower, and the label that ships (the best over all where `ship_rule` holds, else the one
    that shipped before); `fold ships`: what each fold would ship, its rule included
    (`fold_ships`)."""
    held = {r: choose(means, order, {r}) for r in language_of}
    scored = [r for r in language_of if r in means[order[0]]]  # repositories with such queries
    held_scores = {r: means[held[r]][r] for r in scored}
    before_scores = {r: means[order[0]][r] for r in scored}
    best = choose(means, order)
    ok, lowered = ship_rule(held_scores, before_scores, language_of)
    languages = {r: language_of[r] for r in scored}
    return {
        "best": best,
        "ships": best if ok else order[0],
        "held-out": held,
        "fold ships": {r: fold_ships(means, order, language_of, r) for r in language_of},
        "held-out scores": held_scores,
        "before scores": before_scores,
        "held-out mean": _mean(held_scores),
        "shipped-before mean": _mean(before_scores),
        "languages": {
            lang: {
                "repositories": sum(v == lang for v in languages.values()),
                "before": language_means(before_scores, languages)[lang],
                "held-out": language_means(held_scores, languages)[lang],
                "best": language_means({r: means[best][r] for r in scored}, languages)[lang],
            }
            for lang in sorted(set(languages.values()))
        },
        "lowered": lowered,
    }


def fold_ships(
    means: dict[str, dict[str, float]], order: list[str], language_of: dict[str, str], held_out: str
) -> str:
    """What tuning would ship had `held_out` not been in the dev sets: the best over the other
    repositories where the ship rule holds on them (each of them held out in turn from the
    rest: nested leave-one-out), else what shipped before. A repository measured under this is
    measured under the whole procedure that ships a value; under `held-out` (the best over the
    others, the rule aside) it was measured under values no fold would ship, and its figure
    moved when a near tie in a family that ships nothing tipped the other way (a Rust report
    5th shipped and 6th, then 8th, held out, 2026-12-06)."""
    best = choose(means, order, {held_out})
    if best == order[0]:
        return best
    others = {r: lang for r, lang in language_of.items() if r != held_out}
    scored = [r for r in others if r in means[order[0]]]
    held = {r: means[choose(means, order, {held_out, r})][r] for r in scored}
    before = {r: means[order[0]][r] for r in scored}
    return best if ship_rule(held, before, others)[0] else order[0]
