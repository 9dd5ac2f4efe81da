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

Some formats its rules miss are found by our own (issue 31, item 8; measured against gitleaks'
default rules and detect-secrets in bench/results/secret_formats.md): a URL password with a
reserved character or an empty user (`redis://:pw@host`), an `Authorization: Basic|Bearer`
header, a `token:`/`pass:` entry in YAML, a Kubernetes Secret's `data:`/`stringData:`, and an
unquoted `password = x` in a config file, an env-like file, a shell script or a Dockerfile.
Each takes a literal value only: a template (`${DB_PASSWORD}`, `{{ .Values.pw }}`, `<your
password>`), a variable, a call, a path, a type name or a mask (`***`) is left in place.
"""

from __future__ import annotations

import bisect
import functools
import re
from typing import Any

REMOVED = "<secret removed>"
# Lines that any of the detectors below could flag: their keywords and token prefixes.
_WORTH_A_LOOK = re.compile(
    r"(?i)pass(?:word|wd)?|pwd|secret|token|(?:api|auth|service|account|db|database|priv|"
    r"private|client|access)[_.-]*key|apikey|credential|contrase|BEGIN [A-Z ]*PRIVATE|AKIA|"
    r"ASIA|AGPA|AIDA|AROA|gh[pousr]_|github_pat_|glpat-|xox[abposr]-|sk_live|rk_live|sk-|sq0|"
    r"SG\.|eyJ|npm_|pypi-|AccountKey|hooks\.slack|discord|"
    r"://[^\s/?#@:\[\]\"'`<>]*:[^\s@\"'`<>]+@|AIza|hf_|dop_v1_|AGE-SECRET-KEY|authorization|"
    r"masterauth|curl.*\s(?:-u|--user)\b"
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
        "npm-access-token": r"\b(?i:npm_[a-z0-9]{36})",
        "pypi-upload-token": r"pypi-AgEIcHlwaS5vcmc[\w-]{50,1000}",
    }.items()
}
_PRIVATE_KEY = "Private Key"


@functools.lru_cache(maxsize=1)
def _detectors() -> tuple[Any, ...]:
    from detect_secrets.core.plugins.util import get_mapping_from_secret_type_to_class

    classes: list[Any] = list(get_mapping_from_secret_type_to_class().values())
    return tuple(
        cls() for cls in classes
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
    "hooks.slack", "discord", "://", "aiza", "hf_", "dop_v1_", "authorization", "masterauth",
    "curl",
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
    worth = _lines_worth_a_look(text)
    if not worth:
        return []
    lines = text.split("\n")
    family = _family(filename.rsplit("/", 1)[-1])
    found: dict[int, set[str]] = {}
    manifest = False
    for index in worth:
        number, line = index + 1, lines[index]
        kinds = {
            secret.type
            for detector in _detectors()
            for secret in detector.analyze_line(filename=filename, line=line, line_number=number)
            if not _names_a_field(secret) and not _a_placeholder_or_a_name(secret, line)
        }
        kinds.update(rule for rule, pattern in VENDOR_RULES.items() if pattern.search(line))
        kinds.update(_own_rules(line, family))
        if kinds:
            found[number] = kinds
        manifest = manifest or _KIND_SECRET.match(line) is not None
    if manifest:  # its data lines name no keyword: found from the `kind: Secret` line
        for number in _kubernetes_secret_data(lines):
            found.setdefault(number, set()).add(_KUBERNETES)
    return [(number, ", ".join(sorted(kinds))) for number, kinds in sorted(found.items())]


# --- our own rules: formats detect-secrets' detectors miss ----------------------------------
# Every line they flag holds a literal that _NEEDLES has and matches _WORTH_A_LOOK ("://",
# "authorization", "curl", the key words below), so the prefilter still picks every such line
# (tests/test_secret_formats.py checks it); a Kubernetes Secret's data is found from its
# `kind: Secret` line, which holds "secret".

_URL_AUTH = "Basic Auth Credentials"  # detect-secrets' name for the same thing
_HEADER = "Authorization Header"
_KEYWORD = "Secret Keyword"
_KUBERNETES = "Kubernetes Secret"

# scheme://user:password@host: the user may be empty (redis://:pw@host), the password holds
# anything but whitespace, '@', quotes and <>: a quote ends the string the URL sits in.
_URL_PASSWORD = re.compile(
    r"""\b[A-Za-z][A-Za-z0-9+.-]*://([^\s/?#@:\[\]"'`<>]*):([^\s@"'`<>]+)@\S"""
)
_PORT_THEN_PATH = re.compile(r"\d{1,5}/")  # http://localhost:5173/@vite/client: no password
# curl -u user:password (gitleaks' curl-auth-user)
_CURL_USER = re.compile(
    r"""\bcurl\b.*\s(?:-u|--user)(?:=|\s+)(["']?)[^\s:"']*:([^\s"']+)\1(?:\s|$)"""
)
_AUTHORIZATION = re.compile(
    r"""(?i)\bauthorization\b["']?\s*[:=,]?\s*["']?\s*(?:basic|bearer|token|digest|api-?key)"""
    r"""\s+([A-Za-z0-9+/=._~-]{8,})(?=["'`\s;,)\]}\\]|$)"""
)
# A key whose last word is one of these, or whose last two words are one of the pairs.
_KEY_WORDS = frozenset(
    {"password", "passwd", "pass", "pwd", "passphrase", "secret", "token", "requirepass",
     "masterauth"}
)  # fmt: skip
_KEY_PAIRS = frozenset({"apikey", "secretkey", "privatekey", "accesskey", "authkey", "accountkey"})
_KEY_ENDINGS = ("password", "passwd", "passphrase", "apikey", "secretkey", "accesskey", "authtoken",
                "accesstoken", "apitoken", "clientsecret")  # fmt: skip
