"""Keystrokes a typist saves with the ghost text, in a real Neovim, against a plain local plugin.

    python bench/savings.py [--repos python,typescript,go] [--lines 40] [--seed 17]
        [--rows ours,repo_off,plain,no_steering,no_scope,no_calls,no_copy,context_off,
                no_healing,no_member_bias,no_gate,context_160,no_abort,prompt_lookup,
                no_type_through,no_retire,peer]
        [--server PATH/TO/llama-server] [--out bench/results/savings.md] [--append] [--dump PATH]
    python bench/savings.py --from-dump PATH [--out ...]   (the tables again, nothing run)

Corpora (none of them this repository), fetched and cached in .bench-cache/ as bench/quality.py
does, each indexed fully (`Repository(root).index()` and `.embed()`, REPOCONTEXT_HOME in
.bench-cache/home-savings) before its first editor starts: Python: rich 13.9.4 (PyPI sdist,
lines from `rich/`); TypeScript: prosemirror-view 1.33.8 (npm pack, `src/**/*.ts`); Go:
spf13/cobra 1.6.1 (Debian's golang-github-spf13-cobra-dev, the folder under
usr/share/gocode/src is the root, non-test `.go` files). Test files, links and `.d.ts` are left
out (quality.py's source_files).

Lines: `--lines` real lines per repository, each at a new place (another file, or at least 100
lines from the line before in the same file; never the same line twice), drawn with a
random.Random seeded by `--seed` and the repository's name: 15-60 characters once stripped, no
tab inside, not starting like a comment or a string (`#`, `//`, `/*`, `*`, a quote, a
backtick) or a decorator (`@`), and not starting inside a comment or a string (tree-sitter:
no ancestor of the first non-blank character is a comment or string node; the lines of a
docstring). The same plan is typed in every row.

One session (a row, on one repository): a fresh headless Neovim with the plugin's defaults
(bench/editor.py's start(defaults=True)), the row's config file named by REPOCONTEXT_CONFIG
(inherited by the Python host), `:RepoContext root <root>`, the first file opened, then
editor.py's SETTLE_SECONDS. Per line: `:edit!` the file, the line blanked to its indentation,
the cursor there, `A`, a pause drawn from 0.5-1.5 s, then the line's characters one by one
(`nvim_input`), 0.10-0.20 s after each key, and after three in ten of the characters space
`(` `.` `=` `,` `[` another 0.3-1.0 s; then `<Esc>`. The pace comes from a random.Random seeded
by `--seed` and the repository's name alone, drawn in the same order whatever is shown, so
every row types with the same rhythm. The typist never accepts ("observe" mode).

A read, just before each key (the first one after the pause too) and before `<Esc>`, is one
`exec_lua`: the plugin's extmarks in the current buffer (namespace
`require('repocontext.suggestion').ns`; the inline `virt_text` on the cursor's row is the ghost
text's first line, `virt_lines` the lines after it: what the screen shows), Neovim's clock
(`vim.uv.hrtime()`), the cursor column and line, and, for the offline analysis, `_state()`'s
request id and text and its final reply's `line_confidence`, `gate`, `snippets`, `status`,
`source`. Every final reply is also kept by request id (a wrapper on `_on_done`): a suggestion
typed through while it streamed keeps its state, and its final reply, made for an older
changedtick, never reaches `_state()`. editor.py's PROBE (TextChangedI and `User
RepoContextShown` autocmds) runs too.

Definitions (a line's characters: the stripped line; its rest at a key: the characters not yet
typed; a ghost text's first line is compared with its trailing whitespace removed):
- shown: the read before a key has ghost text with a non-blank character (inline or in the
  lines below); wrong shown: shown, and the first line is not exactly the rest. Per 100 keys
  and as a share of shown, over the keys the line typist presses: up to and including its
  accept (a right one), not the keys after it that the observer went on typing. So a line has
  at most one right shown key (its accept), and the share wrong is at least 1 - lines taken /
  keys shown. Contradicted: shown, and the first line is not the start of the rest, or it
  ends the line (nothing inline, or lines below it) before the rest does; a first line that
  is the rest's start and stops there is right as far as it goes (accept-word takes it).
- line typist: at the first key of a line where the first line is exactly the rest (and not
  empty) it presses accept-line: `len(rest) - 1` keystrokes saved, the line taken. This is
  exact from the observations: the line ends when it accepts, and until then it typed what
  the observer typed.
- word typist: at each position, if the word that the plugin's accept_word takes from the
  ghost text's first line (lua/repocontext/init.lua: `^%s*[%w_]+`, else `^%s*[^%w_%s]+`, else
  all) is where the rest starts, it accepts it (1 key for the word) and tries the rest of that
  same ghost text on the next word, until one does not fit; then it types the next character
  and looks at the read recorded at that new position. An approximation: in the live run the
  typist typed every character, so after an accepted word the plugin had not been asked at
  the typist's own text. The plugin keeps the rest of the suggestion on screen after a word
  it inserts (suggestion.lua, `took`; before 2026-12-02 it came back from the engine's
  suggestion cache one round trip later), as the simulation takes it.
- saved: keystrokes saved over the characters typed (a taken line costs one accept key).
- first visible p50 / p95: editor.py's analyse() on the PROBE records, keystroke to the first
  `RepoContextShown` before the next key, over the keys that had one.
- CPU: the Python host and its children (/proc utime + stime, editor.py's cpu_seconds), from
  the first line's arrival to the last `<Esc>` (pauses and warming included); per saved
  keystroke of the line typist. Machine busy: all the machine's CPU over the row (/proc/stat,
  the row's own processes and any other session's), in cores: on a shared machine, a row
  that ran beside other work is slower and shows less.

The peer (no Neovim): llama-server with the same model (`--cache-reuse 256` and the CPU's
extra-buffer arguments, as editor.py's peer_replay), asked at each key moment of the `ours`
row (its TextChangedI time) in real time, idle gaps over 3 s shortened to 3 s, each new key
and each `<Esc>` aborting the request in flight. Prompt: the 64 lines before the cursor's
line (from the file) and the cursor's line up to the cursor after that key (from the read that
followed it): no context, no suffix, what a plain plugin sends a non-FIM model; streamed,
`n_predict` 24, `cache_prompt`, greedy (`temperature` 0, `top_k` 1), ended at the first newline
after some non-blank text. Its answer is visible at the read before the next key only when it
was complete (that first line) before that key. "peer, type-through": the same replay, where
a visible answer stays visible while the typed characters go on matching it (llama.vim's
cache); a newer visible answer replaces it. The peer is never asked before a line's first key
(ours only warms then). CPU: llama-server's /proc seconds over the replay.

Rows: `ours` (the defaults); `steered` (every steering source on: members, lines, scope,
calls, copy; the defaults turn members and lines on); `no_lines` (the repository's lines do not
steer); `repo_off` (`[context] use_repository = false`: a plain local
completer, no retrieval and nothing from the index steers; the buffer's names, signatures and
text still do); `plain` (that, and no steering at all: the plugin before issue 48);
`no_steering` (the repository on, no source steers); `no_scope`, `no_calls`, `no_copy` (one
steering source off each); `context_off` (`context_budget = 0`); `no_healing`, `no_member_bias`, `no_gate`, `no_abort` (`abort_long_chunks`
off), `prompt_lookup` (on; off by default): one engine lever each; `no_type_through` (a key
that types the ghost text's next character asks again, as any other key) and `no_retire` (a
ghost text the typed text contradicts stays drawn until a newer reply is rendered): the
plugin's Lua, turned off by `require('repocontext.probe').start(levers)`; `context_160`
(`context_budget = 160`, a smaller block); the peer. The default rows are ours, context_off, no_healing,
repo_off and the peer. `--append` adds the run's tables below what `--out` holds (a
second run, with its own `ours` row to compare with).

The gate sweep is a simulation on the recorded reads of `ours` (and `no_gate`, where it ran):
a shown ghost text whose final reply's `line_confidence[0]` is below T is taken as not shown
(reads without a confidence, cache hits or text streamed before a reply that never came, stay
as they were).
"""

