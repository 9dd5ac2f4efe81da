"""The editor's definition and references look-ups (search/lookups.py): the symbol table and
the graph of a real index (SQLite, tree-sitter), no query text.

Before, `:RepoContext definition` searched for "def WORD" and `references` for "who calls
WORD": a definition the text does not spell with `def` depended on the intent's guess, and two
definitions of one name were ranked without the file the look-up came from.
"""

from __future__ import annotations

import pytest

from repocontext import Repository
from repocontext.bridge import EditorService
from repocontext.errors import QueryError
from repocontext.search.lookups import BufferPlace

TREE = {
    # a Go function and a TypeScript class: no text says "def"
    "server/config.go": """
        package server

        func ParseConfig(path string) string {
            return path
        }
    """,
    "web/session.ts": """
        export class SessionStore {
          get(key: string): string { return key; }
        }
    """,
    # `SessionStore` written as a type in three files that import it
    **{
        f"web/{n}.ts": f"""
        import {{ SessionStore }} from './session'

        export function {n}Key(store: SessionStore): string {{
          return store.get('{n}')
        }}
    """
        for n in ("cart", "user", "admin")
    },
    # `lines`: a field of Cart, read as a member in another file
    "shop/cart.py": """
        class Cart:
            def __init__(self):
                self.lines = []
    """,
    "shop/summary.py": """
        def summary(cart, lines=None):
            header = lines or "lines"
            return header, len(cart.lines)
    """,
    # `area`: a method in one file, a function in another
    "shapes/square.py": """
        class Square:
            def __init__(self, side):
                self.side = side

            def area(self):
                return self.side * self.side
    """,
    "geometry/circle.py": """
        def area(radius):
            return 3.14159 * radius * radius
    """,
    "report.py": """
        from geometry.circle import area


        def summary(r):
            return area(r)
    """,
    "drawing.py": """
        from shapes.square import Square


        def paint(side):
            return Square(side).area()
    """,
    "local.py": """
        def area(w, h):
            return w * h


        def room():
            return area(3, 4)
    """,
    # `compute_tax`: called twice, imported once
    "shop/tax.py": """
        def compute_tax(amount, rate):
            return amount * rate / 100
    """,
    "shop/checkout.py": """
        from shop.tax import compute_tax


        def checkout(subtotal):
            tax = compute_tax(subtotal, 7)
            return subtotal + tax


        def refund(subtotal):
            return -compute_tax(subtotal, 7)
    """,
    # `on_save`: only ever passed as a value, which the graph does not record as a call
    "hooks.py": """
        def on_save(event):
            return event


        HANDLERS = {"save": on_save}
    """,
    "docs/hooks.md": "# Hooks\n\nRegister on_save to hear each save.\n",
}


@pytest.fixture(scope="module")
def module_home(tmp_path_factory):
    return tmp_path_factory.mktemp("home")


@pytest.fixture(autouse=True)
def same_home(module_home, monkeypatch):
    """One index for the module (conftest gives each test a home of its own)."""
    monkeypatch.setenv("REPOCONTEXT_HOME", str(module_home))


@pytest.fixture(scope="module")
def repo(tmp_path_factory, module_home):
    from conftest import write_tree

    root = write_tree(tmp_path_factory.mktemp("lookups"), TREE)
    with pytest.MonkeyPatch.context() as mp:
        mp.setenv("REPOCONTEXT_HOME", str(module_home))
        repository = Repository(root)
        repository.index()
    return repository


def places(response) -> list[tuple[str, int]]:
    return [(r.path, r.start_line) for r in response.results]


def test_a_definition_no_text_spells_with_def_is_found(repo):
    go = repo.definition("ParseConfig", "web/session.ts")
    assert places(go)[:1] == [("server/config.go", 3)]
    assert go.results[0].kind == "function" and go.strategy == "direct"
    assert go.results[0].ranks["ast"] == 1 and go.intent == "find_definition"
    ts = repo.definition("SessionStore")
    assert places(ts) == [("web/session.ts", 1)] and ts.results[0].kind == "class"


