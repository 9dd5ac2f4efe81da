"""The quality of the suggestions shown: each gate, the repository's context, and the peer.

    python bench/quality.py [--per-language 48] [--server PATH/TO/llama-server] [--out ...]
    (--fresh: generate again instead of reusing .bench-cache/quality-generations.json)

Corpora, fetched by name with the registries a CI machine reaches, cached in .bench-cache/:
Python: requests 2.32.3 and httpx 0.28.1 (PyPI sdists); TypeScript: prosemirror-view 1.33.8
(npm pack); Go: spf13/cobra 1.6.1 (Debian's golang-github-spf13-cobra-dev, its sources under
/usr/share/gocode/src); Lua: Penlight 1.13.1 (Debian's lua-penlight, /usr/share/lua/5.1/pl; the other
Lua versions' folders link to it).
Each is indexed with the project's own indexer, lexical only (no embeddings).

Sites, where people pause, from the corpus's non-test source files (so the site's file is
in the index, as the file a user edits is), sampled with a fixed seed, spread over 4 kinds:

- newline: a fresh line inside a block, at the block's indentation (the line before is at
  the same indentation); expected: that real line's content;
- after `(`, after `=` (Go: also `:=`), after `.` (Lua: also the `:` of a method call);
  expected: the rest of the real line. The character is a real token (tree-sitter's leaf),
  not one inside a string or a comment.

The buffer keeps the text before the cursor and the lines after the current one; the rest
of the current line is removed. Sites are split into a dev half and a test half by a hash of
the file's path (whole files go to one half): the confidence threshold is chosen on dev and
the rows are reported on test, and on all sites.

One generation per site and engine mode, with every gate off (greedy decoding: a confidence
"stop" is the full generation cut at the first line below the threshold); each gate row is
`gates.apply` on that same generation with that gate's settings. Modes: "sequential" (the
context is gathered, then generation starts: what "parallel" gives once the context is ready,
without its timing dependence) and "local" (no context). Where the context engine sent no
snippet, the "local" prompt is the same text as the "sequential" one, and its generation (and
CPU time) is reused rather than run again. The hard deadline is raised to 60 s
so that a busy machine does not cut suggestions. The peer is llama-server with the same model,
prompted with the last 48 lines before the cursor as plain text (no FIM), greedy, the same
max tokens, `--cache-reuse 256` and `cache_prompt` (what llama.vim users run); its text is
cleaned with `complete.postprocess.clean` like ours.

Measures, per row, among the suggestions shown (non-empty after the row's gates):
- first-line exact match: the first line, stripped, equals the expected text, stripped;
- edit similarity: difflib's SequenceMatcher ratio of the same two strings (rapidfuzz is not
  installed here);
- keeps the buffer parseable: the buffer with the whole suggestion inserted at the cursor has
  no more ERROR and MISSING nodes (tree-sitter, the buffer's language) than without it;
- wrong language: an oracle independent of the gates (regular expressions, see FOREIGN):
  markers that the buffer's language never has and another language does, matched on the
  suggestion's lines (the first one joined to the text before the cursor) with string
  literals and the buffer's comments removed. It is checked below against every line of the
  corpora (lines of the buffer's language flagged: false positives; lines of the others
  flagged: its recall);
- CPU seconds per shown suggestion: process CPU time (time.process_time, which counts
  llama.cpp's threads and the context thread in this process) around each generation, plus
  the gates' own time, summed over all sites, over the number shown; for the peer, the
  server process's utime+stime from /proc around each request. The confidence rows are
  charged the full generation (the engine, stopping early, spends a little less).
"""

from __future__ import annotations

import argparse
import dataclasses
import difflib
import hashlib
import json
import os
import platform
import random
import re
import shutil
import subprocess
import sys
import time
import urllib.request
from collections import Counter, defaultdict
from pathlib import Path

HERE = Path(__file__).resolve().parent
REPO = HERE.parent
sys.path.insert(0, str(REPO / "src"))
sys.path.insert(0, str(HERE))

from llama_server import llama_server  # noqa: E402
from methods_ts import fetch_npm  # noqa: E402
from requests_seed import fetch_corpus  # noqa: E402

from repocontext.complete import gates  # noqa: E402
from repocontext.complete.cpu import Machine  # noqa: E402
from repocontext.complete.postprocess import CursorText, clean  # noqa: E402
from repocontext.config import Config, GenerationConfig  # noqa: E402
from repocontext.context.request import CursorRequest  # noqa: E402
from repocontext.lang.symbols import parse_tree  # noqa: E402
from repocontext.service import Repository  # noqa: E402

CACHE = REPO / ".bench-cache"
GENERATIONS = CACHE / "quality-generations.json"
SEED = 19
KINDS = ("newline", "paren", "equals", "dot")
KIND_LABEL = {
    "newline": "new line in a block",
    "paren": "after `(`",
    "equals": "after `=`",
    "dot": "after `.`",
}
SWEEP = (0.1, 0.2, 0.25, 0.3, 0.35, 0.4, 0.45, 0.5, 0.6, 0.7)
PEER_PREFIX_LINES = 48


# --- corpora -------------------------------------------------------------------------------
@dataclasses.dataclass(frozen=True)
class Corpus:
    name: str
    language: str  # python | typescript | go | lua
    fetch: tuple  # ("pip", spec, version) | ("npm", name, version) | ("deb", package, version)
    root_in: str  # the folder indexed, inside what was fetched
    sources: str  # the folder sites come from, inside the indexed root
    suffix: str


CORPORA = (
    Corpus("requests", "python", ("pip", "requests==2.32.3", "2.32.3"), ".", "src/requests", ".py"),
    Corpus("httpx", "python", ("pip", "httpx==0.28.1", "0.28.1"), ".", "httpx", ".py"),
    Corpus(
        "prosemirror-view", "typescript", ("npm", "prosemirror-view", "1.33.8"), ".", "src", ".ts"
    ),
    Corpus(
        "cobra",
        "go",
        ("deb", "golang-github-spf13-cobra-dev", "1.6.1-1"),
        "usr/share/gocode/src/github.com/spf13/cobra",
        ".",
        ".go",
    ),
    Corpus(
        "penlight", "lua", ("deb", "lua-penlight", "1.13.1-3"), "usr/share/lua/5.1", "pl", ".lua"
    ),
)
LANGUAGES = ("python", "typescript", "go", "lua")


