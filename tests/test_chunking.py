"""Chunks: symbol chunks per language on small fixtures, and the line-window fallback."""

from __future__ import annotations

from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from repocontext.lang.chunking import OVERLAP_CHARS, WINDOW_CHARS, chunk_file
from repocontext.lang.languages import language_for
from repocontext.lang.text import split_lines

LANGS = Path(__file__).parent / "fixtures" / "langs"


def symbols(name: str) -> list[tuple]:
    path = LANGS / name
    chunks = chunk_file(path.read_text(), language_for(path.name))
    return [(c.kind, c.qualname, c.start_line, c.end_line) for c in chunks if c.qualname]


EXPECTED = {
    "sample.py": [
        ("constant", "MAX_RETRIES", 4, 4),
        ("function", "parse_config", 7, 9),
        ("class", "ConfigLoader", 12, 16),
        ("method", "ConfigLoader.load", 17, 18),
        ("method", "ConfigLoader.ready", 20, 22),
    ],
    "sample.js": [
        ("constant", "MAX_SIZE", 1, 1),
        ("function", "parseConfig", 4, 6),
        ("class", "ConfigLoader", 8, 8),
        ("method", "ConfigLoader.load", 9, 11),
        ("function", "makeLoader", 14, 14),
    ],
    "sample.ts": [
        ("interface", "Config", 1, 3),
        ("type", "Loader", 5, 5),
        ("function", "parseConfig", 7, 9),
        ("class", "ConfigLoader", 11, 11),
        ("method", "ConfigLoader.load", 12, 14),
        ("enum", "Mode", 17, 17),
    ],
    "sample.tsx": [
        ("function", "ConfigView", 3, 5),
        ("class", "ConfigPanel", 7, 7),
        ("method", "ConfigPanel.render", 8, 10),
    ],
    "sample.go": [
        ("function", "ParseConfig", 4, 6),
        ("type", "Config", 8, 10),
        ("method", "Config.Load", 12, 14),
        ("constant", "MaxRetries", 16, 16),
    ],
    "sample.rs": [
        ("function", "parse_config", 2, 4),
        ("struct", "Config", 6, 8),
        ("impl", "Config", 10, 10),
        ("method", "Config.load", 11, 13),
        ("trait", "Loader", 16, 16),
        ("method", "Loader.load_all", 17, 17),
        ("constant", "MAX_RETRIES", 20, 20),
    ],
    "Sample.java": [
        ("class", "ConfigLoader", 4, 4),
        ("method", "ConfigLoader.ConfigLoader", 5, 5),
        ("method", "ConfigLoader.parseConfig", 8, 10),
        ("interface", "ConfigLoader.Source", 12, 12),
        ("method", "ConfigLoader.Source.read", 13, 13),
    ],
    "sample.c": [
        ("constant", "MAX_RETRIES", 3, 3),
        ("struct", "config", 5, 7),
        ("function", "parse_config", 10, 12),
        ("type", "config_t", 14, 14),
    ],
    "sample.cpp": [
        ("namespace", "cfg", 3, 4),
        ("class", "cfg.ConfigLoader", 5, 6),
        ("method", "cfg.ConfigLoader.load", 7, 7),
        ("method", "cfg.ConfigLoader.load", 10, 12),
        ("function", "cfg.parse_config", 14, 17),
    ],
    "sample.lua": [
        ("function", "parse_config", 4, 6),
        ("function", "M.load", 8, 10),
        ("function", "M.reload", 12, 14),
        ("function", "M.reset", 16, 18),
    ],
    "sample.rb": [
        ("module", "Config", 1, 1),
        ("class", "Config.Loader", 2, 3),
        ("method", "Config.Loader.parse_config", 4, 6),
        ("method", "Config.Loader.load", 8, 10),
    ],
}


@pytest.mark.parametrize("name", sorted(EXPECTED))
def test_symbol_chunks_per_language(name):
    assert symbols(name) == EXPECTED[name]


def test_python_chunk_carries_signature_docstring_and_body():
    chunks = chunk_file((LANGS / "sample.py").read_text(), "python")
    parse = next(c for c in chunks if c.name == "parse_config")
    assert parse.signature == "def parse_config(path)"
    assert parse.doc == "Read the config file at `path`."
    assert parse.text.startswith("def parse_config(path):")
    assert parse.text.rstrip().endswith("return open(path).read()")


def test_class_chunk_is_header_plus_member_signatures_and_claims_only_header_lines():
    chunks = chunk_file((LANGS / "sample.py").read_text(), "python")
    cls = next(c for c in chunks if c.name == "ConfigLoader")
    assert (cls.start_line, cls.end_line) == (12, 16)
    assert "def load(self, name) ..." in cls.text
    assert "@property def ready(self) ..." in cls.text
    assert "return parse_config(name)" not in cls.text  # bodies stay in the method chunks


@pytest.mark.parametrize(
    "name", ["sample.go", "sample.rs", "Sample.java", "sample.c", "sample.lua", "sample.rb"]
)
def test_leading_doc_comments_become_docstrings(name):
    chunks = chunk_file((LANGS / name).read_text(), language_for(name))
    docs = {c.name: c.doc for c in chunks if c.doc}
    assert any("config" in d.lower() for d in docs.values()), docs