from __future__ import annotations

import argparse
import http.client
import json
import os
import platform
import random
import re
import shutil
import socket
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
REPO = HERE.parent
sys.path.insert(0, str(REPO / "src"))
sys.path.insert(0, str(HERE))

from editor import (  # noqa: E402
    PROBE,
    SETTLE_SECONDS,
    analyse,
    children,
    cpu_seconds,
    host_pid,
    key,
    quit_,
    seen_after,
    start,
    work,
)
from llama_server import llama_server  # noqa: E402
from quality import Corpus, fetch, source_files  # noqa: E402
from stats import percentile as pct  # noqa: E402

from repocontext.complete.cpu import Machine  # noqa: E402
from repocontext.complete.models import default_model_path  # noqa: E402
from repocontext.lang.symbols import parse_tree  # noqa: E402
from repocontext.service import Repository  # noqa: E402

CACHE = REPO / ".bench-cache"
HOME = CACHE / "home-savings"
DEFAULT_OUT = HERE / "results/savings.md"

CORPORA = {
    "python": Corpus("rich 13.9.4", "python", ("pip", "rich==13.9.4", "13.9.4"), ".", "rich", ".py"),
    "typescript": Corpus(
        "prosemirror-view 1.33.8", "typescript", ("npm", "prosemirror-view", "1.33.8"), ".",
        "src", ".ts",
    ),
    "go": Corpus(
        "cobra 1.6.1", "go", ("deb", "golang-github-spf13-cobra-dev", "1.6.1-1"),
        "usr/share/gocode/src/github.com/spf13/cobra", ".", ".go",
    ),
}  # fmt: skip

# Each Neovim row: its [generation] settings (written to its own REPOCONTEXT_CONFIG file). A
# row whose option the engine does not know (yet) is skipped with a note.
ROWS: dict[str, dict[str, object]] = {
    "ours": {},
    # every steering source on (the defaults turn only members on)
    "steered": {"scope_bias": True, "call_bias": True, "copy_bias": True},
    # the repository off: a plain local completer, the buffer still steers (issue 48)
    "repo_off": {"context.use_repository": False},
    # nothing steers the decoder (the model's own choice, healing kept) with the repository on
    "no_steering": {
        "member_bias": False,
        "line_bias": False,
        "scope_bias": False,
        "call_bias": False,
        "copy_bias": False,
    },  # fmt: skip
    # the plain local completer of before issue 48: no repository, nothing steers
    "plain": {
        "context.use_repository": False,
        "member_bias": False,
        "line_bias": False,
        "scope_bias": False,
        "call_bias": False,
        "copy_bias": False,
    },  # fmt: skip
    "no_lines": {"line_bias": False},
    # the shipped sources and the scope source (context_use: first name right 13 -> 16 of 40
    # without the repository on requests, unchanged with it)
    "with_scope": {"scope_bias": True},
    "no_scope": {"scope_bias": False},
    "no_calls": {"call_bias": False},
    "no_copy": {"copy_bias": False},
    "context_off": {"context_budget": 0},
    "no_healing": {"token_healing": False},
    "no_member_bias": {"member_bias": False},
    "no_gate": {"min_confidence": 0.0},
    "context_160": {"context_budget": 160},
    "no_abort": {"abort_long_chunks": False},
    "prompt_lookup": {"prompt_lookup": True},
    "no_type_through": {},
    "no_retire": {},
}
# Rows whose lever is in the plugin's Lua, not the engine: require('repocontext.probe').start(...)
PLUGIN_LEVERS: dict[str, dict[str, bool]] = {
    "no_type_through": {"type_through": False},
    "no_retire": {"retire": False},
}
PEER = "peer"  # llama-server replayed at the `ours` row's key moments
PEER_THROUGH = "peer, type-through"
# no_gate is left out by default: the gate's sweep below simulates it from the ours row
EXTRA_ROWS = ("no_gate", "context_160", "no_abort", "prompt_lookup", "no_type_through", "no_retire",
              "steered", "no_steering", "plain", "no_scope", "with_scope", "no_calls", "no_copy",
              "context_off",
              "no_healing", "no_member_bias")  # fmt: skip
DEFAULT_ROWS = ",".join([*(r for r in ROWS if r not in EXTRA_ROWS), PEER])

# the typist
PAUSE_S = (0.5, 1.5)  # after `A`, before the first key
KEY_S = (0.10, 0.20)  # after each key
EXTRA_AFTER = " (.=,["  # after these characters, sometimes a longer pause
EXTRA_SHARE = 0.3
EXTRA_S = (0.3, 1.0)

# the lines
MIN_CHARS, MAX_CHARS = 15, 60
SKIP_STARTS = ("#", "//", "/*", "*", '"', "'", "`", "@")
NEW_PLACE_LINES = 100

# the peer
PEER_PREFIX_LINES = 64
PEER_TOKENS = 24
PEER_MAX_GAP_S = 3.0

SWEEP = (0.0, 0.2, 0.3, 0.4, 0.5, 0.6)

# The plugin's accept_word (lua/repocontext/init.lua M.accept_word), on Lua's ASCII classes
WORD = re.compile(r"\s*[A-Za-z0-9_]+|\s*[^A-Za-z0-9_\s]+", re.ASCII)