def fetch_deb(package: str, version: str) -> Path:
    """A Debian package's files (`apt-get download`, `dpkg -x`), extracted once into .bench-cache."""
    root = CACHE / f"{package}-{version}"
    if not root.exists():
        debs = CACHE / "deb"
        debs.mkdir(parents=True, exist_ok=True)
        subprocess.run(
            ["apt-get", "download", "-q", f"{package}={version}"],
            cwd=debs,
            check=True,
            capture_output=True,
        )
        archive = next(debs.glob(f"{package}_*.deb"))
        partial = root.with_name(root.name + ".partial")
        shutil.rmtree(partial, ignore_errors=True)
        partial.mkdir()
        subprocess.run(["dpkg", "-x", str(archive), str(partial)], check=True)
        partial.rename(root)
    return root


def fetch(corpus: Corpus) -> Path:
    how, name, version = corpus.fetch
    if how == "pip":
        base = fetch_corpus(name, version)
    elif how == "npm":
        base = fetch_npm(name, version)
    else:
        base = fetch_deb(name, version)
    return (base / corpus.root_in).resolve()


def source_files(root: Path, corpus: Corpus) -> list[str]:
    out = []
    for p in sorted((root / corpus.sources).rglob(f"*{corpus.suffix}")):
        rel = p.relative_to(root).as_posix()
        if p.is_symlink() or re.search(r"(^|/)(tests?|testing)/|_test\.|\.test\.|\.d\.ts$", rel):
            continue
        out.append(rel)
    return out


# --- sites ---------------------------------------------------------------------------------
@dataclasses.dataclass
class Site:
    corpus: str
    language: str
    path: str
    line: int  # 1-based
    col: int  # characters: the cursor, in the cut line
    kind: str
    before: str  # the current line up to the cursor
    expected: str  # stripped
    half: str  # dev | test

    @property
    def key(self) -> str:
        return f"{self.corpus}:{self.path}:{self.line}:{self.col}:{self.kind}"


def _half(corpus: str, path: str) -> str:
    return "dev" if hashlib.sha1(f"{corpus}/{path}".encode()).digest()[0] % 2 == 0 else "test"


def _inside_string_or_comment(node) -> bool:
    while node is not None:
        if "string" in node.type or "comment" in node.type:
            return True
        node = node.parent
    return False


def _byte_col(text: str, col: int) -> int:
    return len(text[:col].encode())


def candidate_sites(root: Path, corpus: Corpus, path: str) -> list[Site]:
    text = (root / path).read_text(encoding="utf-8", errors="replace")
    lines = text.split("\n")
    source = text.encode()
    tree = parse_tree(source, corpus.language)
    if tree is None:
        return []
    starts = [0]
    for ln in lines:
        starts.append(starts[-1] + len(ln.encode()) + 1)
    half = _half(corpus.name, path)
    out: list[Site] = []

    def leaf(row: int, col: int, width: int):
        b = starts[row] + _byte_col(lines[row], col)
        return tree.root_node.descendant_for_byte_range(b, b + width)

    for row, full in enumerate(lines):
        stripped = full.strip()
        if not (6 <= len(stripped) <= 100) or row == 0:
            continue
        indent = len(full) - len(full.lstrip())
        prev = lines[row - 1]
        first = leaf(row, indent, 1)
        if first is None or _inside_string_or_comment(first):
            continue
        # a fresh line in a block, after a line of the same block
        if (
            indent > 0
            and prev.strip()
            and len(prev) - len(prev.lstrip()) == indent
            and not stripped.startswith(("#", "//", "--", "/*", "*"))
        ):
            out.append(
                Site(
                    corpus.name,
                    corpus.language,
                    path,
                    row + 1,
                    indent,
                    "newline",
                    full[:indent],
                    stripped,
                    half,
                )
            )
        for m in re.finditer(r":=|[(=.:]", full):
            col = m.end()
            token = m.group()
            node = leaf(row, m.start(), len(token))
            if node is None or node.type != token or _inside_string_or_comment(node):
                continue
            if token == "(":
                kind = "paren"
            elif token == "=" or (token == ":=" and corpus.language == "go"):
                kind = "equals"
            elif token == "." or (
                token == ":"
                and corpus.language == "lua"
                and node.parent is not None
                and node.parent.type == "method_index_expression"
            ):
                kind = "dot"
            else:
                continue
            rest = full[col:].strip()
            if not (2 <= len(rest) <= 80) or not re.search(r"\w", rest):
                continue
            out.append(
                Site(corpus.name, corpus.language, path, row + 1, col, kind, full[:col], rest, half)
            )
    return out


def sample_sites(roots: dict[str, Path], per_language: int, rng: random.Random) -> list[Site]:
    """`per_language` sites for each language, a quarter of each kind, at most two sites of a
    kind per file and one per line."""
    sites: list[Site] = []
    per_kind = per_language // len(KINDS)
    for language in LANGUAGES:
        pool: dict[str, list[Site]] = defaultdict(list)
        for corpus in CORPORA:
            if corpus.language != language:
                continue
            for path in source_files(roots[corpus.name], corpus):
                for s in candidate_sites(roots[corpus.name], corpus, path):
                    pool[s.kind].append(s)
        used_lines: set[tuple[str, str, int]] = set()
        for kind in KINDS:
            cands = pool[kind]
            rng.shuffle(cands)
            per_file: Counter = Counter()
            taken = 0
            for s in cands:
                if taken >= per_kind:
                    break
                where = (s.corpus, s.path, s.line)
                if where in used_lines or per_file[(s.corpus, s.path)] >= 2:
                    continue
                used_lines.add(where)
                per_file[(s.corpus, s.path)] += 1
                sites.append(s)
                taken += 1
    return sites


def buffer_of(root: Path, site: Site) -> list[str]:
    lines = (root / site.path).read_text(encoding="utf-8", errors="replace").split("\n")
    return lines[: site.line - 1] + [site.before] + lines[site.line :]


