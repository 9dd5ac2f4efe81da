"""What each file is to the project: source, test, tooling or doc.

Search ranks tests, tooling (CI configuration, issue templates, changelogs, release notes) and
docs below source unless the question is about tests; the completion context leaves tests out
of a source file's context. A name alone misses many test trees (`testing/`, `qa/`, `checks/`),
so a test root is also recognised by structure and by the project's own configuration:

- by name: `tests/`, `testing/`, `__tests__/` (and `__mocks__/`, `__performance_tests__/`),
  `spec/`, `test_*.py`, `*_test.go`, `*.spec.ts`...
  (a Go file is a test by its `_test.go` name only: a Go package in `test/` is a package);
- by structure: a folder holding a `conftest.py` is a pytest tree (below the repository root,
  where a conftest.py configures everything); `testdata/` and `fixtures/` inside a test tree;
- by configuration: pytest's `testpaths` (pyproject.toml, pytest.ini, tox.ini, setup.cfg) and
  the folders a package.json `test` script names.

Roles are a function of the path and the tree, so every index run recomputes them for all
files (a new conftest.py or testpaths entry re-roles files that did not change).
"""

from __future__ import annotations

import configparser
import json
import os
import re
import sys
from fnmatch import translate
from pathlib import Path

from .reading import MAX_FILE_BYTES, RefusedFile, read_in_root

if sys.version_info >= (3, 11):
    import tomllib
else:  # pragma: no cover - exercised on 3.10 only
    import tomli as tomllib

ROLES = ("source", "test", "tooling", "doc")

TEST_DIRS = frozenset({"test", "tests", "testing", "__tests__", "spec", "specs", "t"})
TEST_FILES = (
    "test_*.py",
    "*_test.py",
    "tests.py",
    "conftest.py",
    "*_test.go",
    "*.test.js",
    "*.test.ts",
    "*.test.jsx",
    "*.test.tsx",
    "*.test.mjs",
    "*.spec.js",
    "*.spec.ts",
    "*.spec.jsx",
    "*.spec.tsx",
    "*Test.java",
    "*Tests.java",
    "*_spec.rb",
    "*_test.rb",
    "test_*.rb",
    "*_test.lua",
    "*_spec.lua",
    "*_test.rs",
    "*_test.c",
    "*_test.cc",
    "*_test.cpp",
)
# Folders of test data: a test tree's, wherever they sit (Go's testdata is a convention).
TEST_DATA_DIRS = frozenset({"testdata", "test_data", "__snapshots__", "__fixtures__"})
TOOLING_DIRS = frozenset(
    {".github", ".gitlab", ".circleci", ".buildkite", ".devcontainer", ".azure-pipelines",
     "changelog", "changelog.d", "changes", "newsfragments", "release-notes", "releasenotes"}
)  # fmt: skip
TOOLING_FILES = (
    "CHANGELOG*",
    "CHANGES*",
    "HISTORY*",
    "NEWS*",
    "RELEASE*",
    "RELEASING*",
    "Changelog*",
    "ChangeLog*",
    ".gitlab-ci.yml",
    ".travis.yml",
    "azure-pipelines.yml",
    "appveyor.yml",
    "codecov.yml",
    ".pre-commit-config.yaml",
    "tox.ini",
    "noxfile.py",
    # JavaScript's build, lint and test-runner configuration: code, but no one's question is
    # about jest.config.js or rollup.config.mjs unless it names them
    "*.config.js",
    "*.config.cjs",
    "*.config.mjs",
    "*.config.ts",
    "*.config.cts",
    "*.config.mts",
    ".eslintrc*",
    ".prettierrc*",
    ".babelrc*",
    "Gruntfile.js",
    "gulpfile.js",
    "karma.conf.js",
)
DOC_DIRS = frozenset({"doc", "docs", "documentation"})
DOC_SUFFIXES = frozenset({".md", ".rst", ".txt", ".adoc", ".rdoc", ".org"})

_PATHLIKE = re.compile(r"^[\w.@-][\w./@-]*$")


def any_glob(patterns: tuple[str, ...]) -> re.Pattern:
    """One case-sensitive pattern for a set of globs: a file name is matched once, not once
    per glob (the roles and secret checks run for each of 100,000 files in a large tree)."""
    return re.compile("|".join(translate(p) for p in patterns))


_TEST_FILE = any_glob(TEST_FILES)
# Jest's convention of `__name__` folders for what is not the package: `__tests__`,
# `__mocks__`, and the other test trees named so (immer's `__performance_tests__`)
_DUNDER_TEST_DIR = re.compile(r"^__\w*(?:tests?|mocks)__$")
_TOOLING_FILE = any_glob(TOOLING_FILES)