def test_code_between_symbols_becomes_windows():
    chunks = chunk_file((LANGS / "sample.py").read_text(), "python")
    assert chunks[0].kind == "code" and chunks[0].start_line == 1
    assert "import os" in chunks[0].text


def test_unknown_language_is_windowed_whole():
    text = "\n".join(f"line {i}" for i in range(1, 11)) + "\n"
    chunks = chunk_file(text, "markdown")
    assert [(c.kind, c.start_line, c.end_line) for c in chunks] == [("text", 1, 10)]


def test_syntax_errors_still_yield_what_can_be_recognised():
    text = (
        "def good():\n    return 1\n\ndef broken():\n    x = = 2\n    y = )\n\n"
        "class Fine:\n    def ok(self):\n        pass\n"
    )
    assert [c.name for c in chunk_file(text, "python") if c.name] == [
        "good",
        "broken",
        "Fine",
        "ok",
    ]
    # where recovery loses the definitions, the text is still indexed as windows
    text = "x = 1 +\nfoo(((\ndef after():\n    pass\n"
    assert "def after" in " ".join(c.text for c in chunk_file(text, "python"))


def test_deeply_nested_code_does_not_recurse():
    text = "x = " + "[" * 20000 + "]" * 20000 + "\ndef after():\n    pass\n"
    names = [c.name for c in chunk_file(text, "python") if c.name]
    assert names == ["after"]


def test_one_huge_line_is_cut_into_bounded_pieces_on_that_line():
    line = "a" * 200_000
    chunks = chunk_file(f"first\n{line}\nlast\n", None)
    on_line_2 = [c for c in chunks if c.start_line == 2]
    assert len(on_line_2) >= 200_000 // WINDOW_CHARS
    assert all(len(c.text) <= WINDOW_CHARS for c in chunks)
    assert (
        "".join(c.text[: WINDOW_CHARS - OVERLAP_CHARS] for c in on_line_2[:-1])
        == line[: (WINDOW_CHARS - OVERLAP_CHARS) * (len(on_line_2) - 1)]
    )
    assert chunks[-1].text == "last"


@settings(max_examples=60, deadline=None)
@given(st.lists(st.text(alphabet="ab \t(){}", max_size=400), min_size=1, max_size=120))
def test_windows_cover_every_nonblank_line_move_forward_and_stay_bounded(lines):
    text = "\n".join(lines) + "\n"
    chunks = chunk_file(text, None)
    starts = [c.start_line for c in chunks]
    assert starts == sorted(starts)
    assert all(len(c.text) <= WINDOW_CHARS for c in chunks)
    covered = set()
    for c in chunks:
        covered.update(range(c.start_line, c.end_line + 1))
    for i, line in enumerate(split_lines(text), 1):
        if line.strip():
            assert i in covered
    # consecutive windows over distinct lines never start at the same place
    multi = [c.start_line for c in chunks if c.end_line > c.start_line]
    assert len(multi) == len(set(multi))


def test_split_lines_counts_only_newlines():
    assert split_lines("a\x0cb\r\nc\n") == ["a\x0cb", "c"]


@pytest.mark.parametrize("language", ["javascript", "typescript"])
def test_functions_defined_by_assignment_are_symbols(language):
    """CommonJS defines most functions by assignment (express: `res.json = function json`,
    `exports.compileQueryParser = ...`): each is a function chunk named as it is assigned, so
    `compileQueryParser` and `res.json` are found by name; a plain assignment is not one."""
    text = (
        "var res = Object.create(http.ServerResponse.prototype)\n"
        "module.exports = res\n\n"
        "res.json = function json(obj) {\n  return this.send(obj);\n};\n\n"
        "exports.compileQueryParser = function compileQueryParser(val) {\n  return val;\n}\n\n"
        "module.exports = function createApplication() { return 1 }\n"
        "proto.handle = (req, res) => { next() }\n"
        "x = 5\n"
    )
    chunks = [(c.kind, c.name, c.qualname, c.start_line)
              for c in chunk_file(text, language) if c.kind == "function"]  # fmt: skip
    assert chunks == [
        ("function", "json", "res.json", 4),
        ("function", "compileQueryParser", "exports.compileQueryParser", 8),
        ("function", "createApplication", "createApplication", 12),
        ("function", "handle", "proto.handle", 13),
    ]