def test_a_name_defined_twice_is_ranked_by_what_the_file_imports(repo):
    """`area` is Square's method and geometry/circle.py's function: a file importing the
    module of one gets that one first; a file defining it gets its own."""
    function, method, own = ("geometry/circle.py", 1), ("shapes/square.py", 5), ("local.py", 1)
    assert places(repo.definition("area", "report.py"))[0] == function
    assert places(repo.definition("area", "shapes/square.py"))[0] == method
    assert places(repo.definition("area", "local.py"))[0] == own
    # every definition is there, each once, whatever the file
    assert sorted(places(repo.definition("area", "report.py"))) == sorted([function, method, own])


def test_callers_come_from_the_graph_uses_before_imports(repo):
    response = repo.references("compute_tax", "shop/tax.py")
    assert response.intent == "find_references" and not response.notes
    symbols = [r.symbol for r in response.results]
    assert symbols[:2] == ["checkout", "refund"]  # the calls, then the import's chunk
    assert len(symbols) == 3 and symbols[2] is None
    assert all(r.ranks["graph"] and "textual" not in r.flags for r in response.results)
    assert "shop/tax.py" not in {r.path for r in response.results}  # the definition is not one


def test_a_thin_graph_adds_textual_matches_marked_as_such(repo):
    response = repo.references("on_save")
    assert [r.path for r in response.results] == ["hooks.py", "docs/hooks.md"]
    assert all("textual" in r.flags.split(",") for r in response.results)
    assert all(r.ranks["trigram"] and r.ranks["graph"] is None for r in response.results)
    assert response.notes == [
        "the graph holds 0 reference(s) to `on_save`; 2 chunk(s) that only name it in their "
        "text follow, marked textual"
    ]


def test_a_name_with_no_definition_says_so(repo):
    none = repo.definition("frobnicate", "report.py")
    assert none.results == [] and none.notes == ["no definition of `frobnicate` in the index"]
    wrong_case = repo.definition("square")
    assert wrong_case.results == []
    assert wrong_case.notes == [
        "no definition of `square` in the index (differently spelt: `Square`)"
    ]
    nobody = repo.references("frobnicate")
    assert nobody.results == [] and nobody.notes == ["nothing in the index refers to `frobnicate`"]
    with pytest.raises(QueryError, match="not a name"):
        repo.definition("+=")


def test_the_editors_requests_are_look_ups_with_the_shape_it_renders(repo):
    service = EditorService()
    try:
        asked = {"path": str(repo.root / "report.py"), "root": str(repo.root)}
        out = service.request("definition", asked | {"word": "area"})
        assert out["root"] == str(repo.root)
        first = out["results"][0]
        assert (first["path"], first["start_line"], first["symbol"]) == (
            "geometry/circle.py",
            1,
            "area",
        )
        refs = service.request("references", asked | {"word": "compute_tax"})
        assert [r["symbol"] for r in refs["results"]][:2] == ["checkout", "refund"]
        assert {"query", "intent", "strategy", "results", "notes"} <= set(refs)
    finally:
        service.close()


def cursor_on(repo, path: str, needle: str, word: str) -> tuple[BufferPlace, int]:
    """The buffer of `path` with the cursor on `word` in the first line holding `needle`
    (the place Neovim sends: 1-based line, byte column), and that line."""
    text = (repo.root / path).read_text()
    line = next(i for i, t in enumerate(text.split("\n"), 1) if needle in t)
    row = text.split("\n")[line - 1]
    return BufferPlace(text, line, row.index(needle) + needle.index(word)), line


def looked_up(repo, path: str, text: str, row: int, word: str):
    """`definition` and `references` of `word` (its first place on 1-based `row`) asked from
    the buffer `text`: the definition's places, and each reference's line and symbol."""
    place = BufferPlace(text, row, text.split("\n")[row - 1].index(word))
    found = places(repo.definition(word, path, place=place))
    refs = repo.references(word, path, place=place).results
    return found, [(r.start_line, r.symbol) for r in refs]


def lines_holding(repo, path: str, *needles: str) -> list[int]:
    text = (repo.root / path).read_text().split("\n")
    return [next(i for i, t in enumerate(text, 1) if n in t) for n in needles]


