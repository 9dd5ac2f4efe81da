"""Which language a file is in, and what counts as a definition in each grammar.

Each `LanguageSpec` names the tree-sitter node types that define symbols, which of them are
containers (their members become chunks of their own), and the node types worth descending
into while looking for definitions. Function bodies are deliberately not in that set: walking
only the statement spine keeps extraction cheap on large files (a few nodes per definition,
not every node of the tree). The one exception is symbols.py's: in JavaScript and TypeScript
the top of a module-level function's body is read once for the functions it defines.
"""

from __future__ import annotations

import logging
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import PurePosixPath
from typing import TYPE_CHECKING, TypeGuard, cast

log = logging.getLogger(__name__)

if TYPE_CHECKING:
    from tree_sitter import Language, Parser, Query
    from tree_sitter_language_pack import SupportedLanguage  # noqa: F401 (in a cast)

# extension -> tree-sitter-language-pack name
EXTENSIONS: dict[str, str] = {
    ".py": "python",
    ".pyi": "python",
    ".js": "javascript",
    ".mjs": "javascript",
    ".cjs": "javascript",
    ".jsx": "javascript",
    ".ts": "typescript",
    ".mts": "typescript",
    ".cts": "typescript",
    ".tsx": "tsx",
    ".go": "go",
    ".rs": "rust",
    ".java": "java",
    ".c": "c",
    ".h": "c",
    ".cc": "cpp",
    ".cpp": "cpp",
    ".cxx": "cpp",
    ".hpp": "cpp",
    ".hh": "cpp",
    ".hxx": "cpp",
    ".lua": "lua",
    ".rb": "ruby",
    ".rake": "ruby",
}

# Languages without a grammar here are still indexed as line windows; the name is kept for
# display and for the comment syntax used later by prompt building.
TEXT_LANGUAGES: dict[str, str] = {
    ".md": "markdown",
    ".rst": "rst",
    ".txt": "text",
    ".toml": "toml",
    ".yaml": "yaml",
    ".yml": "yaml",
    ".json": "json",
    ".cfg": "ini",
    ".ini": "ini",
    ".sh": "bash",
    ".html": "html",
    ".css": "css",
    ".sql": "sql",
    ".vim": "vim",
    ".kt": "kotlin",
    ".swift": "swift",
    ".php": "php",
    ".cs": "csharp",
    ".scala": "scala",
}


@dataclass(frozen=True)
class LanguageSpec:
    name: str
    # node type -> symbol kind
    definitions: dict[str, str]
    # node types whose members are symbols of their own (class, impl, namespace, module)
    containers: frozenset[str]
    # node types walked through when looking for definitions (module level and container bodies)
    descend: frozenset[str]
    # node types that wrap a definition and should give it their span (decorators, export, template)
    wrappers: frozenset[str] = frozenset()
    comment_types: frozenset[str] = frozenset({"comment"})
    # kinds that become "method" when found inside a container
    method_kinds: frozenset[str] = frozenset({"function"})
    extra: dict[str, str] = field(default_factory=dict)


_PY = LanguageSpec(
    name="python",
    definitions={
        "function_definition": "function",
        "class_definition": "class",
        "type_alias_statement": "type",
        "expression_statement": "constant",  # only UPPER_CASE module-level assignments qualify
        "assignment": "constant",  # (newer grammars put assignments directly under module)
    },
    containers=frozenset({"class_definition"}),
    descend=frozenset(
        {
            "module",
            "block",
            "if_statement",
            "else_clause",
            "elif_clause",
            "try_statement",
            "except_clause",
            "finally_clause",
            "with_statement",
            "decorated_definition",
        }
    ),
    wrappers=frozenset({"decorated_definition"}),
)

