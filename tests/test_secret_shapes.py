"""Secrets that reached the index (issue 49, items 3-5): lines the prefilter dropped before
detect-secrets saw them (Twilio, Telegram, Mailchimp, Artifactory, ...), lines over 2,000
characters that were never read, and credential shapes no rule knew (a YAML block scalar, a
Kubernetes env pair, JSON `"token":`, a Makefile assignment, a docker config's `auth`, a netrc
entry under another name).

The prefilter's gates (index/secret_rules.py) are proved from detect-secrets' own patterns: each
pattern of each detector holds, in every match, a literal of its gate, or holds the gate's
pattern as one of its pieces. Then one repository holds a sample of each detector, each vendor
rule (gitleaks' default rules, the reference corpus) and each shape, written with seeded random
bodies of the right alphabet and length; it is indexed once by the real CLI, and no token is
found by search or in the bytes of the index files. The real code that looks like the shapes
stays searchable."""

from __future__ import annotations

import base64
import contextlib
import io
import json
import random
import re
import string
import time
from pathlib import Path

import pytest
from conftest import write_tree
from detect_secrets.core.plugins.util import get_mapping_from_secret_type_to_class
from detect_secrets.plugins import keyword

from repocontext.cli import main
from repocontext.index import secret_rules, secrets
from repocontext.locations import index_path

try:
    from re import _parser as sre  # type: ignore[attr-defined]
except ImportError:  # Python 3.10
    import sre_parse as sre  # type: ignore[no-redef]

ALNUM = string.ascii_letters + string.digits
HEX = "0123456789abcdef"
UPPER_DIGITS = string.ascii_uppercase + string.digits
LEFT_OUT = ("Base64HighEntropyString", "HexHighEntropyString", "IPPublicDetector")


def _token(alphabet: str, n: int, seed: str) -> str:
    rng = random.Random(seed)
    return "".join(rng.choice(alphabet) for _ in range(n))


def _jwt(seed: str) -> str:
    def part(obj) -> str:
        return base64.urlsafe_b64encode(json.dumps(obj).encode()).decode().rstrip("=")

    payload = {"sub": _token(string.digits, 10, seed), "name": _token(ALNUM, 12, seed + "n")}
    return f"{part({'alg': 'HS256', 'typ': 'JWT'})}.{part(payload)}.{_token(ALNUM, 43, seed)}"


def _b64(text: str) -> str:
    return base64.b64encode(text.encode()).decode()


# --- the gates, proved from the detectors' patterns ------------------------------------------

_REPEATS = (sre.MAX_REPEAT, sre.MIN_REPEAT, getattr(sre, "POSSESSIVE_REPEAT", sre.MAX_REPEAT))


def _icase(icase: bool, group) -> bool:
    _, add, remove, _ = group
    return (icase or bool(add & re.I)) and not remove & re.I


def _join(left: set, right: set) -> set:
    """Each string of `left` then each of `right`; (text, any case), lowercased if any part is."""
    out = set()
    for a, ai in left:
        for b, bi in right:
            ci = ai or bi
            out.add(((a + b).lower() if ci else a + b, ci))
    return out


def _exact(item, icase: bool) -> set | None:
    """The few strings one parsed item matches, as (text, any case), or None."""
    op, av = item
    if op is sre.LITERAL:
        return {(chr(av).lower() if icase else chr(av), icase)}
    if op is sre.IN and all(o is sre.LITERAL for o, _ in av):
        return {(chr(v).lower() if icase else chr(v), icase) for _, v in av}
    if op is sre.SUBPATTERN:
        return _exact_items(av[3], _icase(icase, av))
    if op is sre.BRANCH:
        alternatives = [_exact_items(a, icase) for a in av[1]]
        return None if any(a is None for a in alternatives) else set().union(*alternatives)
    if op in _REPEATS and av[1] <= 3:
        body = _exact_items(av[2], icase)
        if body is None:
            return None
        out, times = set(), {("", False)}
        for n in range(av[1] + 1):
            if n >= av[0]:
                out |= times
            times = _join(times, body)
        return out
    return None


def _exact_items(items, icase: bool) -> set | None:
    out = {("", False)}
    for item in items:
        part = _exact(item, icase)
        if part is None:
            return None
        out = _join(out, part)
        if len(out) > 256:
            return None
    return out