# --- the wrong-language oracle ---------------------------------------------------------------
# Per buffer language: patterns that language never has, each naming the language it betrays.
_GO_DECL = (r"^\s*[A-Za-z_]\w*(\s*,\s*[A-Za-z_]\w*)*\s*:=", "go")  # `x := ...` as a statement
_GO_FUNC = (r"\bfunc\s+(\([^)]*\)\s*)?\w+\s*\(", "go")
_GO_PACKAGE = (r"^\s*package\s+\w+\s*$", "go")
_NIL_CMP = (r"[!=]=\s*nil\b", "go")
_PY_DEF = (r"^\s*def\s+\w+\s*\(", "python")
_PY_ELIF = (r"^\s*elif\b", "python")
_PY_BLOCK = (r"^\s*(if|elif|else|for|while|with|try|except|finally|def)\b[^{};]*:\s*$", "python")
_PY_CONST = (r"\b(None|True|False)\b", "python")
_PY_FROM = (r"^\s*from\s+[\w.]+\s+import\b", "python")
_PY_IMPORT = (r"^\s*import\s+[A-Za-z_][\w.]*(\s+as\s+\w+)?\s*$", "python")
_PY_WORDS = (r"\bnot\s+in\b|\bis\s+not\b|\blambda\b[^:]*:", "python")
_LUA_LOCAL = (r"^\s*local\s+(function\b|[A-Za-z_]\w*\s*(=|,|$))", "lua")
_LUA_THEN = (r"\bthen\s*$", "lua")
_LUA_NE = (r"~=", "lua")
_LUA_END = (r"^\s*end\s*[)}]?\s*$", "lua")
_LUA_ELSEIF = (r"\belseif\b", "lua")
_LUA_CONCAT = (r"(?<![.\w])\s*\.\.(?!\.)\s*[\w'\"(]", "lua")
_LUA_FUNCTION = (r"\bfunction\b", "lua")
_JS_DECL = (r"^\s*(const|let|var)\s+[A-Za-z_$][\w$]*\s*(:[^=]+)?=(?!=)", "typescript")
_JS_LET = (r"^\s*let\s+[A-Za-z_$][\w$]*\s*(:[^=]+)?=(?!=)", "typescript")
_JS_ARROW = (r"=>", "typescript")
_JS_STRICT = (r"===|!==", "typescript")
_JS_THIS = (r"\bthis\.", "typescript")
_JS_NULL = (r"\b(null|undefined)\b", "typescript")
_JS_CONSOLE = (r"\bconsole\.(log|warn|error|info|debug)\(", "typescript")
_C_LOGIC = (r"&&|\|\|", "typescript/go")
_C_BRACE = (r"\)\s*\{\s*$", "typescript/go")
_BANG_EQ = (r"!=", "python/go/typescript")

FOREIGN: dict[str, list[tuple[str, str]]] = {
    "python": [
        _GO_DECL,
        _GO_FUNC,
        _GO_PACKAGE,
        _NIL_CMP,
        _LUA_LOCAL,
        _LUA_THEN,
        _LUA_NE,
        _LUA_END,
        _LUA_ELSEIF,
        _LUA_FUNCTION,
        _JS_DECL,
        _JS_ARROW,
        _JS_STRICT,
        _JS_THIS,
        _JS_NULL,
        _JS_CONSOLE,
        _C_LOGIC,
        _C_BRACE,
    ],
    "typescript": [
        (r":=", "go"),
        _GO_FUNC,
        _GO_PACKAGE,
        (r"\bnil\b", "go/lua"),
        _PY_DEF,
        _PY_ELIF,
        _PY_BLOCK,
        _PY_CONST,
        _PY_FROM,
        _PY_IMPORT,
        _PY_WORDS,
        _LUA_LOCAL,
        _LUA_THEN,
        _LUA_NE,
        _LUA_END,
        _LUA_ELSEIF,
        _LUA_CONCAT,
    ],
    "go": [
        _PY_DEF,
        _PY_ELIF,
        _PY_BLOCK,
        _PY_CONST,
        _PY_FROM,
        _PY_IMPORT,
        _PY_WORDS,
        (r"\bself\.\w+", "python"),
        _LUA_LOCAL,
        _LUA_THEN,
        _LUA_NE,
        _LUA_END,
        _LUA_ELSEIF,
        _LUA_CONCAT,
        _LUA_FUNCTION,
        _JS_LET,
        _JS_ARROW,
        _JS_STRICT,
        _JS_THIS,
        _JS_NULL,
        _JS_CONSOLE,
    ],
    "lua": [
        _PY_DEF,
        _PY_ELIF,
        _PY_BLOCK,
        _PY_CONST,
        _PY_FROM,
        _PY_IMPORT,
        _PY_WORDS,
        _GO_DECL,
        _GO_FUNC,
        _GO_PACKAGE,
        _BANG_EQ,
        _JS_DECL,
        _JS_ARROW,
        _JS_STRICT,
        _JS_THIS,
        _JS_NULL,
        _JS_CONSOLE,
        _C_LOGIC,
        _C_BRACE,
    ],
}
_FOREIGN_RE = {k: [(re.compile(p), lang) for p, lang in v] for k, v in FOREIGN.items()}
_STRING = r'"(?:[^"\\\n]|\\.)*"|\'(?:[^\'\\\n]|\\.)*\'|`[^`\n]*(?:`|$)'
_COMMENT = {"python": r"#.*$", "typescript": r"//.*$", "go": r"//.*$", "lua": r"--.*$"}
# strings and comments, whichever starts first, left to right
_QUOTED = {k: re.compile(f"(?P<s>{_STRING})|{c}") for k, c in _COMMENT.items()}


def _code_only(line: str, language: str) -> str:
    """The line with its string literals emptied and its comment removed."""
    return _QUOTED[language].sub(lambda m: '""' if m.group("s") else "", line)


def foreign_marker(language: str, before: str, text: str) -> str | None:
    """The first marker of another language in `text` (placed after `before`), or None."""
    lines = text.split("\n")
    lines[0] = before + lines[0]
    own = _code_only(before, language)  # the user's text: a marker there is not the suggestion's
    for i, line in enumerate(lines):
        line = _code_only(line, language)
        for rx, lang in _FOREIGN_RE[language]:
            if rx.search(line) and not (i == 0 and rx.search(own)):
                return f"{lang}: /{rx.pattern}/"
    return None


def oracle_check(roots: dict[str, Path]) -> dict:
    """The oracle on every line of every corpus: flagged lines of the buffer's own language
    (false positives) and of the other languages (recall), lines of 10+ characters outside
    strings and comments only."""
    per_lang: dict[str, list[str]] = defaultdict(list)
    for corpus in CORPORA:
        root = roots[corpus.name]
        for path in source_files(root, corpus):
            text = (root / path).read_text(encoding="utf-8", errors="replace")
            tree = parse_tree(text.encode(), corpus.language)
            lines = text.split("\n")
            offset = 0
            for ln in lines:
                s = ln.strip()
                b = offset + len(ln.encode()) - len(ln.lstrip().encode())
                offset += len(ln.encode()) + 1
                if len(s) < 10:
                    continue
                node = tree.root_node.descendant_for_byte_range(b, b + 1)
                if node is None or _inside_string_or_comment(node):
                    continue
                per_lang[corpus.language].append(ln)
    out = {}
    for buf in LANGUAGES:
        row = {}
        for src in LANGUAGES:
            flagged = [ln for ln in per_lang[src] if foreign_marker(buf, "", ln)]
            row[src] = (len(flagged), len(per_lang[src]), flagged[:3])
        out[buf] = row
    return out


