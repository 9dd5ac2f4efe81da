"""From candidates to the few snippets that fit: score, cut at a threshold, pack to the budget.

score = prior + 0.5 x identifier overlap with the query (Jaccard) + 0.1 if recently edited.
Everything under `THRESHOLD` is dropped, so when nothing is relevant nothing is sent. The
survivors are packed in score order, signatures and docstrings first when the budget is tight
(every needed definition gets its signature before any gets its body), then bodies while they
fit, then, of a class outline still too long, as many members as the rest holds. The final
order is by path and line, not by score, so that consecutive keystrokes that select the same
snippets produce the same prompt head and keep the model's KV cache.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass

from .candidate import Candidate
from .request import Snippet

THRESHOLD = 0.5
OVERLAP_WEIGHT = 0.5
_IDENT = re.compile(r"[A-Za-z_][A-Za-z0-9_]{2,}")

TokenCounter = Callable[[str], int]


def estimate_tokens(text: str) -> int:
    """About 3.5 characters per token for code, when no tokenizer is loaded."""
    return max(1, (len(text) * 2 + 6) // 7) if text else 0


@dataclass
class Scored:
    candidate: Candidate
    text: str
    score: float
    sources: list[str]


def score(candidates: list[tuple[Candidate, str]], query_idents: set[str]) -> list[Scored]:
    """One entry per distinct span (best prior kept, sources merged), scored, best first."""
    by_key: dict[tuple, Scored] = {}
    for cand, text in candidates:
        idents = set(_IDENT.findall(text))
        union = idents | query_idents
        overlap = len(idents & query_idents) / len(union) if union else 0.0
        value = cand.prior + OVERLAP_WEIGHT * overlap + (0.1 if cand.source == "edit" else 0.0)
        key = cand.key
        old = by_key.get(key)
        if old is None:
            by_key[key] = Scored(cand, text, value, [cand.source])
        else:
            if cand.source not in old.sources:
                old.sources.append(cand.source)
            if value > old.score:
                old.score = value
                if old.candidate.outline_prefix is None:  # an outline keeps its member list
                    old.candidate, old.text = cand, text
    return sorted(
        by_key.values(), key=lambda s: (-s.score, s.candidate.path, s.candidate.start_line)
    )


def pack(scored: list[Scored], budget: int, count: TokenCounter = estimate_tokens) -> list[Snippet]:
    """Snippets above the threshold that fit in `budget` tokens, in a stable order."""
    chosen = [s for s in scored if s.score >= THRESHOLD]
    if budget <= 0 or not chosen:
        return []
    forms: dict[int, str] = {}
    used = 0
    # pass 1: the short form (signature + docstring) of each, best first
    for i, s in enumerate(chosen):
        if s.candidate.outline_prefix is not None:
            s.text = outline_first(s.text, s.candidate.outline_prefix)
        short = (
            outline_short(s.text) if s.candidate.outline_prefix is not None else short_form(s.text)
        )
        cost = count(header(s.candidate)) + count(short)
        if used + cost <= budget:
            forms[i] = short
            used += cost
    # pass 2: bodies, best first, while they fit
    for i in sorted(forms):
        full = chosen[i].text
        extra = count(full) - count(forms[i])
        if full != forms[i] and used + extra <= budget:
            forms[i] = full
            used += extra
    # pass 3: an outline too long for the rest of the budget gets as many of its members as
    # fit (they are listed most wanted first: a large class is cut from its end)
    for i in sorted(forms):
        s = chosen[i]
        if s.candidate.outline_prefix is None or forms[i] == s.text:
            continue
        room = budget - used + count(forms[i])
        longer = outline_within(s.text, room, count)
        if longer is not None and len(longer) > len(forms[i]):
            used += count(longer) - count(forms[i])
            forms[i] = longer
    out = []
    for i, text in forms.items():
        s = chosen[i]
        c = s.candidate
        tokens = count(header(c)) + count(text)
        out.append(
            Snippet(
                path=c.path,
                start_line=c.start_line,
                end_line=c.end_line,
                symbol=c.symbol,
                source="+".join(s.sources),
                score=s.score,
                tokens=tokens,
                text=text,
                why=c.why,
            )
        )
    out.sort(key=lambda sn: (sn.path, sn.start_line))
    return out


def header(c: Candidate) -> str:
    """The line that names a snippet's origin in the prompt."""
    return f"{c.path}:{c.start_line}"


