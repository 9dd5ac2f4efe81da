"""Credential formats that were stored, searched and sent as context (issue 31, item 8): a URL
password with a reserved character or an empty user, an Authorization header in a script, a
`token:`/`pass:` entry in YAML, a Kubernetes Secret's data, and an unquoted assignment in a
config file, an env-like file or a shell script. Each is removed by the real indexing path
(`repocontext index`), found by neither search nor anything else, listed by `status --skipped`;
the real code lines that look like them stay. bench/secret_formats.py measures the same rules
against gitleaks' and detect-secrets' on a wider corpus."""

from __future__ import annotations

import string

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from repocontext.index import secret_rules, secrets

# format -> (files, secret values that must not be found, "path:line" notes that must be listed)
FORMATS = {
    "url-password": (
        {
            "src/settings.py": (
                "# marker: url settings\n"
                'DATABASE_URL = "postgresql://app:pw!9xQ@db.internal:5432/app"\n'
                'MYSQL_URL = "mysql://root:S3cr#t(1)@mysql:3306/app"\n'
                'MONGO_URL = "mongodb+srv://admin:M0ng0$pw@cluster0.example.net/db"\n'
                'BROKER_URL = "amqp://guest:Gu3st&pw@rabbit:5672//"\n'
                'GIT_REMOTE = "https://ci:K9!xq7@git.example.com/org/repo.git"\n'
                "\n\ndef database_url():\n    return DATABASE_URL\n"
            ),
        },
        ["pw!9xQ", "S3cr#t(1)", "M0ng0$pw", "Gu3st&pw", "K9!xq7"],
        [f"src/settings.py:{n}" for n in (2, 3, 4, 5, 6)],
    ),
    "url-empty-user": (
        {
            "src/cache.py": (
                "# marker: cache settings\n"
                'REDIS_URL = "redis://:r3disPassw0rd@cache:6379/0"\n'
                "\n\ndef redis_url():\n    return REDIS_URL\n"
            ),
            "config/cache.yaml": "# marker: cache yaml\nurl: redis://:an0therRedisPw@redis:6379\n",
        },
        ["r3disPassw0rd", "an0therRedisPw"],
        ["src/cache.py:2", "config/cache.yaml:2"],
    ),
    "authorization-header": (
        {
            "scripts/deploy.sh": (
                "#!/bin/sh\n"
                "# marker: deploy script\n"
                'curl -fsS -H "Authorization: Basic ZGVwbG95Omh1bnRlcjJwdw==" '
                "https://ci.example.com/api\n"
                "curl -H 'Authorization: Bearer a1b2c3d4e5f6g7h8i9j0k1' "
                "https://api.example.com/v1/items\n"
                "echo done\n"
            ),
        },
        ["ZGVwbG95Omh1bnRlcjJwdw", "a1b2c3d4e5f6g7h8i9j0k1"],
        ["scripts/deploy.sh:3", "scripts/deploy.sh:4"],
    ),
    "yaml-keys": (
        {
            "config/app.yaml": (
                "# marker: app yaml\n"
                "database:\n"
                "  host: db.internal\n"
                "  pass: Wh1teRabbit9\n"
                "  db_password: Hunter2Pass\n"
                "service:\n"
                "  token: 9f8e7d6c5b4a3210ff\n"
                "  apiKey: 'k3y-4bc-123x'\n"
                "environment:\n"
                "  - API_TOKEN=tok3nV4lue99\n"
            ),
        },
        ["Wh1teRabbit9", "Hunter2Pass", "9f8e7d6c5b4a3210ff", "k3y-4bc-123x", "tok3nV4lue99"],
        [f"config/app.yaml:{n}" for n in (4, 5, 7, 8, 10)],
    ),
    "kubernetes-secret": (
        {
            "deploy/secret.yaml": (
                "# marker: k8s manifests\n"
                "apiVersion: v1\n"
                "kind: Secret\n"
                "metadata:\n"
                "  name: app-credentials\n"
                "type: Opaque\n"
                "stringData:\n"
                "  token: t0k3nV4lu3xyz\n"
                "  admin-password: Adm1nP4ss!\n"
                '  config.json: \'{"user": "svc", "key": "q8W2e4R6"}\'\n'
                "data:\n"
                "  tls.key: LS0tLS1CRUdJTiBQUklWQVRFIEtFWS0tLS0t\n"
                "  db-url: cG9zdGdyZXM6Ly9kYg==\n"
                "---\n"
                "apiVersion: v1\n"
                "kind: ConfigMap\n"
                "metadata:\n"
                "  name: app-settings\n"
                "data:\n"
                "  LOG_LEVEL: verbose-logging\n"
            ),
        },
        ["t0k3nV4lu3xyz", "Adm1nP4ss", "q8W2e4R6", "LS0tLS1CRUdJTi", "cG9zdGdyZXM6Ly9kYg"],
        [f"deploy/secret.yaml:{n}" for n in (8, 9, 10, 12, 13)],
    ),
    "config-assignment": (
        {
            "etc/app.conf": (
                "# marker: app conf\n"
                "[database]\n"
                "password = Hunter2Pass\n"
                "token = c0nfT0ken55\n"
                "requirepass R3disConfPw\n"
            ),
            "etc/app.properties": "# marker: properties\ndb.pass=Pr0pS3cret\n",
            "etc/tool.toml": '# marker: toml\n[registry]\ntoken = "t0mlT0ken77"\n',
            "etc/app.cfg": "# marker: cfg\n[auth]\napi_token = cfgT0k3n\n",
            ".envrc": "# marker: envrc\nexport DB_PASSWORD=envrcPw123\n",
            "scripts/env.sh": (
                "#!/bin/sh\n# marker: env script\nexport API_TOKEN=sh3llT0ken99\n"
                "PASSWORD=plainSh3ll\n"
            ),
            "deploy/app.env.template": "# marker: env template\nSECRET_KEY=t3mpl4teK3y\n",
            "Dockerfile": "# marker: dockerfile\nFROM python:3.12\nENV DB_PASSWORD=d0ckerPw1\n",
        },
        [
            "Hunter2Pass",
            "c0nfT0ken55",
            "R3disConfPw",
            "Pr0pS3cret",
            "t0mlT0ken77",
            "cfgT0k3n",
            "envrcPw123",
            "sh3llT0ken99",
            "plainSh3ll",
            "t3mpl4teK3y",
            "d0ckerPw1",
        ],
        [
            "etc/app.conf:3",
            "etc/app.conf:4",
            "etc/app.conf:5",
            "etc/app.properties:2",
            "etc/tool.toml:3",
            "etc/app.cfg:3",
            ".envrc:2",
            "scripts/env.sh:3",
            "scripts/env.sh:4",
            "deploy/app.env.template:2",
            "Dockerfile:3",
        ],
    ),
}


