"""JavaScript and TypeScript definitions that are not plain declarations (issue 52, causes S
and D of bench/results/search_misses_go_ts.md): object literals, functions behind a cast,
class fields holding functions, functions nested in a function, JSDoc one blank line above;
and no line of a container left out of every chunk, in any language."""

from __future__ import annotations

import re

import pytest

from repocontext import Repository
from repocontext.lang.chunking import SPLIT_CHARS, Chunk, chunk_file
from repocontext.lang.symbols import extract_symbols
from repocontext.search.lookups import definition
from repocontext.search.retrievers import Query, SymbolRetriever

# a line that only closes what was opened above: no window is made of it alone
_CLOSER = re.compile(r"^\s*(?:[)\]};,]*|end)\s*$")


def named(chunks: list[Chunk]) -> list[tuple]:
    return [(c.kind, c.qualname, c.start_line, c.end_line) for c in chunks if c.qualname]


_COMMENT_MARKS = re.compile(r"^\s*(?:/\*\*?|\*/|\*|///?|#)\s*|\s*\*/\s*$")


def in_a_doc(line: str, chunks: list[Chunk]) -> bool:
    """A doc comment's line, held as a definition's `doc` (its lines make no window)."""
    words = _COMMENT_MARKS.sub("", line).strip()
    return not words or any(c.doc and words in c.doc for c in chunks)


def lost_lines(text: str, chunks: list[Chunk]) -> list[int]:
    """Lines with code on them that no chunk both spans and holds the text of, nor holds as
    its doc."""
    return [
        i
        for i, line in enumerate(text.split("\n"), 1)
        if line.strip()
        and not _CLOSER.match(line)
        and not any(c.start_line <= i <= c.end_line and line in c.text for c in chunks)
        and not in_a_doc(line, chunks)
    ]


def lines_in_two_chunks(chunks: list[Chunk]) -> list[int]:
    """Lines two different definitions claim (one's own windows overlap by design, and so
    do the module's)."""
    owners: dict[int, set] = {}
    for c in chunks:
        for i in range(c.start_line, c.end_line + 1):
            owners.setdefault(i, set()).add(c.qualname)
    return sorted(i for i, o in owners.items() if len(o) > 1)


LITERALS = """\
const errors = {
  0: "Illegal state",
  1: "Immer drafts cannot have computed properties",
}

export const objectTraps = {
  get(state, prop) {
    return state[prop]
  },
  set: (state, prop, value) => {
    state[prop] = value
    return true
  },
}

const lower = 5
"""


@pytest.mark.parametrize("language", ["javascript", "typescript", "tsx"])
def test_module_level_object_literals_are_constants_and_a_short_one_stays_whole(language):
    """`const errors = { 0: "Illegal state", ... }` held immer's messages in an anonymous
    window, and `objectTraps` was no name at all: both are constants now, each one chunk."""
    chunks = chunk_file(LITERALS, language)
    assert named(chunks) == [
        ("constant", "errors", 1, 4),
        ("constant", "objectTraps", 6, 14),
        ("constant", "lower", 16, 16),
    ]
    traps = next(c for c in chunks if c.qualname == "objectTraps")
    assert "return state[prop]" in traps.text  # short: the methods stay in it
    assert lost_lines(LITERALS, chunks) == []


def test_a_typed_object_literal_with_a_cast_is_a_constant():
    text = (
        "export const objectTraps: ProxyHandler<ProxyState> = {\n"
        "  get(state, prop) { return state[prop] },\n"
        "} as const\n"
    )
    assert named(chunk_file(text, "typescript")) == [("constant", "objectTraps", 1, 3)]


def test_an_object_literal_inside_a_function_is_no_symbol():
    text = "function f() {\n  const table = { a: 1 }\n  return table\n}\n"
    assert named(chunk_file(text, "typescript")) == [("function", "f", 1, 4)]