class RoleRules:
    """The role of each path of one tree: the name rules plus the test roots that the tree's
    structure and configuration add (folders, "/"-terminated, relative to the root)."""

    def __init__(self, test_roots: frozenset[str] = frozenset()):
        self.test_roots = test_roots

    @classmethod
    def for_tree(cls, root: Path, files: list[str], configured: set[str] | None = None):
        """`configured`: the roots the configuration names, if known (else read here)."""
        roots = {rel[: -len("conftest.py")] for rel in files if rel.endswith("/conftest.py")}
        roots.update(configured_test_roots(root) if configured is None else configured)
        # a root that is the whole repository (testpaths = ["."]) says nothing
        return cls(frozenset(r for r in roots if r not in ("", "./", "/")))

    def role(self, rel: str) -> str:
        parts = rel.split("/")
        name, folders = parts[-1], parts[:-1]
        # Go's tests are its `_test.go` files: a Go package in a folder named `test` or
        # `testing` is a package like any other (logrus's hooks/test, the helpers its users'
        # tests import; the standard library's testing/fstest)
        dirs = TEST_DATA_DIRS if name.endswith(".go") else TEST_DIRS | TEST_DATA_DIRS
        if any(p in dirs or _DUNDER_TEST_DIR.match(p) for p in folders):
            return "test"
        if _TEST_FILE.match(name):
            return "test"
        if self.test_roots and any(
            "/".join(folders[:n]) + "/" in self.test_roots for n in range(1, len(folders) + 1)
        ):
            return "test"
        if any(p in TOOLING_DIRS for p in folders) or _TOOLING_FILE.match(name):
            return "tooling"
        suffix = os.path.splitext(name)[1].lower()
        if any(p in DOC_DIRS for p in folders) or suffix in DOC_SUFFIXES:
            return "doc"
        return "source"


def file_role(rel: str) -> str:
    """The role by name alone (where the tree is not at hand: one file, a buffer)."""
    return RoleRules().role(rel)


# The files configured_test_roots reads: an index run reads them again only when one changed.
CONFIG_FILES = ("pyproject.toml", "pytest.ini", "tox.ini", "setup.cfg", "package.json")


def _config_text(root: Path, name: str) -> str:
    """A configuration file of the tree as data: a regular file, no link, at most 1 MB (a FIFO
    named pytest.ini must not hang an index run, nor a link to /dev/zero fill its memory)."""
    try:
        data = read_in_root(root, name, MAX_FILE_BYTES)
    except RefusedFile as exc:
        raise OSError(exc.reason) from None
    if len(data) > MAX_FILE_BYTES:
        raise OSError("too large")
    return data.decode("utf-8")


def configured_test_roots(root: Path) -> set[str]:
    """Folders the project's own configuration names as its tests."""
    paths: list[str] = []
    try:
        data = tomllib.loads(_config_text(root, "pyproject.toml"))
        ini = data.get("tool", {}).get("pytest", {}).get("ini_options", {})
        paths += _as_list(ini.get("testpaths"))
    except (OSError, ValueError):
        pass
    for name, section in (("pytest.ini", "pytest"), ("tox.ini", "pytest"),
                          ("setup.cfg", "tool:pytest")):  # fmt: skip
        parser = configparser.ConfigParser(interpolation=None)
        try:
            parser.read_string(_config_text(root, name), source=name)
            paths += parser.get(section, "testpaths", fallback="").split()
        except (OSError, configparser.Error, UnicodeDecodeError):
            pass
    try:
        scripts = json.loads(_config_text(root, "package.json")).get("scripts")
        command = scripts.get("test", "") if isinstance(scripts, dict) else ""
        for word in str(command).replace("'", " ").replace('"', " ").split():
            word = re.split(r"[*{\[]", word, maxsplit=1)[0].rstrip("/")  # a glob's folder
            if word and not word.startswith("-") and _PATHLIKE.match(word):
                paths.append(word)
    except (OSError, ValueError, AttributeError):
        pass
    out = set()
    for p in paths:
        p = p.strip().strip("./") if p.strip() not in (".", "./") else ""
        if p and (root / p).is_dir():
            out.add(p.rstrip("/") + "/")
    return out


def _as_list(value) -> list[str]:
    if isinstance(value, str):
        return value.split()
    if isinstance(value, list):
        return [str(v) for v in value]
    return []