def _covered(text: str, any_case: bool, gate: secret_rules.Gate) -> bool:
    """Every line holding `text` (any case: a match of it ignoring case) is one a literal of
    the gate is found in, as secrets._hits finds it."""
    return any(n in text.lower() for n in gate.any_case) or (
        not any_case and any(n in text for n in gate.this_case)
    )


def _proves(items, icase: bool, gate: secret_rules.Gate) -> bool:
    """Every match of the parsed items holds a literal of the gate."""
    run = {("", False)}
    for item in [*items, None]:
        part = _exact(item, icase) if item is not None else None
        if part is not None and len(_join(run, part)) <= 256:
            run = _join(run, part)
            continue
        if all(text for text, _ in run) and all(_covered(t, ci, gate) for t, ci in run):
            return True  # a run of fixed strings, each holding a literal of the gate
        run = {("", False)}
        if item is None:
            return False
        op, av = item
        if op is sre.SUBPATTERN and _proves(av[3], _icase(icase, av), gate):
            return True
        if op is sre.BRANCH and all(_proves(a, icase, gate) for a in av[1]):
            return True
        if op in _REPEATS and av[0] >= 1 and _proves(av[2], icase, gate):
            return True
    return False


def _a_piece_of(piece: re.Pattern, whole: re.Pattern) -> bool:
    """`piece` is a run of the top-level items of `whole`: every match of `whole` holds one
    of `piece`."""
    at = whole.pattern.find(piece.pattern)
    if at < 0 or (piece.flags ^ whole.flags) & re.I:
        return False
    parts = [whole.pattern[:at], piece.pattern, whole.pattern[at + len(piece.pattern) :]]
    try:
        counts = [len(sre.parse(p, whole.flags)) for p in parts]
    except re.error:
        return False
    return sum(counts) == len(sre.parse(whole.pattern, whole.flags))


def _through(pattern: re.Pattern, gate: secret_rules.Gate) -> bool:
    parsed = sre.parse(pattern.pattern, pattern.flags)
    return _proves(list(parsed), bool(parsed.state.flags & re.I), gate) or any(
        _a_piece_of(piece, pattern) for piece in gate.patterns
    )


def _detector_patterns(cls) -> list[re.Pattern]:
    if cls.__name__ == "KeywordDetector":  # the tables analyze_line picks from by file type
        tables = [
            *keyword.REGEX_BY_FILETYPE.values(),
            keyword.QUOTES_REQUIRED_DENYLIST_REGEX_TO_GROUP,
        ]
        return list({p: None for table in tables for p in table})
    return list(cls.denylist)


DETECTORS = {
    kind: cls
    for kind, cls in get_mapping_from_secret_type_to_class().items()
    if cls.__name__ not in LEFT_OUT
}


def test_every_detector_and_vendor_rule_has_a_gate():
    assert set(DETECTORS) == set(secret_rules.DETECTOR_GATES)
    assert set(secret_rules.VENDOR_RULES) == set(secret_rules.VENDOR_GATES)
    assert secrets._gates().every_line == 0
    for gate in [*secret_rules.DETECTOR_GATES.values(), *secret_rules.VENDOR_GATES.values()]:
        # the lowercased text is folded for ASCII letters only
        assert all(n.isascii() and n == n.lower() for n in gate.any_case), gate


@pytest.mark.parametrize("kind", sorted(DETECTORS))
def test_each_gate_lets_every_match_of_its_detector_through(kind):
    gate = secret_rules.DETECTOR_GATES[kind]
    for pattern in _detector_patterns(DETECTORS[kind]):
        assert _through(pattern, gate), (kind, pattern.pattern)


@pytest.mark.parametrize("rule", sorted(secret_rules.VENDOR_RULES))
def test_each_gate_lets_every_match_of_its_vendor_rule_through(rule):
    assert _through(secret_rules.VENDOR_RULES[rule], secret_rules.VENDOR_GATES[rule]), rule


def test_the_proof_refuses_a_gate_that_misses_a_match():
    twilio = DETECTORS["Twilio API Key"].denylist[0]  # AC[a-z0-9]{32}
    assert not _through(twilio, secret_rules.Gate(this_case=("SK",)))
    assert not _through(twilio, secret_rules.Gate(any_case=("acx",)))
    assert _through(twilio, secret_rules.Gate(any_case=("ac",)))
    assert not _through(re.compile("(?:api|)key"), secret_rules.Gate(any_case=("api",)))