@pytest.mark.parametrize("language", ["javascript", "typescript"])
def test_a_long_object_literal_is_cut_at_its_methods_and_its_other_lines_keep_its_name(
    language,
):
    """A literal too long for one chunk: its methods and function-valued properties are
    chunks named `objectTraps.get` (as class methods are); its other properties are windows
    that carry its name; no line is lost."""
    filler = "".join(
        f'  key{i}: "the message number {i}, long enough to fill a window",\n' for i in range(100)
    )
    text = (
        "export const objectTraps = {\n"
        "  get(state, prop) {\n"
        "    return state[prop]\n"
        "  },\n" + filler + '  "delete-it": function (state, prop) {\n'
        "    return true\n"
        "  },\n"
        "}\n"
    )
    assert len(text) > SPLIT_CHARS
    chunks = chunk_file(text, language)
    got = named(chunks)
    assert got[0] == ("constant", "objectTraps", 1, 1)
    assert ("method", "objectTraps.get", 2, 4) in got
    assert ("method", "objectTraps.delete-it", 105, 107) in got
    rest = [c for c in chunks if c.qualname == "objectTraps" and c.start_line > 1]
    assert rest and rest[0].start_line == 5 and rest[-1].end_line == 104
    assert all(c.kind == "constant" for c in rest)
    assert "get(state, prop) ..." in chunks[0].text  # the outline names its methods
    assert lost_lines(text, chunks) == []
    assert lines_in_two_chunks(chunks) == []


CASTS = """\
export const createStore = ((createState) =>
  createState ? createStoreImpl(createState) : createStoreImpl) as CreateStore

export const create = (<T,>(createState: T) => createState) as Create

const checked = ((x: number) => x + 1) satisfies Step

const sure = (function named() { return 1 })!
"""


@pytest.mark.parametrize("language", ["typescript", "tsx"])
def test_functions_behind_a_cast_or_parentheses_are_functions(language):
    """zustand's `createStore = ((createState) => ...) as CreateStore`: the identifier query
    `createStore` found the type `CreateStore` and only an anonymous window of the function."""
    assert named(chunk_file(CASTS, language)) == [
        ("function", "createStore", 1, 2),
        ("function", "create", 4, 4),
        ("function", "checked", 6, 6),
        ("function", "sure", 8, 8),
    ]


def test_a_function_behind_an_angle_bracket_assertion_is_a_function():
    text = "const f = <Handler>((req) => req.body)\nexports.g = ((x) => x) as G\n"
    assert named(chunk_file(text, "typescript")) == [
        ("function", "f", 1, 1),
        ("function", "exports.g", 2, 2),
    ]


CLASS_TS = """\
export class Immer {
  autoFreeze_: boolean = true

  constructor(config?: { autoFreeze?: boolean }) {
    this.autoFreeze_ = true
  }

  /**
   * Curried or not.
   */
  produce: IProduce = (base: any, recipe?: any) => {
    return recipe(base)
  }

  // between two members
  spa = this.safeParseAsync

  static create = (checks: Check[]) => {
    return new Immer()
  }
}
"""


def test_class_fields_holding_functions_are_methods_and_no_class_line_is_lost():
    """immer's `produce: IProduce = (...) => {...}` and zod's `static create = (...) => ...`
    were in no chunk at all: the class's whole span counted as covered while its outline
    held only the header and the members' signatures (zod's types.ts lost 308 lines)."""
    chunks = chunk_file(CLASS_TS, "typescript")
    assert named(chunks) == [
        ("class", "Immer", 1, 3),
        ("method", "Immer.constructor", 4, 6),
        ("method", "Immer.produce", 11, 13),
        ("method", "Immer.create", 18, 20),
    ]
    produce = next(c for c in chunks if c.qualname == "Immer.produce")
    assert produce.doc == "Curried or not."
    assert produce.text.lstrip().startswith("produce: IProduce")
    windows = [(c.kind, c.start_line, c.end_line) for c in chunks if not c.qualname]
    # the JSDoc of produce (lines 8-10) is its doc: no window of its own to outrank it
    assert windows == [("code", 14, 17)]
    assert "spa = this.safeParseAsync" in next(c for c in chunks if c.start_line == 14).text
    assert lost_lines(CLASS_TS, chunks) == []
    assert lines_in_two_chunks(chunks) == []


def test_javascript_class_fields_holding_functions_are_methods():
    text = (
        "class ZodString {\n"
        "  count = 0\n"
        "  static create = (params) => {\n"
        "    return new ZodString(params)\n"
        "  }\n"
        "  #check = function (input) { return input }\n"
        "}\n"
    )
    assert named(chunk_file(text, "javascript")) == [
        ("class", "ZodString", 1, 2),
        ("method", "ZodString.create", 3, 5),
        ("method", "ZodString.#check", 6, 6),
    ]


