"""The tables and rules index/secrets.py applies to a file's lines (split out of it: it runs them).

- `DETECTOR_GATES`: for each of detect-secrets' detectors, what every line it could flag holds
  (literals, or a piece of one of its own patterns). secrets.py's prefilter picks a line for a
  detector only through its gate, so the gate must let every match of the detector's patterns
  through: tests/test_secret_shapes.py proves that from the patterns themselves, for every
  detector of the pinned detect-secrets, and indexes a sample of each.
- `VENDOR_RULES`: vendor token formats detect-secrets does not know, or knows too narrowly,
  as gitleaks' default rules (config/gitleaks.toml) define them, each with its gate
  (`VENDOR_GATES`, proved the same way).
- Our own rules, for credential shapes both tools miss (issue 31, item 8; issue 49, item 5):
  one line at a time (`own_rules`), a few from the lines around (`context_lines`: a YAML block
  scalar, a Kubernetes env pair, a netrc entry) and a Kubernetes Secret's data. `OWN_GATE` is
  what every line they start from holds. Each takes a literal value only: a template
  (`${DB_PASSWORD}`, `{{ .Values.pw }}`, `<your password>`), a variable, a call, a path, a type
  name or a mask (`***`) is left in place.

It is over 400 lines because it is tables and the rules that read them, one after another, with
no state: splitting the gates from the rules would leave each half naming the other's formats.
"""

from __future__ import annotations

import base64
import binascii
import functools
import re
from typing import NamedTuple


class Gate(NamedTuple):
    """What every line a rule flags holds: one of these literals, found in the lowercased line
    (`any_case`, written in lower case) or as written (`this_case`), or a match of one of these
    patterns (each a piece of one of the rule's own patterns: a run of its top-level items)."""

    any_case: tuple[str, ...] = ()
    this_case: tuple[str, ...] = ()
    patterns: tuple[re.Pattern, ...] = ()


# detect-secrets 1.5.0 (pinned), by secret type. Keys and passwords: the keyword list of its
# KeywordDetector and the `key|pwd|pw|password|pass|token` of its assignment detectors (IBM,
# Cloudant, SoftLayer), which take a bare `key = <44 characters>`. A detector missing here sees
# every line (secrets.py), and a test fails.
_KEYWORDS = ("key", "pass", "pwd", "token")
DETECTOR_GATES: dict[str, Gate] = {
    "Artifactory Credentials": Gate(this_case=("AKC", "AP")),
    # five prefixes: their pattern is one pass over the text, where they would be five
    "AWS Access Key": Gate(
        any_case=("aws",),
        patterns=(re.compile(r"(?:A3T[A-Z0-9]|ABIA|ACCA|AKIA|ASIA)[0-9A-Z]{16}"),),
    ),
    "Azure Storage Account access key": Gate(this_case=("AccountKey=",)),
    "Basic Auth Credentials": Gate(this_case=("://",)),
    "Cloudant Credentials": Gate(any_case=(*_KEYWORDS, "pw", "cloudant.com")),
    # no literal but its dots: the piece from the first dot on, one quick pass over the text
    "Discord Bot Token": Gate(patterns=(re.compile(r"\.[a-zA-Z\d_-]{6}\.[a-zA-Z\d_-]{27}"),)),
    "GitHub Token": Gate(patterns=(re.compile(r"(ghp|gho|ghu|ghs|ghr)_[A-Za-z0-9_]{36}"),)),
    # `gl` for its ten prefixes: one pass, and few lines hold it
    "GitLab Token": Gate(this_case=("gl", "GR1348941")),
    "IBM Cloud IAM Key": Gate(any_case=_KEYWORDS),
    "IBM COS HMAC Credentials": Gate(any_case=("secret",)),
    "JSON Web Token": Gate(this_case=("eyJ",)),
    "Secret Keyword": Gate(any_case=("key", "pass", "pwd", "secret", "contrase")),
    "Mailchimp Access Key": Gate(this_case=("-us",)),
    "NPM tokens": Gate(this_case=(":_authToken=",)),
    "OpenAI Token": Gate(this_case=("T3BlbkFJ",)),
    # (written in two: a line holding the whole name is one the detector flags, and this file
    # would be dropped from an index of this repository as a private key)
    "Private Key": Gate(this_case=("PRIVATE KEY", "PuTTY-User-Key-File-" + "2")),
    "PyPI Token": Gate(this_case=("pypi-AgE",)),
    "SendGrid API Key": Gate(this_case=("SG.",)),
    "Slack Token": Gate(any_case=("xox", "hooks.slack.com")),
    "SoftLayer Credentials": Gate(any_case=(*_KEYWORDS, "softlayer")),
    "Square OAuth Secret": Gate(this_case=("sq0csp-",)),
    "Stripe Access Key": Gate(this_case=("k_live_",)),
    # the bot's id has no literal: the colon and the 35 characters after it
    "Telegram Bot Token": Gate(patterns=(re.compile(r":[0-9A-Za-z_-]{35}"),)),
    # a two-letter literal would pick a large share of all lines: its own patterns, as cheap
    "Twilio API Key": Gate(patterns=(re.compile(r"AC[a-z0-9]{32}"), re.compile(r"SK[a-z0-9]{32}"))),
}