def test_a_local_name_is_answered_by_its_function_not_the_index(repo):
    """A parameter is in no symbol table and no graph: the index's answer for `subtotal` was
    every chunk whose text holds one, refund's too. From the buffer, it is checkout's."""
    place, _ = cursor_on(repo, "shop/checkout.py", "compute_tax(subtotal, 7)", "subtotal")
    own = lines_holding(
        repo, "shop/checkout.py", "def checkout(", "tax = compute", "return subtotal"
    )
    refs = repo.references("subtotal", "shop/checkout.py", place=place)
    assert [(r.path, r.start_line) for r in refs.results] == [("shop/checkout.py", n) for n in own]
    assert all(r.flags == "local" and r.symbol == "checkout" for r in refs.results)
    assert refs.notes == [f"`subtotal` is local to `checkout` (line {own[0]}): its 3 line(s) there"]
    found = repo.definition("subtotal", "shop/checkout.py", place=place)
    assert places(found) == [("shop/checkout.py", own[0])]
    # without the buffer, as before: the index's textual matches, refund's among them
    assert "refund" in {r.symbol for r in repo.references("subtotal", "shop/checkout.py").results}

    go, _ = cursor_on(repo, "server/config.go", "return path", "path")
    assert places(repo.definition("path", "server/config.go", place=go)) == [
        ("server/config.go", 3)
    ]
    ts, line = cursor_on(repo, "web/session.ts", "return key", "key")
    assert [r.start_line for r in repo.references("key", "web/session.ts", place=ts).results] == [
        line
    ]  # the parameter and its use share the line


def test_the_buffer_not_the_file_says_what_is_local(repo):
    """A variable just typed, not saved: the buffer's text is what is read."""
    text = (
        (repo.root / "report.py")
        .read_text()
        .replace("return area(r)", "scaled = r * 2\n    return area(scaled)")
    )
    line = text.split("\n").index("    return area(scaled)") + 1
    place = BufferPlace(text, line, len("    return area(s"))
    refs = repo.references("scaled", "report.py", place=place)
    assert [r.start_line for r in refs.results] == [line - 1, line]


def test_a_keyword_under_the_cursor_is_refused_with_a_line_saying_so(repo):
    go, _ = cursor_on(repo, "server/config.go", "func ParseConfig", "func")
    with pytest.raises(QueryError, match=r"^`func` is a keyword, not a name: put the cursor"):
        repo.references("func", "server/config.go", place=go)
    py, _ = cursor_on(repo, "shop/checkout.py", "def refund", "def")
    with pytest.raises(QueryError, match="keyword"):
        repo.definition("def", "shop/checkout.py", place=py)
    # a word that is a keyword elsewhere but a name here is looked up: TypeScript's `get`
    ts, _ = cursor_on(repo, "web/session.ts", "get(key", "get")
    assert places(repo.definition("get", "web/session.ts", place=ts)) == [("web/session.ts", 2)]
    # and a module's own names, a function's name, go to the index as before
    named, _ = cursor_on(repo, "shop/checkout.py", "def checkout", "checkout")
    assert (
        repo.definition("checkout", "shop/checkout.py", place=named).results[0].kind == "function"
    )


def test_the_editor_sends_the_buffer_and_the_cursor_with_a_look_up(repo):
    service = EditorService()
    try:
        place, _ = cursor_on(repo, "shop/checkout.py", "compute_tax(subtotal, 7)", "subtotal")
        asked = {"path": str(repo.root / "shop/checkout.py"), "root": str(repo.root)}
        asked |= {"word": "subtotal", "text": place.text, "line": place.line, "col": place.col}
        out = service.request("references", asked)
        assert [r["flags"] for r in out["results"]] == ["local"] * 3
        # no column: the line is read from its start, as `<cword>` would (no KeyError)
        without = {k: v for k, v in asked.items() if k != "col"}
        assert service.request("references", without)["results"][0]["flags"] == "local"
        with pytest.raises(QueryError, match="keyword"):
            service.request(
                "definition", asked | {"word": "return", "col": 4, "line": place.line + 1}
            )
    finally:
        service.close()