def test_the_windows_overlap_by_more_than_any_tokens_shortest_match():
    """A match no longer than the overlap lies whole in one window of a long line."""
    patterns = [p for cls in DETECTORS.values() for p in _detector_patterns(cls)]
    for pattern in [*patterns, *secret_rules.VENDOR_RULES.values()]:
        shortest = sre.parse(pattern.pattern, pattern.flags).getwidth()[0]
        assert shortest <= secrets._OVERLAP, (pattern.pattern, shortest)


def test_the_fold_covers_what_case_insensitive_matching_takes_for_a_letter():
    """A gate's literal `key` must be found in the lowercased text wherever `(?i)key` matches:
    after secrets._FOLD, lower() gives the ASCII letter for every character that Python's
    case-insensitive matching takes for it, and keeps each character one character."""
    everything = "".join(chr(c) for c in range(0x110000) if not 0xD800 <= c < 0xE000)
    for char in set(re.findall("(?i)[a-z]", everything)):
        for letter in string.ascii_lowercase:
            if re.fullmatch(f"(?i){letter}", char):
                assert char.translate(secrets._FOLD).lower() == letter, (letter, hex(ord(char)))
    assert len(everything.translate(secrets._FOLD).lower()) == len(everything)


# --- one sample of each detector, each vendor rule, each shape -------------------------------