# Current vendor token formats detect-secrets 1.5 does not know, or takes too narrowly (Twilio's
# in lower case only, a Telegram bot's id of 8 to 10 digits only, Artifactory's between spaces
# or double quotes only), as gitleaks' default rules define them; keyed by its rule id. Each
# has a fixed prefix or shape, so none fires on ordinary code.
_END = r"""(?:[\x60'"\s;,)}\]]|\\[nr]|$)"""
_TOKEN_END = r"(?![A-Za-z0-9_-])"
VENDOR_RULES: dict[str, re.Pattern] = {
    rule: re.compile(pattern if pattern.endswith((_TOKEN_END, r"\b")) else pattern + _END)
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
        "twilio-api-key": r"SK[0-9a-fA-F]{32}" + _TOKEN_END,
        "telegram-bot-api-token": r"(?<![0-9])[0-9]{5,16}:A[a-zA-Z0-9_-]{34}" + _TOKEN_END,
        "artifactory-api-key": r"\bAKCp[A-Za-z0-9]{69}\b",
        "artifactory-reference-token": r"\bcmVmd[A-Za-z0-9]{59}\b",
    }.items()
}

# What every match of each of VENDOR_RULES holds.
VENDOR_GATES: dict[str, Gate] = {
    "openai-api-key": Gate(this_case=("sk-",)),
    "gcp-api-key": Gate(this_case=("AIza",)),
    "github-fine-grained-pat": Gate(this_case=("github_pat_",)),
    "anthropic-api-key": Gate(this_case=("sk-ant-api03-",)),
    "anthropic-admin-api-key": Gate(this_case=("sk-ant-admin01-",)),
    "huggingface-access-token": Gate(this_case=("hf_",)),
    "gitlab-pat": Gate(this_case=("glpat-",)),
    "digitalocean-pat": Gate(this_case=("dop_v1_",)),
    "age-secret-key": Gate(this_case=("AGE-SECRET-KEY-1",)),
    "npm-access-token": Gate(any_case=("npm_",)),
    "pypi-upload-token": Gate(this_case=("pypi-AgEIcHlwaS5vcmc",)),
    "twilio-api-key": Gate(patterns=(re.compile(r"SK[0-9a-fA-F]{32}"),)),
    "telegram-bot-api-token": Gate(this_case=(":A",)),
    "artifactory-api-key": Gate(this_case=("AKCp",)),
    "artifactory-reference-token": Gate(this_case=("cmVmd",)),
}
# What every line our own rules start from holds: the key words of `secret_key` (and `auth`: a
# docker config's `"auth":`, an Authorization header, redis' masterauth), a URL's `://`, curl
# (tests/test_secret_formats.py checks it).
OWN_GATE = Gate(any_case=("pass", "pwd", "secret", "token", "key", "auth", "curl", "://"))

URL_AUTH = "Basic Auth Credentials"  # detect-secrets' name for the same thing
HEADER = "Authorization Header"
KEYWORD = "Secret Keyword"
KUBERNETES = "Kubernetes Secret"
DOCKER_AUTH = "Docker Registry Auth"
NETRC = "Netrc Password"