# --- parseability ------------------------------------------------------------------------------
def error_count(source: str, language: str) -> int:
    tree = parse_tree(source.encode("utf-8", "surrogatepass"), language)
    if tree is None:
        return 0
    n, stack = 0, [tree.root_node]
    while stack:
        node = stack.pop()
        if node.is_error or node.is_missing:
            n += 1
        if node.has_error or node.is_error:
            stack.extend(node.children)
    return n


def keeps_parseable(lines: list[str], site: Site, text: str, base: int) -> bool:
    placed = lines[: site.line - 1] + [site.before + text] + lines[site.line :]
    return error_count("\n".join(placed), site.language) <= base


# --- generation ------------------------------------------------------------------------------
def generation_config(gated: bool = False) -> GenerationConfig:
    """The product's generation settings with every gate off (`gated`: the default gates) and
    no deadline pressure."""
    if gated:
        return GenerationConfig(hard_deadline_ms=60_000)
    return GenerationConfig(
        hard_deadline_ms=60_000, gate_syntax=False, gate_language=False, min_confidence=0.0
    )


def ungated_of(s) -> tuple[str, list[float]]:
    """The cleaned text before any gate, and each of its lines' confidence."""
    return s.ungated, list(s.line_confidence)


def run_engine(sites: list[Site], roots: dict[str, Path], store: dict, log) -> None:
    """One gates-off generation per site in "sequential" and in "local" mode, kept in `store`."""
    todo = [s for s in sites if any(f"{m}|{s.key}" not in store for m in ("sequential", "local"))]
    if not todo:
        return
    config = Config(generation=generation_config())
    backend = None
    for corpus in CORPORA:
        mine = sorted((s for s in todo if s.corpus == corpus.name), key=lambda s: (s.path, s.line))
        if not mine:
            continue
        os.environ["REPOCONTEXT_HOME"] = str(CACHE / f"home-quality-{corpus.name}")
        repo = Repository(roots[corpus.name], config=config)
        first = backend is None
        backend = backend or repo.generation_backend()
        engine = repo.completion_engine(backend=backend)
        if first:  # load the model and warm it up, outside the measures
            engine.complete(_request(mine[0], buffer_of(roots[corpus.name], mine[0])), "local")
        # the product's engine with its default gates, on every 8th site: its suggestion
        # should be what `gates.apply` makes of the gates-off generation
        product = Repository(roots[corpus.name], config=Config(generation=generation_config(True)))
        checker = product.completion_engine(backend=backend)
        for mode in ("sequential", "local"):
            for i, site in enumerate(mine):
                k = f"{mode}|{site.key}"
                if k in store:
                    continue
                seq = store.get(f"sequential|{site.key}")
                if mode == "local" and seq is not None and seq["snippets"] == 0:
                    # no context was sent: the same prompt, so the same greedy generation
                    store[k] = {**seq, "reused": True}
                    continue
                lines = buffer_of(roots[corpus.name], site)
                c0, t0 = time.process_time(), time.perf_counter()
                s = engine.complete(_request(site, lines), mode=mode)
                cpu = time.process_time() - c0
                text, conf = ungated_of(s)
                store[k] = {
                    "text": text,
                    "conf": conf,
                    "cpu": cpu,
                    "wall": time.perf_counter() - t0,
                    "snippets": s.snippets,
                    "status": s.status,
                    "generated": s.tokens_generated,
                }
                if mode == "sequential" and i % 8 == 0:  # the same prompt: still in the KV cache
                    on = checker.complete(_request(site, lines), mode=mode)
                    g = checker.gate_settings()
                    store[f"check|{site.key}"] = {
                        "text": on.suggestion,
                        "gate": on.gate,
                        "settings": [g.syntax, g.language, g.min_confidence],
                    }
                if i % 10 == 0:
                    log(f"{corpus.name} {mode} {i + 1}/{len(mine)} cpu {cpu:.2f}s {text[:40]!r}")
            GENERATIONS.write_text(json.dumps(store))
        for e in (engine, checker):
            e.close()
            if e.context is not None:
                e.context.store.close()


def _request(site: Site, lines: list[str]) -> CursorRequest:
    return CursorRequest(site.path, site.line, _byte_col(site.before, site.col), "\n".join(lines))


def _proc_cpu(pid: int) -> float:
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def _child_pid(name: str) -> int:
    me = os.getpid()
    for p in Path("/proc").iterdir():
        if not p.name.isdigit():
            continue
        try:
            stat = (p / "stat").read_text()
        except OSError:
            continue
        comm = stat[stat.index("(") + 1 : stat.rindex(")")]
        ppid = int(stat.rsplit(")", 1)[1].split()[1])
        if ppid == me and comm.startswith(name[:15]):
            return int(p.name)
    raise RuntimeError(f"no child process {name}")