# secret type -> (path, text, the token that must not be stored)
_DISCORD = ".".join(
    [
        f"M{_token(ALNUM, 23, 'discord1')}",
        _token(ALNUM, 6, "discord2"),
        _token(ALNUM, 27, "discord3"),
    ]
)
_PUTTY = _token(ALNUM + "+/", 64, "putty-private")
DETECTOR_SAMPLES: dict[str, tuple[str, str, str]] = {
    "Artifactory Credentials": (
        "src/samples/artifactory.py",
        'RELEASE_REPO = "AP6{}"\n',
        _token(ALNUM, 58, "ap"),
    ),
    "AWS Access Key": (
        "src/samples/aws.py",
        'BOOTSTRAP = "ACCA{}"\n',
        _token(UPPER_DIGITS, 16, "acca"),
    ),
    "Azure Storage Account access key": (
        "src/samples/azure.py",
        'STORAGE = "DefaultEndpointsProtocol=https;AccountName=appstore;AccountKey={}==;'
        'EndpointSuffix=core.windows.net"\n',
        _token(ALNUM + "+/", 86, "azure"),
    ),
    "Basic Auth Credentials": (
        "src/samples/broker.py",
        'BROKER = "amqp://worker:{}@rabbit:5672/"\n',
        _token(ALNUM, 18, "amqp"),
    ),
    "Cloudant Credentials": ("src/samples/cloudant.py", 'cl_pw = "{}"\n', _token(HEX, 64, "cl")),
    "Discord Bot Token": ("src/samples/discord.py", 'BOT = "{}"\n', _DISCORD),
    "GitHub Token": ("src/samples/github.py", 'APP = "ghs_{}"\n', _token(ALNUM, 36, "ghs")),
    "GitLab Token": ("src/samples/gitlab.py", 'DEPLOY = "gldt-{}"\n', _token(ALNUM, 24, "gldt")),
    "IBM Cloud IAM Key": (
        "src/samples/ibm.py",
        'ibm_iam_key = "{}"\n',
        _token(ALNUM + "_-", 44, "ibm"),
    ),
    "IBM COS HMAC Credentials": (
        "src/samples/cos.py",
        'cos_hmac_secret_access_key = "{}"\n',
        _token(HEX, 48, "cos"),
    ),
    "JSON Web Token": ("src/samples/jwt.py", 'SESSION = "{}"\n', _jwt("jwt")),
    "Secret Keyword": ("src/samples/keyword.py", 'db_pass = "{}"\n', _token(ALNUM, 16, "kw")),
    "Mailchimp Access Key": (
        "src/samples/mailchimp.py",
        'MC = "{}-us12"\n',
        _token(HEX, 32, "mailchimp"),
    ),
    "NPM tokens": (
        "scripts/publish.sh",
        "#!/bin/sh\necho '//registry.npmjs.org/:_authToken={}' > ~/.npmrc\nnpm publish\n",
        "-".join(_token(HEX, n, f"npm{n}") for n in (8, 4, 4, 4, 12)),
    ),
    "OpenAI Token": (
        "src/samples/openai.py",
        'LLM = "sk-{}"\n',
        f"{_token(ALNUM, 20, 'oa1')}T3BlbkFJ{_token(ALNUM, 20, 'oa2')}",
    ),
    "Private Key": (
        "deploy/server.ppk",
        "PuTTY-User-Key-File-"
        + "2: ssh-rsa\nEncryption: none\nComment: deploy\nPrivate-Lines: 1\n{}\n",
        _PUTTY,
    ),
    "PyPI Token": (
        "src/samples/pypi.py",
        'UPLOAD = "pypi-AgEIcHlwaS5vcmc{}"\n',
        _token(ALNUM + "-_", 80, "pypi"),
    ),
    "SendGrid API Key": (
        "src/samples/sendgrid.py",
        'MAIL = "SG.{}"\n',
        f"{_token(ALNUM, 22, 'sg1')}.{_token(ALNUM, 43, 'sg2')}",
    ),
    "Slack Token": (
        "src/samples/slack.py",
        'BOT = "xoxb-{}"\n',
        f"{_token(string.digits, 12, 'x1')}-{_token(string.digits, 12, 'x2')}-"
        f"{_token(string.ascii_lowercase + string.digits, 24, 'x3')}",
    ),
    "SoftLayer Credentials": (
        "src/samples/softlayer.py",
        'sl_key = "{}"\n',
        _token(string.ascii_lowercase + string.digits, 64, "sl"),
    ),
    "Square OAuth Secret": (
        "src/samples/square.py",
        'SQUARE = "sq0csp-{}"\n',
        _token(ALNUM, 43, "square"),
    ),
    "Stripe Access Key": (
        "src/samples/stripe.py",
        'BILLING = "rk_live_{}"\n',
        _token(ALNUM, 24, "rk"),
    ),
    "Telegram Bot Token": (
        "src/samples/telegram.py",
        'BOT = "8412370956:{}"\n',
        "AA" + _token(ALNUM + "_-", 33, "tg"),
    ),
    "Twilio API Key": (
        "src/samples/twilio.py",
        'SMS = "SK{}"\n',
        _token(string.ascii_lowercase[:6] + string.digits, 32, "tw"),
    ),
}
# gitleaks' default rules that detect-secrets does not cover (or not in these forms)
VENDOR_SAMPLES: dict[str, tuple[str, str, str]] = {
    "twilio-api-key": (
        "src/vendor/twilio.py",
        "SMS = 'SK{}'\n",
        _token("0123456789ABCDEF", 32, "twilio-upper"),
    ),
    "telegram-bot-api-token": (
        "src/vendor/telegram.js",
        'const telegramBot = "412370:{}";\n',
        "A" + _token(string.ascii_lowercase + string.digits + "_-", 34, "telegram6"),
    ),
    "artifactory-api-key": (
        "src/vendor/artifactory.py",
        "ARTIFACTORY = 'AKCp{}'\n",
        _token(ALNUM, 69, "akcp"),
    ),
    "artifactory-reference-token": (
        "src/vendor/artifactory_ref.py",
        "ARTIFACTORY_REF = 'cmVmd{}'\n",
        _token(ALNUM, 59, "cmvmd"),
    ),
    "mailchimp-api-key": (
        "src/vendor/mailchimp.rb",
        "mailchimp_key = '{}-us21'\n",
        _token(HEX, 32, "mailchimp-gl"),
    ),
}


def _secret(name: str) -> str:
    return _token(ALNUM, 20, name)