# scheme://user:password@host: the user may be empty (redis://:<pw>@host), the password holds
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
_KEY_ENDINGS = ("password", "passwd", "passphrase", "apikey", "secretkey", "accesskey",
                "authtoken", "accesstoken", "apitoken", "clientsecret", "identitytoken",
                "registrytoken")  # fmt: skip
_WORD = re.compile(r"[A-Z]+(?![a-z])|[A-Z]?[a-z]+|[0-9]+")
# nginx's upstream directives (proxy_pass http://backend;), Helm's existingSecret (a name)
_NOT_SECRET_KEYS = frozenset({"proxy", "fastcgi", "uwsgi", "scgi", "grpc", "memcached", "existing"})
_NOT_SECRETS = frozenset(
    {"true", "false", "yes", "no", "on", "off", "null", "none", "nil", "undefined", "~", "str",
     "string", "int", "integer", "bool", "boolean", "number", "float", "bytes", "object", "any",
     "secretstr", "redacted", "removed", "hidden", "placeholder", "required", "optional", "empty",
     "default", "example", "key", "api_key", "apikey", "api-key", "foo", "bar", "baz", "foobar",
     "dummy", *_KEY_WORDS}
)  # fmt: skip
# Never a secret, whatever the rule (detect-secrets' too): a template or a format field (${X},
# {{ x }}, %(x)s, {password}, <your password>, ERB's <%= %>), a call or subscript
# (os.environ["X"]), a your_token_here, an elided or masked value (hf_***, sk-..., hf_jwt_…).
_TEMPLATE = re.compile(
    r"""\$\{|\{\{|\}\}|%\(\w+\)[sdr]|^%[sdr]$|\{[A-Za-z_][^{}]*\}|<[^<>]*>|^@\w+@$|^__\w+__$|"""
    r"""^[A-Za-z_][\w.]*\s*[(\[]|^(?:your|my)[\W_]|[\W_]here$|\*{3}|\.{3}|\u2026"""
)
# A token with a run of eight of one character is a mask (AKIAXXXXXXXXXXXXXXXX, ACxxxx...): a
# random token has one once in tens of millions.
_MASKED = re.compile(r"(.)\1{7}")
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
# NAME := value in a Makefile (=, ::=, :::=, ?=, +=; `!=` runs a command)
_MAKE_ASSIGNMENT = re.compile(
    r"^\s*(?:(?:export|override|private)\s+)*([A-Za-z_][\w.-]*)\s*(?::{1,3}=|[?+]?=)\s*(.*)$"
)
# "key": "value", anywhere (JSON, and the dicts and objects of code written like it)
_QUOTED_PAIR = re.compile(r"""(["'])([\w.-]+)\1\s*:\s*(?:"([^"\\\n]*)"|'([^'\\\n]*)')""")
# a docker config's "auth": base64 of user:password, under any file name
_DOCKER_AUTH = re.compile(r"""(?<![\w-])(["']?)auth\1\s*:\s*(["'])([A-Za-z0-9+/]{8,}={0,2})\2""")
# machine host login user password secret: a netrc entry, on one line or several
_NETRC_KEYS = frozenset({"machine", "login", "account", "password", "port"})
# a Kubernetes env pair: `- name: DB_PASSWORD` with `value: ...` in the same item; an ECS task's
# {"name": "DB_PASSWORD", "value": "..."} on one line
_PAIR_KEY = re.compile(r"""^(\s*)(-\s+)?(["']?)(name|value)\3\s*:\s*(.*?)\s*,?\s*$""")
_NAME_FIELD = re.compile(r"""(?<![\w-])(["']?)name\1\s*:\s*(["'])([\w.-]+)\2""")
_VALUE_FIELD = re.compile(r"""(?<![\w-])(["']?)value\1\s*:\s*(?:"([^"\n]*)"|'([^'\n]*)')""")
# a YAML key whose value is a block scalar (`password: |`): the text is on the lines below
_BLOCK_SCALAR = re.compile(r"""^(\s*(?:-\s+)?)(["']?)([\w.-]+)\2\s*:\s*[|>][-+0-9]*\s*(?:#.*)?$""")

