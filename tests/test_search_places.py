"""Who takes the places of a search's list: a long definition once, the library before its
examples, and a question's words in either English. Indexed without the embedding model
(`--no-embed`): the ranks here are BM25's and the graph's, the same on every machine."""

from __future__ import annotations

import pytest

from repocontext.search import fusion, retrievers
from repocontext.search.retrievers import bm25_terms
from repocontext.search.spelling import other_spelling


def search(cli, root, query: str, *args: str) -> list[dict]:
    result = cli("search", "--root", root, "--json", *args, query)
    assert result.code == 0, result.err
    return result.json()["results"]


def symbols(results: list[dict]) -> list[str]:
    return [r["symbol"] for r in results]


# cobra's genBashComp: one function of 300 lines, cut into windows that all carry its name
_BASH_LINES = "\n".join(
    f'\tbuf.WriteString("__complete_{i}: escape the whitespace inside each completion")'
    for i in range(120)
)
SHELLS = {
    "go.mod": "module example.com/shells\n",
    "bash.go": f"""
package shells

import "bytes"

func genBashComp(buf *bytes.Buffer) {{
{_BASH_LINES}
}}
""",
    "fish.go": """
package shells

// genFishComp writes the fish script: whitespace inside a completion is escaped
// with a backslash before fish reads it.
func genFishComp(buf *bytes.Buffer) {
	buf.WriteString("string escape -- $completion")
}
""",
    "term.py": '''
import sys

if sys.platform == "win32":
    def terminal_width():
        """The console's width, from the Windows API."""
        return 80
else:
    def terminal_width():
        """The terminal's width, from the tty."""
        return 100
''',
}
SHELL_QUESTION = "how is the whitespace inside a completion escaped"


def test_a_long_definition_takes_one_place_at_its_best_piece(make_repo, cli):
    """A function longer than a chunk is cut into windows that all carry its name; listed
    each, they took the places of other definitions (cobra's genPowerShellComp held three
    of the first five). The list shows it once, at its best piece; `--all-chunks` still
    shows every piece, and two definitions of one name that do not touch stay two."""
    root = make_repo(SHELLS)
    assert cli("index", "--root", root, "--no-embed", "--quiet").code == 0
    every = symbols(search(cli, root, SHELL_QUESTION, "--all-chunks"))
    assert every.count("genBashComp") >= 3
    assert every.index("genFishComp") >= 3  # below three pieces of one function
    listed = search(cli, root, SHELL_QUESTION)
    assert symbols(listed).count("genBashComp") == 1
    assert symbols(listed)[:2] == ["genBashComp", "genFishComp"]
    piece = next(r for r in listed if r["symbol"] == "genBashComp")
    assert piece["end_line"] - piece["start_line"] < 120  # a piece's lines, not the function's
    per_file = symbols(search(cli, root, SHELL_QUESTION, "--per-file", "3"))
    assert per_file.count("genBashComp") == 1
    both = search(cli, root, "terminal_width")
    assert [(r["path"], r["symbol"]) for r in both[:2]] == [("term.py", "terminal_width")] * 2
    assert both[0]["start_line"] != both[1]["start_line"]


ROUTER = {
    "go.mod": "module example.com/router\n",
    "tree.go": """
package router

// routes returns the node's routes and those of the routers mounted below it.
func (n *node) routes() []Route {
	var rts []Route
	for _, child := range n.children {
		rts = append(rts, child.rts...)
	}
	return rts
}
""",
    "_examples/walk/main.go": """
package main

// main lists the routes of every router: the routes of each mounted router are
// listed too, every route listed with its method.
func main() {
	r := router.New()
	router.Walk(r, func(route string) { fmt.Println("route", route) })
}
""",
}
ROUTES_QUESTION = "how are the routes of every mounted router listed"