_JS_DEFS = {
    "function_declaration": "function",
    "generator_function_declaration": "function",
    "class_declaration": "class",
    "method_definition": "method",
    # at module level every binding but `require(...)`; in a function, functions (symbols.py)
    "lexical_declaration": "constant",
    "variable_declaration": "variable",
    # `res.json = function json(...)`, `exports.parse = (s) => ...`: CommonJS defines most of
    # its functions by assignment (symbols.py names them by what is assigned to)
    "expression_statement": "function",
    # class fields and object-literal properties, where they hold a function (symbols.py)
    "field_definition": "function",
    "public_field_definition": "function",
    "pair": "method",
}
_JS_DESCEND = frozenset({"program", "export_statement", "class_body", "statement_block"})
_JS = LanguageSpec(
    name="javascript",
    definitions=_JS_DEFS,
    containers=frozenset({"class_declaration"}),
    descend=_JS_DESCEND,
    wrappers=frozenset({"export_statement"}),
)
_TS_DEFS = {
    **_JS_DEFS,
    "abstract_class_declaration": "class",
    "interface_declaration": "interface",
    "type_alias_declaration": "type",
    "enum_declaration": "enum",
    "function_signature": "function",
    "method_signature": "method",
    "abstract_method_signature": "method",
    "internal_module": "module",
    "module": "module",
}
_TS = LanguageSpec(
    name="typescript",
    definitions=_TS_DEFS,
    containers=frozenset(
        {
            "class_declaration",
            "abstract_class_declaration",
            "interface_declaration",
            "internal_module",
            "module",
        }
    ),
    descend=_JS_DESCEND | {"interface_body", "object_type"},
    wrappers=frozenset({"export_statement"}),
)
_GO = LanguageSpec(
    name="go",
    definitions={
        "function_declaration": "function",
        "method_declaration": "method",
        "type_spec": "type",
        "type_alias": "type",
        "const_spec": "constant",
        # `var ErrNotFound = errors.New(...)`: package level only (function bodies are not
        # descended into)
        "var_spec": "variable",
    },
    containers=frozenset(),
    descend=frozenset(
        {"source_file", "type_declaration", "const_declaration", "var_declaration", "var_spec_list"}
    ),
)
_RUST = LanguageSpec(
    name="rust",
    definitions={
        "function_item": "function",
        "function_signature_item": "function",
        "struct_item": "struct",
        "enum_item": "enum",
        "union_item": "struct",
        "trait_item": "trait",
        "impl_item": "impl",
        "mod_item": "module",
        "const_item": "constant",
        "static_item": "constant",
        "type_item": "type",
        "macro_definition": "macro",
    },
    containers=frozenset({"trait_item", "impl_item", "mod_item"}),
    descend=frozenset({"source_file", "declaration_list"}),
    comment_types=frozenset({"line_comment", "block_comment"}),
)
_JAVA = LanguageSpec(
    name="java",
    definitions={
        "class_declaration": "class",
        "interface_declaration": "interface",
        "enum_declaration": "enum",
        "record_declaration": "class",
        "annotation_type_declaration": "interface",
        "method_declaration": "method",
        "constructor_declaration": "method",
    },
    containers=frozenset(
        {
            "class_declaration",
            "interface_declaration",
            "enum_declaration",
            "record_declaration",
        }
    ),
    descend=frozenset(
        {"program", "class_body", "interface_body", "enum_body", "enum_body_declarations"}
    ),
    comment_types=frozenset({"line_comment", "block_comment"}),
)
_C_DEFS = {
    "function_definition": "function",
    "struct_specifier": "struct",
    "union_specifier": "struct",
    "enum_specifier": "enum",
    "type_definition": "type",
    "preproc_def": "constant",
    "preproc_function_def": "macro",
}
_C = LanguageSpec(
    name="c",
    definitions=_C_DEFS,
    containers=frozenset(),
    descend=frozenset(
        {
            "translation_unit",
            "preproc_ifdef",
            "preproc_if",
            "preproc_else",
            "linkage_specification",
            "declaration_list",
        }
    ),
)
_CPP = LanguageSpec(
    name="cpp",
    definitions={
        **_C_DEFS,
        "class_specifier": "class",
        "namespace_definition": "namespace",
        "field_declaration": "method",  # only declarations of member functions qualify
        "alias_declaration": "type",
    },
    containers=frozenset({"class_specifier", "struct_specifier", "namespace_definition"}),
    descend=_C.descend | {"template_declaration", "field_declaration_list"},
    wrappers=frozenset({"template_declaration"}),
)
_LUA = LanguageSpec(
    name="lua",
    definitions={
        "function_declaration": "function",
        "assignment_statement": "function",  # M.name = function(...) end
    },
    containers=frozenset(),
    descend=frozenset({"chunk", "variable_declaration"}),
)
_RUBY = LanguageSpec(
    name="ruby",
    definitions={
        "method": "method",
        "singleton_method": "method",
        "class": "class",
        "module": "module",
    },
    containers=frozenset({"class", "module"}),
    descend=frozenset({"program", "body_statement"}),
)

SPECS: dict[str, LanguageSpec] = {
    "python": _PY,
    "javascript": _JS,
    "typescript": _TS,
    "tsx": LanguageSpec(**{**_TS.__dict__, "name": "tsx"}),
    "go": _GO,
    "rust": _RUST,
    "java": _JAVA,
    "c": _C,
    "cpp": _CPP,
    "lua": _LUA,
    "ruby": _RUBY,
}


def language_for(path: str) -> str | None:
    """The grammar name for a path, or the plain-text language name, or None."""
    suffix = PurePosixPath(path).suffix.lower()
    return EXTENSIONS.get(suffix) or TEXT_LANGUAGES.get(suffix)


def has_grammar(language: str | None) -> TypeGuard[str]:
    return language in SPECS


def grammar(language: str) -> Language:
    """The tree-sitter grammar of `language`, one of SPECS' (tree-sitter-language-pack's name
    for it; the pack types its names as a Literal, ours are checked by `has_grammar`)."""
    from tree_sitter_language_pack import get_language

    return get_language(cast("SupportedLanguage", language))


def compile_patterns(language: str, patterns: Sequence[str]) -> Query | None:
    """One tree-sitter query of the `patterns` this grammar accepts: a pattern naming a node
    type its version does not have is dropped (logged at debug), the rest still read."""
    from tree_sitter import Query

    kept = []
    for pattern in patterns:
        try:
            Query(grammar(language), pattern)
        except Exception as exc:
            log.debug("dropping %s pattern %s: %s", language, pattern, exc)
            continue
        kept.append(pattern)
    return Query(grammar(language), "\n".join(kept)) if kept else None


def new_parser(language: str) -> Parser:
    """A new tree-sitter parser for `language` (a Parser is not safe to share across threads)."""
    from tree_sitter_language_pack import get_parser

    return get_parser(cast("SupportedLanguage", language))