_WORD = re.compile(r"[A-Z]+(?![a-z])|[A-Z]?[a-z]+|[0-9]+")
# nginx's upstream directives (proxy_pass http://backend;), Helm's existingSecret (a name)
_NOT_SECRET_KEYS = frozenset({"proxy", "fastcgi", "uwsgi", "scgi", "grpc", "memcached", "existing"})
_NOT_SECRETS = frozenset(
    {"true", "false", "yes", "no", "on", "off", "null", "none", "nil", "undefined", "~", "str",
     "string", "int", "integer", "bool", "boolean", "number", "float", "bytes", "object", "any",
     "secretstr", "redacted", "removed", "hidden", "placeholder", "required", "optional", "empty",
     "default", "example", "key", "api_key", "apikey", "api-key", *_KEY_WORDS}
)  # fmt: skip
# Never a secret, whatever the rule (detect-secrets' too): a template or a format field (${X},
# {{ x }}, %(x)s, {password}, <your password>, ERB's <%= %>), a call or subscript
# (os.environ["X"]), a your_token_here.
_TEMPLATE = re.compile(
    r"""\$\{|\{\{|\}\}|%\(\w+\)[sdr]|^%[sdr]$|\{[A-Za-z_][^{}]*\}|<[^<>]*>|^@\w+@$|^__\w+__$|"""
    r"""^[A-Za-z_][\w.]*\s*[(\[]|^(?:your|my)[\W_]|[\W_]here$"""
)
# Not a literal either, for our key = value rules: a variable or a command ($X, $(cmd)), a YAML
# alias, tag or block, a flow collection, a path, a URL (its password is the URL rule's), an
# ENV_NAME. A URL's password or a header's value is only refused the variable and the ENV_NAME.
_NOT_A_VALUE = re.compile(
    r"""^[$*&!|>{\[`]|^(?:/|\./|\.\./|~/|[A-Za-z]:[\\/])|^[A-Za-z][A-Za-z0-9+.-]*://|"""
    r"""^[A-Z][A-Z0-9]*(?:_[A-Z0-9]+)+$"""
)
_NOT_A_PASSWORD = re.compile(r"^\$|^[A-Z][A-Z0-9]*(?:_[A-Z0-9]+)+$")
_COMMENT = re.compile(r"\s+(?:[#;]|//)")

# key: value in YAML (also `- KEY=value`, docker-compose's environment list)
_YAML_ENTRY = re.compile(r"""^\s*(?:-\s+)?(["']?)([\w.-]+)\1\s*:(?:\s+(.*))?$""")
_YAML_LIST = re.compile(r"""^\s*-\s+(["']?)([\w.-]+)=(.*?)\1\s*$""")
# key = value, key: value in config files, commented out or not
_CONFIG_ENTRY = re.compile(r"""^\s*(?:[#;]+\s*)?(?:export\s+)?(["']?)([\w.-]+)\1\s*[=:]\s*(.*)$""")
# key value (redis.conf's requirepass, nginx, Java properties)
_DIRECTIVE = re.compile(r"""^\s*([\w.-]+)[ \t]+([^\s=:#;"'][^\s;]*);?\s*(?:[#;].*)?$""")
# NAME=value in a shell script, a Dockerfile, an env file; export NAME=value anywhere
_VALUE = r"""("[^"]*"|'[^']*'|[^\s;&|)"']*)"""
_ASSIGNMENT = re.compile(
    r"(?:^|[\s;&|(])(?:export\s+|readonly\s+|local\s+|declare\s+-x\s+)?([A-Za-z_]\w*)=" + _VALUE
)
_EXPORT = re.compile(r"\bexport\s+([A-Za-z_]\w*)=" + _VALUE)
_DOCKER_ENV = re.compile(r"^\s*(?:ENV|ARG)\s+([A-Za-z_]\w*)\s+(\S+)\s*$")