STORE_TS = """const createStore = (createState) => {
  let state
  const setState = (partial) => {
    const next = typeof partial === 'function' ? (partial as (state: S) => S)(state) : partial
    state = next
  }
  const getState = () => state
  return { setState, getState }
}
"""


def test_a_parameter_of_a_function_type_binds_nothing_in_the_code(repo):
    """`(state: S) => S` in a cast is a type: the `state` around it is still the outer
    function's `let state` (zustand's vanilla.ts), and a function given to a const is named
    by it."""
    line = STORE_TS.split("\n").index("    state = next") + 1
    place = BufferPlace(STORE_TS, line, 4)
    refs = repo.references("state", "web/store.ts", place=place)
    assert [r.start_line for r in refs.results] == [2, 4, 5, 7]
    assert {r.symbol for r in refs.results} == {"createStore"}
    assert places(repo.definition("state", "web/store.ts", place=place)) == [("web/store.ts", 2)]


def test_a_name_the_buffer_imports_from_outside_says_where_it_comes_from(repo):
    """`fmt` and `os` are defined outside the repository: "no definition" says which import
    brought the name, read from the buffer (an alias too)."""
    go = 'package server\n\nimport "fmt"\n\nfunc Show(p string) string {\n\treturn fmt.Sprint(p)\n}\n'
    found = repo.definition("fmt", "server/show.go", place=BufferPlace(go, 6, 8))
    assert found.results == []
    assert found.notes == ["no definition of `fmt` in the index; this file imports it from `fmt`"]
    py = "import os.path as osp\n\n\ndef here():\n    return osp.abspath('.')\n"
    assert repo.definition("osp", "tool.py", place=BufferPlace(py, 5, 11)).notes == [
        "no definition of `osp` in the index; this file imports it from `os.path`"
    ]


def test_a_name_imported_under_another_is_looked_up_by_its_own(repo):
    """`from geometry.circle import area as circle_area`: the index has no `circle_area`;
    its definition is circle.py's `area` (of three `area`s, the one the import names first),
    and the note says why the jump lands on another name. TypeScript's `{ X as Y }` too."""
    py = (
        "from geometry.circle import area as circle_area\n\n\n"
        "def summary(r):\n    return circle_area(r)\n"
    )
    found = repo.definition("circle_area", "report.py", place=BufferPlace(py, 5, 12))
    assert places(found)[0] == ("geometry/circle.py", 1)
    assert found.notes[0] == "`circle_area` is `area`, imported from `geometry.circle`"
    assert found.query == "circle_area"
    ts = "import { SessionStore as Store } from './session'\n\nconst s = new Store()\n"
    found = repo.definition("Store", "web/app.ts", place=BufferPlace(ts, 3, 14))
    assert places(found) == [("web/session.ts", 1)]
    assert found.notes == ["`Store` is `SessionStore`, imported from `./session`"]
    # without the buffer nothing says what `circle_area` is
    assert repo.definition("circle_area", "report.py").results == []
    # and its references are area's, named so (the graph knows the calls by that name)
    refs = repo.references("circle_area", "report.py", place=BufferPlace(py, 5, 12))
    assert refs.query == "area"
    assert refs.notes[0] == "`circle_area` is `area`, imported from `geometry.circle`"
    assert {r.path for r in refs.results} >= {"report.py", "local.py"}


