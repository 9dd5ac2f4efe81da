"""What kind of question a search query is, by cheap ordered heuristics (about a microsecond).

The first rule that matches wins and sets a confidence; the intent picks a weight profile for
fusion, and a confident intent (>= DIRECT_CONFIDENCE) goes straight to its dominant retriever.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

DIRECT_CONFIDENCE = 0.85

# semantic / text / structural / graph
WEIGHT_PROFILES: dict[str, dict[str, float]] = {
    "find_definition": {"semantic": 0.2, "text": 0.1, "structural": 0.6, "graph": 0.1},
    "find_references": {"semantic": 0.1, "text": 0.2, "structural": 0.2, "graph": 0.5},
    # words weigh as much as meaning: chosen by leave-one-repository-out validation on 15
    # repositories (bench/results/search_sets.md; the meaning-heavy 0.5/0.2 it replaced lost
    # in every fold)
    "understand_code": {"semantic": 0.35, "text": 0.35, "structural": 0.2, "graph": 0.1},
    "find_similar": {"semantic": 0.4, "text": 0.3, "structural": 0.2, "graph": 0.1},
    "impact_analysis": {"semantic": 0.1, "text": 0.1, "structural": 0.1, "graph": 0.7},
    "exact_match": {"semantic": 0.0, "text": 0.9, "structural": 0.1, "graph": 0.0},
}


@dataclass(frozen=True)
class Intent:
    name: str
    confidence: float
    target: str | None = None  # the identifier or literal the rule pulled out, if any
    rule: str = ""

    @property
    def weights(self) -> dict[str, float]:
        return WEIGHT_PROFILES[self.name]


_IDENT = r"[A-Za-z_$][\w$]*(?:(?:\.|::)[A-Za-z_$][\w$]*)*"
_DEF_PREFIX = re.compile(
    rf"^\s*(?:def|class|func|fn|function|struct|interface|type|import|from)\s+({_IDENT})"
)
# Go's and the docs' way of naming a definition: the name, then its kind (`Hook interface`,
# `Router struct`). Only a name that reads as code (a capital or an underscore in it) and
# nothing else, so that prose ("user interface", "the user interface") stays a question.
_DEF_SUFFIX = re.compile(
    rf"^\s*`?({_IDENT})`?\s+(?:interface|struct|class|type|func|function|trait|enum)\s*\??\s*$"
)
_WHERE_DEFINED = re.compile(
    rf"\b(?:where\s+is|where's|find|go\s*to|jump\s+to|show)\s+(?:the\s+)?(?:definition\s+of\s+)?"
    rf"`?({_IDENT})`?\s+(?:defined|declared|implemented)\b|\bdefinition\s+of\s+`?({_IDENT})`?",
    re.IGNORECASE,
)
_REFERENCES = re.compile(
    r"\b(?:who\s+calls|callers?\s+of|calls?\s+to|usages?\s+of|used\s+by|uses\s+of|references?\s+to|"
    r"where\s+is\s+\S+\s+used|find\s+references)\b",
    re.IGNORECASE,
)
_IMPACT = re.compile(
    r"\b(?:impact|blast\s+radius|what\s+depends\s+on|depends\s+on|what\s+breaks|break\s+if|"
    r"affected\s+by|dependents)\b",
    re.IGNORECASE,
)
_SIMILAR = re.compile(r"\b(?:similar\s+to|like\s+this|same\s+as|duplicates?\s+of)\b", re.IGNORECASE)
_QUOTED = re.compile(r"""^\s*(["'`])(.+)\1\s*$""")
_ERRNO = re.compile(r"^E[A-Z]{3,}[0-9]*$")  # ECONNREFUSED, ENOENT
_ERROR_MESSAGE = re.compile(
    r"\b(?:error|exception|traceback|failed|fatal|cannot|can't|unable\s+to|invalid|denied)\b"
    r".*:|:.*\b(?:error|failed|refused|denied|not\s+found|invalid)\b",
    re.IGNORECASE,
)
_BARE_IDENT = re.compile(rf"^\s*`?({_IDENT})`?\s*(?:\(\))?\s*$")
_UNDERSTAND = re.compile(
    r"\b(?:how|why|explain|architecture|overview|what\s+does|what\s+is|walk\s+me|works?)\b",
    re.IGNORECASE,
)
# A question about tests asks for them: "tests for X", "where is X tested", "test fixtures",
# a test's own name. A word like "test" or "pytest" alone is not enough: bug reports mention
# them all the time ("my test fails"), and in pytest's own repository every question does.
_TESTS_ASKED = re.compile(
    r"\b(?:tests?|specs?|test\s+cases?)\s+(?:for|of|covering|about)\b|\btested\b|"
    # "tests that check X" asks for tests; "the tests that failed" talks about them
    r"\b(?:tests?|specs?)\s+(?:that|which)\s+(?:check|cover|exercise|verify|assert)|"
    r"\b(?:unit|integration|regression|e2e|end-to-end)\s+tests?\b|"
    r"\btest\s+(?:suite|coverage|fixtures?|helpers?|utilities|data)\b|"
    r"\bfixtures?\s+(?:for|of|used)\b|\btests?\s+(?:folder|directory|files?)\b",
    re.IGNORECASE,
)
# "In a unit test, how can I put path variables into a request?": what to call from one's own
# tests (mux's SetURLVars, a test helper in a source file), not the project's tests
_OWN_TESTS = re.compile(
    r"\b(?:in|inside|within|from)\s+(?:a|an|my|our|your)\s+(?:own\s+)?"
    r"(?:(?:unit|integration)\s+)?tests?\b|\bin\s+(?:unit|integration)\s+tests\b|"
    r"\bwhen\s+writing\s+(?:(?:unit|integration)\s+)?tests?\b",
    re.IGNORECASE,
)
_HOW_TO = re.compile(r"\bhow\s+(?:can|do|should|would|could)\s+(?:i|we|you)\b", re.IGNORECASE)
_TEST_NAME = re.compile(r"(?i:\bconftest\b|\btest_\w+|\b\w+_test\b)|\b[A-Z]\w*Tests?\b|\b\w+Spec\b")
LONG_QUERY_WORDS = 30
# Text a question quotes (`how is the "Did you mean this?" list built`): what the user saw
# printed, which the code may hold verbatim. A quote opens at the start or after a space or an
# opening bracket and closes before one, so that an apostrophe (`a function's globals, a
# generator's frame`) opens none.
_QUOTED_INSIDE = re.compile(r"""(?:(?<=[\s(\[{,:;])|^)(["'`])([^"'`\n]+?)\1(?=[\s.,;:!?)\]}]|$)""")


def classify(query: str) -> Intent:
    """The intent of `query`; see the module docstring."""
    q = query.strip()
    if m := _DEF_PREFIX.match(q):
        return Intent("find_definition", 0.95, m.group(1), "definition keyword")
    if (m := _DEF_SUFFIX.match(q)) and re.search(r"[A-Z_]", m.group(1)):
        return Intent("find_definition", 0.95, m.group(1), "definition keyword after the name")
    if m := _WHERE_DEFINED.search(q):
        return Intent("find_definition", 0.95, m.group(1) or m.group(2), "where is X defined")
    if m := _REFERENCES.search(q):
        return Intent("find_references", 0.90, _target(q, m), "references phrase")
    if m := _IMPACT.search(q):
        return Intent("impact_analysis", 0.90, _target(q, m), "impact phrase")
    if m := _QUOTED.match(q):
        return Intent("exact_match", 0.90, m.group(2), "quoted string")
    if _ERRNO.match(q):
        return Intent("exact_match", 0.90, q, "error code")
    if " " in q and _ERROR_MESSAGE.search(q):
        return Intent("exact_match", 0.85, q, "error message")
    if m := _BARE_IDENT.match(q):
        ident = m.group(1)
        compound = "_" in ident or re.search(r"[a-z][A-Z]", ident) or "." in ident or "::" in ident
        return Intent("find_definition", 0.80 if compound else 0.60, ident, "bare identifier")
    if _SIMILAR.search(q):
        return Intent("find_similar", 0.70, None, "similarity phrase")
    if _UNDERSTAND.search(q):
        return Intent("understand_code", 0.75, None, "question word")
    return Intent("understand_code", 0.40, None, "default")


def about_tests(query: str, pasted: bool = False) -> bool:
    """Whether the question asks for tests (then tests are not ranked below source). A long
    text (an issue, a traceback) never does: it describes a failure, wherever it showed. Nor
    does a test's name in a `pasted` message (`In test_login: function uses no argument`, a
    `tests/conftest.py:18` in a fixture error): the message names where it failed, and the
    code that prints it is what is sought; only a phrase that asks for tests counts then. Nor
    does a how-to about one's own tests ("In a unit test, how can I ..."): it asks what to
    call from them."""
    if is_long(query) or (_OWN_TESTS.search(query) and _HOW_TO.search(query)):
        return False
    return bool(_TESTS_ASKED.search(query) or (not pasted and _TEST_NAME.search(query)))


def quoted_inside(query: str) -> list[str]:
    """The texts a question quotes, in order (none for a query that is all one quote: that is
    an exact-string search of its own, see `classify`)."""
    return [m.group(2) for m in _QUOTED_INSIDE.finditer(query) if m.group(0) != query.strip()]


def is_long(query: str) -> bool:
    """An issue's text or a stack trace rather than a question: always fused (see engine)."""
    return len(query.split()) > LONG_QUERY_WORDS


_FILLER = frozenset(
    """the a an of to if i we you change changing changed modify modifying
rename renaming remove removing delete function method class variable this that on in for is are
does do it its my our""".split()
)


def _target(q: str, m: re.Match) -> str | None:
    """The symbol a references/impact question is about: the first non-filler word after the
    trigger phrase, else the last code-looking identifier anywhere."""
    for word in re.findall(_IDENT, q[m.end() :]):
        if word.lower() not in _FILLER:
            return word
    idents = [w for w in re.findall(_IDENT, q) if "_" in w or re.search(r"[a-z][A-Z]", w)]
    if idents:
        return idents[-1]
    quoted = re.findall(r"`([^`]+)`", q)
    return quoted[-1] if quoted else None