def _search(cli, root, text: str) -> list:
    return cli("search", "--root", root, "--json", "--modality", "trigram", text).json()["results"]


def _removals(cli, root) -> dict[str, str]:
    status = cli("status", "--root", root, "--skipped", "--json").json()
    return {
        item["path"]: item["reason"]
        for item in status["skipped_files"]
        if item["reason"].startswith("a secret (")
    }


@pytest.mark.parametrize("name", list(FORMATS))
def test_each_format_is_removed_by_the_indexer(make_repo, cli, name):
    files, values, notes = FORMATS[name]
    root = make_repo(files)
    assert cli("index", "--root", root, "--no-embed").code == 0
    for path in files:  # each file is indexed and searchable, only its secrets' lines gone
        marker = next(line for line in files[path].split("\n") if "marker:" in line)
        assert _search(cli, root, marker.lstrip("# ")), path
    for value in values:
        assert _search(cli, root, value) == [], value
    removals = _removals(cli, root)
    assert set(notes) <= set(removals), sorted(set(notes) - set(removals))
    assert all(reason.endswith("removed from this line") for reason in removals.values())


NEGATIVES = {
    "src/negatives.py": (
        "import os\n\n\n"
        "class Connection:\n"
        "    password: str\n\n"
        "    def __init__(self, request, password=None, get_password=None):\n"
        "        password = get_password()\n"
        '        password = os.environ["APP_DB_PASSWORD"]\n'
        "        password = None\n"
        "        self.connect(password=password)\n"
        "        self.password = password\n"
        '        token = request.headers["Authorization"]\n'
        '        self.headers = {"Authorization": "Bearer " + token}\n'
        '        self.auth = f"Authorization: Bearer {token}"\n'
        '        self.public = "https://user@host.example/repo"\n'
        '        self.anonymous = "postgresql://user:@host.example/db"\n'
        '        self.dev_server = "http://localhost:5173/@vite/client"\n'
        '        self.template = "postgresql://{user}:{password}@{host}/{name}"\n'
        '        self.masked = "postgresql://scott:***@localhost/test"\n'
    ),
    "config/negatives.yaml": (
        "database:\n"
        "  password: ${DB_PASSWORD}\n"
        "  user_password: <your password>\n"
        "  passphrase: str\n"
        '  password_hint: ""\n'
        "  existingSecret: release-db-credentials\n"
        "  secretName: tls-cert-secret\n"
        "  token_url: https://auth.example.com/oauth/token\n"
        "  bypass: true\n"
        "  password_min_length: 12\n"
        "steps:\n"
        "  - uses: actions/checkout@v4\n"
        "    with:\n"
        "      token: ${{ secrets.GITHUB_TOKEN }}\n"
        "  - run: pytest --pass-through\n"
    ),
    "etc/negatives.conf": (
        "[database]\n"
        "password = %(db_password)s\n"
        "password =\n"
        "location / {\n"
        "    proxy_pass http://backend:8080;\n"
        "}\n"
    ),
    "scripts/negatives.sh": (
        "#!/bin/sh\n"
        'export PASSWORD="$1"\n'
        "TOKEN=$(cat /run/secrets/token)\n"
        "pass=0\n"
        'curl -H "Authorization: Bearer $API_TOKEN" https://api.example.com/v1\n'
    ),
}