# A buffer in each language whose bindings nest or whose members are plain identifiers: the
# name under the cursor (on the line marked `<-`), the lines that write it as a variable, the
# function named, where its binding is. Each also writes the name as a member (`cart.sum`,
# `this.value`) or a field on a line of its own, which is not the variable.
LOCALS = {
    "cart/total.rs": (
        "fn total(items: &[Item], rate: f64) -> f64 {\n"
        "    let (mut sum, Some(low)) = (0.0, floor(items)) else { return 0.0 };\n"
        "    for item in items {\n"
        "        sum += item.price;\n"
        "    }\n"
        "    log(cart.sum);\n"
        "    sum * rate + low // <-\n"
        "}\n"
        "fn other(sum: f64) -> f64 { sum }\n",
        "sum", "total", [2, 4, 7],
    ),
    "cart/total.c": (
        "static double total(const struct item *items, int n) {\n"
        "    double sum = 0, *last = NULL;\n"
        "    for (int i = 0; i < n; i++) {\n"
        "        sum += items[i].price;\n"
        "        log(cart->sum);\n"
        "    }\n"
        "    last = &sum;\n"
        "    return sum; // <-\n"
        "}\n",
        "sum", "total", [2, 4, 7, 8],
    ),
    "cart/total.cc": (
        "int Cart::total(const std::vector<Item>& items) {\n"
        "  auto [low, high] = bounds(items);\n"
        "  for (const auto& item : items) { low += item.price; }\n"
        "  report(this->low);\n"
        "  return low + high; // <-\n"
        "}\n",
        "low", "Cart::total", [2, 3, 5],
    ),
    "cart/Cart.java": (
        "class Cart {\n"
        "  double sum;\n"
        "  double total(List<Item> items) {\n"
        "    double sum = 0;\n"
        "    for (Item item : items) { sum += item.price; }\n"
        "    report(this.sum);\n"
        "    return sum; // <-\n"
        "  }\n"
        "}\n",
        "sum", "total", [4, 5, 7],
    ),
    "cart/total.lua": (
        "local function total(cart, rate)\n"
        "  local sum = 0\n"
        "  for _, item in ipairs(cart.items) do sum = sum + item.price end\n"
        "  print(cart.sum)\n"
        "  return sum * rate -- <-\n"
        "end\n",
        "sum", "total", [2, 3, 5],
    ),
    "cart/total.rb": (
        "def total(cart, rate = 1)\n"
        "  sum = 0\n"
        "  cart.items.each { |item| sum += item.price }\n"
        "  log(cart.sum)\n"
        "  sum * rate # <-\n"
        "end\n",
        "sum", "total", [2, 3, 5],
    ),
    "cart/total.py": (
        "def total(cart, rate=1):\n"
        "    sum = 0\n"
        "    for item in cart.items:\n"
        "        sum += item.price\n"
        "    log(cart.sum)\n"
        "    return sum * rate  # <-\n",
        "sum", "total", [2, 4, 6],
    ),
}  # fmt: skip


@pytest.mark.parametrize("path", list(LOCALS))
def test_a_local_name_is_answered_by_its_function_in_every_language_with_bindings(repo, path):
    """Rust's patterns, C's declarators, Java's, Lua's and Ruby's parameters and locals: a
    name the function binds is answered from the function, as in Python, Go and TypeScript.
    Before, `references` on Rust's `sum` listed every chunk of the repository holding a
    `sum`, and a member of the same name (`cart.sum`, `this.sum`) counted as a use."""
    text, word, function, lines = LOCALS[path]
    row = next(i for i, t in enumerate(text.split("\n"), 1) if "<-" in t)
    place = BufferPlace(text, row, text.split("\n")[row - 1].index(word))
    refs = repo.references(word, path, place=place)
    assert [r.start_line for r in refs.results] == lines
    assert {(r.symbol, r.flags) for r in refs.results} == {(function, "local")}
    # the binding that reaches the cursor: the first but in Python, where `sum += ...`
    # (line 4) binds `sum` again, as jedi's goto answers
    bound = 4 if path.endswith(".py") else lines[0]
    assert places(repo.definition(word, path, place=place)) == [(path, bound)]


def test_a_capitalised_pattern_and_a_prototype_bind_no_local(repo):
    """Rust's `None` in a pattern is a variant, not a binding; a C prototype inside a
    function declares a function, not a variable: both go to the index."""
    rust = "fn f(x: Option<u8>) -> u8 {\n    match x { None => 0, Some(n) => n }\n}\n"
    found = repo.references("None", "cart/f.rs", place=BufferPlace(rust, 2, 14))
    assert "local" not in {r.flags for r in found.results}
    c = "int f(void) {\n    int helper(int);\n    return helper(1);\n}\n"
    found = repo.references("helper", "cart/f.c", place=BufferPlace(c, 3, 11))
    assert "local" not in {r.flags for r in found.results}
    assert repo.references("n", "cart/f.rs", place=BufferPlace(rust, 2, 35)).results[0].flags == (
        "local"
    )