_YAML_SUFFIXES = (".yaml", ".yml", ".eyaml")
_CONFIG_SUFFIXES = (".conf", ".cfg", ".cnf", ".cf", ".ini", ".properties", ".toml")
_DIRECTIVE_SUFFIXES = (".conf", ".cnf", ".cf", ".properties")
_SHELL_SUFFIXES = (".sh", ".bash", ".zsh", ".ksh", ".bats")
_SHELL_NAMES = (".bashrc", ".zshrc", ".profile", ".bash_profile", ".zprofile", ".envrc")
_MAKE_NAMES = ("makefile", "gnumakefile")
_MAKE_SUFFIXES = (".mk", ".mak", ".make")
# .env, .env.* and *.env are never read (scan.py); these are the env files it does read
_ENV_LIKE = re.compile(
    r"(?i)^(?:\.envrc|\.flaskenv|\.quartenv|(?:.*[._-])?env(?:[._-](?:example|sample|template|"
    r"tmpl|tpl|dist|defaults?|local|dev|development|prod|production|stage|staging|test|ci|docker|"
    r"list|txt))*)$"
)


class Family(NamedTuple):
    """Which of our assignment rules a file's kind allows, from its name."""

    yaml: bool
    config: bool
    directive: bool  # `key value` lines
    shell: bool
    docker: bool
    make: bool
    json: bool


@functools.lru_cache(maxsize=256)
def family(name: str) -> Family:
    low = name.lower()
    env = _ENV_LIKE.match(name) is not None
    docker = low.startswith(("dockerfile", "containerfile")) or low.endswith(".dockerfile")
    return Family(
        yaml=low.endswith(_YAML_SUFFIXES),
        config=env or low.endswith(_CONFIG_SUFFIXES),
        directive=low.endswith(_DIRECTIVE_SUFFIXES),
        shell=env or docker or low.endswith(_SHELL_SUFFIXES) or low in _SHELL_NAMES,
        docker=docker,
        make=low in _MAKE_NAMES or low.endswith(_MAKE_SUFFIXES),
        json=low.endswith((".json", ".jsonc", ".json5")),
    )


def own_rules(line: str, kind: Family) -> set[str]:
    """Our rules' names for what this line holds."""
    kinds: set[str] = set()
    if "://" in line and any(
        _is_literal(m.group(2), 1, _NOT_A_PASSWORD)
        and not _PORT_THEN_PATH.match(m.group(2))
        and not placeholder(m.group(0))  # redis://${USER}:${PASSWORD:-}@host
        for m in _URL_PASSWORD.finditer(line)
    ):
        kinds.add(URL_AUTH)
    match = "curl" in line and _CURL_USER.search(line)
    if match and _is_literal(match.group(2), 1, _NOT_A_PASSWORD):
        kinds.add(URL_AUTH)
    match = _AUTHORIZATION.search(line)
    if match and _is_literal(match.group(1), 8, _NOT_A_PASSWORD):
        kinds.add(HEADER)
    if any(secret_key(key) and _is_literal(_value(raw), least) for key, raw, least in
           _assignments(line, kind)):  # fmt: skip
        kinds.add(KEYWORD)
    if ":" in line and (_quoted_secret(line) or _named_pair(line)):
        kinds.add(KEYWORD)
    if "auth" in line and any(_user_and_password(m.group(3)) for m in _DOCKER_AUTH.finditer(line)):
        kinds.add(DOCKER_AUTH)
    entry = _netrc(line) if "machine" in line else None
    if entry and "machine" in entry and _netrc_password(entry):
        kinds.add(NETRC)
    return kinds


def _assignments(line: str, kind: Family):
    """(key, raw value, shortest secret) of each assignment the file's kind allows."""
    if kind.yaml:
        for pattern in (_YAML_ENTRY, _YAML_LIST):
            match = pattern.match(line)
            if match and match.group(3):
                yield match.group(2), match.group(3), 4
    if kind.config:
        match = _CONFIG_ENTRY.match(line)
        if match:
            yield match.group(2), match.group(3), 1
        match = _DIRECTIVE.match(line) if kind.directive else None
        if match:
            yield match.group(1), match.group(2), 1
    if kind.make:
        match = _MAKE_ASSIGNMENT.match(line)
        if match:
            yield match.group(1), match.group(2), 4
    if kind.shell:
        for match in _ASSIGNMENT.finditer(line):
            yield match.group(1), match.group(2), 4
        match = _DOCKER_ENV.match(line) if kind.docker else None
        if match:
            yield match.group(1), match.group(2), 4
    elif "export" in line:
        for match in _EXPORT.finditer(line):
            yield match.group(1), match.group(2), 4


