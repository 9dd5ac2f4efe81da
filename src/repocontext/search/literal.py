"""Messages pasted without quotes: find the fixed parts of a message in the code, verbatim.

People paste an error from a terminal as it was printed: `FieldError: Cannot resolve keyword
'titel' into field. Choices are: body, id, title`. The code holds `"Cannot resolve keyword '%s'
into field. Choices are: %s"`; the printed values stand where the placeholders were. So the
query is cut at what looks like a value (quoted text, numbers, paths, dotted or snake_case
names) and the longest runs of words between are looked up in the exact-substring (trigram)
index, shortening a run by a word at either end when the whole run is not found (a value that
looked like an ordinary word), then trying each half (a message built from two literals), then
its first and last few words (a value in the middle that read as a word). A run found only in
tests and docs (which hold the message as printed) goes on to shorter attempts. Where no
source file holds any run so, a value that read as a plain word is looked for the other way
round (`hook syslog is already added`): each inner word of a short run in turn is taken for
the value, and the code must hold the words around it with a format verb between them
(`"hook %s is already added"`; `%q`, `%v`, `%d`, `{}`, `{name}`, `${name}` alike). A quoted
value needs none of this: it is cut out as any value is; but where it leaves runs too short to
look up alone (`The connection 'replica' doesn't exist.`: two words either side), the runs on
either side of it are looked up together, with a format verb between them in the code (quoted
there or not: `'{alias}'`, `%r`). A leading `Name: ` is the exception or label printed before
the message (`ConnectionDoesNotExist: `, `Error: `), not part of it. A run counts when it is long enough
to mean something and rare enough to point somewhere (`MAX_HITS`). A dozen lookups at most, a
few milliseconds each.

A log line pasted as a logger printed it, logfmt (`time="..." level=info msg="request done"
logrus_error="can not add field \\"callback\\""`) or one JSON object, is looked up by its
messages: the values of its `msg`, `message`, `error`, `err` and `*_error` keys, unquoted,
and in logfmt the text outside the pairs (`INFO[0000] request done`).
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass, field

from ..store import ChunkHit, Store
from .retrievers import Query, TrigramRetriever, trigram_match

MIN_CHARS = 12
MIN_WORDS = 3
MAX_HITS = 25  # a run found in more chunks than this is a common phrase, not a message
MAX_LOOKUPS = 12
EDGE_WORDS = 4
VERB_RUN_WORDS = 8  # a run this short or shorter is also tried with an inner word as a value

# `pkg.module.SomeError: ` as Python prints an exception before its message, whatever the
# class is called (`ConnectionDoesNotExist: `, `Http404: `), and a label such as `Error: `
_EXCEPTION_PREFIX = re.compile(r"^\s*(?:[A-Za-z_]\w*\.)*[A-Z]\w*(?:\s*\[[^\]]*\])?\s*:\s+")
# what a printed value looks like: quoted text, a path, a number, a dotted or snake_case name
_VALUE = re.compile(
    r"""'[^']*'|"[^"]*"|`[^`]*`|<[^>]*>|\S*[/\\]\S+|\S*\d\S*|[A-Za-z_]\w*(?:\.\w+)+|\w+_\w+"""
)
# where the code has a value printed: printf's verbs, `%(name)s`, `{}`/`{0}`/`{name}`/`{:?}`
# (format, f-strings, Rust), `${name}` (template literals)
FORMAT_VERB = r"(?:%(?:\([^)]*\))?[-+# 0-9.*]*[a-zA-Z]|\$?\{[^{}\n]*\})"
# a logfmt pair: key=value, key="quoted \"value\""
_LOGFMT_PAIR = re.compile(r'(?:(?<=\s)|^)([A-Za-z_][\w.\-]*)=("(?:[^"\\]|\\.)*"|[^\s"]*)')
_MESSAGE_KEY = re.compile(r"msg|message|err|error|\w+_error", re.IGNORECASE)
_QUESTION = re.compile(
    r"^\s*(?:how|why|what|where|when|which|who|explain|show|find|list|is|are|does|do|can|"
    r"should|could)\b",
    re.IGNORECASE,
)


