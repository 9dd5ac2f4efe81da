"""Write the parts of doc/repocontext.txt that the code says, each between two marker lines.

- the defaults: lua/repocontext/config.lua's table between its `--minidoc_replace_start` and
  `--minidoc_replace_end` lines, verbatim (its `---` comments are the options' documentation);
- the subcommands: lua/repocontext/commands.lua's `M.subcommands`, each entry's name, args,
  desc and the `---` comment above it;
- the Lua API: each public `function M.name(...)` of lua/repocontext/init.lua with the `---`
  comment above it (`@param`/`@return` lines left out), and a tag `*repocontext.name()*`.

The rest of the help is written by hand. Usage (the project's Python; nothing to install):

    python scripts/gen_help.py          # rewrite those parts (and doc/tags, with Neovim)
    python scripts/gen_help.py --check  # exit 1 with a diff when the help is not current

tests/test_help.py runs the check. The generated text is checked to be valid help: lines of
at most 78 columns, no stray `*tag*` or example start in prose, one comment per function.
"""

from __future__ import annotations

import argparse
import difflib
import re
import shutil
import subprocess
import sys
import textwrap
from collections.abc import Callable
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
DOC = "doc/repocontext.txt"
WIDTH = 78
BEGIN = "(generated from {source} by scripts/gen_help.py)"
END = "(end of the part generated from {source})"

LUA_STRING = r'"((?:[^"\\]|\\.)*)"'


class HelpError(Exception):
    """The code cannot be written as help (a line too long, a function without a comment)."""


# The sections -----------------------------------------------------------------------------


def config_section(root: Path) -> list[str]:
    """The defaults table, verbatim, as a Lua example under the tag |repocontext-defaults|."""
    source = "lua/repocontext/config.lua"
    text = (root / source).read_text(encoding="utf-8")
    try:
        block = text.split("--minidoc_replace_start\n", 1)[1].split("--minidoc_replace_end", 1)[0]
    except IndexError:
        raise HelpError(f"{source}: no --minidoc_replace_start/--minidoc_replace_end") from None
    lines = [right("", "*repocontext-defaults*"), ">lua"]
    for n, line in enumerate(block.rstrip("\n").split("\n"), 1):
        shown = f"  {line}" if line.strip() else ""
        if len(shown) > WIDTH:
            raise HelpError(f"{source}: line {n} of the defaults is over {WIDTH - 2} columns")
        lines.append(shown)
    return [*lines, "<"]


def commands_section(root: Path) -> list[str]:
    """`:RepoContext {name} {args}` and what it does, the text from column 31."""
    source = "lua/repocontext/commands.lua"
    out = []
    for name, args, text in subcommands((root / source).read_text(encoding="utf-8"), source):
        head = f":RepoContext {name}" + (f" {args}" if args else "")
        body = wrap(text, 30, source)
        if len(head) <= 28:
            out.append(head.ljust(30) + body[0].lstrip())
            out.extend(body[1:])
        else:
            out.extend([head, *body])
    return out


def api_section(root: Path) -> list[str]:
    """`.name({args})` with its tag, and its comment below it."""
    source = "lua/repocontext/init.lua"
    out = []
    for name, params, doc in public_functions((root / source).read_text(encoding="utf-8"), source):
        signature = f".{name}({', '.join('{' + p + '}' for p in params)})"
        out.append(right(signature, f"*repocontext.{name}()*"))
        for i, paragraph in enumerate(doc):
            if i:
                out.append("")
            out.extend(wrap(paragraph, 4, source))
    return out


SECTIONS: dict[str, Callable[[Path], list[str]]] = {
    "lua/repocontext/config.lua": config_section,
    "lua/repocontext/commands.lua": commands_section,
    "lua/repocontext/init.lua": api_section,
}


# Reading the Lua --------------------------------------------------------------------------


def subcommands(text: str, source: str) -> list[tuple[str, str, str]]:
    """(name, args, desc and the `---` comment above the entry) of each entry, in order."""
    try:
        block = text.split("M.subcommands = {\n", 1)[1].split("\n}\n", 1)[0]
    except IndexError:
        raise HelpError(f"{source}: no `M.subcommands = {{ ... }}` table") from None
    out, doc, entry, depth = [], [], [], 0
    for line in block.split("\n"):
        stripped = line.strip()
        if not entry and stripped.startswith("---"):
            doc.append(stripped[3:].strip())
            continue
        if not entry and not stripped.startswith("{"):
            doc = [] if stripped else doc
            continue
        entry.append(line)
        bare = re.sub(LUA_STRING, '""', line)
        depth += bare.count("{") - bare.count("}")
        if depth == 0:
            fields = {
                k: lua_unquote(v) for k, v in re.findall(r"(\w+) = " + LUA_STRING, "\n".join(entry))
            }
            if "name" not in fields or "desc" not in fields:
                raise HelpError(
                    f"{source}: a subcommand without a name or a desc: {entry[0].strip()}"
                )
            text_ = fields["desc"] + (". " + " ".join(doc) if doc else "")
            out.append((fields["name"], fields.get("args", ""), text_))
            doc, entry = [], []
    return out