# A buffer in each language that reads a field its own type declares: the field's name, the
# line of the read (`<-`), the declaring type, the line that declares it.
FIELDS = {
    "cart/Cart.java": (
        "class Cart {\n"
        "  private final Map<String, Line> lines = new HashMap<>();\n"
        "  Line get(String sku) {\n"
        "    return lines.get(sku); // <-\n"
        "  }\n"
        "}\n",
        "lines", "Cart", 2,
    ),
    "cart/cart.go": (
        "package cart\n\n"
        "type Cart struct {\n"
        "\towner string\n"
        "\tlines map[string]Line\n"
        "}\n\n"
        "func (c *Cart) Get(sku string) Line {\n"
        "\treturn c.lines[sku] // <-\n"
        "}\n",
        "lines", "Cart", 5,
    ),
    "cart/cart.c": (
        "typedef struct {\n"
        "    const char *owner;\n"
        "    struct line *lines[16];\n"
        "} cart;\n\n"
        "struct line *get(cart *c, int i) {\n"
        "    return c->lines[i]; // <-\n"
        "}\n",
        "lines", "cart", 3,
    ),
    "cart/cart.rs": (
        "pub struct Cart {\n"
        "    lines: Vec<Line>,\n"
        "}\n\n"
        "impl Cart {\n"
        "    pub fn get(&self, i: usize) -> &Line {\n"
        "        &self.lines[i] // <-\n"
        "    }\n"
        "}\n",
        "lines", "Cart", 2,
    ),
    "cart/cart.ts": (
        "export class Cart {\n"
        "  private lines = new Map<string, Line>()\n"
        "  get(sku: string) {\n"
        "    return this.lines.get(sku) // <-\n"
        "  }\n"
        "}\n",
        "lines", "Cart", 2,
    ),
    "cart/cart.py": (
        "class Cart:\n"
        "    def __init__(self):\n"
        "        self.lines = {}\n\n"
        "    def get(self, sku):\n"
        "        self.lines.setdefault(sku, 0)\n"
        "        return self.lines[sku]  # <-\n",
        "lines", "Cart", 3,
    ),
}  # fmt: skip


@pytest.mark.parametrize("path", list(FIELDS))
def test_a_field_the_buffer_declares_is_its_definition(repo, path):
    """The index holds definitions, not fields: `definition` on Gson's `typeTokenCache`
    said there was none. A field the buffer declares is answered from the declaration,
    named by its type."""
    text, word, owner, line = FIELDS[path]
    row = next(i for i, t in enumerate(text.split("\n"), 1) if "<-" in t)
    place = BufferPlace(text, row, text.split("\n")[row - 1].index(word))
    found = repo.definition(word, path, place=place)
    assert places(found) == [(path, line)]
    assert [(r.symbol, r.kind, r.flags) for r in found.results] == [
        (f"{owner}.{word}", "field", "field")
    ]
    assert found.notes == [f"`{word}` is a field of `{owner}`, declared in this file"]
    # read as a member in its type's code (not Java's bare `lines`, nor in C, which has no
    # methods): its references are the buffer's lines that use it so, not every chunk that
    # holds the word
    members = [i for i, t in enumerate(text.split("\n"), 1) if f".{word}" in t]
    refs = repo.references(word, path, place=place)
    if members:
        assert [(r.start_line, r.flags) for r in refs.results if r.path == path] == [
            (n, "field") for n in sorted({line, *members})
        ]


