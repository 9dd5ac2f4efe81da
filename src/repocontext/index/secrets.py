"""Secrets inside files: found with detect-secrets' detectors, and never stored, searched or
sent to the model.

File names already keep credential files out (index/scan.py). This reads contents: a line
holding a cloud key, a token, or a `password = "..."` assignment with a literal value has its
text replaced by `<secret removed>` (the line stays, so line numbers stay right), and a file
holding a private key block is dropped whole. detect-secrets (Yelp's, maintained, used in
pre-commit hooks) supplies the rules rather than our own regexes; its entropy detectors are
left out, since code is full of hashes and encoded data that they would flag, and so is its
public-IP detector (an address is no credential).

Running every detector on every line of Django would add tens of seconds to an index run, so
a cheap prefilter picks the lines first, and for each line the detectors that could flag it:
each detector has a gate (index/secret_rules.py: DETECTOR_GATES), literals that every match of
its patterns holds, found with str.find in the text (lowercased, for a pattern that ignores
case), or a piece of one of its own patterns that is quick to search for.
tests/test_secret_shapes.py proves each gate from the detector's patterns, so the prefilter
never drops a format a detector knows (it did: Twilio, Telegram, Mailchimp and Artifactory
tokens were stored).

A line over 2,000 characters (a minified bundle, a one-line JSON file) is read in windows of
2,000 characters that overlap by 512, longer than any token's shortest match, so a token
anywhere in it is found at a cost linear in its length; only the windows that hold a secret are
removed from it, with the token characters on either side.

Formats and shapes that neither detect-secrets nor gitleaks' default rules catch are found by
our own rules (index/secret_rules.py; issue 31, item 8 and issue 49, item 5; measured in
bench/results/secret_formats.md), with literal values only: a template, a variable or a
placeholder stays.
"""

from __future__ import annotations

import functools
import re
from typing import Any, NamedTuple

from .secret_rules import (
    DETECTOR_GATES,
    KIND_SECRET,
    KUBERNETES,
    OWN_GATE,
    VENDOR_GATES,
    VENDOR_RULES,
    Family,
    Gate,
    a_placeholder_or_a_name,
    context_lines,
    family,
    kubernetes_secret_data,
    names_a_field,
    own_rules,
)

REMOVED = "<secret removed>"
_LEFT_OUT = ("Base64HighEntropyString", "HexHighEntropyString", "IPPublicDetector")
_DROPS_THE_FILE = "Private Key"  # a private key: the file is a credential file
_LINE = 2000  # longer lines are read in windows of this size
_OVERLAP = 512  # ...that overlap by this much: more than the shortest match of any token rule
_STEP = _LINE - _OVERLAP
# Characters that Python's case-insensitive matching takes for an ASCII letter, and lower()
# does not turn into it (tests/test_secret_shapes.py checks the list over all of Unicode).
_FOLD = str.maketrans({"\u0130": "i", "\u0131": "i", "\u017f": "s"})
_FOLDED = re.compile("[\u0130\u0131\u017f]")
_NEWLINE = re.compile("\n")
_TOKEN_CHARACTER = re.compile(r"[A-Za-z0-9_\-+/=.]")
_TOKEN_RUN = re.compile(r"[A-Za-z0-9_\-+/=.]*")
_OURS = 1  # the gate bit of our own rules; each of VENDOR_RULES and each detector has one after


@functools.lru_cache(maxsize=1)
def _detectors() -> tuple[Any, ...]:
    from detect_secrets.core.plugins.util import get_mapping_from_secret_type_to_class

    classes: list[Any] = list(get_mapping_from_secret_type_to_class().values())
    return tuple(
        cls() for cls in classes
        if cls.__name__ not in _LEFT_OUT
    )  # fmt: skip


class _Gates(NamedTuple):
    any_case: tuple[tuple[str, int], ...]  # (literal, bits of the gates it opens)
    this_case: tuple[tuple[str, int], ...]
    patterns: tuple[tuple[re.Pattern, re.Pattern, int], ...]  # (over a text, over a line, bits)
    every_line: int  # the bits of the detectors and rules without a gate: they see every line
    vendors: tuple[tuple[int, str, re.Pattern], ...]  # (bit, rule id, pattern): VENDOR_RULES
    detectors: tuple[tuple[int, Any], ...]  # (bit, detector)


