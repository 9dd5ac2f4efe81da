"""Completion context at `obj.`: the receiver's class is found across files, from annotations
and assignments, with no type checker (a real index, real tree-sitter, real files)."""

from __future__ import annotations

import pytest

from repocontext import Repository
from repocontext.context.request import CursorRequest
from repocontext.lang.typefacts import chain_before, normalize_annotation

STORE = {
    "app/__init__.py": "",
    "app/db.py": '''
        class Cursor:
            def execute(self, sql: str) -> "Rows":
                """Run one statement."""

            def fetch_all(self) -> list:
                return []


        class Rows:
            def first(self):
                return None


        class Connection:
            """A database connection."""

            timeout: float = 3.0

            def cursor(self) -> Cursor:
                return Cursor()

            def close(self) -> None:
                pass
    ''',
    "app/storage.py": '''
        from app.db import Connection


        class Backend:
            def __init__(self, conn: Connection):
                self.conn = conn

            def save(self, key, value):
                """Store value under key."""

            def load(self, key):
                return None


        class CachedBackend(Backend):
            def invalidate(self, key):
                pass
    ''',
    "app/query.py": """
        class QueryBuilder:
            def where(self, **terms) -> "QueryBuilder":
                return self

            def build(self) -> str:
                return ""


        def make_builder(spec) -> QueryBuilder:
            return QueryBuilder()
    """,
    "app/web.py": '''
        class Session:
            def get_cookie(self, name):
                """The cookie called name."""


        class Request:
            def __init__(self):
                self.session: Session = Session()
    ''',
    "app/report.py": '''
        class TextReport:
            def write_table(self, rows, header=None):
                """Rows as an aligned table."""
    ''',
}


@pytest.fixture(scope="module")
def project(tmp_path_factory):
    import os

    from conftest import write_tree

    root = write_tree(tmp_path_factory.mktemp("proj"), STORE)
    home = tmp_path_factory.mktemp("home")
    old = os.environ.get("REPOCONTEXT_HOME")
    os.environ["REPOCONTEXT_HOME"] = str(home)
    Repository(root).index()
    yield root, home
    if old is None:
        os.environ.pop("REPOCONTEXT_HOME", None)
    else:
        os.environ["REPOCONTEXT_HOME"] = old


def context_at(project, monkeypatch, buffer: str, path: str = "app/main.py"):
    """The context for a buffer whose cursor is at its very end."""
    root, home = project
    monkeypatch.setenv("REPOCONTEXT_HOME", str(home))
    lines = buffer.split("\n")
    return Repository(root).context(
        CursorRequest(path, len(lines), len(lines[-1].encode()), buffer, 1024)
    )


def shown(package) -> set[str]:
    return {s.symbol for s in package.snippets}