@pytest.mark.parametrize(
    ("language", "text", "between"),
    [
        (
            "python",
            "class Loader:\n    def load(self):\n        return 1\n\n"
            "    retries = 3  # a class attribute after a method\n\n"
            "    def ready(self):\n        return True\n",
            "retries = 3",
        ),
        (
            "rust",
            "struct Config;\n\nimpl Config {\n    fn load(&self) -> u8 {\n        1\n    }\n\n"
            "    // Kept apart from what follows.\n\n    fn ready(&self) -> bool {\n"
            "        true\n    }\n}\n",
            "// Kept apart from what follows.",
        ),
    ],
)
def test_container_lines_outside_members_are_windows_in_every_language(language, text, between):
    """What a class or impl holds outside its members (a class attribute, a doc comment the
    member does not span) is a window of its own, and no line is in two chunks."""
    chunks = chunk_file(text, language)
    assert lost_lines(text, chunks) == []
    assert lines_in_two_chunks(chunks) == []
    assert any(between in c.text for c in chunks if c.kind == "code")


def test_a_class_header_longer_than_its_outline_loses_no_line():
    """The outline is cut at SPLIT_CHARS: header lines past the cut are windows now, where
    the class's span used to claim them with no chunk holding their text."""
    doc = "".join(
        f"    line {i} of a very long class docstring, with words in it.\n" for i in range(150)
    )
    text = f'class Big:\n    """\n{doc}    """\n\n    def method(self):\n        return 1\n'
    chunks = chunk_file(text, "python")
    assert lost_lines(text, chunks) == []
    assert lines_in_two_chunks(chunks) == []
    assert named(chunks)[-1] == ("method", "Big.method", 155, 156)


NESTED = """\
export function enablePatches() {
  const REPLACE = "replace"
  function generateArrayPatches(state: any, patches: any[]) {
    function deeper() {}
    return patches
  }
  const applyPatches_ = (draft: any, patches: any[]) => {
    return draft
  }
  class Local {
    method() {}
  }
  const LIMIT = 3
  loadPlugin("Patches", { applyPatches_, generateArrayPatches })
}

const createStoreImpl = (createState) => {
  let state
  const setState = (partial, replace) => {
    state = partial
  }
  const getState = () => state
  return { setState, getState }
}
"""


def test_functions_nested_in_a_function_are_named_outer_dot_inner():
    """immer's plugins hold their real functions inside one function each, and zustand's
    `setState` is inside `createStoreImpl`: one level of nesting is walked, for functions
    only (a class or a constant in the body is none, nor a function nested deeper)."""
    chunks = chunk_file(NESTED, "typescript")
    assert named(chunks) == [
        ("function", "enablePatches", 1, 2),
        ("function", "enablePatches.generateArrayPatches", 3, 6),
        ("function", "enablePatches.applyPatches_", 7, 9),
        ("function", "enablePatches", 10, 15),
        ("function", "createStoreImpl", 17, 18),
        ("function", "createStoreImpl.setState", 19, 21),
        ("function", "createStoreImpl.getState", 22, 22),
        ("function", "createStoreImpl", 23, 24),
    ]
    outline = chunks[0]
    assert "function generateArrayPatches(state: any, patches: any[]) ..." in outline.text
    rest = next(c for c in chunks if c.qualname == "enablePatches" and c.start_line == 10)
    assert 'loadPlugin("Patches"' in rest.text  # the outer's own code keeps its name
    inner = next(c for c in chunks if c.qualname == "enablePatches.generateArrayPatches")
    assert inner.name == "generateArrayPatches"
    assert lost_lines(NESTED, chunks) == []
    assert lines_in_two_chunks(chunks) == []


def test_nested_functions_in_javascript_and_a_function_without_any_stays_whole():
    text = (
        "function createApplication() {\n"
        "  var app = function (req, res) { app.handle(req, res) }\n"
        "  app.init = function () {}\n"
        "  return app\n"
        "}\n"
        "function plain() {\n  return 1\n}\n"
    )
    assert named(chunk_file(text, "javascript")) == [
        ("function", "createApplication", 1, 1),
        ("function", "createApplication.app", 2, 2),
        ("function", "createApplication", 3, 5),
        ("function", "plain", 6, 8),
    ]


