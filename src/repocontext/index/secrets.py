"""Secrets inside files: found with detect-secrets' detectors, and never stored, searched or
sent to the model.

File names already keep credential files out (index/scan.py). This reads contents: a line
holding a cloud key, a token, or a `password = "..."` assignment with a literal value has its
text replaced by `<secret removed>` (the line stays, so line numbers stay right), and a file
holding a private key block is dropped whole. detect-secrets (Yelp's, maintained, used in
pre-commit hooks) supplies the rules rather than our own regexes; its entropy detectors are
left out, since code is full of hashes and encoded data that they would flag. A cheap
pattern picks the lines worth its attention first: running every detector on every line of
Django would add tens of seconds to an index run.
"""

from __future__ import annotations

import bisect
import functools
import re

REMOVED = "<secret removed>"
# Lines that any of the detectors below could flag: their keywords and token prefixes.
_WORTH_A_LOOK = re.compile(
    r"(?i)pass(?:word|wd)?|pwd|secret|token|(?:api|auth|service|account|db|database|priv|"
    r"private|client)[_-]?key|apikey|credential|contrase|BEGIN [A-Z ]*PRIVATE|AKIA|ASIA|AGPA|"
    r"AIDA|AROA|gh[pousr]_|github_pat_|glpat-|xox[abposr]-|sk_live|rk_live|sk-|sq0|SG\.|"
    r"eyJ|npm_|pypi-|AccountKey|hooks\.slack|discord|://[^/\s:@]+:[^/\s@]+@|AIza|hf_|"
    r"dop_v1_|AGE-SECRET-KEY"
)
_LEFT_OUT = ("Base64HighEntropyString", "HexHighEntropyString", "IPPublicDetector")
# Current vendor token formats detect-secrets 1.5 does not know, as gitleaks' default rules
# (config/gitleaks.toml, the set most scanners follow) define them; keyed by its rule id.
# Each has a fixed prefix, so none fires on ordinary code.
_END = r"""(?:[\x60'"\s;,)}\]]|\\[nr]|$)"""
VENDOR_RULES: dict[str, re.Pattern] = {
    rule: re.compile(pattern + _END)
    for rule, pattern in {
        "openai-api-key": r"\b(?:sk-(?:proj|svcacct|admin)-(?:[A-Za-z0-9_-]{74}|[A-Za-z0-9_-]{58})"
        r"T3BlbkFJ(?:[A-Za-z0-9_-]{74}|[A-Za-z0-9_-]{58})\b|sk-[a-zA-Z0-9]{20}T3BlbkFJ"
        r"[a-zA-Z0-9]{20})",
        "gcp-api-key": r"\bAIza[\w-]{35}",
        "github-fine-grained-pat": r"github_pat_\w{82}",
        "anthropic-api-key": r"\bsk-ant-api03-[a-zA-Z0-9_\-]{93}AA",
        "anthropic-admin-api-key": r"\bsk-ant-admin01-[a-zA-Z0-9_\-]{93}AA",
        "huggingface-access-token": r"\bhf_(?i:[a-z]{34})",
        "gitlab-pat": r"glpat-[\w-]{20}",
        "digitalocean-pat": r"\bdop_v1_[a-f0-9]{64}",
        "age-secret-key": r"AGE-SECRET-KEY-1[QPZRY9X8GF2TVDW0S3JN54KHCE6MUA7L]{58}",
    }.items()
}
_PRIVATE_KEY = "Private Key"


@functools.lru_cache(maxsize=1)
def _detectors() -> tuple:
    from detect_secrets.core.plugins.util import get_mapping_from_secret_type_to_class

    return tuple(
        cls() for cls in get_mapping_from_secret_type_to_class().values()
        if cls.__name__ not in _LEFT_OUT
    )  # fmt: skip


# A literal that every match of _WORTH_A_LOOK contains, lowercased. Finding these with
# str.find in the lowercased text, then running the pattern on their lines only, is about 7x
# faster than the pattern over the text (its case-insensitive alternation defeats the regex
# engine's literal prefix scan): it was half the indexer's time per file.
_NEEDLES = (
    "pass", "pwd", "secret", "token", "key", "credential", "contrase", "private", "akia",
    "asia", "agpa", "aida", "aroa", "ghp_", "gho_", "ghu_", "ghs_", "ghr_", "github_pat_",
    "glpat-", "xox", "sk_live", "rk_live", "sk-", "sq0", "sg.", "eyj", "npm_", "pypi-",
    "hooks.slack", "discord", "://", "aiza", "hf_", "dop_v1_",
)  # fmt: skip


def _lines_worth_a_look(text: str) -> list[int]:
    """Indexes of the lines that _WORTH_A_LOOK matches, in order."""
    low = text.lower()  # lower() keeps every newline, so its lines are the text's lines
    starts: list[int] | None = None
    hit: set[int] = set()
    for needle in _NEEDLES:
        at = low.find(needle)
        if at < 0:
            continue
        if starts is None:
            starts = [0, *(m.end() for m in _NEWLINE.finditer(low))]
        while at >= 0:
            line = bisect.bisect_right(starts, at) - 1
            hit.add(line)
            at = low.find(needle, starts[line + 1]) if line + 1 < len(starts) else -1
    if not hit:
        return []
    lines = text.split("\n")
    return [i for i in sorted(hit) if len(lines[i]) <= 2000 and _WORTH_A_LOOK.search(lines[i])]


_NEWLINE = re.compile("\n")


def find(text: str, filename: str) -> list[tuple[int, str]]:
    """(line number, what) of every line holding a secret."""
    found: list[tuple[int, str]] = []
    worth = _lines_worth_a_look(text)
    if not worth:
        return found
    lines = text.split("\n")
    for index in worth:
        number, line = index + 1, lines[index]
        kinds = {
            secret.type
            for detector in _detectors()
            for secret in detector.analyze_line(filename=filename, line=line, line_number=number)
            if not _names_a_field(secret)
        }
        kinds.update(rule for rule, pattern in VENDOR_RULES.items() if pattern.search(line))
        if kinds:
            found.append((number, ", ".join(sorted(kinds))))
    return found


_NAMING = re.compile(r"(?i)pass|secret|token|key|field|name|user")
_IDENTIFIER = re.compile(r"[A-Za-z0-9_.]+")


def _names_a_field(secret) -> bool:
    """`password1_field_name="password1"`, `PASSWORD_FIELD = "password"`: the keyword rule
    flags a value that names a field rather than holds a secret (Django's auth forms are full
    of them). A value shaped like an identifier that mentions such a word, or one under 6
    characters, is not kept as a secret."""
    if secret.type != "Secret Keyword":
        return False
    value = secret.secret_value or ""
    return len(value) < 6 or bool(_IDENTIFIER.fullmatch(value) and _NAMING.search(value))


def redact(text: str, filename: str) -> tuple[str | None, list[tuple[int, str]]]:
    """The text with each secret's line emptied (its indentation kept) and the findings; None
    for the text when the file holds a private key (it is a credential file, whatever its
    name)."""
    found = find(text, filename)
    if not found:
        return text, found
    if any(_PRIVATE_KEY in kinds for _, kinds in found):
        return None, found
    lines = text.split("\n")
    for number, _ in found:
        line = lines[number - 1]
        lines[number - 1] = line[: len(line) - len(line.lstrip())] + REMOVED
    return "\n".join(lines), found