# the shapes of item 5: (path, text, tokens)
SHAPES: dict[str, tuple[str, str, list[str]]] = {
    "yaml-block-scalar": (
        "deploy/values.yaml",
        "database:\n  host: db.internal\n  password: |\n    {0}\n  user: app\n"
        "ldap:\n  - bindPassword: >-\n      {1}\n      {2}\n    base: dc=example,dc=com\n",
        [_secret("block1"), _secret("block2"), _secret("block3")],
    ),
    "kubernetes-env-pair": (
        "deploy/deployment.yaml",
        "apiVersion: apps/v1\nkind: Deployment\nspec:\n  template:\n    spec:\n      containers:\n"
        "        - name: app\n          env:\n            - name: DB_PASSWORD\n"
        '              value: "{0}"\n            - name: LOG_LEVEL\n              value: debug\n'
        "            - value: {1}\n              name: API_TOKEN\n",
        [_secret("env1"), _secret("env2")],
    ),
    "ecs-env-pair": (
        "deploy/task-definition.json",
        '{{\n  "environment": [\n    {{\n      "name": "SMTP_PASSWORD",\n      "value": "{0}"\n'
        '    }},\n    {{"name": "API_TOKEN", "value": "{1}"}}\n  ]\n}}\n',
        [_secret("ecs1"), _secret("ecs2")],
    ),
    "json-token": (
        "config/app.json",
        '{{\n  "service": {{\n    "token": "{0}",\n    "refresh_token": "{1}"\n  }}\n}}\n',
        [_token(HEX, 40, "json1"), _secret("json2")],
    ),
    "makefile": (
        "Makefile",
        "TOKEN := {0}\nAPI_PASSWORD ?= {1}\nDEPLOY_SECRET += {2}\nREGISTRY_TOKEN = {3}\n\n"
        "deploy:\n\t./deploy.sh\n",
        [_secret("mk1"), _secret("mk2"), _secret("mk3"), _secret("mk4")],
    ),
    "docker-auths": (
        "tools/registry/config.json",
        '{{\n  "auths": {{\n    "registry.example.com": {{\n      "auth": "{0}"\n'
        "    }}\n  }}\n}}\n",
        [_b64("deployer:" + _secret("docker"))],
    ),
    "netrc-one-line": (
        "deploy/ftp-login.txt",
        "machine ftp.example.com login deployer password {0}\n",
        [_secret("netrc1")],
    ),
    "netrc-lines": (
        "tools/_netrc",
        "machine api.example.com\n  login ci-bot\n  password {0}\n",
        [_secret("netrc2")],
    ),
}
# a long line: a minified bundle, tokens at and across window edges, and a one-line JSON file
_STEP = secrets._LINE - secrets._OVERLAP
_GHP = "ghp_" + _token(ALNUM, 36, "long-ghp")
_AKIA = "AKIA" + _token(UPPER_DIGITS, 16, "long-akia")
_TELEGRAM = "5512370941:AA" + _token(ALNUM, 33, "long-tg")
_JSON_TOKEN = _token(HEX, 40, "long-json")


def _minified(size: int, placed: dict[int, str], seed: str = "bundle") -> str:
    """A line of minified JavaScript of about `size` characters, each text placed at its offset."""
    rng = random.Random(seed)
    words = ["function", "return", "var", "this", "null", "void", "new", "typeof", "e", "t", "n"]
    out: list[str] = []
    length = 0
    for at in sorted(placed):
        while length < at:
            piece = f"{rng.choice(words)}({rng.choice('abcdefg')},{rng.randint(0, 999)});"
            out.append(piece)
            length += len(piece)
        piece = f'var k{at}="{placed[at]}";'
        out.append(piece)
        length += len(piece)
    while length < size:
        piece = f"{rng.choice(words)}({rng.choice('abcdefg')},{rng.randint(0, 999)});"
        out.append(piece)
        length += len(piece)
    return "".join(out)


LONG = {
    "web/static/app.min.js": _minified(
        400_000,
        {
            100: "function markerNearTheStart(){}",
            _STEP * 50 - 20: _AKIA,  # across a window's edge
            _STEP * 120 - 300: _GHP,  # in the overlap of two windows
            380_000: _TELEGRAM,
        },
    )
    + ";function markerAtTheEnd(){}\n",
    "data/settings.json": json.dumps(
        {"first": "marker-json"}
        | {f"k{i}": f"value-{i}" for i in range(2000)}
        | {"token": _JSON_TOKEN}
    )
    + "\n",
}
LONG_TOKENS = [_AKIA, _GHP, _TELEGRAM, _JSON_TOKEN]