# One read of the screen: the plugin's extmarks and the suggestion's state (one exec_lua)
READ = """
local sug = require('repocontext.suggestion')
local plugin = require('repocontext')
_G.savings_read = function()
  local row, col = unpack(vim.api.nvim_win_get_cursor(0))
  local first, more = {}, {}
  for _, m in ipairs(vim.api.nvim_buf_get_extmarks(0, sug.ns, 0, -1, { details = true })) do
    local d = m[4]
    if d.virt_text and m[2] == row - 1 then
      for _, c in ipairs(d.virt_text) do first[#first + 1] = c[1] end
    end
    for _, l in ipairs(d.virt_lines or {}) do
      local t = {}
      for _, c in ipairs(l) do t[#t + 1] = c[1] end
      more[#more + 1] = table.concat(t)
    end
  end
  local s = plugin._state()
  local r = s.result or {}
  return { t = vim.uv.hrtime() / 1e6, col = col, line = vim.api.nvim_get_current_line(),
    first = table.concat(first), more = more, id = s.id, text = s.text,
    conf = r.line_confidence, gate = r.gate, snippets = r.snippets, status = r.status,
    source = r.source }
end
-- every final reply by request id, also those the screen dropped: a suggestion typed through
-- while it streamed keeps its state, and its final reply (an older changedtick) is dropped
_G.savings_done = {}
local on_done = plugin._on_done
plugin._on_done = function(r)
  local function n(v) if v == vim.NIL then return nil end return v end
  if n(r.id) then
    _G.savings_done[tostring(r.id)] = { conf = n(r.line_confidence), gate = n(r.gate),
      status = n(r.status), snippets = n(r.snippets), source = n(r.source),
      text = n(r.suggestion), ungated = n(r.ungated), t = vim.uv.hrtime() / 1e6,
      evaluated = n(r.tokens_evaluated), reused = n(r.tokens_reused),
      timings = n(r.timings_ms) }
  end
  return on_done(r)
end
"""
# PROBE keeps the whole buffer per key; the replay rebuilds its prompt from the reads instead
DROP_TEXTS = "for _, k in ipairs(_G.bench.keys) do k.text = nil end"
RECORD = """
local keys = {}
for i, k in ipairs(_G.bench.keys) do keys[i] = { t = k.t, row = k.row, col = k.col, tick = k.tick } end
return { keys = keys, shown = _G.bench.shown, done = _G.savings_done }
"""


# --- the lines -----------------------------------------------------------------------------


def in_comment_or_string(tree, row: int, col: int) -> bool:
    node = tree.root_node.descendant_for_point_range((row, col), (row, col))
    while node is not None:
        if "comment" in node.type or "string" in node.type:
            return True
        node = node.parent
    return False


def candidate_lines(root: Path, path: str, language: str) -> list[int]:
    """1-based numbers of the lines of `path` that may be typed (see the module's doc)."""
    text = (root / path).read_text(encoding="utf-8", errors="replace")
    tree = parse_tree(text.encode("utf-8"), language)
    out = []
    for i, line in enumerate(text.split("\n")):
        stripped = line.strip()
        if not MIN_CHARS <= len(stripped) <= MAX_CHARS or "\t" in stripped:
            continue
        if stripped.startswith(SKIP_STARTS):
            continue
        indent = line[: len(line) - len(line.lstrip())]
        if tree is not None and in_comment_or_string(tree, i, len(indent.encode("utf-8"))):
            continue
        out.append(i + 1)
    return out


def line_plan(root: Path, files: list[str], language: str, rng: random.Random, count: int):
    """`count` places {path, line, text}: each another file or 100+ lines from the one before,
    never the same line twice."""
    lines = {p: candidate_lines(root, p, language) for p in files}
    files = [p for p in files if lines[p]]
    if sum(len(v) for v in lines.values()) < count:
        raise SystemExit(f"{root}: only {sum(len(v) for v in lines.values())} lines to type")
    plan: list[dict] = []
    while len(plan) < count:
        path = rng.choice(files)
        line = rng.choice(lines[path])
        if plan and plan[-1]["path"] == path and abs(plan[-1]["line"] - line) < NEW_PLACE_LINES:
            continue
        if any(p["path"] == path and p["line"] == line for p in plan):
            continue
        text = (root / path).read_text(encoding="utf-8", errors="replace").split("\n")[line - 1]
        plan.append({"path": path, "line": line, "text": text.rstrip("\r")})
    return plan


# --- one Neovim session (a row) ------------------------------------------------------------


def settings_text(settings: dict) -> list[str]:
    """`key = value` lines of TOML."""
    toml = {True: "true", False: "false"}
    return [f"{k} = {toml[v] if isinstance(v, bool) else repr(v)}" for k, v in settings.items()]


def config_text(settings: dict) -> str:
    """A config file: keys are [generation]'s, or `section.key` for another section."""
    sections: dict[str, dict] = {}
    for option, value in settings.items():
        section, _, name = option.rpartition(".")
        sections.setdefault(section or "generation", {})[name] = value
    body = [line for name, values in sections.items()
            for line in (f"[{name}]", *settings_text(values))]  # fmt: skip
    return "\n".join([*body, ""]) if body else "# the defaults\n"


def config_problem(path: Path) -> str | None:
    """What the engine's config loader says about `path` (None: it loads), asked in a fresh
    process as the Python host will be, so an option added since this one started counts."""
    code = (
        "import sys; sys.path.insert(0, sys.argv[1]); from pathlib import Path; "
        "from repocontext.config import load_config; from repocontext.errors import ConfigError\n"
        "try: load_config(Path(sys.argv[2]))\n"
        "except ConfigError as exc: print(exc); sys.exit(3)"
    )
    out = subprocess.run([sys.executable, "-c", code, str(REPO / "src"), str(path)],
                         capture_output=True, text=True)  # fmt: skip
    if out.returncode == 0:
        return None
    said = out.stdout.strip() or out.stderr.strip().splitlines()[-1]
    return said.replace(str(path), "the file")


def busy_seconds() -> float:
    """CPU seconds the whole machine has been busy (/proc/stat: all processes, any session)."""
    fields = Path("/proc/stat").read_text().split("\n", 1)[0].split()[1:]
    user, nice, system, _idle, _iowait, irq, softirq = (int(v) for v in fields[:7])
    return (user + nice + system + irq + softirq) / os.sysconf("SC_CLK_TCK")