def test_the_real_code_that_looks_like_them_stays(make_repo, cli):
    root = make_repo(NEGATIVES)
    assert cli("index", "--root", root, "--no-embed").code == 0
    assert _removals(cli, root) == {}
    for path, text in NEGATIVES.items():
        for line in text.split("\n"):
            line = line.strip()
            if len(line) >= 6:
                assert _search(cli, root, line), (path, line)


def test_the_prefilter_sees_every_line_the_new_rules_flag():
    """The new rules run on the lines the literal prefilter picks (index/secrets.py): every line
    they flag must be one it picks, and it must pick exactly the lines its pattern matches; a
    Kubernetes Secret's data is found from its `kind: Secret` line, which it picks."""
    for name, (files, _, notes) in FORMATS.items():
        for path, text in files.items():
            worth = secrets._lines_worth_a_look(text)
            lines = text.split("\n")
            want = [i for i, line in enumerate(lines) if secrets._WORTH_A_LOOK.search(line)]
            assert worth == want, path
            flagged = {number for number, _ in secrets.find(text, path)}
            assert flagged == {int(n.rsplit(":", 1)[1]) for n in notes if n.startswith(path + ":")}
            if name == "kubernetes-secret":
                assert lines.index("kind: Secret") in worth
            else:
                assert {n - 1 for n in flagged} <= set(worth), path


@pytest.mark.parametrize(
    ("filename", "line"),
    [
        ("a.yaml", "password: changeme"),
        ("a.conf", "password = x"),
        ("a.ini", "password = Hunter2Pass"),
        ("a.properties", "spring.datasource.password=pw!9"),
        ("a.py", 'r = "redis://default:p4ss!w0rd@x"'),
        ("README.md", "    export OPENAI_API_KEY=abc123def456ghi"),
        ("nginx.conf", '    proxy_set_header Authorization "Basic dXNlcjpwYXNzd29yZA==";'),
        ("jenkins.sh", "curl -fsS -u admin:Adm1nPw77x https://jenkins.example.com/api/json"),
        ("publish.py", 'NPM = "npm_8zoc8dx1k9r89ep5t5ad227jpngw41qiuxux"'),
    ],
)
def test_lines_that_are_secrets(filename, line):
    assert secrets.find(line, filename), (filename, line)