@dataclass
class LiteralMatch:
    fragments: list[str] = field(default_factory=list)  # the runs found, longest first
    hits: list[ChunkHit] = field(default_factory=list)  # chunks holding them, best first

    @property
    def longest(self) -> int:
        return max((len(f) for f in self.fragments), default=0)


_MESSAGE_SIGNS = re.compile(r"""[:'"`%(){}\[\]/\d]|\s-\s""")


def may_be_a_message(text: str) -> bool:
    """Worth looking up verbatim: not a question, and long (five words or more) or marked as
    printed text is (a colon, quotes, brackets, a number, a path), or a log line. Three plain
    words ("read settings config") are a question put tersely, and occur in docstrings by
    chance."""
    if _QUESTION.match(text):
        return False
    if log_messages(text):
        return True
    words = len(text.split())
    return words >= 5 or (words >= 3 and bool(_MESSAGE_SIGNS.search(text)))


def log_messages(text: str) -> list[str]:
    """The messages a pasted log line holds (see the module docstring); [] for a text that is
    no log line: no JSON object, and fewer than two logfmt pairs."""
    line = text.strip()
    if line.startswith("{") and line.endswith("}"):
        try:
            record = json.loads(line)
        except ValueError:
            return []
        if not isinstance(record, dict):
            return []
        values = [v for k, v in record.items() if _MESSAGE_KEY.fullmatch(str(k))]
        return [v.strip() for v in values if isinstance(v, str) and v.strip()]
    pairs = list(_LOGFMT_PAIR.finditer(line))
    if len(pairs) < 2:
        return []
    found = [_unquoted(m.group(2)) for m in pairs if _MESSAGE_KEY.fullmatch(m.group(1))]
    outside = " ".join(_LOGFMT_PAIR.sub(" ", line).split())  # `INFO[0000] request done`
    return [m for m in (*found, outside) if m.strip()]


def _unquoted(value: str) -> str:
    """A logfmt value as it was before the logger quoted it (`"field \\"x\\""` is `field "x"`)."""
    if len(value) >= 2 and value[0] == value[-1] == '"':
        try:
            return str(json.loads(value))
        except ValueError:
            return re.sub(r"\\(.)", r"\1", value[1:-1])
    return value


def runs_of(message: str) -> list[str]:
    """The runs of words between the values of `message` (of each message in a log line),
    longest first."""
    runs = [run for pieces in _pieces_between_values(message) for run in pieces if _enough(run)]
    return sorted(dict.fromkeys(runs), key=len, reverse=True)


def short_runs_around_a_value(message: str) -> list[tuple[str, str]]:
    """Two runs on either side of one printed value, one of them or both too short to be
    looked up alone, long enough together (`The connection 'replica' doesn't exist.`: the
    code holds `"The connection '{alias}' doesn't exist."`), longest first."""
    pairs = []
    for pieces in _pieces_between_values(message):
        for left, right in zip(pieces, pieces[1:]):
            if left and right and not (_enough(left) and _enough(right)):
                if _enough(f"{left} {right}"):
                    pairs.append((left, right))
    return sorted(dict.fromkeys(pairs), key=lambda lr: len(lr[0]) + len(lr[1]), reverse=True)


def _pieces_between_values(message: str) -> list[list[str]]:
    """Per message (each of a log line's, and the whole text), its text between the values,
    in order, spacing and the punctuation at the ends off."""
    out = []
    for one in (*log_messages(message), message):
        text = _EXCEPTION_PREFIX.sub("", one.strip(), count=1)
        out.append([" ".join(p.split()).strip(" .,:;!?-()[]{}") for p in _VALUE.split(text)])
    return out


def _enough(run: str) -> bool:
    """Long enough to mean something (a run of words looked up verbatim)."""
    return len(run) >= MIN_CHARS and len(run.split()) >= MIN_WORDS