CASES = {
    "parameter annotation": (
        "from app.db import Connection\n\ndef run(conn: Connection):\n    conn.",
        {"Connection"},
    ),
    "Optional[X]": (
        "from typing import Optional\nfrom app.db import Connection\n\n"
        "def run(conn: Optional[Connection] = None):\n    conn.",
        {"Connection"},
    ),
    "X | None": (
        "from app.db import Connection\n\ndef run(conn: Connection | None):\n    conn.",
        {"Connection"},
    ),
    "string annotation and TYPE_CHECKING import": (
        "from typing import TYPE_CHECKING\nif TYPE_CHECKING:\n    from app.db import Connection\n\n"
        "def run(conn: 'Connection'):\n    conn.",
        {"Connection"},
    ),
    "module-qualified annotation": (
        "from app import storage\n\ndef run(backend: storage.Backend):\n    backend.",
        {"Backend"},
    ),
    "constructor": (
        "from app.report import TextReport\n\ndef run():\n    report = TextReport()\n    report.",
        {"TextReport"},
    ),
    "function with a return annotation": (
        "from app.query import make_builder\n\ndef run(spec):\n    builder = make_builder(spec)\n"
        "    builder.",
        {"QueryBuilder"},
    ),
    "with ... as": (
        "from app.db import Connection\n\ndef run():\n    with Connection() as conn:\n        conn.",
        {"Connection"},
    ),
    "self.x annotated in __init__": (
        "from app import storage\n\nclass Service:\n    def __init__(self, b):\n"
        "        self.backend: storage.Backend = b\n\n    def go(self):\n        self.backend.",
        {"Backend"},
    ),
    "self.x from an annotated parameter": (
        "from app.storage import Backend\n\nclass Service:\n    def __init__(self, b: Backend):\n"
        "        self.backend = b\n\n    def go(self):\n        self.backend.",
        {"Backend"},
    ),
    "class-level annotation": (
        "from app.db import Connection\n\nclass Service:\n    conn: Connection\n\n"
        "    def go(self):\n        self.conn.",
        {"Connection"},
    ),
    "a field of a class in another file": (
        "from app.storage import Backend\n\ndef run(b: Backend):\n    b.conn.",
        {"Connection"},
    ),
    "a method's return in a chain": (
        "from app.db import Connection\n\ndef run(conn: Connection):\n    conn.cursor().",
        {"Cursor"},
    ),
    "a string return annotation in a chain": (
        "from app.db import Connection\n\ndef run(conn: Connection):\n"
        "    conn.cursor().execute('x').",
        {"Rows"},
    ),
    "a chain of fields": (
        "from app.web import Request\n\nclass View:\n    request: Request\n\n    def go(self):\n"
        "        self.request.session.",
        {"Session"},
    ),
    "inherited from a base class": (
        "from app.storage import CachedBackend\n\ndef run(b: CachedBackend):\n    b.",
        {"CachedBackend", "Backend"},
    ),
    "super()": (
        "from app.storage import Backend\n\nclass Mine(Backend):\n    def save(self, key, value):\n"
        "        super().",
        {"Backend"},
    ),
}


@pytest.mark.parametrize("case", list(CASES))
def test_at_the_dot_the_receivers_class_outline_is_sent(project, monkeypatch, case):
    buffer, classes = CASES[case]
    package = context_at(project, monkeypatch, buffer)
    assert package.retrieved, package.skip_reason
    assert classes <= shown(package), (case, package.reasons, shown(package))


def test_once_the_method_is_called_its_definition_is_sent(project, monkeypatch):
    package = context_at(
        project,
        monkeypatch,
        "from app.web import Request\n\nclass View:\n    request: Request\n\n"
        "    def go(self):\n        self.request.session.get_cookie(",
    )
    defs = {s.symbol: s for s in package.snippets}
    assert (
        "Session.get_cookie" in defs and "The cookie called name" in defs["Session.get_cookie"].text
    )
    package = context_at(
        project,
        monkeypatch,
        "from app.db import Connection\n\ndef run(conn: Connection):\n    conn.cursor().execute(",
    )
    assert "Cursor.execute" in shown(package)


def test_an_inherited_method_comes_from_the_base_that_defines_it(project, monkeypatch):
    package = context_at(
        project,
        monkeypatch,
        "from app.storage import CachedBackend\n\ndef run(b: CachedBackend):\n    b.save(",
    )
    assert "Backend.save" in shown(package)


def test_a_partial_name_brings_the_matching_methods_even_if_the_word_is_in_this_file(
    project, monkeypatch
):
    # `load` and `loader` occur in this file: the old rule (retrieve only when nothing in the
    # file starts with the word) would skip; the receiver's class is what decides now
    package = context_at(
        project,
        monkeypatch,
        "from app.storage import Backend\n\nloader = None\n\ndef load_all(b: Backend):\n    b.loa",
    )
    assert package.retrieved
    assert "Backend.load" in shown(package)


def test_a_local_receiver_of_a_local_class_needs_nothing(project, monkeypatch):
    package = context_at(
        project,
        monkeypatch,
        "class Point:\n    def norm(self):\n        return 0\n\n"
        "def run():\n    p = Point()\n    p.",
    )
    assert not package.retrieved


def test_an_unknown_receiver_is_not_guessed(project, monkeypatch):
    package = context_at(project, monkeypatch, "def run(thing):\n    thing.")
    assert not any(s.source.startswith("member") for s in package.snippets)