@functools.lru_cache(maxsize=1)
def _gates() -> _Gates:
    """The gates as finds: a literal that holds a shorter one is left to it (`AccountKey=` to
    `key`), which opens its gates too, so each line is found with fewer passes over the text
    and sees a few more detectors."""
    vendors = tuple((_OURS << n, rule) for n, rule in enumerate(VENDOR_RULES, start=1))
    detectors = tuple((_OURS << n, d) for n, d in enumerate(_detectors(), start=len(vendors) + 1))
    gates: list[tuple[int, Gate | None]] = [(_OURS, OWN_GATE)]
    gates += [(bit, VENDOR_GATES.get(rule)) for bit, rule in vendors]
    gates += [(bit, DETECTOR_GATES.get(detector.secret_type)) for bit, detector in detectors]
    literals: dict[tuple[str, bool], int] = {}  # (literal, any case) -> bits
    patterns: dict[re.Pattern, int] = {}
    every_line = 0
    for bit, gate in gates:
        if gate is None:
            every_line |= bit
            continue
        for key in [(x, True) for x in gate.any_case] + [(x, False) for x in gate.this_case]:
            literals[key] = literals.get(key, 0) | bit
        for pattern in gate.patterns:
            patterns[pattern] = patterns.get(pattern, 0) | bit
    kept: dict[tuple[str, bool], int] = {}
    for (literal, any_case), bits in sorted(literals.items(), key=lambda item: len(item[0][0])):
        shorter = next(
            (key for key in kept if key[0] in (literal.lower() if key[1] else literal)
             and (key[1] or not any_case)),
            (literal, any_case),
        )  # fmt: skip
        kept[shorter] = kept.get(shorter, 0) | bits
    return _Gates(
        tuple((literal, bits) for (literal, any_case), bits in kept.items() if any_case),
        tuple((literal, bits) for (literal, any_case), bits in kept.items() if not any_case),
        tuple((re.compile(p.pattern, p.flags | re.M), p, bits) for p, bits in patterns.items()),
        every_line,
        tuple((bit, rule, VENDOR_RULES[rule]) for bit, rule in vendors),
        detectors,
    )


def _mark(haystack: str, needles, marks: dict[int, int]) -> None:
    """Add each needle's bits to the start of each line of `haystack` that holds it."""
    for needle, bits in needles:
        at = haystack.find(needle)
        while at >= 0:
            start = haystack.rfind("\n", 0, at) + 1
            marks[start] = marks.get(start, 0) | bits
            end = haystack.find("\n", at)
            at = haystack.find(needle, end) if end >= 0 else -1


def _hits(text: str) -> dict[int, int]:
    """Line index -> the bits of the gates open on that line, for every line a gate opens on
    (the long ones too)."""
    gates = _gates()
    marks: dict[int, int] = {}  # where a line starts -> bits
    if gates.every_line:
        marks = dict.fromkeys([0, *(m.end() for m in _NEWLINE.finditer(text))], gates.every_line)
    # lower() keeps each character one character but U+0130, so `low` has the text's offsets
    folded = text if text.isascii() or _FOLDED.search(text) is None else text.translate(_FOLD)
    _mark(folded.lower(), gates.any_case, marks)
    _mark(text, gates.this_case, marks)
    for over_text, over_line, bits in gates.patterns:
        for match in over_text.finditer(text):
            start = text.rfind("\n", 0, match.start()) + 1
            last = max(match.end() - 1, match.start())
            while True:  # each line the match touches: what the pattern finds in it alone
                end = text.find("\n", start)
                end = len(text) if end < 0 else end
                if marks.get(start, 0) & bits != bits and over_line.search(text[start:end]):
                    marks[start] = marks.get(start, 0) | bits
                if end >= last or end == len(text):
                    break
                start = end + 1
    hit: dict[int, int] = {}
    line = previous = 0
    for start in sorted(marks):
        line += text.count("\n", previous, start)
        previous = start
        hit[line] = marks[start]
    return hit


class _Prefilter:
    """The prefilter on one line: `search(line)` is true when a gate is open on it."""

    def search(self, line: str) -> bool:
        return bool(_hits(line))


_WORTH_A_LOOK = _Prefilter()


def _lines_worth_a_look(text: str) -> list[int]:
    """Indexes of the lines of 2,000 characters or fewer that a gate is open on, in order."""
    hit = _hits(text)
    if not hit:
        return []
    lines = text.split("\n")
    return [i for i in sorted(hit) if len(lines[i]) <= _LINE]