def test_rust_impl_methods_are_named_by_the_type_without_generics_or_references():
    """`impl<'a> Read<'a> for SliceRead<'a>` and `impl<W: Write> Serializer for &mut
    Writer<W>`: the methods are `SliceRead.peek` and `Writer.serialize_f64`, the names a user
    and a labelled question use (the raw type text gave `SliceRead<'a>.peek`, which no search
    for `SliceRead.peek` matched)."""
    source = (
        "pub struct SliceRead<'a> { slice: &'a [u8] }\n"
        "impl<'a> Read<'a> for SliceRead<'a> {\n"
        "    fn peek(&mut self) -> Option<u8> {\n"
        "        self.slice.first().copied()\n"
        "    }\n"
        "}\n"
        "impl<'a, W: io::Write> ser::Serializer for &'a mut Writer<W> {\n"
        "    fn serialize_f64(self, value: f64) -> Result<()> {\n"
        "        self.write(value)\n"
        "    }\n"
        "}\n"
        "impl fmt::Display for crate::error::Error {\n"
        "    fn fmt(&self, f: &mut fmt::Formatter) -> fmt::Result { Ok(()) }\n"
        "}\n"
        "impl Index for usize {\n"
        "    fn index_into(&self) -> bool { true }\n"
        "}\n"
    )
    chunks = chunk_file(source, "rust")
    named = {(c.kind, c.qualname) for c in chunks if c.qualname}
    assert ("method", "SliceRead.peek") in named, named
    assert ("method", "Writer.serialize_f64") in named, named
    assert ("method", "Error.fmt") in named, named
    assert ("method", "usize.index_into") in named, named
    peek = next(c for c in chunks if c.qualname == "SliceRead.peek")
    assert peek.text.lstrip().startswith("fn peek") or "fn peek" in peek.text


def test_go_package_variables_are_definitions_and_a_functions_are_not():
    """`var ErrMethodMismatch = errors.New(...)` is where mux's error is defined: `where is
    ErrMethodMismatch defined` found nothing by name. A package-level `var` (alone or in a
    group, its `//` comment its doc) is a symbol now; a function's `var` stays inside it."""
    text = (
        "package mux\n\n"
        'import "errors"\n\n'
        "var (\n"
        "\t// ErrMethodMismatch is returned when the method does not match the route.\n"
        '\tErrMethodMismatch = errors.New("method is not allowed")\n'
        '\tErrNotFound = errors.New("no matching route was found")\n'
        ")\n\n"
        "var DefaultMaxDepth = 32\n\n"
        "func depth() int {\n\tvar local = DefaultMaxDepth\n\treturn local\n}\n"
    )
    chunks = chunk_file(text, "go")
    assert [(c.kind, c.qualname, c.start_line) for c in chunks if c.qualname] == [
        ("variable", "ErrMethodMismatch", 7),
        ("variable", "ErrNotFound", 8),
        ("variable", "DefaultMaxDepth", 11),
        ("function", "depth", 13),
    ]
    mismatch = next(c for c in chunks if c.qualname == "ErrMethodMismatch")
    assert mismatch.doc == "ErrMethodMismatch is returned when the method does not match the route."
    assert 'errors.New("method is not allowed")' in mismatch.text


# What an index stores of each file it cuts (index/prepare.py: each chunk's record, the
# identifiers expanded for BM25, the key its vector is kept under; the references of the
# graph), hashed over the sample files of every grammar. An index made by another
# CHUNKER_VERSION cuts its files again; one made by the same version keeps what it has. So a
# change to any of these without a bump leaves every user's index stale: the vectors of the
# 2026-12-05 run kept describing doc comments that had changed (bench/results/NOTES.md).
CUT_FINGERPRINTS = {8: "b6c747f9c98c9105"}


def test_what_the_index_stores_of_a_file_changes_only_with_the_chunker_version():
    import hashlib

    from repocontext.index.prepare import to_record
    from repocontext.lang.chunking import CHUNKER_VERSION, analyze_file

    digest = hashlib.sha256()
    for path in sorted(LANGS.iterdir()):
        analysis = analyze_file(path.read_text(), language_for(path.name))
        for chunk in analysis.chunks:
            digest.update(repr(to_record(f"src/{path.name}", chunk)).encode())
        for ref, owner in analysis.references:
            digest.update(repr((ref, owner)).encode())
    fingerprint = digest.hexdigest()[:16]
    assert CUT_FINGERPRINTS.get(CHUNKER_VERSION) == fingerprint, (
        f"what the index stores of a file changed ({fingerprint}): bump CHUNKER_VERSION in "
        "lang/chunking.py (every index then cuts its files again) and record the new "
        "fingerprint under it here"
    )


@pytest.mark.parametrize("path", sorted(LANGS.iterdir()), ids=lambda p: p.name)
def test_every_line_but_a_closing_bracket_is_in_what_exact_string_search_reads(path):
    """Exact-string search reads each chunk's text and its doc comment lines (`lead`): so every
    line grep could find is in one of them, a line that only closes a bracket aside. A doc
    comment above a Go, Rust or JSDoc definition was in neither (thousands of lines in each
    of chi, express and bytes)."""
    from repocontext.lang.chunking import _CLOSERS

    lines = split_lines(path.read_text())
    read: set[int] = set()
    for chunk in chunk_file(path.read_text(), language_for(path.name)):
        above = chunk.lead.count("\n") + 1 if chunk.lead else 0
        assert (
            chunk.lead is None
            or "\n".join(lines[chunk.start_line - 1 - above : chunk.start_line - 1]) == chunk.lead
        )
        read.update(range(chunk.start_line - above, chunk.end_line + 1))
    unread = [
        (n, line)
        for n, line in enumerate(lines, 1)
        if n not in read and line.strip() and not _CLOSERS.match(line)
    ]
    assert unread == []