_YAML_SUFFIXES = (".yaml", ".yml", ".eyaml")
_CONFIG_SUFFIXES = (".conf", ".cfg", ".cnf", ".cf", ".ini", ".properties", ".toml")
_DIRECTIVE_SUFFIXES = (".conf", ".cnf", ".cf", ".properties")
_SHELL_SUFFIXES = (".sh", ".bash", ".zsh", ".ksh", ".bats")
_SHELL_NAMES = (".bashrc", ".zshrc", ".profile", ".bash_profile", ".zprofile", ".envrc")
# .env, .env.* and *.env are never read (scan.py); these are the env files it does read
_ENV_LIKE = re.compile(
    r"(?i)^(?:\.envrc|\.flaskenv|\.quartenv|(?:.*[._-])?env(?:[._-](?:example|sample|template|"
    r"tmpl|tpl|dist|defaults?|local|dev|development|prod|production|stage|staging|test|ci|docker|"
    r"list|txt))*)$"
)


@functools.lru_cache(maxsize=256)
def _family(name: str) -> tuple[bool, bool, bool, bool, bool]:
    """(YAML, config, key-value directives, shell, Dockerfile) for a file name."""
    low = name.lower()
    env = _ENV_LIKE.match(name) is not None
    docker = low.startswith(("dockerfile", "containerfile")) or low.endswith(".dockerfile")
    return (
        low.endswith(_YAML_SUFFIXES),
        env or low.endswith(_CONFIG_SUFFIXES),
        low.endswith(_DIRECTIVE_SUFFIXES),
        env or docker or low.endswith(_SHELL_SUFFIXES) or low in _SHELL_NAMES,
        docker,
    )


def _own_rules(line: str, family: tuple[bool, bool, bool, bool, bool]) -> set[str]:
    kinds: set[str] = set()
    if "://" in line and any(
        _is_literal(m.group(2), 1, _NOT_A_PASSWORD)
        and not _PORT_THEN_PATH.match(m.group(2))
        and not _placeholder(m.group(0))  # redis://${USER}:${PASSWORD:-}@host
        for m in _URL_PASSWORD.finditer(line)
    ):
        kinds.add(_URL_AUTH)
    match = "curl" in line and _CURL_USER.search(line)
    if match and _is_literal(match.group(2), 1, _NOT_A_PASSWORD):
        kinds.add(_URL_AUTH)
    match = _AUTHORIZATION.search(line)
    if match and _is_literal(match.group(1), 8, _NOT_A_PASSWORD):
        kinds.add(_HEADER)
    if any(_secret_key(key) and _is_literal(_value(raw), least) for key, raw, least in
           _assignments(line, family)):  # fmt: skip
        kinds.add(_KEYWORD)
    return kinds


def _assignments(line: str, family: tuple[bool, bool, bool, bool, bool]):
    """(key, raw value, shortest secret) of each assignment the file's kind allows."""
    yaml, config, directive, shell, docker = family
    if yaml:
        for pattern in (_YAML_ENTRY, _YAML_LIST):
            match = pattern.match(line)
            if match and match.group(3):
                yield match.group(2), match.group(3), 4
    if config:
        match = _CONFIG_ENTRY.match(line)
        if match:
            yield match.group(2), match.group(3), 1
        match = _DIRECTIVE.match(line) if directive else None
        if match:
            yield match.group(1), match.group(2), 1
    if shell:
        for match in _ASSIGNMENT.finditer(line):
            yield match.group(1), match.group(2), 4
        match = _DOCKER_ENV.match(line) if docker else None
        if match:
            yield match.group(1), match.group(2), 4
    elif "export" in line:
        for match in _EXPORT.finditer(line):
            yield match.group(1), match.group(2), 4