def run_cpu_check(
    server: str, sites: list[Site], roots: dict[str, Path], store: dict, n: int, log
) -> None:
    """CPU per generation measured side by side: on `n` sites (seeded), ours in "sequential"
    and "local" mode and the peer, one after the other at each site, each with its prompt
    evaluated from scratch (our KV cache reset, the peer without cache_prompt), so that the
    three share whatever else the machine is doing."""
    from repocontext.complete.models import default_model_path

    picked = sorted(random.Random(SEED).sample(sites, n), key=lambda s: (s.corpus, s.path, s.line))
    todo = [s for s in picked if f"cpu|{s.key}" not in store]
    if not todo:
        return
    cfg = generation_config()
    threads = cfg.threads or os.cpu_count() or 1
    extra = [*Machine.current().extra_buffers().server_args()]
    backend = None
    with llama_server(server, default_model_path(), threads, extra) as port:
        pid = _child_pid(Path(server).name)
        url = f"http://127.0.0.1:{port}/completion"
        for i, site in enumerate(todo):
            os.environ["REPOCONTEXT_HOME"] = str(CACHE / f"home-quality-{site.corpus}")
            repo = Repository(roots[site.corpus], config=Config(generation=cfg))
            backend = backend or repo.generation_backend()
            engine = repo.completion_engine(backend=backend)
            lines = buffer_of(roots[site.corpus], site)
            if i == 0:  # load the model outside the measures
                engine.complete(_request(site, lines), mode="local")
            row = {}
            for mode in ("sequential", "local"):
                backend.reset()
                c0 = time.process_time()
                out = engine.complete(_request(site, lines), mode=mode)
                row[mode] = {
                    "cpu": time.process_time() - c0,
                    "evaluated": out.tokens_evaluated,
                    "generated": out.tokens_generated,
                }
            engine.close()
            if engine.context is not None:
                engine.context.store.close()
            start = max(0, site.line - 1 - PEER_PREFIX_LINES)
            prompt = "\n".join(lines[start : site.line - 1] + [site.before])
            body = {"prompt": prompt, "n_predict": cfg.max_tokens, "cache_prompt": False}
            c0 = _proc_cpu(pid)
            data = _post(url, {**body, "temperature": 0, "top_k": 1})
            timings = data.get("timings", {})
            row["peer"] = {
                "cpu": _proc_cpu(pid) - c0,
                "evaluated": timings.get("prompt_n", 0),
                "generated": timings.get("predicted_n", 0),
            }
            store[f"cpu|{site.key}"] = row
            log(
                f"cpu check {i + 1}/{len(todo)}: "
                + ", ".join(f"{k} {v['cpu']:.2f}s" for k, v in row.items())
            )
    GENERATIONS.write_text(json.dumps(store))


def _post(url: str, body: dict) -> dict:
    req = urllib.request.Request(
        url, json.dumps(body).encode(), {"Content-Type": "application/json"}
    )
    with urllib.request.urlopen(req, timeout=120) as r:
        return json.loads(r.read())


def run_peer(server: str, sites: list[Site], roots: dict[str, Path], store: dict, log) -> None:
    todo = sorted(
        (s for s in sites if f"peer|{s.key}" not in store), key=lambda s: (s.corpus, s.path, s.line)
    )
    if not todo:
        return
    from repocontext.complete.models import default_model_path

    cfg = GenerationConfig()
    threads = cfg.threads or os.cpu_count() or 1
    extra = ["--cache-reuse", "256", *Machine.current().extra_buffers().server_args()]
    with llama_server(server, default_model_path(), threads, extra) as port:
        pid = _child_pid(Path(server).name)
        url = f"http://127.0.0.1:{port}/completion"
        for i, site in enumerate(todo):
            lines = buffer_of(roots[site.corpus], site)
            start = max(0, site.line - 1 - PEER_PREFIX_LINES)
            prompt = "\n".join(lines[start : site.line - 1] + [site.before])
            body = json.dumps(
                {
                    "prompt": prompt,
                    "n_predict": cfg.max_tokens,
                    "cache_prompt": True,
                    "temperature": 0,
                    "top_k": 1,
                }
            ).encode()
            c0, t0 = _proc_cpu(pid), time.perf_counter()
            req = urllib.request.Request(url, body, {"Content-Type": "application/json"})
            with urllib.request.urlopen(req, timeout=120) as r:
                data = json.loads(r.read())
            cpu = _proc_cpu(pid) - c0
            cur = CursorText(site.before, "", tuple(lines[site.line : site.line + 3]))
            text = clean(data.get("content", ""), cur)
            store[f"peer|{site.key}"] = {
                "text": text,
                "raw": data.get("content", ""),
                "cpu": cpu,
                "wall": time.perf_counter() - t0,
            }
            if i % 20 == 0:
                log(f"peer {i + 1}/{len(todo)} cpu {cpu:.2f}s {text[:40]!r}")
    GENERATIONS.write_text(json.dumps(store))


# --- evaluation ------------------------------------------------------------------------------
@dataclasses.dataclass
class Outcome:
    site: Site
    text: str  # shown ("" when not)
    cpu: float
    gate: str | None = None
    parseable: bool | None = None
    wrong: str | None = None

    @property
    def shown(self) -> bool:
        return bool(self.text)

    @property
    def exact(self) -> bool:
        return self.text.split("\n", 1)[0].strip() == self.site.expected

    @property
    def similarity(self) -> float:
        first = self.text.split("\n", 1)[0].strip()
        return difflib.SequenceMatcher(None, first, self.site.expected).ratio()


class Evaluator:
    def __init__(self, sites: list[Site], roots: dict[str, Path], store: dict):
        self.sites = sites
        self.roots = roots
        self.store = store
        self.lines = {s.key: buffer_of(roots[s.corpus], s) for s in sites}
        self.base = {s.key: error_count("\n".join(self.lines[s.key]), s.language) for s in sites}
        self.confidence = all(store[f"sequential|{s.key}"]["conf"] is not None for s in sites)

    def outcome(self, site: Site, text: str, cpu: float, gate: str | None = None) -> Outcome:
        o = Outcome(site, text, cpu, gate)
        if o.shown:
            o.parseable = keeps_parseable(self.lines[site.key], site, text, self.base[site.key])
            o.wrong = foreign_marker(site.language, site.before, text)
        return o

    def gated(self, mode: str, settings: gates.GateSettings | None) -> list[Outcome]:
        out = []
        for site in self.sites:
            g = self.store[f"{mode}|{site.key}"]
            text, cpu, gate = g["text"], g["cpu"], None
            if settings is not None:
                c0 = time.process_time()
                where = gates.Placement(self.lines[site.key], site.line, site.col, site.language)
                conf = g["conf"] if g["conf"] is not None else []
                verdict = gates.apply(text, conf, where, settings)
                cpu += time.process_time() - c0
                text, gate = verdict.text, verdict.gate
            out.append(self.outcome(site, text, cpu, gate))
        return out

    def peer(self) -> list[Outcome] | None:
        if not all(f"peer|{s.key}" in self.store for s in self.sites):
            return None
        return [
            self.outcome(s, self.store[f"peer|{s.key}"]["text"], self.store[f"peer|{s.key}"]["cpu"])
            for s in self.sites
        ]


def summary(outcomes: list[Outcome]) -> dict:
    shown = [o for o in outcomes if o.shown]
    n = len(shown)
    return {
        "sites": len(outcomes),
        "shown": n,
        "exact": sum(o.exact for o in shown),
        "similarity": sum(o.similarity for o in shown) / n if n else float("nan"),
        "parseable": sum(bool(o.parseable) for o in shown),
        "wrong": sum(o.wrong is not None for o in shown),
        "cpu": sum(o.cpu for o in outcomes),
    }