OUTLINE_SHORT_MEMBERS = 8
_MEMBER_NAME = re.compile(
    r"^\s*(?:(?:async\s+)?def|func|fn|function|public|private|protected|"
    r"static|readonly|get|set|\s)*\s*\(?\*?\s*([A-Za-z_$][\w$]*)"
)


def outline_first(text: str, prefix: str) -> str:
    """A class outline with the members whose name starts with `prefix` moved up, right after
    the header (at `obj.get_` the get_ methods are what the model needs)."""
    if not prefix:
        return text
    lines = text.split("\n")
    header, members = _outline_parts(lines)
    first = [m for m in members if _member_name(m).startswith(prefix)]
    rest = [m for m in members if not _member_name(m).startswith(prefix)]
    return "\n".join(header + first + rest)


def outline_short(text: str) -> str:
    """The header and the first members of an outline (its short form under a tight budget)."""
    lines = text.split("\n")
    header, members = _outline_parts(lines)
    if len(members) <= OUTLINE_SHORT_MEMBERS:
        return text
    indent = _indent(members[0])
    return "\n".join(header + members[:OUTLINE_SHORT_MEMBERS] + [f"{indent}..."])


def outline_within(text: str, tokens: int, count: TokenCounter) -> str | None:
    """The header and the most members of an outline that fit `tokens`, or None."""
    header, members = _outline_parts(text.split("\n"))
    if not members:
        return None
    indent = _indent(members[0])
    best, lo, hi = None, 0, len(members)
    while lo <= hi:  # the most members that fit, by bisection (counting is linear)
        k = (lo + hi) // 2
        form = "\n".join(header + members[:k] + ([f"{indent}..."] if k < len(members) else []))
        if count(form) <= tokens:
            best, lo = form, k + 1
        else:
            hi = k - 1
    return best


def _outline_parts(lines: list[str]) -> tuple[list[str], list[str]]:
    """(header, member lines): members are the lines ending in "..." (see lang.chunking)."""
    first = next(
        (i for i, line in enumerate(lines) if i > 0 and line.rstrip().endswith("...")), len(lines)
    )
    return lines[:first], lines[first:]


def _member_name(line: str) -> str:
    m = _MEMBER_NAME.match(line)
    return m.group(1) if m else ""


_BODY_START = re.compile(r"[:{]\s*$")


def short_form(text: str) -> str:
    """The signature and the docstring or leading comment; the rest becomes `...`."""
    lines = text.split("\n")
    if len(lines) <= 2:
        return text
    keep: list[str] = []
    in_doc = False
    for line in lines:
        stripped = line.strip()
        if not keep or (not _BODY_START.search(keep[-1]) and len(keep) < 4 and not in_doc):
            keep.append(line)
            continue
        if in_doc:
            keep.append(line)
            if '"""' in stripped or "'''" in stripped or stripped.endswith("*/"):
                break
            continue
        if stripped.startswith(('"""', "'''", "/*", "///", "//", "#", "--")):
            keep.append(line)
            quote = stripped[:3]
            if quote in ('"""', "'''") and not (len(stripped) > 3 and stripped.endswith(quote)):
                in_doc = True
                continue
            if stripped.startswith("/*") and not stripped.endswith("*/"):
                in_doc = True
                continue
            if stripped.startswith(("///", "//", "#", "--")):
                continue
        break
    if len(keep) >= len(lines):
        return text
    indent = _indent(lines[1] if len(lines) > 1 else "") or "    "
    return "\n".join(keep + [f"{indent}..."])


def _indent(line: str) -> str:
    return line[: len(line) - len(line.lstrip())]