def _kinds(line: str, bits: int, filename: str, number: int, kind: Family) -> set[str]:
    """What the detectors and rules whose gates are open find in the line."""
    gates = _gates()
    kinds = {
        secret.type
        for bit, detector in gates.detectors
        if bits & bit
        for secret in detector.analyze_line(filename=filename, line=line, line_number=number)
        if not names_a_field(secret) and not a_placeholder_or_a_name(secret, line)
    }
    kinds.update(
        rule for bit, rule, pattern in gates.vendors if bits & bit and pattern.search(line)
    )
    if bits & _OURS:
        kinds.update(own_rules(line, kind))
    return kinds


def _scan(text: str, filename: str) -> tuple[dict[int, set[str]], dict[int, list[tuple[int, int]]]]:
    """(line number -> what it holds, line index -> the windows of a long line that hold it)."""
    hit = _hits(text)
    if not hit:
        return {}, {}
    lines = text.split("\n")
    kind = family(filename.rsplit("/", 1)[-1])
    found: dict[int, set[str]] = {}
    windows: dict[int, list[tuple[int, int]]] = {}
    whole: set[int] = set()  # numbers of the lines that go whole
    manifest = False
    for index in sorted(hit):
        line, number = lines[index], index + 1
        if len(line) > _LINE:
            for start in range(0, len(line) - _OVERLAP, _STEP):
                window = line[start : start + _LINE]
                bits = _hits(window).get(0, 0)
                kinds = _kinds(window, bits, filename, number, kind) if bits else set()
                if kinds:
                    found.setdefault(number, set()).update(kinds)
                    windows.setdefault(index, []).append((start, start + len(window)))
            continue
        kinds = _kinds(line, hit[index], filename, number, kind)
        if kinds:
            found.setdefault(number, set()).update(kinds)
            whole.add(number)
        if hit[index] & _OURS:
            for other, what in context_lines(lines, index, kind):
                found.setdefault(other + 1, set()).add(what)
                whole.add(other + 1)
            manifest = manifest or KIND_SECRET.match(line) is not None
    if manifest:  # its data lines name no keyword: found from the `kind: Secret` line
        for number in kubernetes_secret_data(lines):
            found.setdefault(number, set()).add(KUBERNETES)
            whole.add(number)
    return found, {i: w for i, w in windows.items() if i + 1 not in whole}


def find(text: str, filename: str) -> list[tuple[int, str]]:
    """(line number, what) of every line holding a secret."""
    found, _ = _scan(text, filename)
    return [(number, ", ".join(sorted(kinds))) for number, kinds in sorted(found.items())]


def _without(line: str, windows: list[tuple[int, int]]) -> str:
    """A long line with each window that holds a secret replaced, and the token characters
    on either side of it: a token cut by a window's edge goes whole."""
    spans: list[list[int]] = []
    for start, end in sorted(windows):
        floor = spans[-1][1] if spans else 0  # each character is looked at once
        if end <= floor:
            continue
        start = max(start, floor)
        while start > floor and _TOKEN_CHARACTER.match(line, start - 1):
            start -= 1
        run = _TOKEN_RUN.match(line, end)  # never None: the pattern matches the empty string
        end = run.end() if run else end
        if spans and start <= floor:
            spans[-1][1] = end
        else:
            spans.append([start, end])
    pieces: list[str] = []
    done = 0
    for start, end in spans:
        pieces += [line[done:start], REMOVED]
        done = end
    return "".join(pieces) + line[done:]


def redact(text: str, filename: str) -> tuple[str | None, list[tuple[int, str]]]:
    """The text with each secret's line emptied (its indentation kept; in a long line, the
    windows that hold it) and the findings; None for the text when the file holds a private key
    (it is a credential file, whatever its name)."""
    found, windows = _scan(text, filename)
    findings = [(number, ", ".join(sorted(kinds))) for number, kinds in sorted(found.items())]
    if not found:
        return text, findings
    if any(_DROPS_THE_FILE in kinds for kinds in found.values()):
        return None, findings
    lines = text.split("\n")
    for number in found:
        line = lines[number - 1]
        if number - 1 in windows:
            lines[number - 1] = _without(line, windows[number - 1])
        else:
            lines[number - 1] = line[: len(line) - len(line.lstrip())] + REMOVED
    return "\n".join(lines), findings