def _pct(a: int, b: int) -> str:
    return f"{100 * a / b:.0f}% ({a}/{b})" if b else "-"


def table(
    rows: list[tuple[str, list[Outcome], str]], half: str | None, per_gen: dict[str, float]
) -> list[str]:
    """`per_gen`: mode -> CPU s per generation measured side by side (run_cpu_check)."""
    out = [
        "| row | shown | first-line exact, among shown | edit similarity, among shown | keep "
        "the buffer parseable | wrong language | CPU s per shown | CPU s per shown, side by "
        "side |",
        "|---|---|---|---|---|---|---|---|",
    ]
    for label, outcomes, mode in rows:
        sel = [o for o in outcomes if half is None or o.site.half == half]
        m = summary(sel)
        cpu = f"{m['cpu'] / m['shown']:.2f}" if m["shown"] else "-"
        side = per_gen.get(mode)
        side = f"{side * m['sites'] / m['shown']:.2f}" if side and m["shown"] else "-"
        out.append(
            f"| {label} | {_pct(m['shown'], m['sites'])} | {_pct(m['exact'], m['shown'])} | "
            f"{m['similarity']:.2f} | {_pct(m['parseable'], m['shown'])} | "
            f"{_pct(m['wrong'], m['shown'])} | {cpu} | {side} |"
        )
    return out


def cpu_check_lines(sites: list[Site], store: dict) -> tuple[dict[str, float], list[str]]:
    rows = [store[f"cpu|{s.key}"] for s in sites if f"cpu|{s.key}" in store]
    if not rows:
        return {}, []
    per_gen = {m: sum(r[m]["cpu"] for r in rows) / len(rows) for m in rows[0]}
    lines = [
        'The column "CPU s per shown" sums the CPU measured in the main run, whose phases '
        "(ours with context, ours without, the peer) ran at different times on a shared machine "
        "and met different loads; compare rows within one generator there. Across generators: "
        f"{len(rows)} sites (seeded), ours and the peer one after the other at each site, each "
        "prompt evaluated from scratch (our KV cache reset; the peer without cache_prompt), so "
        'that all three share the same load. The column "side by side" above is this mean '
        "CPU per generation times sites over shown (the confidence rows are charged the full "
        "generation).",
        "",
        "| | CPU s per generation | prompt tokens evaluated | tokens generated | CPU ms per "
        "token (evaluated + generated) |",
        "|---|---|---|---|---|",
    ]
    names = {"sequential": "ours, with context", "local": "ours, no context", "peer": "peer"}
    for m, name in names.items():
        cpu = per_gen[m]
        ev = sum(r[m]["evaluated"] for r in rows) / len(rows)
        gen = sum(r[m]["generated"] for r in rows) / len(rows)
        lines.append(
            f"| {name} | {cpu:.2f} | {ev:.0f} | {gen:.1f} | {1000 * cpu / max(1, ev + gen):.1f} |"
        )
    return per_gen, lines


def choose_threshold(ev: Evaluator) -> tuple[float | None, list[str]]:
    """The sweep on the dev half; the chosen value: the highest exact match among shown (all
    gates) that keeps at least 70% of the ungated suggestions shown."""
    if not ev.confidence:
        return None, ["Not measured: the engine does not report line confidence yet."]
    dev = [s for s in ev.sites if s.half == "dev"]
    base = summary([o for o in ev.gated("sequential", gates.OFF) if o.site.half == "dev"])
    lines = [
        f"Dev half ({len(dev)} sites). Ungated: {_pct(base['shown'], base['sites'])} shown, "
        f"{_pct(base['exact'], base['shown'])} exact among shown.",
        "",
        "| min_confidence | confidence alone: shown | exact among shown | all gates: shown | "
        "exact among shown | shown / ungated shown |",
        "|---|---|---|---|---|---|",
    ]
    best, best_em = None, -1.0
    for t in SWEEP:
        alone = summary(
            [o for o in ev.gated("sequential", _settings(False, False, t)) if o.site.half == "dev"]
        )
        both = summary(
            [o for o in ev.gated("sequential", _settings(True, True, t)) if o.site.half == "dev"]
        )
        kept = both["shown"] / base["shown"] if base["shown"] else 0.0
        em = both["exact"] / both["shown"] if both["shown"] else 0.0
        lines.append(
            f"| {t:.2f} | {_pct(alone['shown'], alone['sites'])} | "
            f"{_pct(alone['exact'], alone['shown'])} | {_pct(both['shown'], both['sites'])} | "
            f"{_pct(both['exact'], both['shown'])} | {100 * kept:.0f}% |"
        )
        if kept >= 0.70 and em > best_em:
            best, best_em = t, em
    return best, lines


def _settings(syntax: bool, language: bool, min_confidence: float) -> gates.GateSettings:
    return gates.GateSettings(syntax=syntax, language=language, min_confidence=min_confidence)


def goals(rows: dict[str, list[Outcome]], half: str | None) -> list[str]:
    sel = {k: [o for o in v if half is None or o.site.half == half] for k, v in rows.items()}
    off, on = summary(sel["off"]), summary(sel["all"])
    em_off = off["exact"] / off["shown"] if off["shown"] else 0.0
    em_on = on["exact"] / on["shown"] if on["shown"] else 0.0
    kept = on["shown"] / off["shown"] if off["shown"] else 0.0
    parse = on["parseable"] / on["shown"] if on["shown"] else 0.0

    def met(ok: bool) -> str:
        return "**met**" if ok else "**not met**"

    return [
        f"- First-line exact match among shown at least 1.5x the ungated figure: {100 * em_on:.0f}%"
        f" vs {100 * em_off:.0f}% ({em_on / em_off if em_off else float('nan'):.2f}x), "
        f"{met(em_on >= 1.5 * em_off)}.",
        f"- At least 70% of the ungated suggestions still shown: {100 * kept:.0f}% "
        f"({on['shown']} of {off['shown']}), {met(kept >= 0.70)}.",
        f"- No suggestion in another language shown: {on['wrong']}, {met(on['wrong'] == 0)}.",
        f"- At least 97% of those shown keep the buffer parseable: {100 * parse:.0f}%, "
        f"{met(parse >= 0.97)}.",
    ]