@pytest.mark.parametrize(
    ("filename", "line"),
    [
        ("a.yaml", "password: ${DB_PASSWORD}"),
        ("a.yaml", "password: <your password>"),
        ("a.yaml", "password: '{{ .Values.db.password }}'"),
        ("a.yaml", "token: your_token_here"),
        ("a.yaml", "password: ********"),
        ("a.yaml", "password: Password"),
        ("a.yaml", "client_secret: !vault |"),
        ("a.yaml", "password: *default_password"),
        ("a.yaml", "token: The token has expired"),
        ("a.cfg", 'SECRET_KEY = os.environ["SECRET_KEY"]'),
        ("a.toml", 'password = ""'),
        ("a.sh", 'PASSWORD="${DB_PASSWORD:-}"'),
        ("a.sh", "export TOKEN=$GITHUB_TOKEN"),
        ("a.py", 'url = f"https://{user}:{token}@github.com/{repo}"'),
        ("a.py", 'url = "https://user:PASSWORD@example.com"'),
        ("a.py", 'url = "http://[::1]:8080/@x"'),
        ("a.py", 'r"://[^/\\s:@]+:[^/\\s@]+@"'),
        ("a.py", 'if header.startswith("Authorization: Basic "):'),
        ("a.md", "curl -H 'Authorization: Bearer <token>' https://api.example.com"),
        ("a.sh", 'curl -u "$USER:$PASS" https://api.example.com'),
        ("a.sh", "curl -u user:password https://api.example.com"),
        ("a.md", "curl -H 'Authorization: Bearer YOUR_ACCESS_TOKEN' https://api.example.com"),
    ],
)
def test_lines_that_are_not(filename, line):
    assert secrets.find(line, filename) == [], (filename, line)


def test_a_kubernetes_secret_loses_its_values_not_its_templates_or_embedded_files():
    manifest = (
        "apiVersion: v1\n"
        "kind: Secret\n"
        "metadata:\n"
        '  name: {{ include "app.fullname" . }}\n'
        "stringData:\n"
        "  {{- if .Values.auth.enabled }}\n"
        "  password: {{ .Values.auth.password | quote }}\n"
        "  {{- end }}\n"
        "  api-key: Zq9xLm2Pw7\n"
        "  config.alloy: |\n"
        '    discovery.kubernetes "pods" {\n'
        '      role = "pod"\n'
        "    }\n"
        "  cert_file: /certs/tls.crt\n"
        "data:\n"
        "  custom-{{ $index }}.crt: {{ $pem | b64enc | quote }}\n"
        "  root-password: cm9vdC1wYXNzd29yZA==\n"
        "  ca-bundle: TUlJQ2lqQ0NBWEtnQXdJQkFnSUJBREFO\n"
    )
    found = dict(secrets.find(manifest, "templates/secret.yaml"))
    assert sorted(found) == [9, 17, 18]
    assert all("Kubernetes Secret" in kinds for kinds in found.values())
    # in a ConfigMap only the lines whose keys name a secret go
    configmap = manifest.replace("kind: Secret", "kind: ConfigMap")
    assert [number for number, _ in secrets.find(configmap, "templates/cm.yaml")] == [9, 17]


_KEY_PARTS = ["db", "api", "API", "Key", "key", "secret", "Secret", "token", "TOKEN", "pass",
              "Password", "passwd", "pwd", "access", "private", "auth", "client", "masterauth",
              "requirepass", "x", "Phrase"]  # fmt: skip
_SHAPES = ["{k}: {v}", "{k} = {v}", "{k}={v}", "export {k}={v}", "- {k}={v}", "ENV {k} {v}",
           "{k} {v}", "  {k}: '{v}'", "curl -u {k}:{v} https://h", "Authorization: Bearer {v}",
           "x://{k}:{v}@h", "redis://:{v}@h", '"{k}": "{v}"', "{k} := {v}", "{k} ?= {v}",
           '{{"name": "{k}", "value": "{v}"}}', "machine h login u password {v}",
           '"auth": "{v}"']  # fmt: skip
_NAMES = ["a.yaml", "a.conf", "a.properties", "a.sh", "Dockerfile", ".envrc", "a.py", "a.toml",
          "Makefile", "a.json"]  # fmt: skip


@settings(max_examples=400, deadline=None)
@given(
    key=st.lists(st.sampled_from(_KEY_PARTS), min_size=1, max_size=3),
    glue=st.sampled_from(["", "_", "-", ".", "__"]),
    shape=st.sampled_from(_SHAPES),
    value=st.text(
        alphabet=string.ascii_letters + string.digits + "!#$%&()*+,-./:;=?[]^_{|}~",
        min_size=1,
        max_size=16,
    ),  # fmt: skip
    name=st.sampled_from(_NAMES),
)
def test_every_line_our_rules_flag_is_one_the_prefilter_picks(key, glue, shape, value, name):
    line = shape.format(k=glue.join(key), v=value)
    if secret_rules.own_rules(line, secret_rules.family(name)):
        assert secrets._lines_worth_a_look(line) == [0], line