def timed(fn, *args) -> dict:
    """fn(*args), with its wall seconds and the machine's busy cores over it (ours included)."""
    t0, busy0 = time.perf_counter(), busy_seconds()
    result = fn(*args)
    result["seconds"] = time.perf_counter() - t0
    result["busy_cores"] = (busy_seconds() - busy0) / result["seconds"]
    return result


def session(base: Path, root: Path, plan: list[dict], pace_seed: str, levers: dict) -> dict:
    """One row: a fresh Neovim, the plan typed at the seeded pace, a read before each key."""
    rng = random.Random(pace_seed)
    nv = start(base, True, root, defaults=True)
    try:
        if levers:
            nv.exec_lua("require('repocontext.probe').start(...)", levers)
        # the corpora sit inside this repository's .git, which the root markers would take
        # first: the project is named as a user does (it is indexed already)
        nv.command(f"RepoContext root {root}")
        nv.command(f"edit {root / plan[0]['path']}")
        time.sleep(SETTLE_SECONDS)
        work_start = work(nv, root)
        nv.exec_lua(PROBE)
        nv.exec_lua(READ)
        pid = host_pid(nv)
        cpu0, t0 = cpu_seconds(pid), time.perf_counter()
        lines = []
        for place in plan:
            text = place["text"]
            typed = text.strip()
            nv.command(f"edit! {root / place['path']}")
            nv.current.buffer[place["line"] - 1] = text[: len(text) - len(text.lstrip())]
            nv.current.window.cursor = (place["line"], 0)
            nv.input("A")
            time.sleep(rng.uniform(*PAUSE_S))
            reads = []
            for ch in typed:
                reads.append(nv.exec_lua("return _G.savings_read()"))
                nv.input(key(ch))
                time.sleep(rng.uniform(*KEY_S))
                if ch in EXTRA_AFTER and rng.random() < EXTRA_SHARE:
                    time.sleep(rng.uniform(*EXTRA_S))
            end = nv.exec_lua("return _G.savings_read()")
            nv.input("<Esc>")
            esc_t = nv.exec_lua("return vim.uv.hrtime() / 1e6")
            nv.exec_lua(DROP_TEXTS)
            lines.append({"reads": reads, "end": end, "esc_t": esc_t})
        cpu1, seconds = cpu_seconds(pid), time.perf_counter() - t0
        record = nv.exec_lua(RECORD)
        work_end = work(nv, root)
        errors = nv.exec_lua("return require('repocontext').last_error()")
    finally:
        quit_(nv)
    return {"lines": lines, "record": record, "cpu_s": cpu1 - cpu0, "typing_s": seconds,
            "work_start": work_start, "work_end": work_end, "last_error": errors}  # fmt: skip


def key_moments(line: dict, times: list[float]) -> list[float]:
    """Neovim's time of each key of a line: the first TextChangedI (PROBE's `keys`, `times`
    sorted) after its read, or the read's own time if none came before the next read."""
    out = []
    reads = line["reads"]
    for p, r in enumerate(reads):
        nxt = reads[p + 1]["t"] if p + 1 < len(reads) else line["end"]["t"]
        out.append(next((t for t in times if r["t"] < t <= nxt), r["t"]))
    return out


# --- the peer ------------------------------------------------------------------------------


def line_end(text: str) -> int | None:
    """Where the answer's first line with some text ends: the first newline after a non-blank
    character."""
    for i, ch in enumerate(text):
        if ch == "\n" and text[:i].strip():
            return i
    return None


def peer_replay(server_bin: str, root: Path, plan: list[dict], ours: dict) -> dict:
    """llama-server asked at the `ours` row's key moments, on the text after each key; the next
    key or `<Esc>` aborts the request in flight. Returns per line and key: the moment (replay
    clock, s), the answer, and when its first line was complete; and the server's CPU."""
    times = sorted(k["t"] for k in ours["record"]["keys"] or [])
    events = []  # (Neovim ms, line index, key index or None for <Esc>)
    for li, line in enumerate(ours["lines"]):
        events += [(t, li, p) for p, t in enumerate(key_moments(line, times))]
        events.append((line["esc_t"], li, None))
    events.sort(key=lambda e: e[0])
    at, last, moments = 0.0, events[0][0] if events else 0.0, []
    for t, li, p in events:
        at += min((t - last) / 1000, PEER_MAX_GAP_S)
        last = t
        moments.append((at, li, p))
    files: dict[str, list[str]] = {}

    def prompt(li: int, p: int) -> str:
        place, line = plan[li], ours["lines"][li]
        if place["path"] not in files:
            files[place["path"]] = (root / place["path"]).read_text(
                encoding="utf-8", errors="replace").split("\n")  # fmt: skip
        row = place["line"] - 1  # 0-based: the lines above it are [:row]
        above = files[place["path"]][max(0, row - PEER_PREFIX_LINES) : row]
        after = line["reads"][p + 1] if p + 1 < len(line["reads"]) else line["end"]
        before = after["line"].encode("utf-8")[: after["col"]].decode("utf-8", "ignore")
        return "\n".join([*above, before])

    answers = [[None] * len(line["reads"]) for line in ours["lines"]]
    extra = ["--cache-reuse", "256", *Machine.current().extra_buffers().server_args()]
    with llama_server(server_bin, default_model_path(), os.cpu_count() or 1, extra) as port:
        server = next((c for c in children(os.getpid())
                       if Path(f"/proc/{c}/comm").read_text().startswith("llama")), None)  # fmt: skip
        cpu0 = cpu_seconds(server)
        current: list[http.client.HTTPConnection | None] = [None]
        t_base = time.perf_counter()

        def ask(ans: dict, text: str) -> None:
            conn = http.client.HTTPConnection("127.0.0.1", port, timeout=60)
            current[0] = conn
            body = json.dumps({"prompt": text, "n_predict": PEER_TOKENS, "cache_prompt": True,
                               "temperature": 0, "top_k": 1, "stream": True})  # fmt: skip
            got = ""
            try:
                conn.request("POST", "/completion", body, {"Content-Type": "application/json"})
                for raw in conn.getresponse():
                    if not raw.startswith(b"data: "):
                        continue
                    chunk = json.loads(raw[6:])
                    got += chunk.get("content", "")
                    now = time.perf_counter() - t_base
                    if ans["first_at"] is None and got:
                        ans["first_at"] = now
                    end = line_end(got)
                    if end is not None or chunk.get("stop"):
                        ans["text"] = got if end is None else got[:end]
                        ans["done_at"] = now
                        break
            except (OSError, http.client.HTTPException, ValueError):
                pass  # aborted by the next key
            finally:
                ans.setdefault("text", got)
                conn.close()

        def abort() -> None:
            if current[0] is not None and current[0].sock is not None:
                try:
                    current[0].sock.shutdown(socket.SHUT_RDWR)
                except OSError:
                    pass

        threads = []
        for n, (at, li, p) in enumerate(moments):
            time.sleep(max(0.0, at - (time.perf_counter() - t_base)))
            abort()
            if p is None:
                continue
            nxt = moments[n + 1][0] if n + 1 < len(moments) else at + 5.0
            ans = {"at": at, "until": nxt, "first_at": None, "done_at": None}
            answers[li][p] = ans
            th = threading.Thread(target=ask, args=(ans, prompt(li, p)), daemon=True)
            th.start()
            threads.append(th)
        for th in threads:
            th.join(timeout=60)
        cpu1 = cpu_seconds(server)
    return {"answers": answers, "cpu_s": cpu1 - cpu0, "typing_s": time.perf_counter() - t_base,
            "server_args": extra}  # fmt: skip