def test_python_and_go_functions_keep_their_nested_functions_inside():
    py = "def outer():\n    def inner():\n        return 1\n    return inner\n"
    assert named(chunk_file(py, "python")) == [("function", "outer", 1, 4)]
    go = (
        "package p\n\nfunc Outer() int {\n\tinner := func() int { return 1 }\n\treturn inner()\n}\n"
    )
    assert named(chunk_file(go, "go")) == [("function", "Outer", 3, 6)]


def test_a_bare_name_finds_a_nested_function(make_repo):
    """`generateArrayPatches` (not `enablePatches.generateArrayPatches`) is what a user and
    a question name: the symbol table's name is the last part, as `method` finds
    `Class.method`."""
    root = make_repo({"src/plugins/patches.ts": NESTED})
    repo = Repository(root)
    repo.index()
    with repo.open_store() as store:
        found = definition(store, "generateArrayPatches")
        assert [(r.symbol, r.start_line) for r in found.results] == [
            ("enablePatches.generateArrayPatches", 3)
        ]
        ranked = SymbolRetriever(store).search(Query(text="setState", limit=5))
        assert [h.qualname for h in ranked.hits][:1] == ["createStoreImpl.setState"]


JSDOC = """\
/**
 * Define a command.
 */

function command(nameAndArgs) {
  return nameAndArgs
}

/**
 * Two blank lines away.
 */


function far() {}

/** Code in between. */
const x = 1

function afterCode() {}

// A line comment, one blank line away.

function lineComment() {}

class Command {
  /**
   * Parse options from `argv`.
   */

  parseOptions(argv) {
    return argv
  }
}
"""


@pytest.mark.parametrize("language", ["javascript", "typescript"])
def test_jsdoc_one_blank_line_above_is_the_doc(language):
    """commander and express leave a blank line between `*/` and the definition: 29 answer
    symbols lost their doc, and commander's `.d.ts` (doc directly above) outranked the code.
    Two blank lines, code in between, or a `//` comment: no doc."""
    docs = {c.qualname: c.doc for c in chunk_file(JSDOC, language) if c.qualname}
    assert docs == {
        "command": "Define a command.",
        "far": None,
        "x": "Code in between.",
        "afterCode": None,
        "lineComment": None,
        "Command": None,
        "Command.parseOptions": "Parse options from `argv`.",
    }


def test_a_blank_line_before_a_comment_still_cuts_the_doc_in_other_languages():
    text = "/// Parse it.\n\nfn parse() {}\n"
    assert [s.doc for s in extract_symbols(text.encode(), "rust")] == [None]
    text = "/** Parse it. */\n\nint parse(void) { return 0; }\n"
    assert [s.doc for s in extract_symbols(text.encode(), "c")] == [None]


@pytest.mark.parametrize(
    "language, text, doc",
    [
        (
            "rust",
            "struct Config;\n\nimpl Config {\n    fn load(&self) -> u8 {\n        1\n    }\n\n"
            "    /// Whether it is ready.\n    fn ready(&self) -> bool {\n        true\n    }\n}\n",
            "Whether it is ready.",
        ),
        (
            "go",
            "package x\n\n// Walk visits every route of the tree.\nfunc Walk() error {\n"
            "\treturn nil\n}\n",
            "Walk visits every route of the tree.",
        ),
        (
            "javascript",
            "class Command {\n  run() {\n    return 1\n  }\n\n  /**\n   * Define a subcommand.\n"
            "   */\n\n  command(name) {\n    return name\n  }\n}\n",
            "Define a subcommand.",
        ),
    ],
)
def test_a_doc_comment_is_its_definitions_doc_and_no_window_of_its_own(language, text, doc):
    """A doc comment taken as a definition's doc was also a window of its own, with the
    question's words and no name: in commander's and express's classes (whose JSDoc became
    windows once a class's span stopped hiding its lines) and serde_json's impls, those
    windows took the places of the methods they describe."""
    chunks = chunk_file(text, language)
    assert [c.doc for c in chunks if c.doc] == [doc]
    assert not any(doc in c.text for c in chunks if c.kind == "code")
    assert lost_lines(text, chunks) == []


BINDINGS = """\
var Route = require('./route')
var debug = require('debug')('app:router')
const cuid2Regex = /^[a-z][a-z0-9]*$/
/** The pattern an email address must match. */
const emailRegex =
  /^[^@]+@[^@]+$/i
export const finishDraft = immer.finishDraft.bind(immer)
let seen = 0
const { parse, stringify } = JSON

function check(value) {
  const local = value.trim()
  return cuid2Regex.test(local)
}
"""