# real code and configuration shaped like them, with no secret: each line stays searchable
NEGATIVES = {
    "deploy/negatives.yaml": (
        "database:\n"
        "  password: |\n"
        "    {{ .Values.database.password }}\n"
        "  initScript: |\n"
        "    CREATE TABLE accounts (id int);\n"
        "env:\n"
        "  - name: DB_PASSWORD\n"
        "    valueFrom:\n"
        "      secretKeyRef:\n"
        "        name: database-credentials\n"
        "  - name: API_TOKEN\n"
        "    value: ${API_TOKEN}\n"
        "  - name: ADMIN_PASSWORD\n"
        '    value: "{{ .Values.adminPassword }}"\n'
        "  - name: LOG_LEVEL\n"
        "    value: informational\n"
    ),
    "config/negatives.json": (
        "{\n"
        '  "token": "string",\n'
        '  "password": "{{password}}",\n'
        '  "apiKey": "<your api key>",\n'
        '  "auth": "basic",\n'
        '  "authorizer": "cognito-pool",\n'
        '  "name": "SMTP_PASSWORD", "valueFrom": "arn:aws:ssm:eu-west-1:1:parameter/smtp"\n'
        "}\n"
    ),
    "mk/negatives.mk": (
        "TOKEN_FILE := ~/.config/registry/token\n"
        "API_PASSWORD ?= $(DB_PASSWORD)\n"
        "DEPLOY_TOKEN := $(shell cat deploy-token.txt)\n"
        "SECRET_NAME = release-credentials\n"
        "PASSWORD_FILE != mktemp\n"
    ),
    "src/negatives.py": (
        "def login(machine, password_field):\n"
        "    form = {'name': 'password', 'value': password_field}\n"
        "    auth = {'auth': 'basic', 'token': token_value}\n"
        "    return form, auth, machine\n"
        "STATUS_CODES = {'AC_POWER': 1, 'SKIP_LIST': 2}\n"
        "TIME = '12:34:56'\n"
    ),
    "docs/negatives.md": (
        "Machine learning login flows store the password hash only.\n"
        "The default password policy needs twelve characters.\n"
    ),
}


def _files() -> dict[str, bytes]:
    files: dict[str, str] = {}
    for path, text, token in [*DETECTOR_SAMPLES.values(), *VENDOR_SAMPLES.values()]:
        files[path] = text.format(token)
    for path, text, tokens in SHAPES.values():
        files[path] = text.format(*tokens)
    files.update(LONG)
    files.update(NEGATIVES)
    files["src/ok.py"] = "def fine():\n    return 'no secret here'\n"
    return {path: text.encode() for path, text in files.items()}


def _tokens() -> list[str]:
    out = [token for _, _, token in [*DETECTOR_SAMPLES.values(), *VENDOR_SAMPLES.values()]]
    out += [token for _, _, tokens in SHAPES.values() for token in tokens]
    return out + LONG_TOKENS


def _cli(*args) -> tuple[int, str]:
    out = io.StringIO()
    with contextlib.redirect_stdout(out):
        code = main([str(a) for a in args])
    return code, out.getvalue()


@pytest.fixture(scope="module")
def indexed(tmp_path_factory):
    """One repository with every sample, indexed once by the CLI: what search finds for each
    token and each negative line, the notes of what was removed, and the index files' bytes."""
    root = write_tree(tmp_path_factory.mktemp("shapes"), _files())
    with pytest.MonkeyPatch.context() as mp:
        mp.setenv("REPOCONTEXT_HOME", str(tmp_path_factory.mktemp("home")))
        code, _ = _cli("index", "--root", root, "--no-embed")
        assert code == 0

        def search(text: str) -> list:
            code, out = _cli("search", "--root", root, "--json", "--modality", "trigram", text)
            assert code == 0
            return json.loads(out)["results"]

        lines = {
            line.strip()
            for text in NEGATIVES.values()
            for line in text.split("\n")
            if len(line.strip()) >= 6
        }
        found = {token: search(token) for token in _tokens()}
        kept = {line: bool(search(line)) for line in lines}
        markers = {
            m: bool(search(m)) for m in ("markerNearTheStart", "markerAtTheEnd", "marker-json")
        }
        _, status = _cli("status", "--root", root, "--skipped", "--json")
        skipped = {item["path"]: item["reason"] for item in json.loads(status)["skipped_files"]}
        index = index_path(root)
        data = b"".join(
            p.read_bytes() for p in (index, index.with_name(index.name + "-wal")) if p.exists()
        )
    return {"found": found, "kept": kept, "markers": markers, "skipped": skipped, "bytes": data}


def _stored(indexed, token: str) -> list[str]:
    """Where the token is still: found by search, or in the index files' bytes."""
    where = ["search"] if indexed["found"][token] else []
    return where + (["index bytes"] if token.encode() in indexed["bytes"] else [])


@pytest.mark.parametrize("kind", sorted(DETECTOR_SAMPLES))
def test_each_detector_finds_its_sample(kind):
    path, text, token = DETECTOR_SAMPLES[kind]
    kinds = {k for _, found in secrets.find(text.format(token), path) for k in found.split(", ")}
    assert kind in kinds, (kind, kinds)