def public_functions(text: str, source: str) -> list[tuple[str, list[str], list[str]]]:
    """(name, parameters, paragraphs of the comment) of each `function M.name(...)` whose name
    does not start with `_`, in order. One without a `---` comment is an error."""
    out, doc = [], []
    for n, line in enumerate(text.split("\n"), 1):
        if line.startswith("---"):
            doc.append(line[3:].strip())
            continue
        m = re.match(r"function M\.([A-Za-z]\w*)\(([^)]*)\)", line)
        if m:
            words = [d for d in doc if not d.startswith("@")]
            if not any(words):
                raise HelpError(f"{source}:{n}: M.{m.group(1)} has no --- comment to document it")
            params = [p.strip() for p in m.group(2).split(",") if p.strip()]
            paragraphs = [" ".join(p.split("\n")) for p in "\n".join(words).split("\n\n")]
            out.append((m.group(1), params, [p.strip() for p in paragraphs if p.strip()]))
        doc = []
    return out


def lua_unquote(s: str) -> str:
    return re.sub(r"\\(.)", r"\1", s)


# Writing help -----------------------------------------------------------------------------


def right(left: str, tag: str) -> str:
    """`left` with `tag` at the end of the line (78 columns), or on a line of its own above."""
    if len(left) + 1 + len(tag) <= WIDTH:
        return left + " " * (WIDTH - len(left) - len(tag)) + tag
    return " " * (WIDTH - len(tag)) + tag + "\n" + left


def wrap(text: str, indent: int, source: str) -> list[str]:
    """Prose in lines of at most 78 columns from column `indent`, checked to be plain help text:
    no `*tag*` (it would be a tag of the file) and no line that would start an example."""
    lines = textwrap.wrap(
        text,
        WIDTH,
        initial_indent=" " * indent,
        subsequent_indent=" " * indent,
        break_long_words=False,
        break_on_hyphens=False,
    )
    for line in lines:
        if len(line) > WIDTH:
            raise HelpError(f"{source}: a word too long for a line of help: {line.strip()!r}")
        if re.search(r"(?:^| )>\w*$", line) or re.search(r"\*[^\s*|]+\*", line):
            raise HelpError(
                f"{source}: reads as help markup (an example or a tag): {line.strip()!r}"
            )
    return lines or [" " * indent]


def generate(root: Path = ROOT) -> str:
    """The help as the code says it: each part between its markers written again."""
    lines = (root / DOC).read_text(encoding="utf-8").split("\n")
    for source, section in SECTIONS.items():
        begin, end = BEGIN.format(source=source), END.format(source=source)
        if lines.count(begin) != 1 or lines.count(end) != 1:
            raise HelpError(f"{DOC}: want one line {begin!r} and one line {end!r}")
        i, j = lines.index(begin), lines.index(end)
        if j < i:
            raise HelpError(f"{DOC}: {end!r} comes before {begin!r}")
        body = "\n".join(section(root)).split("\n")
        lines[i + 1 : j] = body
    return "\n".join(lines)


def helptags(root: Path) -> None:
    """doc/tags again, made by Neovim's own `:helptags` (the file is committed)."""
    nvim = shutil.which("nvim", path=str(Path(sys.executable).parent)) or shutil.which("nvim")
    if not nvim:
        print("no nvim: run `:helptags doc` to bring doc/tags up to date", file=sys.stderr)
        return
    subprocess.run(
        [
            nvim,
            "--headless",
            "-u",
            "NONE",
            "-i",
            "NONE",
            "-c",
            f"helptags {root / 'doc'}",
            "-c",
            "qa!",
        ],
        check=True,
        capture_output=True,
        timeout=60,
    )


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n", 1)[0])
    parser.add_argument("--check", action="store_true", help="only say whether the help is current")
    parser.add_argument(
        "--root", type=Path, default=ROOT, help="the repository (default: this one)"
    )
    args = parser.parse_args(argv)
    try:
        want = generate(args.root)
    except HelpError as exc:
        print(f"gen_help: {exc}", file=sys.stderr)
        return 2
    have = (args.root / DOC).read_text(encoding="utf-8")
    if args.check:
        if want == have:
            return 0
        diff = difflib.unified_diff(
            have.splitlines(),
            want.splitlines(),
            f"{DOC} (as written)",
            f"{DOC} (as the code says)",
            lineterm="",
        )
        print("\n".join(diff))
        print(f"{DOC} is not what the code says: run `python scripts/gen_help.py`", file=sys.stderr)
        return 1
    if want != have:
        (args.root / DOC).write_text(want, encoding="utf-8")
        print(f"wrote {DOC}")
    helptags(args.root)
    return 0


if __name__ == "__main__":
    sys.exit(main())