# --- what a typist sees and saves ------------------------------------------------------------

EMPTY = ("", [])


def ours_views(result: dict) -> list[list[tuple[str, list[str]]]]:
    """Per line, per position 0..n (n: the read before `<Esc>`): (first line, further lines)."""
    return [[(r.get("first") or "", list(r.get("more") or [])) for r in [*ln["reads"], ln["end"]]]
            for ln in result["lines"]]  # fmt: skip


def split_view(text: str) -> tuple[str, list[str]]:
    parts = text.split("\n")
    return parts[0], parts[1:]


def peer_views(peer: dict, typed: list[str], through: bool):
    """The peer's screen at each read: the answer to the key before, when complete in time;
    with `through`, else the last one shown while the typed characters go on matching it."""
    out = []
    for answers, chars in zip(peer["answers"], typed):
        views, anchor = [EMPTY], None  # nothing asked before a line's first key
        for p in range(1, len(chars) + 1):
            a = answers[p - 1] if p - 1 < len(answers) else None
            fresh = a is not None and a["done_at"] is not None and a["done_at"] < a["until"]
            if fresh and a["text"].strip():
                views.append(split_view(a["text"]))
                anchor = (p, a["text"])
                continue
            if through and anchor is not None:
                typed_since = chars[anchor[0] : p]
                if anchor[1].startswith(typed_since) and len(typed_since) < len(anchor[1]):
                    views.append(split_view(anchor[1][len(typed_since) :]))
                    continue
                anchor = None
            views.append(EMPTY)
        out.append(views)
    return out


def peer_first_ms(peer: dict, typed: list[str], through: bool) -> list[float]:
    """Key to visible, ms, for each key whose next read shows something: the answer's time,
    0 for a suggestion typed through."""
    out = []
    for answers, chars, views in zip(peer["answers"], typed, peer_views(peer, typed, through)):
        for p in range(len(chars)):
            a = answers[p]
            if not shows(views[p + 1]):
                continue
            fresh = a is not None and a["done_at"] is not None and a["done_at"] < a["until"]
            out.append(1000 * (a["done_at"] - a["at"]) if fresh and a["text"].strip() else 0.0)
    return out


def accept_word(text: str) -> str:
    m = WORD.match(text)
    return m.group(0) if m else text


def word_typist_keys(chars: str, firsts: list[str]) -> int:
    p, keys = 0, 0
    while p < len(chars):
        ghost = firsts[p]
        while ghost and p < len(chars):
            word = accept_word(ghost)
            if not chars.startswith(word, p):
                break
            keys, p, ghost = keys + 1, p + len(word), ghost[len(word) :]
        if p < len(chars):
            keys, p = keys + 1, p + 1
    return keys


def shows(view: tuple[str, list[str]]) -> bool:
    """Something to see: a non-blank character inline or in the lines below."""
    return bool((view[0] + "".join(view[1])).strip())


def contradicted(view: tuple[str, list[str]], rest: str) -> bool:
    """The ghost text shows something the user does not type next: its first line is not the
    start of the rest of the line, or it ends the line (lines below, or nothing inline) before
    the rest does. A first line that is the rest's start and stops there is not: right as far
    as it goes, and accept-word takes it."""
    first = view[0].rstrip()
    if not first or not rest.startswith(first):
        return True
    return bool(view[1]) and first != rest


def measure(typed: list[str], views) -> dict:
    """Counts (mergeable over repositories): characters, saved by each typist, lines taken,
    shown and wrong shown keys."""
    m = {"chars": 0, "lines": len(typed), "line_saved": 0, "taken": 0, "word_keys": 0,
         "keys": 0, "shown": 0, "wrong": 0, "contradicted": 0}  # fmt: skip
    for chars, vs in zip(typed, views):
        m["chars"] += len(chars)
        taken = next((p for p in range(len(chars)) if vs[p][0].rstrip() == chars[p:]), None)
        if taken is not None:
            m["taken"] += 1
            m["line_saved"] += len(chars) - taken - 1
        # shown and wrong over the keys the line typist pressed: up to its accept (which
        # counts, as a right one), not the keys after it that the observer went on typing
        pressed = len(chars) if taken is None else taken + 1
        m["keys"] += pressed
        for p in range(pressed):
            if shows(vs[p]):
                m["shown"] += 1
                m["wrong"] += vs[p][0].rstrip() != chars[p:]
                m["contradicted"] += contradicted(vs[p], chars[p:])
        m["word_keys"] += word_typist_keys(chars, [v[0] for v in vs])
    return m


def confidence(read: dict, done: dict) -> float | None:
    """The first line's confidence of what a read shows: its final reply's line_confidence[0]
    (the screen's state, else the final reply recorded for the state's request id)."""
    conf = read.get("conf") or (done.get(str(read.get("id"))) or {}).get("conf")
    return conf[0] if conf else None


def gated_views(result: dict, threshold: float):
    """ours_views with a read's ghost text hidden when its confidence is below `threshold`."""
    done = result["record"].get("done") or {}
    done = done if isinstance(done, dict) else {}  # an empty Lua table comes as a list
    out = []
    for ln, vs in zip(result["lines"], ours_views(result)):
        reads = [*ln["reads"], ln["end"]]
        out.append([EMPTY if (c := confidence(r, done)) is not None and c < threshold else v
                    for r, v in zip(reads, vs)])  # fmt: skip
    return out


def context_shown(result: dict, typed: list[str]) -> int:
    """Shown keys (as `measure` counts them) whose suggestion was made with retrieved context:
    the read's final reply, else the one recorded for its request id, had snippets."""
    done = result["record"].get("done") or {}
    done = done if isinstance(done, dict) else {}
    count = 0
    for chars, ln, vs in zip(typed, result["lines"], ours_views(result)):
        reads = [*ln["reads"], ln["end"]]
        taken = next((p for p in range(len(chars)) if vs[p][0].rstrip() == chars[p:]), None)
        for p in range(len(chars) if taken is None else taken + 1):
            if shows(vs[p]):
                snippets = reads[p].get("snippets")
                if snippets is None:
                    snippets = (done.get(str(reads[p].get("id"))) or {}).get("snippets")
                count += bool(snippets)
    return count