def test_annotations_reduce_to_the_one_class_a_value_has():
    assert normalize_annotation("Optional[storage.Backend]") == "storage.Backend"
    assert normalize_annotation("'Repository'") == "Repository"
    assert normalize_annotation("None | Conn") == "Conn"
    assert normalize_annotation("Union[Conn, None]") == "Conn"
    assert normalize_annotation("QuerySet[Model]") == "QuerySet"
    assert normalize_annotation("list[Conn]") is None
    assert normalize_annotation("*pkg.Server") == "pkg.Server"
    assert normalize_annotation("int") is None


def test_the_expression_before_the_dot_is_read_backwards():
    assert chain_before("x = self.request.session") == (
        ("self", False),
        ("request", False),
        ("session", False),
    )
    assert chain_before("    conn.cursor()") == (("conn", False), ("cursor", True))
    assert chain_before("return super()") == (("super", True),)
    assert chain_before("f(a, b(c)).d") == (("f", True), ("d", False))
    assert chain_before("items[0]") is None


TS_PROJECT = {
    "web/db.ts": """
        export class Connection {
          constructor(private readonly url: string) {}
          cursor(): Cursor { return new Cursor(); }
          async close(): Promise<void> {}
        }
        export class Cursor {
          execute(sql: string): Rows { return new Rows(); }
        }
        export class Rows { first(): string { return ""; } }
        export interface Store {
          get(key: string): Promise<Rows>;
        }
    """,
    "web/service.ts": """
        import { Connection, Store } from "./db";

        export class Service {
          constructor(private conn: Connection, public store: Store) {}
          open(): Connection { return this.conn; }
        }
        export function makeService(): Service { return new Service(new Connection(""), null!); }
    """,
}

GO_PROJECT = {
    "go.mod": "module example.com/app\n",
    "db/conn.go": """
        package db

        // Conn is a database connection.
        type Conn struct {
            Addr string
        }

        // NewConn dials addr.
        func NewConn(addr string) *Conn { return &Conn{Addr: addr} }
    """,
    "db/query.go": """
        package db

        // Query runs sql on the connection.
        func (c *Conn) Query(sql string) (*Rows, error) { return &Rows{}, nil }

        type Rows struct{}

        // Next moves to the next row.
        func (r *Rows) Next() bool { return false }
    """,
    "server/server.go": """
        package server

        import "example.com/app/db"

        type Server struct {
            conn *db.Conn
        }
    """,
}

# `‸` marks the cursor; the code after it is what the editor has below (closing braces)
LANGUAGE_CASES = {
    "typescript parameter": (
        "web/main.ts",
        TS_PROJECT,
        'import { Connection } from "./db";\n\nfunction run(conn: Connection) {\n  conn.‸\n}\n',
        {"Connection"},
    ),
    "typescript const with new": (
        "web/main.ts",
        TS_PROJECT,
        'import { Connection } from "./db";\n\nconst conn = new Connection("x");\nconn.‸',
        {"Connection"},
    ),
    "typescript chain through a return type": (
        "web/main.ts",
        TS_PROJECT,
        'import { Connection } from "./db";\n\n'
        "function run(conn: Connection) {\n"
        "  conn.cursor().‸\n}\n",
        {"Cursor"},
    ),
    "typescript parameter property and interface": (
        "web/main.ts",
        TS_PROJECT,
        'import { makeService } from "./service";\n\nconst s = makeService();\ns.store.‸',
        {"Store"},
    ),
    "typescript super member": (
        "web/main.ts",
        TS_PROJECT,
        'import { Connection } from "./db";\n\n'
        "class Pooled extends Connection {\n"
        "  close(): Promise<void> {\n    return super.‸\n  }\n}\n",
        {"Connection"},
    ),
    "typescript inside a half-typed condition": (
        "web/main.ts",
        TS_PROJECT,
        'import { Connection } from "./db";\n\n'
        "export function run(conn: Connection, retries: number) {\n"
        "  const limit = retries * 2;\n"
        "  if (!(limit > 0 || (conn.‸\n"
        "  return limit;\n}\n",
        {"Connection"},
    ),
    "go short variable from a constructor": (
        "server/run.go",
        GO_PROJECT,
        'package server\n\nimport "example.com/app/db"\n\n'
        'func run() {\n\tc := db.NewConn("x")\n\tc.‸\n}\n',
        {"Conn"},
    ),
    "go struct field through the receiver": (
        "server/run.go",
        GO_PROJECT,
        "package server\n\nfunc (s *Server) run() {\n\ts.conn.‸\n}\n",
        {"Conn"},
    ),
}


