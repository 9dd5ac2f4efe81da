"""The parts of a pasted report: its code (fenced, indented or typed at a prompt) and the rest.

A bug report mixes kinds of evidence that predict the fix differently: a traceback's frames
(frames.py), an error line found verbatim (literal.py), identifiers named in the prose, and the
reporter's own code, which calls the project's API (`@click.option(..., flag_value=...)`): the
functions it calls are where a wrong result starts. Each kind gets its own weight in the fusion
(engine.REPORT_EVIDENCE), chosen by leave-one-repository-out validation
(bench/search_tuning.py), so one that does not carry to unseen repositories weighs nothing.
"""

from __future__ import annotations

import re

_FENCE = re.compile(r"^\s*(```|~~~)")
_PROMPT = re.compile(r"^\s*(>>>|\.\.\.|\$|In \[\d+\]:)\s")
_CALL = re.compile(r"(?:\.|\b)([A-Za-z_][A-Za-z0-9_]*)\s*\(")
# Calls that name a language's own built-ins, or the reporter's test scaffolding: they are in
# every report and say nothing about where the fix goes.
_NOT_API = frozenset(
    "print len str int float bool list dict set tuple range isinstance type super repr open "
    "format getattr setattr hasattr callable sorted enumerate zip map filter any all min max "
    "require console log fmt Println Printf Sprintf Errorf New make append panic main func "
    "function return if for while def class new assert expect describe it test".split()
)
MAX_CALLED = 12


def code_of(report: str) -> str:
    """The report's code: fenced blocks, lines indented by four spaces or a tab after a blank
    line or more code, and lines typed at a prompt (`>>>`, `$`)."""
    out: list[str] = []
    fenced = False
    indented = False  # inside an indented block (blank lines do not end it)
    previous_blank = True
    for line in report.splitlines():
        if _FENCE.match(line):
            fenced = not fenced
        elif fenced:
            out.append(line)
        elif _PROMPT.match(line):
            out.append(_PROMPT.sub("", line, count=1))
            indented = False
        elif line.strip() and line.startswith(("    ", "\t")) and (previous_blank or indented):
            out.append(line)
            indented = True
        elif line.strip():
            indented = False
        previous_blank = not line.strip()
    return "\n".join(out)


def called_names(code: str) -> list[str]:
    """The names the code calls, in order, without built-ins: the API it exercises."""
    names = [m.group(1) for m in _CALL.finditer(code)]
    return [n for n in dict.fromkeys(names) if n not in _NOT_API and len(n) > 2][:MAX_CALLED]