def row_figures(rep: dict, row: str) -> dict | None:
    """The measures of one row on one repository, from the dump's data."""
    typed = [p["text"].strip() for p in rep["plan"]]
    rows = rep["rows"]
    if row in (PEER, PEER_THROUGH):
        peer = rows.get(PEER)
        if peer is None:
            return None
        through = row == PEER_THROUGH
        m = measure(typed, peer_views(peer, typed, through))
        m.update(first=peer_first_ms(peer, typed, through), cpu_s=peer["cpu_s"],
                 seconds=peer["seconds"], busy_s=peer["busy_cores"] * peer["seconds"])  # fmt: skip
        return m
    result = rows.get(row)
    if result is None:
        return None
    m = measure(typed, ours_views(result))
    m["with_context"] = context_shown(result, typed)
    m.update(first=analyse(result["record"], [])["first"], cpu_s=result["cpu_s"],
             seconds=result["seconds"], busy_s=result["busy_cores"] * result["seconds"])  # fmt: skip
    return m


def merge(figures: list[dict]) -> dict:
    out: dict = {}
    for f in figures:
        for k, v in f.items():
            out[k] = out.get(k, [] if isinstance(v, list) else 0) + v
    return out


# --- the tables ----------------------------------------------------------------------------


def share(n: float, d: float) -> str:
    return f"{100 * n / d:.1f}%" if d else "-"


def table_line(label: str, m: dict) -> str:
    chars, keys = m["chars"], m["keys"]
    first = m["first"]
    p50 = f"{pct(first, 50):.0f} / {pct(first, 95):.0f}" if first else "-"
    per_saved = f"{m['cpu_s'] / m['line_saved']:.2f}" if m["line_saved"] else "-"
    return (f"| {label} | {share(m['line_saved'], chars)} | {share(chars - m['word_keys'], chars)}"
            f" | {m['taken']}/{m['lines']} | {share(m['shown'], keys)} | "
            f"{100 * m['wrong'] / max(1, keys):.1f} | {share(m['wrong'], m['shown'])} | "
            f"{share(m.get('contradicted', 0), m['shown'])} | {p50} | "
            f"{share(m['with_context'], m['shown']) if 'with_context' in m else '-'} | "
            f"{m['cpu_s']:.1f} | {per_saved} | {m['seconds'] / 60:.1f} | "
            f"{m['busy_s'] / max(1e-9, m['seconds']):.2f} |")  # fmt: skip


HEADER = [
    "| row | saved, line typist | saved, word typist | lines taken | keys shown | wrong shown "
    "per 100 keys | wrong, share of shown | contradicted, share of shown | first visible p50 / "
    "p95 ms | shown with context | CPU s | CPU s per saved key (line) | minutes | machine busy, "
    "cores |",
    "|---|---|---|---|---|---|---|---|---|---|---|---|---|---|",
]


def render(data: dict) -> str:
    l0, l1 = data["load0"], data.get("load1", data["load0"])
    out = [
        "# Keystrokes saved: the plugin against a plain local plugin, in a real Neovim",
        "",
        f"Command: `{data['command']}`  ",
        f"Machine: {data['machine']}, {data['started']}; load average (1/5/15 min) "
        f"{l0[0]:.2f} / {l0[1]:.2f} / {l0[2]:.2f} at the start, {l1[0]:.2f} / {l1[1]:.2f} / "
        f"{l1[2]:.2f} at the end (cores shared with other sessions: compare rows of one run)",
        "",
        "Method (bench/savings.py's docstring has it in full): real lines of three other "
        f"projects, {data['lines']} a repository, each at a new place, typed again in a fresh "
        "headless Neovim per row with the plugin's defaults and the row's config: a 0.5-1.5 s "
        "pause after `A`, 150 +- 50 ms a key, 0.3-1.0 s more after three in ten of space ( . "
        "= , [ (seeded: the same rhythm in every row), nothing accepted. Just before each key "
        "the screen is read (the plugin's extmarks). Typists computed from those reads: the "
        "line typist presses accept-line at the first key where the ghost text's first line is "
        "exactly the rest of the line (exact); the word typist accepts the plugin's words while "
        "they fit and types a character otherwise (an approximation: it reads what was shown "
        "to the observer at that position). Saved: keystrokes saved over characters typed. "
        "Shown: a key whose read had ghost text (over the keys the line typist presses, its accept included); wrong: shown, and the first line is not the "
        "rest of the line. First visible: key to the first `RepoContextShown` before the next "
        "key (editor.py's analyse()). Shown with context: of the shown keys, those whose "
        "suggestion's prompt had retrieved snippets. CPU: the Python host with its children (ours), "
        "llama-server (peer). The peer is llama-server with the same model asked at the ours "
        "row's key moments in real time (a newer key aborts the request in flight), the 64 "
        "lines before the cursor and the line up to it as the prompt, 24 tokens, greedy, "
        "visible when its first line was complete before the next key; with type-through, an "
        "answer also stays while the typed characters match it.",
        "",
    ]
    rows_seen: list[str] = []
    per_row: dict[str, list[dict]] = {}
    for rep in data["repos"].values():
        out += [f"## {rep['label']} ({len(rep['plan'])} lines, "
                f"{sum(len(p['text'].strip()) for p in rep['plan'])} characters)", "",
                *HEADER]  # fmt: skip
        for row in [*rep["rows"], PEER_THROUGH] if PEER in rep["rows"] else list(rep["rows"]):
            m = row_figures(rep, row)
            if m is None:
                continue
            out.append(table_line(row, m))
            per_row.setdefault(row, []).append(m)
            if row not in rows_seen:
                rows_seen.append(row)
        out.append("")
    if len(data["repos"]) > 1:
        out += ["## All repositories", "", *HEADER]
        out += [table_line(f"{row} ({len(per_row[row])} repositories)", merge(per_row[row]))
                for row in rows_seen]  # fmt: skip
        out.append("")
    out += render_sweep(data)
    out += render_tail(data)
    notes = list(data.get("notes", []))
    for rep in data["repos"].values():
        for row, result in rep["rows"].items():
            if row == PEER:
                continue
            typed = [p["text"].strip() for p in rep["plan"]]
            off = sum(1 for ln, chars in zip(result["lines"], typed)
                      for p, r in enumerate([*ln["reads"], ln["end"]])
                      if r["line"].lstrip() != chars[:p])  # fmt: skip
            if off:
                notes.append(f"{rep['label']}, {row}: {off} reads where the buffer's line was "
                             "not the characters typed so far (a lost or changed key)")  # fmt: skip
            if result.get("last_error"):
                notes.append(f"{rep['label']}, {row}: the plugin's last error: "
                             f"{result['last_error']}")  # fmt: skip
    if notes:
        out += ["## Notes", "", *[f"- {n}" for n in notes], ""]
    return "\n".join(out)