def test_a_member_read_in_its_types_code_is_that_types_field_not_a_function_elsewhere(repo):
    """`self.area`, `c.name`: the field of the type the cursor is in, though the index holds
    functions of that name (geometry's `area`; before, `definition` on the repocontext's own
    `self.root` jumped to a `root` constant of a bench script). The same name written bare
    (`area(2)`) is the index's; a field the buffer declares in another type only comes where
    the index has nothing."""
    py = "class Shape:\n    area = 0\n\n    def show(self):\n        return self.area + area(2)\n"
    line = py.split("\n")[4]
    member = repo.definition("area", "cart/shape.py", place=BufferPlace(py, 5, line.index("area")))
    assert [(r.symbol, r.start_line) for r in member.results] == [("Shape.area", 2)]
    bare = repo.definition("area", "cart/shape.py", place=BufferPlace(py, 5, line.rindex("area")))
    assert "field" not in {r.kind for r in bare.results} and bare.results
    # a member is never the parameter of its name (`self.root = root` read `root` as local)
    init = "class Repo:\n    def __init__(self, root):\n        self.root = root\n"
    found = repo.definition("root", "cart/repo.py", place=BufferPlace(init, 3, 13))
    assert [(r.symbol, r.kind) for r in found.results] == [("Repo.root", "field")]
    go = (
        "package cart\n\n"
        "type Line struct {\n\tname string\n}\n\n"
        "type Cart struct {\n\tname string\n}\n\n"
        "func (c Cart) Label() string { return c.name }\n"
        "func label(l Line) string { return l.name }\n"
    )
    method = go.split("\n")[10]
    found = repo.definition("name", "cart/cart.go", place=BufferPlace(go, 11, method.index("name")))
    assert [(r.symbol, r.start_line) for r in found.results] == [("Cart.name", 8)]
    # outside both types' code, and nothing in the index: the buffer's fields of that name
    plain = go.split("\n")[11]
    found = repo.definition("name", "cart/cart.go", place=BufferPlace(go, 12, plain.index("name")))
    assert {r.symbol for r in found.results} == {"Cart.name", "Line.name"}


# a name bound by a function in a way a plain parameter is not: Rust's `self`, bound by the
# method's `&self` (the grammar's `self`, no identifier); a type declared in a function's
# body (zustand's createStoreImpl declares `type TState`, written in its types), which the
# index does not hold and whose textual matches were other functions' own TState
RECEIVERS_AND_TYPES = {
    "cart/parser.rs": (
        "impl Parser {\n"
        "    fn peek(&mut self) -> u8 {\n"
        "        let b = self.buf[self.at];\n"
        "        b\n"
        "    }\n"
        "    fn next(&mut self) -> u8 { self.at += 1; self.peek() }\n"
        "}\n",
        3, "self", 2, [(2, "peek"), (3, "peek")],
    ),
    "web/store.ts": (
        "const createStore = (createState) => {\n"
        "  type TState = ReturnType<typeof createState>\n"
        "  let state: TState\n"
        "  const getState = (): TState => state\n"
        "  return { getState }\n"
        "}\n",
        4, "TState", 2, [(n, "createStore") for n in (2, 3, 4)],
    ),
    "cart/run.go": (
        "package m\n\nfunc run() int {\n\ttype pair struct{ a, b int }\n\tp := pair{1, 2}\n"
        "\treturn p.a\n}\n",
        5, "pair", 4, [(4, "run"), (5, "run")],
    ),
}  # fmt: skip


@pytest.mark.parametrize("path", list(RECEIVERS_AND_TYPES))
def test_a_receiver_and_a_local_type_are_answered_from_their_function(repo, path):
    """Not "no definition of `self` in the index", not other functions' TState."""
    text, row, word, bound, uses = RECEIVERS_AND_TYPES[path]
    assert looked_up(repo, path, text, row, word) == ([(path, bound)], uses)


def test_a_types_references_include_where_it_is_written_as_a_type(repo):
    """The graph records a type's imports, calls and bases, not the signatures that name it:
    SessionStore's references were its three imports and no function that takes one."""
    refs = repo.references("SessionStore", "web/session.ts")
    textual = {(r.path, r.symbol) for r in refs.results if "textual" in r.flags}
    assert textual >= {(f"web/{n}.ts", f"{n}Key") for n in ("cart", "user", "admin")}
    assert [r.flags for r in refs.results[:3]] == ["", "", ""]  # the graph's first