@pytest.mark.parametrize("case", list(LANGUAGE_CASES))
def test_typescript_and_go_receivers_from_their_explicit_types(make_repo, monkeypatch, case):
    path, files, buffer, classes = LANGUAGE_CASES[case]
    root = make_repo(files)
    Repository(root).index()
    package = Repository(root).context(request_at_marker(path, buffer))
    assert package.retrieved, (case, package.skip_reason)
    assert classes <= shown(package), (case, package.reasons, shown(package))


CURSOR = "‸"


def request_at_marker(path: str, buffer: str) -> CursorRequest:
    before, after = buffer.split(CURSOR)
    lines = before.split("\n")
    return CursorRequest(path, len(lines), len(lines[-1].encode()), before + after, 1024)


def test_a_go_method_in_another_file_of_the_package_is_found(make_repo):
    root = make_repo(GO_PROJECT)
    Repository(root).index()
    head = 'package server\n\nimport "example.com/app/db"\n\nfunc run() {\n\tc := db.NewConn("x")\n'
    package = Repository(root).context(
        request_at_marker("server/run.go", head + "\tc.Query(‸)\n}\n")
    )
    assert "Conn.Query" in shown(package)
    # and the struct's outline lists that method, which the index keeps in another chunk
    package = Repository(root).context(request_at_marker("server/run.go", head + "\tc.‸\n}\n"))
    outline = next(s for s in package.snippets if s.symbol == "Conn")
    assert "func (c *Conn) Query(sql string) (*Rows, error)" in outline.text


def test_the_two_cases_from_this_repository(tmp_path, monkeypatch):
    """The issue's two cases, on this repository's own code: a local assigned from a method
    annotated to return a class of another file, and a parameter annotated with an imported
    class whose method's prefix also begins a word of the file."""
    from conftest import REPO_ROOT

    monkeypatch.setenv("REPOCONTEXT_HOME", str(tmp_path))
    repo = Repository(REPO_ROOT)
    repo.index()
    text = (REPO_ROOT / "src/repocontext/bridge.py").read_text()
    anchor = text.index("\n    def index(")
    method = "\n    def lookup(self, path):\n        session = self.session(path)\n        session.complete("
    package = repo.context(
        request_at_marker(
            "src/repocontext/bridge.py", text[:anchor] + method + "‸)\n" + text[anchor:]
        )
    )
    assert "Session.complete" in shown(package)
    text = (REPO_ROOT / "src/repocontext/session.py").read_text()
    tail = "\n\ndef g(token: CancelToken):\n    return token.can‸\n"
    package = repo.context(request_at_marker("src/repocontext/session.py", text + tail))
    assert package.retrieved and {"CancelToken.cancel", "CancelToken.cancelled"} <= shown(package)


def test_a_typescript_method_is_shown_over_an_accessor_of_the_same_name(make_repo):
    """`static widget(...)` beside `get widget()`: the outline keeps the method's signature."""
    files = {
        "web/deco.ts": """
            export class Decoration {
              static widget(pos: number, label: string): Decoration { return new Decoration(); }
              get widget(): string { return ""; }
              map(offset: number): Decoration { return this; }
            }
        """,
    }
    root = make_repo(files)
    Repository(root).index()
    buffer = 'import { Decoration } from "./deco";\n\nfunction draw(d: Decoration) {\n  d.wid‸\n}\n'
    package = Repository(root).context(request_at_marker("web/main.ts", buffer))
    outline = next(s.text for s in package.snippets if s.symbol == "Decoration")
    assert "static widget(pos: number, label: string)" in outline, outline