TAIL_MS = 100  # the goal for first visible p95
PAUSED_S = 0.25  # a gap before a key longer than the pace's 0.20 s: a pause


def key_latencies(result: dict, typed: list[str]):
    """Per key of a Neovim row: (its kind, first visible ms or None, the request that showed
    it: its done record or None, whether it was drawn by typing through). Kinds: `first` (a line's first key, after the pause at the
    place), `paused` (after a longer pause mid-line), `pace`."""
    record = result["record"]
    done = record.get("done") or {}
    done = done if isinstance(done, dict) else {}
    keys, shown = record["keys"], record["shown"]
    reads = [r for ln in result["lines"] for r in [*ln["reads"][1:], ln["end"]]]
    starts = {sum(len(c) for c in typed[:i]) for i in range(len(typed))}
    out = []
    for i, k in enumerate(keys):
        seen = seen_after(keys, shown, i)
        gap = (k["t"] - keys[i - 1]["t"]) / 1000 if i else float("inf")
        kind = "first" if i in starts else "paused" if gap > PAUSED_S else "pace"
        rec = done.get(str(reads[i].get("id"))) if i < len(reads) else None
        through = bool(seen) and seen[0].get("through", False)
        out.append((kind, seen[0]["t"] - k["t"] if seen else None, rec, through))
    return out


def render_tail(data: dict) -> list[str]:
    """Where the first visible ghost text's slow keys are, per row: by kind of key, and what
    the engine spent on the request that showed it (its own clock: from the request's arrival
    to its first token; the rest of the latency is the trip, the wait for the request before
    it to stop, and tokens that showed nothing yet)."""
    rows: dict[str, list] = {}
    for rep in data["repos"].values():
        typed = [p["text"].strip() for p in rep["plan"]]
        for row, result in rep["rows"].items():
            if row == PEER or len(result["record"]["keys"]) != sum(len(c) for c in typed):
                continue
            rows.setdefault(row, []).extend(key_latencies(result, typed))
    if not rows:
        return []
    out = ["## Where the slow first ghost texts are (all repositories)", "",
           f"Per key kind: `first` is a line's first key (after the pause at the new place), "
           f"`paused` a key after a gap over {PAUSED_S} s mid-line, `pace` the others; `all, not "
           "typed through`: the keys whose first ghost text was not the one they typed through "
           "(drawn in the key's own TextChangedI, at 0 ms). Over "
           f"{TAIL_MS} ms: keys whose first ghost text came later than that (of the keys that had "
           "one before the next key). Engine: the request that showed it, on its own clock "
           "(arrival to first token), and the prompt tokens it evaluated; medians over the slow "
           "keys. Requests: final replies the plugin received in the row.", "",
           "| row | requests | kind | keys | had one | p50 / p95 ms | over 100 ms | engine first "
           "token ms, slow keys | tokens evaluated, slow keys |",
           "|---|---|---|---|---|---|---|---|---|"]  # fmt: skip
    for row, keys in rows.items():
        requests = sum(len(d) if isinstance(d := r["record"].get("done"), dict) else 0
                       for rep in data["repos"].values() if (r := rep["rows"].get(row)))  # fmt: skip
        for kind in ("first", "paused", "pace", "all", "all, not typed through"):
            mine = [
                k
                for k in keys
                if kind == "all" or kind == k[0] or (kind[:4] == "all," and not k[3])
            ]
            lat = [ms for _, ms, _, _ in mine if ms is not None]
            slow = [(ms, rec) for _, ms, rec, _ in mine if ms is not None and ms > TAIL_MS]
            firsts = [t["first_token"] for _, rec in slow if rec and (t := rec.get("timings"))
                      and t.get("first_token") is not None]  # fmt: skip
            evals = [
                rec["evaluated"] for _, rec in slow if rec and rec.get("evaluated") is not None
            ]
            ps = f"{pct(lat, 50):.0f} / {pct(lat, 95):.0f}" if lat else "-"
            out.append(f"| {row} | {requests if kind == 'all' else ''} | {kind} | {len(mine)} | "  # noqa: E501
                       f"{share(len(lat), len(mine))} | {ps} | {share(len(slow), len(lat))} | "
                       f"{f'{pct(firsts, 50):.0f}' if firsts else '-'} | "
                       f"{f'{pct(evals, 50):.0f}' if evals else '-'} |")  # fmt: skip
    return [*out, ""]


def render_sweep(data: dict) -> list[str]:
    """The confidence gate offline, on the recorded reads of ours (and no_gate, where run)."""
    out = []
    for row in ("ours", "no_gate"):
        reps = [rep for rep in data["repos"].values() if row in rep["rows"]]
        if not reps:
            continue
        with_conf = shown = 0
        for rep in reps:
            result = rep["rows"][row]
            done = result["record"].get("done") or {}
            done = done if isinstance(done, dict) else {}
            for ln, vs in zip(result["lines"], ours_views(result)):
                for r, v in zip(ln["reads"], vs):
                    shown += shows(v)
                    with_conf += shows(v) and confidence(r, done) is not None
        out += [
            f"## The confidence gate, simulated on the `{row}` row's reads (all repositories)",
            "",
            f"A shown ghost text is hidden when its reply's `line_confidence[0]` is below T; "
            f"{with_conf} of the {shown} shown keys had a confidence recorded (the final reply "
            "of the suggestion on screen, by request id; the others, cache hits or text "
            "streamed before a reply that never came, stay shown). A simulation: nothing was "
            "run again."
            + (" This row ran with the default gate (min_confidence 0.45), so T at or below it "
               "changes little." if row == "ours" else ""),
            "",
            "| T | keys shown | wrong, share of shown | lines taken | saved, line typist | "
            "saved, word typist |",
            "|---|---|---|---|---|---|",
        ]  # fmt: skip
        for t in SWEEP:
            m = merge([measure([p["text"].strip() for p in rep["plan"]],
                               gated_views(rep["rows"][row], t)) for rep in reps])  # fmt: skip
            out.append(f"| {t:g} | {share(m['shown'], m['chars'])} | "
                       f"{share(m['wrong'], m['shown'])} | {m['taken']}/{m['lines']} | "
                       f"{share(m['line_saved'], m['chars'])} | "
                       f"{share(m['chars'] - m['word_keys'], m['chars'])} |")  # fmt: skip
        out.append("")
    return out