def test_a_fields_references_elsewhere_are_the_lines_that_read_it_as_a_member(repo):
    """Cart's `self.lines`: its file's lines, then summary.py at the line that reads
    `cart.lines`, not at its parameter or its string of the same word."""
    text = (repo.root / "shop/cart.py").read_text()
    refs = repo.references("lines", "shop/cart.py", place=BufferPlace(text, 3, 13))
    assert [(r.path, r.start_line, r.flags) for r in refs.results] == [
        ("shop/cart.py", 3, "field"),
        ("shop/summary.py", 3, "textual"),
    ]


# a name bound more than once in a function, and which binding reaches the use (`<-`): the
# last one before it that runs whichever branch is taken, as jedi's goto answers
REBOUND = """def fetch(url, retries=3):
    if isinstance(url, bytes):
        url = url.decode()
        log(url)  # <- 3
    else:
        url = str(url)  # <- 1
    try:
        body = get(url)
    except Timeout as e:
        log(e)  # <- 9
    except OSError as e:
        log(e)  # <- 11
    if retries:
        url = url.strip()
    verify = (
        body
        or url  # <- 1
    )
    return verify
"""


def test_a_rebound_local_is_defined_where_the_binding_that_reaches_it_is():
    """requests' prepare_url rebinds `url` in an `if` and its `else`; an `except ... as e`
    binds `e` in each clause. The first binding answered every use before; jedi's goto (the
    oracle of bench/lookups.py) answers the one that reaches it."""
    from repocontext.lang.locals import word_at

    lines = REBOUND.split("\n")
    for row, line in enumerate(lines, 1):
        if "# <-" not in line:
            continue
        word = line.split("log(")[1].split(")")[0] if "log(" in line else "url"
        col = line.index(word, line.index("(") if "(" in line else 0)
        expected = int(line.rsplit("<- ", 1)[1])
        local = word_at(REBOUND, "python", row, col, word).local
        assert local is not None and local.bound_at == expected, (row, word, local)


def test_a_nested_function_is_a_name_of_the_function_it_is_written_in():
    """click's `invoke` defines `_process_result` in its body and calls it: the index holds
    no such function, and the name was taken for the nested function's own (nothing local).
    Its definition is the `def` line; on that name itself too."""
    from repocontext.lang.locals import word_at

    text = "def invoke(ctx):\n    def _process(value):\n        return value\n\n    return _process(ctx)\n"
    for row, col in ((5, 11), (2, 8)):
        local = word_at(text, "python", row, col, "_process").local
        assert local is not None and (local.function, local.bound_at) == ("invoke", 2)
        assert local.lines == (2, 5)


def test_a_module_named_in_an_import_is_its_file(repo):
    """`from geometry.circle import area` on `circle`: no symbol has the module's name; the
    index's resolved import of the file is the answer, at its first line (jedi's goto)."""
    text = (repo.root / "report.py").read_text()
    found = repo.definition("circle", "report.py", place=BufferPlace(text, 1, 14))
    assert [(r.path, r.start_line, r.kind) for r in found.results] == [
        ("geometry/circle.py", 1, "module")
    ]
    assert found.notes == ["`circle` is the module this file imports, `geometry/circle.py`"]


def test_a_keyword_arguments_name_is_the_callees_parameter(repo):
    """`compute_tax(amount=subtotal, rate=7)` on `rate`, `Square(side=2)` on `side`: the
    parameter the name gives a value to (jedi's goto), not a local of that name; a class
    call's is its `__init__`'s."""
    text = (
        "from shop.tax import compute_tax\n\n\n"
        "def charge(rate):\n"
        "    return compute_tax(amount=1, rate=rate) + Square(side=2).area()\n"
    )
    line = text.split("\n")[4]
    found = repo.definition(
        "rate", "shop/charge.py", place=BufferPlace(text, 5, line.index("rate"))
    )
    assert places(found) == [("shop/tax.py", 1)]
    assert found.notes == ["`rate` names a parameter of `compute_tax`"]
    found = repo.definition(
        "side", "shop/charge.py", place=BufferPlace(text, 5, line.index("side"))
    )
    assert places(found) == [("shapes/square.py", 2)]
    # the value given is the local, as before
    value = repo.definition(
        "rate", "shop/charge.py", place=BufferPlace(text, 5, line.rindex("rate"))
    )
    assert places(value) == [("shop/charge.py", 4)]