def _quoted_secret(line: str) -> bool:
    """`"token": "9f8e…"`: a quoted key that names a secret, a quoted literal of 6 characters or
    more that is not a field's name."""
    return any(
        secret_key(m.group(2))
        and _is_literal(value := m.group(3) if m.group(3) is not None else m.group(4), 6)
        and not a_field_name(value)
        for m in _QUOTED_PAIR.finditer(line)
    )


def _named_pair(line: str) -> bool:
    """{"name": "DB_PASSWORD", "value": "…"} on one line, the value quoted."""
    name = _NAME_FIELD.search(line)
    value = _VALUE_FIELD.search(line) if name else None
    if name is None or value is None or not secret_key(name.group(3)):
        return False
    text = value.group(2) if value.group(2) is not None else value.group(3)
    return _is_literal(text, 4) and not _names_a_word(text)


def _user_and_password(value: str) -> bool:
    """Base64 of `user:password`, as a docker config's `auth` holds."""
    try:
        decoded = base64.b64decode(value, validate=True)
    except (binascii.Error, ValueError):
        return False
    user, colon, password = decoded.partition(b":")
    return bool(colon and password) and decoded.isascii() and decoded.decode().isprintable()


def _netrc(line: str) -> dict[str, str] | None:
    """The tokens of a netrc line (`machine h login u password p`, `default`), or None when the
    line holds anything else."""
    words = line.split()
    entry: dict[str, str] = {}
    i = 0
    while i < len(words):
        if words[i] == "default":
            entry["default"], i = "", i + 1
        elif words[i] in _NETRC_KEYS and i + 1 < len(words):
            entry[words[i]], i = words[i + 1], i + 2
        else:
            return None
    return entry or None


def _netrc_password(entry: dict[str, str]) -> bool:
    return _is_literal(entry.get("password", ""), 1, _NOT_A_PASSWORD)


def context_lines(lines: list[str], index: int, kind: Family) -> list[tuple[int, str]]:
    """(index, what) of the lines holding a secret that line `index` says is there: a YAML
    block scalar's text (`password: |`), the value of a Kubernetes env pair (`- name:
    DB_PASSWORD`), the password of a netrc entry whose `machine` is on a line above."""
    line = lines[index]
    found: list[tuple[int, str]] = []
    if kind.yaml:
        found += [(i, KEYWORD) for i in _block_scalar(lines, index)]
    if kind.yaml or kind.json:
        found += [(i, KEYWORD) for i in _pair_value(lines, index)]
    entry = _netrc(line) if "password" in line else None
    if entry and _netrc_password(entry) and not {"machine", "default"} & entry.keys():
        for above in range(index - 1, -1, -1):
            entry = _netrc(lines[above])
            if entry is None:
                break
            if {"machine", "default"} & entry.keys():
                found.append((index, NETRC))
                break
    return found


def _indent(line: str) -> int:
    return len(line) - len(line.lstrip())


def _block_scalar(lines: list[str], index: int) -> list[int]:
    match = _BLOCK_SCALAR.match(lines[index])
    if match is None or not secret_key(match.group(3)):
        return []
    found: list[int] = []
    parent = len(match.group(1))
    for i in range(index + 1, len(lines)):
        text = lines[i].strip()
        if not text:
            continue
        if _indent(lines[i]) <= parent or lines[i].startswith(("---", "...")):
            break
        if not placeholder(text):
            found.append(i)
    return found


def _key_column(line: str) -> int:
    """Where a YAML line's key starts: after its indentation and a list item's dash."""
    match = _PAIR_KEY.match(line)
    if match:
        return len(match.group(1)) + len(match.group(2) or "")
    stripped = line.lstrip()
    dash = re.match(r"-\s+", stripped)
    return _indent(line) + (dash.end() if dash else 0)