# --- main ------------------------------------------------------------------------------------
def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--per-language", type=int, default=48)
    ap.add_argument("--server", help="a llama-server binary, for the peer's row")
    ap.add_argument(
        "--cpu-check", type=int, default=24, help="sites measured side by side for CPU (0: none)"
    )
    ap.add_argument("--fresh", action="store_true", help="generate again, ignore the kept runs")
    ap.add_argument("--out", default=str(HERE / "results/quality.md"))
    ap.add_argument(
        "--sites-only", action="store_true", help="print the sites and the oracle's check"
    )
    args = ap.parse_args()
    started = time.time()

    def log(msg: str) -> None:
        print(f"[{time.time() - started:6.0f}s] {msg}", file=sys.stderr, flush=True)

    CACHE.mkdir(exist_ok=True)
    roots = {c.name: fetch(c) for c in CORPORA}
    config = Config(generation=generation_config())
    files_indexed = {}
    for corpus in CORPORA:
        os.environ["REPOCONTEXT_HOME"] = str(CACHE / f"home-quality-{corpus.name}")
        report = Repository(roots[corpus.name], config=config).index()
        files_indexed[corpus.name] = report.files
    log("indexed")
    sites = sample_sites(roots, args.per_language, random.Random(SEED))
    log(f"{len(sites)} sites")
    if args.sites_only:
        for s in sites:
            print(
                f"{s.half} {s.language:10} {s.kind:7} {s.corpus}:{s.path}:{s.line} "
                f"{s.before.strip()[-30:]!r} -> {s.expected!r}"
            )
        oracle = oracle_check(roots)
        for buf in LANGUAGES:
            for src in LANGUAGES:
                n, of, ex = oracle[buf][src]
                print(f"buffer {buf:10} lines {src:10} {n}/{of}", [e.strip() for e in ex])
        return 0
    store: dict = {}
    if GENERATIONS.exists() and not args.fresh:
        store = json.loads(GENERATIONS.read_text())
    store = {k: v for k, v in store.items() if k.split("|", 1)[1] in {s.key for s in sites}}
    run_engine(sites, roots, store, log)
    log("engine done")
    if args.server:
        run_peer(args.server, sites, roots, store, log)
        log("peer done")
        if args.cpu_check:
            run_cpu_check(args.server, sites, roots, store, args.cpu_check, log)
            log("cpu check done")

    ev = Evaluator(sites, roots, store)
    threshold, sweep = choose_threshold(ev)
    conf = threshold if threshold is not None else 0.0
    cfg = GenerationConfig()
    product = gates.GateSettings(cfg.gate_syntax, cfg.gate_language, cfg.min_confidence)
    configs = [
        ("off", "no gates", "sequential", gates.OFF),
        ("syntax", "syntax gate alone", "sequential", _settings(True, False, 0.0)),
        ("language", "language gate alone", "sequential", _settings(False, True, 0.0)),
        (
            "confidence",
            f"confidence gate alone (min_confidence {conf:.2f})",
            "sequential",
            _settings(False, False, conf),
        ),
        (
            "all",
            f"all gates (min_confidence {conf:.2f})",
            "sequential",
            _settings(True, True, conf),
        ),
        (
            "default",
            f"all gates, the product's default (min_confidence {product.min_confidence:.2f})",
            "sequential",
            product,
        ),
        ("local-off", "no context, no gates", "local", gates.OFF),
        (
            "local",
            f"no context, all gates (min_confidence {conf:.2f})",
            "local",
            _settings(True, True, conf),
        ),
    ]
    if not ev.confidence:
        configs = [c for c in configs if c[0] not in ("confidence", "default")]
    rows = {key: ev.gated(mode, settings) for key, _, mode, settings in configs}
    labels = {key: label for key, label, _, _ in configs}
    peer = ev.peer()
    if peer is not None:
        rows["peer"] = peer
        labels["peer"] = "peer: llama-server, plain prefix, no gates"
    modes = {key: mode for key, _, mode, _ in configs}
    modes["peer"] = "peer"
    ordered = [(labels[k], rows[k], modes[k]) for k in labels]
    per_gen, cpu_lines = cpu_check_lines(sites, store)
    # the product's engine (gates on) against `gates.apply` on the gates-off generation
    checked = []
    for site in sites:
        c = store.get(f"check|{site.key}")
        if c is not None:
            (derived,) = Evaluator([site], roots, store).gated(
                "sequential", gates.GateSettings(*c["settings"])
            )
            checked.append((derived, c))
    same = sum(o.text == c["text"] for o, c in checked)
    check_conf = sorted({c["settings"][2] for _, c in checked})
    oracle = oracle_check(roots)

    threads = GenerationConfig().threads or os.cpu_count()
    md = [
        "# Quality of the suggestions shown: gates, context and the peer (gemma-3-270m Q4_K_M)",
        "",
        f"Command: `python bench/quality.py {' '.join(sys.argv[1:])}`  ",
        f"Machine: {platform.machine()}, {os.cpu_count()} cores ({threads} llama.cpp threads), "
        f"Python {platform.python_version()}, {time.strftime('%Y-%m-%d %H:%M')} (shared: "
        "compare CPU between rows, not as absolute figures)  ",
        "Index: lexical only (no embeddings). Similarity: difflib ratio (rapidfuzz is not "
        "installed). Wrong language: the regular-expression oracle of bench/quality.py's "
        "FOREIGN, independent of the gates. Method: the docstring of bench/quality.py. "
        "Generations are kept in .bench-cache/quality-generations.json and the gate rows are "
        "derived again with the current complete/gates.py at every run (--fresh after a change "
        "to generation or prompts).",
        "",
        "## Corpora and sites",
        "",
        "| language | corpora (source files sampled) | sites (dev / test) | "
        + " | ".join(KIND_LABEL[k] for k in KINDS)
        + " |",
        "|---|---|---|" + "---|" * len(KINDS),
    ]
    for language in LANGUAGES:
        mine = [s for s in sites if s.language == language]
        names = ", ".join(
            f"{c.name} {c.fetch[2]} ({len(source_files(roots[c.name], c))})"
            for c in CORPORA
            if c.language == language
        )
        dev = sum(s.half == "dev" for s in mine)
        kinds = " | ".join(str(sum(s.kind == k for s in mine)) for k in KINDS)
        md.append(f"| {language} | {names} | {len(mine)} ({dev} / {len(mine) - dev}) | {kinds} |")
    n_test = sum(s.half == "test" for s in sites)
    md += [
        "",
        f"## Test half ({n_test} sites; the threshold chosen on the dev half)",
        "",
        *table(ordered, "test", per_gen),
        "",
        f"## All sites ({len(sites)})",
        "",
        *table(ordered, None, per_gen),
        "",
        "## CPU per generation, measured side by side",
        "",
        *(cpu_lines or ["Not measured in this run (--cpu-check 0 or no --server)."]),
        "",
        "## Goals (issue 19)",
        "",
        "Test half:",
        "",
        *goals(rows, "test"),
        "",
        "All sites:",
        "",
        *goals(rows, None),
        "",
        "## The confidence threshold, swept on the dev half",
        "",
        *sweep,
    ]
    if threshold is not None:
        md += [
            "",
            f"Chosen: {threshold:.2f} (the highest exact match among shown, all gates, that "
            "keeps at least 70% of the ungated suggestions shown).",
        ]
    md += ["", "## By language and kind (all sites): no gates -> all gates", ""]
    md += [
        "| language | kind | shown | exact among shown | parseable among shown | wrong language |",
        "|---|---|---|---|---|---|",
    ]
    for language in LANGUAGES:
        for kind in (*KINDS, None):
            sel = {
                k: summary(
                    [
                        o
                        for o in rows[k]
                        if o.site.language == language and (kind is None or o.site.kind == kind)
                    ]
                )
                for k in ("off", "all")
            }
            a, b = sel["off"], sel["all"]
            md.append(
                f"| {language} | {KIND_LABEL[kind] if kind else '**all kinds**'} | "
                f"{a['shown']} -> {b['shown']} of {a['sites']} | "
                f"{a['exact']}/{a['shown']} -> {b['exact']}/{b['shown']} | "
                f"{a['parseable']}/{a['shown']} -> {b['parseable']}/{b['shown']} | "
                f"{a['wrong']} -> {b['wrong']} |"
            )
    # what the gates did
    off, on = rows["off"], rows["all"]
    why = Counter(o.gate for o in on if o.gate)
    lost = [(a, b) for a, b in zip(off, on) if a.exact and not b.exact]
    md += [
        "",
        "## What the gates did (all gates, all sites)",
        "",
        "Verdicts: " + ", ".join(f"{k} {v}" for k, v in sorted(why.items())) + ".  ",
        f"Exact first lines the gates lost (dropped or cut): {len(lost)} of "
        f"{sum(o.exact for o in off if o.shown)}.",
    ]
    for a, b in lost[:12]:
        md.append(
            f"- {a.site.corpus} {a.site.path}:{a.site.line} ({a.site.kind}, {b.gate}): "
            f"`{a.site.before.strip()}` + `{a.text.split(chr(10), 1)[0].strip()}`"
            + (f" -> `{b.text.split(chr(10), 1)[0].strip()}`" if b.text else " -> dropped")
        )
    near = [(a, b) for a, b in zip(off, on) if a.shown and not b.shown and a.similarity >= 0.8]
    md.append(
        f"Dropped although close to the real line (edit similarity >= 0.8, not exact): "
        f"{sum(not a.exact for a, _ in near)}."
    )
    for a, b in near:
        if not a.exact:
            md.append(
                f"- {a.site.corpus} {a.site.path}:{a.site.line} ({a.site.kind}, {b.gate}): "
                f"`{a.site.before.strip()}` + `{a.text.split(chr(10), 1)[0].strip()}` "
                f"(real: `{a.site.expected}`)"
            )
    broken = [o for o in on if o.shown and not o.parseable]
    md += ["", f"Shown with all gates but adding parse errors: {len(broken)}."]
    for o in broken:
        md.append(
            f"- {o.site.corpus} {o.site.path}:{o.site.line} ({o.site.kind}, {o.gate}): "
            f"`{o.site.before.strip()}` + `{o.text[:100]!r}`"
        )
    md += ["", "Wrong-language suggestions (the oracle's finds), in any row:"]
    found = False
    for key, outcomes in rows.items():
        for o in outcomes:
            if o.wrong:
                found = True
                md.append(
                    f"- {labels[key]}: {o.site.corpus} {o.site.path}:{o.site.line} "
                    f"({o.site.kind}): `{o.site.before.strip()}` + `{o.text[:80]!r}` ({o.wrong})"
                )
    if not found:
        md.append("- none")
    md += [
        "",
        "## The wrong-language oracle, on the corpora's own lines",
        "",
        "Lines of 10+ characters not starting inside a string or comment, checked as if they "
        "were suggestions in each buffer language: the diagonal is its false-positive rate "
        "(real code flagged), the rest its recall on other languages' code.",
        "",
        "| buffer language | " + " | ".join(f"{src} lines flagged" for src in LANGUAGES) + " |",
        "|---|" + "---|" * len(LANGUAGES),
    ]
    for buf in LANGUAGES:
        md.append(
            f"| {buf} | "
            + " | ".join(_pct(oracle[buf][src][0], oracle[buf][src][1]) for src in LANGUAGES)
            + " |"
        )
    fps = [(buf, ln) for buf in LANGUAGES for ln in oracle[buf][buf][2]]
    if fps:
        md += [
            "",
            "False positives (first few): " + "; ".join(f"{b}: `{ln.strip()}`" for b, ln in fps),
        ]
    md += [
        "",
        "## Deriving the gate rows from one generation",
        "",
        f"On {len(checked)} sites (every 8th), the product's engine with its default gates "
        f"at the time of the run (min_confidence {', '.join(map(str, check_conf))}; generation "
        f"stopped early by the confidence gate) was run too: {same} of "
        f"{len(checked)} suggestions identical to `gates.apply` on the gates-off generation.",
    ]
    for o, c in checked:
        if o.text != c["text"]:
            md.append(
                f"- {o.site.corpus} {o.site.path}:{o.site.line}: engine {c['text'][:60]!r} "
                f"({c['gate']}), derived {o.text[:60]!r} ({o.gate})"
            )
    gen = [
        v
        for k, v in store.items()
        if k.split("|")[0] in ("sequential", "local") and not v.get("reused")
    ]
    md += [
        "",
        f"Generation: {sum(v['cpu'] for v in gen):.0f} CPU s in-process over {len(gen)} "
        f"generations; peer {sum(v['cpu'] for k, v in store.items() if k.startswith('peer|')):.0f}"
        " CPU s in the server.",
    ]
    text = "\n".join(md) + "\n"
    Path(args.out).write_text(text)
    print(text)
    return 0


if __name__ == "__main__":
    sys.exit(main())