def find_literal(store: Store, message: str, limit: int, scope: str = "all") -> LiteralMatch:
    """The chunks holding the longest fixed runs of `message` (see the module docstring)."""
    trigram = TrigramRetriever(store)
    found = LiteralMatch()
    scores: dict[int, tuple[int, int]] = {}  # chunk id -> (longest run held, runs held)
    by_id: dict[int, ChunkHit] = {}
    lookups = 0
    runs = runs_of(message)

    def keep(fragment: str, length: int, hits: list[ChunkHit]) -> None:
        found.fragments.append(fragment)
        for h in hits:
            longest, count = scores.get(h.chunk_id, (0, 0))
            scores[h.chunk_id] = (max(longest, length), count + 1)
            by_id[h.chunk_id] = h

    def in_source() -> bool:
        return any(h.role == "source" for h in by_id.values())

    # the runs as they are first; only where no source file holds any of them, two short runs
    # around a value the message printed, then a value that reads as a word inside a short
    # run (the lookups left are spent on them)
    for with_a_value in (False, True):
        if with_a_value and in_source():
            break
        if with_a_value:
            for left, right in short_runs_around_a_value(message):
                if lookups >= MAX_LOOKUPS:
                    break
                lookups += 1
                hits = _around_a_verb(store, left.split(), right.split(), scope)
                if hits and len(hits) <= MAX_HITS:
                    keep(f"{left} … {right}", len(left) + len(right), hits)
            if in_source():
                break
        for run in runs:
            words = run.split()
            for attempt in _value_inside(words) if with_a_value else _pieces(words):
                fixed = [w for w in attempt if w]
                text = " ".join(fixed)
                if len(text) < MIN_CHARS or len(fixed) < MIN_WORDS or lookups >= MAX_LOOKUPS:
                    continue
                lookups += 1
                if with_a_value:
                    hole = attempt.index("")
                    hits = _around_a_verb(store, attempt[:hole], attempt[hole + 1 :], scope)
                    text = run  # found whole, a value in it
                else:
                    hits = trigram.search(Query(text, MAX_HITS + 1, scope)).hits
                if not hits or len(hits) > MAX_HITS:
                    continue
                keep(text, len(text), hits)
                if any(h.role == "source" for h in hits):
                    break
                # only tests and docs hold it: they assert on the printed message, values and
                # all, while the code that prints it holds only its fixed parts; look for those
            if lookups >= MAX_LOOKUPS:
                break
    ranked = sorted(by_id, key=lambda i: (-scores[i][0], -scores[i][1], by_id[i].path))
    found.hits = [by_id[i] for i in ranked[:limit]]
    return found


def _pieces(words: list[str]) -> list[list[str]]:
    """What of a run is looked up: the whole run, a word off either end, then each half (a
    message the code builds from two literals, or spaced differently, holds each half but not
    the whole), then, in a long run, its first and last few words (a printed value that reads
    as a plain word, `the function scoped fixture`, splits the fixed text anywhere)."""
    half = len(words) // 2
    tries = [words] + [words[a : len(words) - b] for a, b in ((1, 0), (0, 1), (1, 1))]
    tries += [words[:half], words[half:]] if len(words) >= 6 else []
    tries += [words[:EDGE_WORDS], words[-EDGE_WORDS:]] if len(words) >= 2 * EDGE_WORDS else []
    return tries


def _value_inside(words: list[str]) -> list[list[str]]:
    """A short run with each inner word in turn taken for a printed value (an empty word):
    the code holds a format verb in its place."""
    if len(words) > VERB_RUN_WORDS:
        return []
    return [words[:i] + [""] + words[i + 1 :] for i in range(1, len(words) - 1)]


def _around_a_verb(store: Store, left: list[str], right: list[str], scope: str) -> list[ChunkHit]:
    """The chunks holding `left`, a format verb, then `right` (the words of a printed message
    on either side of a value). The trigram index narrows them to chunks holding both sides;
    the verb between is confirmed in their text."""
    sides = [" ".join(left), " ".join(right)]
    match = " AND ".join(trigram_match(t) for t in sides if len(t) >= 3)
    candidates = store.trigram_search(match, max(sides, key=len), MAX_HITS * 4, scope)
    spaced = [r"\s+".join(map(re.escape, t.split())) for t in sides]
    # the code may quote the value itself (`'{alias}'`, `"%s"`), as the message printed it
    quote = "['\"`]?"
    pattern = re.compile(rf"{spaced[0]}\s*{quote}{FORMAT_VERB}{quote}\s*{spaced[1]}", re.IGNORECASE)
    texts = store.chunk_texts([h.chunk_id for h in candidates])
    return [h for h in candidates if pattern.search(texts.get(h.chunk_id, ""))]