def test_an_example_program_ranks_below_the_library(make_repo, cli, monkeypatch):
    """An example program shows the library in use and says so in the question's words
    (chi's _examples/router-walk outranked the node.routes a report on chi.Walk was about).
    It is ranked as a doc is, with its factor shown; without the factor it came first."""
    root = make_repo(ROUTER)
    assert cli("index", "--root", root, "--no-embed", "--quiet").code == 0
    with monkeypatch.context() as patched:
        patched.setattr(fusion, "EXAMPLE_DIRS", ())
        assert symbols(search(cli, root, ROUTES_QUESTION))[0] == "main"
    results = search(cli, root, ROUTES_QUESTION, "--explain")
    assert symbols(results)[0] == "node.routes"
    example = next(r for r in results if r["path"].startswith("_examples/"))
    assert example["factors"] == {"example": fusion.ROLE_FACTOR["doc"]}


@pytest.mark.parametrize(
    "word, other",
    [
        ("colour", "color"),
        ("coloured", "colored"),
        ("Behaviour", "behavior"),
        ("initialised", "initialized"),
        ("serialisation", "serialization"),
        ("analysed", "analyzed"),
        ("marshalling", "marshaling"),
        ("cancelled", "canceled"),
        ("centre", "center"),
        ("catalogue", "catalog"),
        ("grey", "gray"),
        ("licence", "license"),
        ("color", "colour"),
        ("parametrize", "parametrise"),
        ("marshaler", "marshaller"),
        ("promise", None),
        ("otherwise", None),
        ("analysis", None),
        ("hour", None),
        ("called", None),
    ],
)
def test_a_word_in_the_other_english(word, other):
    assert other_spelling(word) == other


def test_bm25_looks_a_word_up_in_both_spellings():
    terms = bm25_terms("In the coloured output, how is isColored set?")
    # `Colored`, a part of `isColored`, is the American word already there
    assert terms == ["coloured", "colored", "output", "isColored", "set"]


FORMATTER = {
    "go.mod": "module example.com/logfmt\n",
    "text_formatter.go": """
package logfmt

// printColored writes one entry with its level's color: red for errors, yellow
// for warnings, blue for the rest.
func (f *TextFormatter) printColored(b *bytes.Buffer, entry *Entry) {
	levelColor := blue
	switch entry.Level {
	case ErrorLevel:
		levelColor = red
	case WarnLevel:
		levelColor = yellow
	}
	fmt.Fprintf(b, "\\x1b[%dm%s\\x1b[0m %s", levelColor, entry.Level, entry.Message)
}
""",
    "writer.go": """
package logfmt

// Writer returns a writer: each line written to it is one entry of the output.
func (l *Logger) Writer() *io.PipeWriter {
	reader, writer := io.Pipe()
	go l.scanLines(reader)
	return writer
}
""",
}
COLOUR_QUESTION = "where are the colours chosen"


def test_a_question_in_british_english_finds_code_in_american(make_repo, cli, monkeypatch):
    """People ask about "colour" and "behaviour"; code says color and behavior (logrus's
    printColored matched no word of the question). BM25 looks each word up in both."""
    root = make_repo(FORMATTER)
    assert cli("index", "--root", root, "--no-embed", "--quiet").code == 0
    with monkeypatch.context() as patched:
        patched.setattr(retrievers, "other_spelling", lambda word: None)
        assert "TextFormatter.printColored" not in symbols(search(cli, root, COLOUR_QUESTION))
    assert symbols(search(cli, root, COLOUR_QUESTION))[0] == "TextFormatter.printColored"
    american = COLOUR_QUESTION.replace("colours", "colors")
    assert symbols(search(cli, root, american))[0] == "TextFormatter.printColored"