@pytest.mark.parametrize("language", ["javascript", "typescript"])
def test_module_level_bindings_are_definitions_and_a_require_is_an_import(language):
    """zod's `const cuid2Regex = /.../` and immer's `export const finishDraft = ...bind()`
    were no symbol: `where is cuid2Regex defined` found nothing by name, and the bug report
    about the pattern could not be answered with it. Every module-level binding with a plain
    name is one now, its leading comment its doc; `require(...)` is an import (express's
    `var Route = require('./route')` must not outrank the class), a destructuring names no
    one thing, and a function's own locals stay inside it."""
    chunks = chunk_file(BINDINGS, language)
    assert named(chunks) == [
        ("constant", "cuid2Regex", 3, 3),
        ("constant", "emailRegex", 5, 6),
        ("constant", "finishDraft", 7, 7),
        ("variable", "seen", 8, 8),
        ("function", "check", 11, 14),
    ]
    email = next(c for c in chunks if c.qualname == "emailRegex")
    assert email.doc == "The pattern an email address must match."
    assert "/^[^@]+@[^@]+$/i" in email.text
    assert lost_lines(BINDINGS, chunks) == []


CURRIED = """\
const persistImpl = (config, baseOptions) => (set, get, api) => {
  const hydrate = () => {
    return get()
  }
  const setItem = () => {
    return set({})
  }
  return hydrate()
}
"""


def test_the_functions_of_a_curried_arrow_are_its_members():
    """zustand's middleware is `(config, options) => (set, get, api) => { const hydrate =
    ... }`: the functions its bug reports and questions are about (`hydrate`, `setItem`,
    `setStateFromDevtools`) were in anonymous windows of `persistImpl`."""
    chunks = chunk_file(CURRIED, "typescript")
    assert named(chunks) == [
        ("function", "persistImpl", 1, 1),
        ("function", "persistImpl.hydrate", 2, 4),
        ("function", "persistImpl.setItem", 5, 7),
        ("function", "persistImpl", 8, 9),
    ]
    assert lost_lines(CURRIED, chunks) == []


def test_a_binding_is_found_by_name_and_a_require_does_not_stand_for_the_class(make_repo):
    root = make_repo(
        {
            "lib/router.js": "var Route = require('./route')\n\n"
            "function route(path) {\n  return new Route(path)\n}\n",
            "lib/route.js": "class Route {\n  constructor(path) {\n    this.path = path\n"
            "  }\n}\n\nmodule.exports = Route\n",
            "src/types.ts": BINDINGS,
        }
    )
    repo = Repository(root)
    repo.index()
    with repo.open_store() as store:
        found = definition(store, "cuid2Regex")
        assert [(r.path, r.symbol, r.start_line) for r in found.results] == [
            ("src/types.ts", "cuid2Regex", 3)
        ]
        found = definition(store, "Route")
        assert [(r.path, r.symbol) for r in found.results] == [("lib/route.js", "Route")]


def test_a_table_of_many_module_variables_stays_in_windows():
    """5,000 `export const iconN = "..."` lines were 5,000 chunks, each embedded: 16.6 s to
    index a 220 KB file that took 2.6 s as windows. Past MAX_BINDINGS plain module variables a
    file is data: they stay in windows, while its functions and UPPER_CASE constants are still
    symbols (and a minified file's thousands of `var`s no longer make it coarse)."""
    from repocontext.lang.symbols import MAX_BINDINGS

    def table(n: int) -> str:
        rows = [f'export const icon{i} = "M{i} {i}Z"' for i in range(n)]
        return "\n".join([*rows, "export const ICON_COUNT = 3", "export function icon(n) {",
                          "  return n", "}", ""])  # fmt: skip

    few = named(chunk_file(table(MAX_BINDINGS), "typescript"))
    assert len([c for c in few if c[1].startswith("icon") and c[1] != "icon"]) == MAX_BINDINGS
    text = table(MAX_BINDINGS + 1)
    chunks = chunk_file(text, "typescript")
    assert named(chunks) == [
        ("constant", "ICON_COUNT", MAX_BINDINGS + 2, MAX_BINDINGS + 2),
        ("function", "icon", MAX_BINDINGS + 3, MAX_BINDINGS + 5),
    ]
    assert lost_lines(text, chunks) == []