# --- the run -------------------------------------------------------------------------------


def default_server() -> str | None:
    found = sorted(Path.home().glob(".cache/repocontext/llama-server-*/build/bin/llama-server"))
    return str(found[-1]) if found else None


def command(args) -> str:
    parts = ["python bench/savings.py", f"--repos {args.repos}", f"--lines {args.lines}",
             f"--rows {args.rows}", f"--seed {args.seed}"]  # fmt: skip
    if PEER in args.rows.split(","):
        parts.append(f"--server {args.server}")
    if Path(args.out).resolve() != DEFAULT_OUT.resolve():
        parts.append(f"--out {args.out}")
    if args.append:
        parts.append("--append")
    if args.dump:
        parts.append(f"--dump {args.dump}")
    return " ".join(parts)


def machine() -> str:
    model = ""
    try:
        model = next((ln.split(":", 1)[1].strip() for ln in
                      Path("/proc/cpuinfo").read_text().splitlines()
                      if ln.startswith("model name")), "")  # fmt: skip
    except OSError:
        pass
    return (f"{platform.system()} {platform.machine()}{f' ({model})' if model else ''}, "
            f"{os.cpu_count()} cores, Python {platform.python_version()}")  # fmt: skip


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--repos", default=",".join(CORPORA), help="of: " + ", ".join(CORPORA))
    ap.add_argument("--lines", type=int, default=40, help="lines typed per repository")
    ap.add_argument("--rows", default=DEFAULT_ROWS, help="of: " + ", ".join([*ROWS, PEER]))
    ap.add_argument("--seed", type=int, default=17)
    ap.add_argument("--server", default=default_server(), help="llama-server, for the peer")
    ap.add_argument("--out", default=str(DEFAULT_OUT))
    ap.add_argument("--append", action="store_true", help="add the tables below --out's text")
    ap.add_argument("--dump", help="write every raw observation here (JSON)")
    ap.add_argument("--from-dump", metavar="PATH", help="only render the tables from a --dump")
    args = ap.parse_args()
    if args.from_dump:
        write(Path(args.out), render(json.loads(Path(args.from_dump).read_text())), args.append)
        return 0
    rows = args.rows.split(",")
    unknown = [r for r in rows if r not in ROWS and r != PEER]
    if unknown or any(r not in CORPORA for r in args.repos.split(",")):
        ap.error(f"unknown row or repository: {unknown or args.repos}")
    if PEER in rows and "ours" not in rows:
        ap.error("the peer replays the ours row's key moments: add ours to --rows")
    if PEER in rows and not (args.server and Path(args.server).exists()):
        ap.error("the peer needs --server PATH/TO/llama-server")

    base = Path(tempfile.mkdtemp(prefix="rc-savings-"))
    env = {"XDG_CONFIG_HOME": base / "config", "XDG_DATA_HOME": base / "data",
           "XDG_STATE_HOME": base / "state", "NVIM_RPLUGIN_MANIFEST": base / "rplugin.vim",
           "REPOCONTEXT_HOME": HOME}  # fmt: skip
    os.environ.update({k: str(v) for k, v in env.items()})
    configs, notes = {}, []
    defaults = base / "config-index.toml"  # what the indexing before the editors reads
    defaults.write_text(config_text({}))
    for row in [r for r in rows if r in ROWS]:
        path = base / f"config-{row}.toml"
        path.write_text(config_text(ROWS[row]))
        problem = config_problem(path)
        if problem:
            said = problem.split(";")[0]
            note = (f"row {row} skipped: the engine does not take "
                    f"`{', '.join(settings_text(ROWS[row]))}` ({said})")  # fmt: skip
            print(note, flush=True)
            notes.append(note)
            continue
        configs[row] = path
    if "ours" not in configs and PEER in rows:
        raise SystemExit("the ours row cannot run, nor then the peer")

    data = {"command": command(args), "machine": machine(), "lines": args.lines,
            "started": time.strftime("%Y-%m-%d %H:%M UTC", time.gmtime()),
            "load0": os.getloadavg(), "repos": {}, "notes": notes}  # fmt: skip
    try:
        for name in args.repos.split(","):
            corpus = CORPORA[name]
            root = fetch(corpus)
            os.environ["REPOCONTEXT_CONFIG"] = str(defaults)
            t0 = time.perf_counter()
            repo = Repository(root)
            repo.index()
            repo.embed()
            index_s = time.perf_counter() - t0
            print(f"{corpus.name}: indexed in {index_s:.0f} s", flush=True)
            plan = line_plan(root, source_files(root, corpus), corpus.language,
                             random.Random(f"{args.seed}-{name}"), args.lines)  # fmt: skip
            rep = {"label": corpus.name, "root": str(root), "plan": plan, "index_s": index_s,
                   "rows": {}}  # fmt: skip
            data["repos"][name] = rep
            for row in [r for r in rows if r in configs]:
                os.environ["REPOCONTEXT_CONFIG"] = str(configs[row])
                pace = f"{args.seed}-{name}-pace"
                result = timed(session, base, root, plan, pace, PLUGIN_LEVERS.get(row, {}))
                rep["rows"][row] = result
                print(f"{corpus.name}, {row}: {result['seconds']:.0f} s (machine busy "
                      f"{result['busy_cores']:.2f} cores)", flush=True)  # fmt: skip
            if PEER in rows:
                peer = timed(peer_replay, args.server, root, plan, rep["rows"]["ours"])
                rep["rows"][PEER] = peer
                print(f"{corpus.name}, {PEER}: {peer['seconds']:.0f} s (machine busy "
                      f"{peer['busy_cores']:.2f} cores)", flush=True)  # fmt: skip
    finally:
        data["load1"] = os.getloadavg()
        if args.dump:
            Path(args.dump).write_text(json.dumps(data, default=str))
        shutil.rmtree(base, ignore_errors=True)
    write(Path(args.out), render(data), args.append)
    return 0


def write(out: Path, text: str, append: bool) -> None:
    """The tables to `out`; with `append`, below its text, as a run of their own."""
    if append and out.exists():
        title, body = text.split("\n", 1)
        title = title.replace("# ", "# Another run. ", 1)
        text = out.read_text().rstrip("\n") + "\n\n" + title + "\n" + body
    out.parent.mkdir(parents=True, exist_ok=True)
    out.write_text(text)
    print(text)


if __name__ == "__main__":
    sys.exit(main())