LOGGER = {
    "go.mod": "module example.com/logfmt\n",
    "exported.go": """
package logfmt

var std = New()

// Fatal logs a message at the fatal level on the standard logger, then the
// process exits with status 1.
func Fatal(args ...interface{}) {
	std.Fatal(args...)
}

// Fatalf logs a formatted message at the fatal level on the standard logger,
// then the process exits with status 1.
func Fatalf(format string, args ...interface{}) {
	std.Fatalf(format, args...)
}
""",
    "logger.go": """
package logfmt

import "os"

func (logger *Logger) Fatal(args ...interface{}) {
	logger.Log(FatalLevel, args...)
	logger.Exit(1)
}

func (logger *Logger) Fatalf(format string, args ...interface{}) {
	logger.Logf(FatalLevel, format, args...)
	logger.Exit(1)
}

func (logger *Logger) Exit(code int) {
	runHandlers()
	if logger.ExitFunc == nil {
		logger.ExitFunc = os.Exit
	}
	logger.ExitFunc(code)
}
""",
}
LOGGER["level.go"] = """
package logfmt

// SetLevel sets the level below which a message is not logged.
func (logger *Logger) SetLevel(level Level) {
	logger.level = level
}

// IsLevelEnabled says whether a message at this level would be logged.
func (logger *Logger) IsLevelEnabled(level Level) bool {
	return logger.level >= level
}

// ParseLevel takes the name of a level and returns the level it names.
func ParseLevel(name string) (Level, error) {
	return levels[name], nil
}
"""
FATAL_QUESTION = "what happens after a message is logged at the fatal level"


def test_a_function_that_only_passes_the_call_on_ranks_below_the_one_that_does_it(
    make_repo, cli, monkeypatch
):
    """logrus's package-level Fatal, Fatalf and FatalFn only call the standard logger's
    methods of their names, and say in their doc comments what those do: they held the
    first places of a question on what runs after a fatal log, above `Logger.Exit`. Such a
    wrapper is ranked as a doc is (its factor shown); asked for by name it comes first."""
    root = make_repo(LOGGER)
    assert cli("index", "--root", root, "--no-embed", "--quiet").code == 0
    with monkeypatch.context() as patched:
        patched.setattr(fusion, "WRAPPER_FACTOR", 1.0)
        assert symbols(search(cli, root, FATAL_QUESTION))[0] == "Fatal"
    results = search(cli, root, FATAL_QUESTION, "--explain")
    assert symbols(results)[:2] == ["Logger.Fatal", "Logger.Fatalf"]
    wrappers = [r for r in results if r["symbol"] in ("Fatal", "Fatalf")]
    assert [r["factors"].get("wrapper") for r in wrappers] == [fusion.WRAPPER_FACTOR] * 2
    assert "wrapper" not in next(r for r in results if r["symbol"] == "Logger.Fatal")["factors"]
    assert symbols(search(cli, root, "def Fatal"))[0] == "Fatal"


@pytest.mark.parametrize(
    "text, name, passes",
    [
        ("func Fatal(args ...interface{}) {\n\tstd.Fatal(args...)\n}", "Fatal", True),
        ("func (l *Logger) Fatal(a ...any) {\n\tl.Log(FatalLevel, a...)\n\tl.Exit(1)\n}",
         "Fatal", False),
        ('def get(self, key):\n    """The value."""\n    return self._data.get(key)', "get", True),
        ("def get(self, key):\n    return self.getter(key)", "get", False),
        ("def get(self, key):\n    # the map's own\n    return self.data.get(key)", "get", True),
        # a call over several lines is not read as one (left as it ranks)
        ("def get(self, key):\n    return self.data.get(\n        key,\n    )", "get", False),
        ("export function parse(text) {\n  return parser.parse(text, {});\n}", "parse", True),
        ("fn len(&self) -> usize {\n    self.inner.len()\n}", "len", True),
        ("int\ncJSON_Size(const cJSON *item)\n{\n    return cJSON_Size_(item, 0);\n}",
         "cJSON_Size", False),
        ("def close(self):\n    self.file.close()\n    self.closed = True", "close", False),
        ("const close = () => socket.close()", "close", False),
    ],
)  # fmt: skip
def test_what_passes_the_call_on(text, name, passes):
    assert fusion.passes_the_call_on(text, name) is passes