@pytest.mark.parametrize("kind", sorted(DETECTOR_SAMPLES))
def test_no_detector_sample_is_stored(indexed, kind):
    path, _, token = DETECTOR_SAMPLES[kind]
    assert _stored(indexed, token) == [], (kind, path)
    notes = [r for p, r in indexed["skipped"].items() if p == path or p.startswith(path + ":")]
    assert notes and all(r.startswith(("a secret (", "holds a private key")) for r in notes), path


@pytest.mark.parametrize("rule", sorted(VENDOR_SAMPLES))
def test_no_vendor_sample_is_stored(indexed, rule):
    path, text, token = VENDOR_SAMPLES[rule]
    assert secrets.find(text.format(token), path), rule
    assert _stored(indexed, token) == [], (rule, path)


@pytest.mark.parametrize("shape", sorted(SHAPES))
def test_no_shape_is_stored(indexed, shape):
    path, _, tokens = SHAPES[shape]
    for token in tokens:
        assert _stored(indexed, token) == [], (shape, path, token)
    assert any(key.startswith(path + ":") for key in indexed["skipped"]), (shape, path)


def test_no_token_in_a_long_line_is_stored_and_the_rest_of_the_line_stays(indexed):
    for token in LONG_TOKENS:
        assert _stored(indexed, token) == [], token
    assert indexed["markers"] == dict.fromkeys(indexed["markers"], True)


def test_the_code_shaped_like_them_stays(indexed):
    assert [line for line, kept in indexed["kept"].items() if not kept] == []
    assert not [path for path in indexed["skipped"] if path.split(":")[0] in NEGATIVES]
    assert "src/ok.py" not in indexed["skipped"]


def test_this_package_holds_no_secret():
    """Its own sources name every format (secret_rules.py): none of their lines is one."""
    package = Path(secrets.__file__).parents[1]
    for path in sorted(package.rglob("*.py")):
        assert secrets.find(path.read_text(encoding="utf-8"), path.name) == [], path


@pytest.mark.parametrize(
    ("filename", "text"),
    [
        ("a.yaml", "password: |\n  ${DB_PASSWORD}\n"),
        ("a.yaml", "password: |\n  {{ .Values.password }}\n"),
        ("a.yaml", "client_secret: !vault |\n  $ANSIBLE_VAULT;1.1;AES256\n"),
        ("a.yaml", "- name: DB_PASSWORD\n  value: $(DB_PASSWORD)\n"),
        ("a.yaml", "- name: DB_PASSWORD\n  value: <your password>\n"),
        ("a.yaml", "- name: DB_PASSWORD\n- name: OTHER\n  value: hunter2pass\n"),
        ("a.json", '{"token": "${TOKEN}"}'),
        ("a.json", '{"token": "csrf_token"}'),
        ("Makefile", "TOKEN := $(TOKEN)\nPASSWORD = ${PASSWORD}\n"),
        ("a.json", '{"auth": "bm90LWEtcGFpcg=="}'),  # base64, but not user:password
        ("notes.txt", "password reset\n"),
        ("notes.txt", "machine example.com\n  login bob\n  password $NETRC_PASSWORD\n"),
    ],
)
def test_templates_and_variables_stay(filename, text):
    assert secrets.find(text, filename) == [], (filename, text)


def test_a_token_anywhere_in_a_five_megabyte_line_is_found_in_linear_time():
    """Windows of 2,000 characters overlapping by 512: a token at each place a window's edge
    can cut it is found, and a line four times as long costs about four times as much."""
    for offset in (0, _STEP - 10, _STEP * 3 - 30, _STEP * 7 + 5):
        line = _minified(20_000, {offset: _GHP}, seed=str(offset))
        assert [n for n, _ in secrets.find(line, "app.min.js")] == [1], offset
        assert _GHP not in secrets.redact(line, "app.min.js")[0]
    seconds = {}
    for size in (1_250_000, 5_000_000):
        line = _minified(size, {size - 1000: _AKIA}, seed="speed")
        start = time.perf_counter()
        found = secrets.find(line, "vendor.min.js")
        seconds[size] = time.perf_counter() - start
        assert found and "AWS Access Key" in found[0][1]
    # linear is 4x; quadratic would be 16x (a shared machine: a wide margin)
    assert seconds[5_000_000] < 8 * seconds[1_250_000] + 0.5, seconds