def _pair_value(lines: list[str], index: int) -> list[int]:
    match = _PAIR_KEY.match(lines[index])
    if match is None or match.group(4) != "name" or not secret_key(_value(match.group(5))):
        return []
    column = len(match.group(1)) + len(match.group(2) or "")  # where the item's keys start
    item: list[int] = []
    for step in (-1, 1):
        if step < 0 and match.group(2):
            continue  # `- name:` opens the item
        i = index + step
        while 0 <= i < len(lines):
            line = lines[i]
            i += step
            if not line.strip():
                continue
            at = _key_column(line)
            if at > column:
                continue  # deeper: a child of one of the item's keys
            opens = line.lstrip().startswith("-")
            if at < column or (opens and step > 0):
                break  # out of the item, or the next item
            item.append(i - step)
            if opens:
                break  # the item's first line
    for i in item:
        entry = _PAIR_KEY.match(lines[i])
        if entry and entry.group(4) == "value":
            value = _value(entry.group(5))
            if _is_literal(value, 4) and not _names_a_word(value):
                return [i]
    return []


def secret_key(key: str) -> bool:
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
        and not placeholder(value)
        and refused.search(value) is None
    )


def placeholder(value: str) -> bool:
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


def a_placeholder_or_a_name(secret, line: str) -> bool:
    """detect-secrets flags `password: ${DB_PASSWORD}` in a .cfg, `{user}:{password}@host`,
    `user:PASSWORD@host`, `secretName: tls-cert` (its keyword is anywhere in the key) and
    `AKIAXXXXXXXXXXXXXXXX`: a template, placeholder or masked value, or a key that names or
    describes the secret (secretName, password_file, existingSecret), is not kept."""
    if _MASKED.search(secret.secret_value or ""):
        return True
    if secret.type == "Basic Auth Credentials":
        return placeholder(secret.secret_value or "")
    if secret.type != "Secret Keyword":
        return False
    if placeholder(secret.secret_value or ""):
        return True
    match = _KEY.match(line)
    words = [word.lower() for word in _WORD.findall(match.group(1))] if match else []
    return bool(words) and (words[-1] in _FIELD_WORDS or words[0] == "existing")


# A Kubernetes Secret (top-level `kind: Secret`): the value of each entry of its data (base64)
# and stringData, to the next top-level key or document. A value that is a template ({{ ...
# }}, Helm's) stays, and so does a block scalar's text (`config.yaml: |`, a whole file: the
# line rules see its lines).
KIND_SECRET = re.compile(r"""kind:\s*["']?Secret["']?\s*(?:#.*)?$""")
_DOCUMENT = re.compile(r"(?:---|\.\.\.)(?:\s|$)")
_DATA = re.compile(r"(?:data|stringData):\s*(?:#.*)?$")
_ENTRY = re.compile(r"""(\s+)(?:\{\{.*?\}\}|[^\s:{]|\{(?!\{))+:(?:\s+(.*))?$""")
_NOT_DATA = re.compile(r"[|>][-+0-9]*$|/|\./|~/")  # a block scalar's header, a path


def kubernetes_secret_data(lines: list[str]) -> list[int]:
    numbers: list[int] = []
    start = 0
    for end in [*(i for i, line in enumerate(lines) if _DOCUMENT.match(line)), len(lines)]:
        document = range(start, end)
        start = end + 1
        if not any(KIND_SECRET.match(lines[i]) for i in document):
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
            if value and not placeholder(value) and not _NOT_DATA.match(value):
                numbers.append(i + 1)
    return numbers


_NAMING = re.compile(r"(?i)pass|secret|token|key|field|name|user")
_IDENTIFIER = re.compile(r"[A-Za-z0-9_.]+")


def _names_a_word(value: str) -> bool:
    """Shaped like an identifier that mentions a key word (`password1`, `PASSWORD_FIELD`)."""
    return bool(_IDENTIFIER.fullmatch(value) and _NAMING.search(value))


def a_field_name(value: str) -> bool:
    """A value that names a field rather than holds a secret: under 6 characters, or shaped
    like an identifier that mentions such a word."""
    return len(value) < 6 or _names_a_word(value)


def names_a_field(secret) -> bool:
    """`password1_field_name="password1"`, `PASSWORD_FIELD = "password"`: the keyword rule
    flags a value that names a field rather than holds a secret (Django's auth forms are full
    of them)."""
    return secret.type == "Secret Keyword" and a_field_name(secret.secret_value or "")