def _secret_key(key: str) -> bool:
    """DB_PASSWORD, db.pass, clientSecret, apiKey, access_token, requirepass: yes; bypass,
    token_url, secretName, password_min_length, proxy_pass, existingSecret: no."""
    words = [word.lower() for word in _WORD.findall(key)]
    if not words or words[0] in _NOT_SECRET_KEYS:
        return False
    last = words[-1]
    if last in _KEY_WORDS or last.endswith(_KEY_ENDINGS):
        return True
    return len(words) > 1 and words[-2] + last in _KEY_PAIRS


def _value(raw: str) -> str:
    """The value of `raw` as written after the key: unquoted, without a trailing comment."""
    raw = raw.strip()
    if raw[:1] in ('"', "'"):
        end = raw.find(raw[0], 1)
        return raw[1:end] if end > 0 else raw[1:]
    return _COMMENT.split(raw, maxsplit=1)[0].rstrip(";,")


def _is_literal(value: str, least: int, refused: re.Pattern = _NOT_A_VALUE) -> bool:
    """A literal secret value of `least` characters or more, rather than a placeholder."""
    return (
        len(value) >= least
        and not any(c.isspace() for c in value)  # prose: "The token has expired"
        and not _placeholder(value)
        and refused.search(value) is None
    )


def _placeholder(value: str) -> bool:
    low = value.lower()
    return (
        low in _NOT_SECRETS
        or (len(value) > 2 and len(set(low)) == 1)  # ***, xxxxxxxx
        or _TEMPLATE.search(value) is not None
    )


_KEY = re.compile(r"""^\s*(?:-\s+)?(?:export\s+)?["']?([\w.-]+)["']?\s*[:=]""")
# A key that names where a secret is, or describes it, rather than holding it.
_FIELD_WORDS = frozenset(
    {"name", "names", "ref", "file", "path", "dir", "id", "url", "uri", "hint", "length", "size",
     "type", "mode", "policy", "provider", "template", "format", "field", "label", "header",
     "prefix", "suffix"}
)  # fmt: skip


def _a_placeholder_or_a_name(secret, line: str) -> bool:
    """detect-secrets flags `password: ${DB_PASSWORD}` in a .cfg, `{user}:{password}@host`,
    `user:PASSWORD@host` and `secretName: tls-cert` (its keyword is anywhere in the key): a
    template or placeholder value, or a key that names or describes the secret (secretName,
    password_file, existingSecret), is not kept."""
    if secret.type == "Basic Auth Credentials":
        return _placeholder(secret.secret_value or "")
    if secret.type != "Secret Keyword":
        return False
    if _placeholder(secret.secret_value or ""):
        return True
    match = _KEY.match(line)
    words = [word.lower() for word in _WORD.findall(match.group(1))] if match else []
    return bool(words) and (words[-1] in _FIELD_WORDS or words[0] == "existing")


# A Kubernetes Secret (top-level `kind: Secret`): the value of each entry of its data (base64)
# and stringData, to the next top-level key or document. A value that is a template ({{ ...
# }}, Helm's) stays, and so does a block scalar's text (`config.yaml: |`, a whole file: the
# line rules see its lines).
_KIND_SECRET = re.compile(r"""kind:\s*["']?Secret["']?\s*(?:#.*)?$""")
_DOCUMENT = re.compile(r"(?:---|\.\.\.)(?:\s|$)")
_DATA = re.compile(r"(?:data|stringData):\s*(?:#.*)?$")
_ENTRY = re.compile(r"""(\s+)(?:\{\{.*?\}\}|[^\s:{]|\{(?!\{))+:(?:\s+(.*))?$""")
_NOT_DATA = re.compile(r"[|>][-+0-9]*$|/|\./|~/")  # a block scalar's header, a path


def _kubernetes_secret_data(lines: list[str]) -> list[int]:
    numbers: list[int] = []
    start = 0
    for end in [*(i for i, line in enumerate(lines) if _DOCUMENT.match(line)), len(lines)]:
        document = range(start, end)
        start = end + 1
        if not any(_KIND_SECRET.match(lines[i]) for i in document):
            continue
        inside, indent = False, None
        for i in document:
            line = lines[i]
            text = line.strip()
            if not text or text.startswith(("#", "{{")):
                continue  # blank, a comment, a Helm control line: the block goes on
            if not line[0].isspace():
                inside, indent = _DATA.match(line) is not None, None
                continue
            entry = _ENTRY.match(line) if inside else None
            if entry is None or indent not in (None, len(entry.group(1))):
                continue  # not an entry of the block (a block scalar's text, deeper)
            indent = len(entry.group(1))
            value = _value(entry.group(2) or "")
            if value and not _placeholder(value) and not _NOT_DATA.match(value):
                numbers.append(i + 1)
    return numbers


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
