"""The plugin in a real Neovim, measured the way people type, in one run.

    python bench/editor.py --server PATH/TO/llama-server [--keys N] [--out ...]

1. Keystroke cost: 1,000 scripted keystrokes in insert mode with the plugin on and off (each
   followed by an RPC round trip), and the same with a 50,000-line buffer.
2. A fresh editor: Neovim started on an indexed repository, a file opened, the first key typed
   1 s later: keystroke to the first ghost text (the Python host, the model and the prompt
   all start cold; warming begins when the buffer is entered).
3. Human pace, on two repositories (this one and requests 2.32.3): real lines typed character
   by character at 120-250 ms a key (seeded jitter), pauses of 0.5-2 s at line ends, a
   suggestion accepted when it matches what comes next (every other time), a move to another
   place every two lines. Measured in Neovim's own clock (autocmds on TextChangedI and the
   plugin's `User RepoContextShown`): keystroke to first visible ghost text and to the first
   line complete, the share of keystrokes (and of pauses over 300 ms) that had a suggestion
   before the next key, prompt tokens evaluated per keystroke, warming thrown away.
4. The peer, at the same moments on the same text: llama-server with --cache-reuse 256 and
   cache_prompt, 16 tokens per keystroke (what llama.vim does), a newer keystroke aborting the
   request in flight.
5. Request per keystroke (the older table): after each keystroke, wait for the reply.
6. A new place every line (issue 20; `--parts newplace --repos requests,httpx --lines 16`): the
   plugin's defaults on projects indexed fully beforehand, each real line typed at a new place
   after a 0.5-1.5 s pause, 150 +- 50 ms a key, then <Esc> and `--window` seconds watched; the
   peer at the same moments; the Python host's and llama-server's CPU seconds (/proc), after
   <Esc>, per keystroke and per shown suggestion; the time split of each place's first key
   from the plugin's own records. `--dump PATH` keeps the raw records. With only `newplace`
   in --parts, the other tables of --out are kept as they are.
7. Next edits on and off (issue 53; `--next-edit off,on,off,on [--human-repos requests]`):
   part 3's human-pace session, nothing else, once per mode in the order given, each in a
   fresh Neovim with the same plan and the same seed (`off`: `next_edit = { enabled = false }`
   added to setup(); `on`: the default). No peer. Keys shown, ghost text p50 / p95 and the
   next-edit requests and proposals per session, side by side, in --out (default
   results/next_edit_typing.md); `--dump PATH` keeps each session's records. Off unless
   --next-edit is given.
"""

from __future__ import annotations

import argparse
import http.client
import json
import os
import platform
import random
import shutil
import socket
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path

import pynvim

HERE = Path(__file__).resolve().parent
REPO = HERE.parent
sys.path.insert(0, str(REPO / "src"))
sys.path.insert(0, str(HERE))

from llama_server import llama_server  # noqa: E402
from requests_seed import fetch_corpus  # noqa: E402
from stats import percentile as pct  # noqa: E402

from repocontext.complete.cpu import Machine  # noqa: E402
from repocontext.complete.models import default_model_path  # noqa: E402
from repocontext.service import Repository  # noqa: E402

INIT = """
vim.opt.runtimepath:prepend({repo!r})
vim.g.python3_host_prog = {python!r}
vim.o.swapfile = false
vim.o.undofile = false
{setup}
"""

# Neovim's own record of what happened, read back after a session (times from vim.uv.hrtime)
PROBE = """
_G.bench = { keys = {}, shown = {} }
vim.api.nvim_create_autocmd("TextChangedI", { callback = function()
  local row, col = unpack(vim.api.nvim_win_get_cursor(0))
  table.insert(_G.bench.keys, { t = vim.uv.hrtime() / 1e6, row = row, col = col,
    tick = vim.b.changedtick, text = table.concat(vim.api.nvim_buf_get_lines(0, 0, -1, false), "\\n") })
end })
vim.api.nvim_create_autocmd("User", { pattern = "RepoContextShown", callback = function(a)
  table.insert(_G.bench.shown, { t = vim.uv.hrtime() / 1e6, text = a.data.text,
    complete = a.data.complete, source = a.data.source or "", tick = vim.b.changedtick })
end })
"""


SETUP_EXTRA = ""  # options added to setup() by --setup


def start(base: Path, plugin_on: bool, cwd: Path, defaults: bool = False) -> pynvim.Nvim:
    """`defaults`: the plugin as a user gets it (indexing on open included), messages aside."""
    init = base / ("defaults.lua" if defaults else "on.lua" if plugin_on else "off.lua")
    setup = (
        f"require('repocontext').setup({{ notify_progress = false, {SETUP_EXTRA} }})"
        if defaults
        else "require('repocontext').setup({ notify_progress = false, index_on_open = false, "
        f"{SETUP_EXTRA} }})"
        if plugin_on
        else ""
    )
    init.write_text(INIT.format(repo=str(REPO), python=sys.executable, setup=setup))
    nvim = shutil.which("nvim", path=str(Path(sys.executable).parent)) or "nvim"
    if plugin_on and not (base / "rplugin.vim").exists():
        subprocess.run(
            [nvim, "--headless", "-u", str(init), "-i", "NONE", "-c", "UpdateRemotePlugins",
             "-c", "qa!"],
            check=True, capture_output=True,
        )  # fmt: skip
    nv = pynvim.attach("child", argv=[nvim, "--embed", "--headless", "-u", str(init), "-i", "NONE"])
    nv.command(f"cd {cwd}")
    return nv


def quit_(nv: pynvim.Nvim) -> None:
    try:
        nv.quit("qa!")
    except Exception:
        pass


def key(ch: str) -> str:
    return {"\n": "<CR>", "<": "<lt>", "\\": "<Bslash>", "|": "<Bar>"}.get(ch, ch)


# --- 1. keystroke cost --------------------------------------------------------------------------


def script_lines(count: int) -> list[str]:
    text = (REPO / "src/repocontext/search/engine.py").read_text().split("\n")
    lines = [ln for ln in text if 20 <= len(ln.strip()) <= 70]
    out, total = [], 0
    for ln in lines:
        out.append(ln)
        total += len(ln.strip()) + 1
        if total >= count:
            break
    return out


SETTLE_SECONDS = 8.0


def type_keystrokes(nv: pynvim.Nvim, lines: list[str], count: int, big: Path | None = None):
    if big is not None:
        nv.command(f"edit! {big}")
        nv.command("normal! G")
        nv.input("o")
    else:
        nv.command("enew")
        nv.command("setlocal filetype=python")
        nv.command(f"file {REPO / 'scratch_bench.py'}")
        nv.input("i")
    nv.eval("1")
    # the steady state: entering the buffer starts the Python host and loads the model in the
    # background (on these two cores that alone slows Neovim down); wait until that is done
    time.sleep(SETTLE_SECONDS)
    worst, sent, each = 0.0, 0, []
    t0 = time.perf_counter()
    for line in lines:
        for ch in line.strip() + "\n":
            k0 = time.perf_counter()
            nv.input(key(ch))
            nv.eval("1")  # round trip: the keystroke has been processed
            each.append(time.perf_counter() - k0)
            worst = max(worst, each[-1])
            sent += 1
            if sent >= count:
                nv.input("<Esc>")
                return time.perf_counter() - t0, worst, each
    nv.input("<Esc>")
    return time.perf_counter() - t0, worst, each


# --- 2. a fresh editor ----------------------------------------------------------------------------


def first_ghost_cold(base: Path, root: Path, path: str, line: int, wait: float) -> float | None:
    """Seconds from the first keystroke to the first ghost text in a fresh Neovim."""
    nv = start(base, True, root)
    try:
        nv.exec_lua(PROBE)
        nv.command(f"edit {root / path}")
        time.sleep(wait)
        nv.current.window.cursor = (line, 0)
        nv.input("A")
        nv.input(" ")
        t0 = time.perf_counter()
        while time.perf_counter() - t0 < 60:
            if nv.exec_lua("return #_G.bench.shown") > 0:
                shown = nv.exec_lua("return _G.bench.shown[1].t")
                keyt = nv.exec_lua("return _G.bench.keys[1].t")
                return (shown - keyt) / 1000
            time.sleep(0.01)
        state = nv.exec_lua("return vim.inspect(require('repocontext')._state())")
        print(f"fresh editor, no ghost text: {state[:1500]}", file=sys.stderr)
        print(nv.command_output("messages"), file=sys.stderr)
        return None
    finally:
        quit_(nv)


# --- 3. human pace -----------------------------------------------------------------------------


def typing_plan(root: Path, files: list[str], rng: random.Random, keys: int) -> list[tuple]:
    """(path, line number, text) of real lines to type again, two consecutive lines a place."""
    plan, total = [], 0
    while total < keys:
        path = rng.choice(files)
        lines = (root / path).read_text(encoding="utf-8", errors="replace").split("\n")
        starts = [i for i in range(len(lines) - 1)
                  if 15 <= len(lines[i].strip()) <= 60 and 15 <= len(lines[i + 1].strip()) <= 60
                  and not lines[i].strip().startswith(("#", '"', "'", "@"))]  # fmt: skip
        if not starts:
            continue
        i = rng.choice(starts)
        plan.append((path, i + 1, [lines[i], lines[i + 1]]))
        total += sum(len(t.strip()) + 1 for t in (lines[i], lines[i + 1]))
    return plan


def human_session(nv: pynvim.Nvim, root: Path, plan, rng: random.Random) -> dict:
    """Type the plan at a human pace; returns Neovim's record and what the harness did."""
    nv.exec_lua(PROBE)
    accepts = 0
    pauses: list[int] = []  # index (in the key list) of keystrokes followed by a pause
    ended: list[dict] = []  # the plugin's state at the end of each pause
    t_start = time.perf_counter()
    for path, line, texts in plan:
        nv.input("<Esc>")
        nv.command(f"edit! {root / path}")
        # the lines are typed again from their indentation: blank them, keep what follows
        for k, text in enumerate(texts):
            nv.current.buffer[line - 1 + k] = text[: len(text) - len(text.lstrip())]
        nv.current.window.cursor = (line, 0)
        nv.input("A")
        for k, text in enumerate(texts):
            if k:
                nv.input("<Esc>")
                nv.current.window.cursor = (line + k, 0)
                nv.input("A")
            rest = text.strip()
            while rest:
                shown = nv.exec_lua("local s = require('repocontext')._state() return s.text or ''")
                first = shown.split("\n")[0]
                if len(first) >= 3 and rest.startswith(first) and rng.random() < 0.5:
                    nv.exec_lua("require('repocontext').accept()")
                    accepts += 1
                    rest = rest[len(first) :]
                    time.sleep(rng.uniform(0.12, 0.25))
                    continue
                nv.input(key(rest[0]))
                rest = rest[1:]
                time.sleep(rng.uniform(0.12, 0.25))
            pauses.append(nv.exec_lua("return #_G.bench.keys"))
            time.sleep(rng.uniform(0.5, 2.0))
            # what the plugin holds at the end of the pause (why nothing was shown, if so)
            ended.append(nv.exec_lua(
                "local s = require('repocontext')._state() "
                "return { asked = s.id ~= nil, answered = s.result ~= nil, "
                "status = s.result and s.result.status or '', text = s.text or '', "
                "error = require('repocontext').last_error() or '' }"
            ))  # fmt: skip
    nv.input("<Esc>")
    record = nv.exec_lua("return _G.bench")
    return {"record": record, "accepts": accepts, "pauses": pauses, "ended": ended,
            "seconds": time.perf_counter() - t_start}  # fmt: skip


def _pause_misses(session: dict) -> str:
    """Why the pauses without a suggestion had none, from the plugin's state at their end."""
    kinds: dict[str, int] = {}
    for e in session.get("ended", []):
        if e["text"]:
            continue
        why = ("error: " + e["error"][:40]) if e["error"] else (
            "the model's answer was empty" if e["answered"] else
            "still generating" if e["asked"] else "nothing asked")  # fmt: skip
        kinds[why] = kinds.get(why, 0) + 1
    return "; ".join(f"{v} {k}" for k, v in kinds.items()) or "none missed"


def seen_after(keys: list[dict], shown: list[dict], i: int) -> list[dict]:
    """The ghost texts drawn for key i, before the next key. One drawn in the key's own
    TextChangedI (type-through: the plugin's autocmd runs before PROBE's, which was made after
    it) carries the key's changedtick and an earlier time: it counts, at 0 ms."""
    k = keys[i]
    nxt = keys[i + 1]["t"] if i + 1 < len(keys) else k["t"] + 5000
    prev = keys[i - 1]["t"] if i else float("-inf")
    same = [
        {**s, "t": k["t"], "through": True}
        for s in shown
        if prev < s["t"] < k["t"] and s.get("tick") is not None and s.get("tick") == k.get("tick")
    ]
    return [*same[:1], *(s for s in shown if k["t"] <= s["t"] < nxt)]


def analyse(record: dict, pauses: list[int]) -> dict:
    """Per keystroke: first visible ghost text and first line complete, before the next key."""
    keys, shown = record["keys"], record["shown"]
    first, line_done, had, pause_had = [], [], 0, []
    for i, k in enumerate(keys):
        seen = seen_after(keys, shown, i)
        if seen:
            had += 1
            first.append(seen[0]["t"] - k["t"])
            done = next((s for s in seen if s["complete"] or "\n" in s["text"]), None)
            if done is not None:
                line_done.append(done["t"] - k["t"])
        if (i + 1) in pauses:
            pause_had.append(bool(seen))
    return {"keys": len(keys), "first": first, "line_done": line_done, "had": had,
            "pauses": len(pause_had), "pause_had": sum(pause_had)}  # fmt: skip


# --- 4. the peer ----------------------------------------------------------------------------------


def peer_replay(
    server_bin: str,
    record: dict,
    prefix_lines: int = 48,
    ends: list[float] | None = None,
    max_gap: float | None = None,
) -> dict:
    """llama-server asked at each recorded keystroke's moment; a newer one aborts the last.
    `ends`: moments (Neovim's clock) of <Esc>, where the request in flight is aborted too and
    a key's time to answer ends; `max_gap`: seconds an idle gap is shortened to (nothing is
    in flight then). Also returns the server's CPU seconds over the replay."""
    extra = ["--cache-reuse", "256", *Machine.current().extra_buffers().server_args()]
    with llama_server(server_bin, default_model_path(), os.cpu_count() or 1, extra) as port:
        server = next((c for c in children(os.getpid())
                       if Path(f"/proc/{c}/comm").read_text().startswith("llama")), None)  # fmt: skip
        cpu0 = cpu_seconds(server)
        keys = record["keys"]
        ends = sorted(ends or [])
        # per keystroke: ms to the first streamed token, and to the first line complete (a
        # newline, or the 16th token); None where the next keystroke aborted it first
        first: list[float | None] = [None] * len(keys)
        done: list[float | None] = [None] * len(keys)
        complete: list[float | None] = [None] * len(keys)  # all 16 tokens (or a stop)
        current: list[http.client.HTTPConnection | None] = [None]

        def ask(i: int, prompt: str) -> None:
            conn = http.client.HTTPConnection("127.0.0.1", port, timeout=60)
            current[0] = conn
            # streamed, as a client that wants to abort promptly must be: the server notices a
            # closed connection at its next chunk (unstreamed, only about once a second)
            body = json.dumps({"prompt": prompt, "n_predict": 16, "cache_prompt": True,
                               "temperature": 0, "top_k": 1, "stream": True})  # fmt: skip
            t0 = time.perf_counter()
            text = ""
            try:
                conn.request("POST", "/completion", body, {"Content-Type": "application/json"})
                resp = conn.getresponse()
                for raw in resp:
                    if not raw.startswith(b"data: "):
                        continue
                    chunk = json.loads(raw[6:])
                    text += chunk.get("content", "")
                    now = (time.perf_counter() - t0) * 1000
                    if first[i] is None and text:
                        first[i] = now
                    if done[i] is None and ("\n" in text.lstrip("\n") or chunk.get("stop")):
                        done[i] = now
                    if chunk.get("stop"):
                        complete[i] = now
                        break
            except (OSError, http.client.HTTPException, ValueError):
                pass  # aborted by the next keystroke

        def abort() -> None:
            if current[0] is not None and current[0].sock is not None:
                try:
                    current[0].sock.shutdown(socket.SHUT_RDWR)  # llama.vim cancels the request
                except OSError:
                    pass

        # the moments, in order: (Neovim time, key index or None for an <Esc>)
        events = sorted([(k["t"], i) for i, k in enumerate(keys)] + [(t, None) for t in ends],
                        key=lambda e: (e[0], e[1] is None))  # fmt: skip
        at, last_t, moments = 0.0, events[0][0] if events else 0.0, []
        for t, i in events:
            gap = (t - last_t) / 1000
            at += min(gap, max_gap) if max_gap is not None else gap
            last_t = t
            moments.append((at, i))
        t_base, threads = time.perf_counter(), []
        for at, i in moments:
            time.sleep(max(0.0, at - (time.perf_counter() - t_base)))
            abort()
            if i is None:
                continue
            k = keys[i]
            lines = k["text"].split("\n")
            row = k["row"]
            before = lines[row - 1].encode()[: k["col"]].decode("utf-8", "ignore")
            prompt = "\n".join(lines[max(0, row - 1 - prefix_lines) : row - 1] + [before])
            t = threading.Thread(target=ask, args=(i, prompt), daemon=True)
            t.start()
            threads.append(t)
        for t in threads:
            t.join(timeout=60)
        cpu1 = cpu_seconds(server)
        gaps = [(keys[i + 1]["t"] - keys[i]["t"]) if i + 1 < len(keys) else 1e9
                for i in range(len(keys))]  # fmt: skip
        for i, k in enumerate(keys):  # an <Esc> before the next key ends the key's time too
            end = next((t for t in ends if t >= k["t"]), None)
            if end is not None:
                gaps[i] = min(gaps[i], end - k["t"])
        in_time = [i for i, g in enumerate(gaps) if first[i] is not None and first[i] < g]
        return {"first": [first[i] for i in in_time],
                "line_done": [done[i] for i in in_time if done[i] is not None and done[i] < gaps[i]],
                "latency": [c for c in complete if c is not None],
                "in_time": len(in_time), "keys": len(keys), "cpu_s": cpu1 - cpu0,
                "server_pid": server}  # fmt: skip


# --- 5. request per keystroke --------------------------------------------------------------------


def request_per_keystroke(nv: pynvim.Nvim, lines: list[str]) -> tuple[list[float], list[float]]:
    nv.input("<Esc>")
    nv.command(f"edit! {REPO / 'src/repocontext/cli/parser.py'}")
    firsts, totals = [], []
    for line in lines[:12]:
        nv.command("normal! G")
        nv.input("o")
        for ch in line.strip()[:12]:
            nv.input(key(ch))
            k0 = time.perf_counter()
            first = None
            while time.perf_counter() < k0 + 5:
                state = nv.exec_lua(
                    "local s = require('repocontext')._state() return {s.text ~= nil, s.result ~= nil}"
                )
                if state[0] and first is None:
                    first = time.perf_counter() - k0
                if state[1]:
                    totals.append(time.perf_counter() - k0)
                    break
                time.sleep(0.002)
            if first is not None:
                firsts.append(first)
        nv.input("<Esc>")
    return firsts, totals


def work(nv: pynvim.Nvim, root: Path) -> dict:
    """The engine's counters for `root` (completions, tokens evaluated, warming)."""
    nv.exec_lua(
        "_G.bench_status = nil; require('repocontext').request('status', { path = ... }, "
        "function(r) _G.bench_status = r end)",
        str(root / "x.py"),
    )
    for _ in range(500):
        status = nv.exec_lua("return _G.bench_status")
        if status:
            return status["work"]
        time.sleep(0.01)
    return {}


# --- 6. a new place every line (issue 20) -------------------------------------------------------

# What the plugin sent and got back, per request (added to PROBE for the new-place run): the
# calls into the host (a whole buffer or a patch), each final reply with the engine's own
# timings and tokens, the first streamed reply per request, and indexing progress.
PROBE_WORK = """
local b = _G.bench
b.calls, b.done, b.updates, b.progress = {}, {}, {}, {}
local function n(v) if v == vim.NIL then return nil end return v end
local host = require('repocontext.host')
local call = host.call
host.call = function(name, ...)
  local a = ...
  local rec = { t = vim.uv.hrtime() / 1e6, name = name }
  if type(a) == 'table' then
    rec.id, rec.line, rec.col = a.id, a.line, a.col
    rec.whole = a.text ~= nil
    rec.bytes = a.text and #a.text or (a.patch and #vim.json.encode(a.patch)) or 0
  end
  local t0 = vim.uv.hrtime()
  local ok, res = call(name, ...)
  rec.call_ms = (vim.uv.hrtime() - t0) / 1e6
  table.insert(b.calls, rec)
  return ok, res
end
local M = require('repocontext')
local on_done, on_update = M._on_done, M._on_update
M._on_done = function(r)
  local t = n(r.timings_ms) or {}
  table.insert(b.done, { t = vim.uv.hrtime() / 1e6, id = n(r.id), status = n(r.status),
    source = n(r.source), evaluated = n(r.tokens_evaluated), reused = n(r.tokens_reused),
    first_token = n(t.first_token), total = n(t.total), llama = n(t.llama),
    injection = n(t.injection), text = n(r.suggestion) or '', gate = n(r.gate) })
  return on_done(r)
end
M._on_update = function(r)
  local id = n(r.id)
  if id and not b.updates[tostring(id)] then b.updates[tostring(id)] = vim.uv.hrtime() / 1e6 end
  return on_update(r)
end
vim.api.nvim_create_autocmd("User", { pattern = "RepoContextProgress", callback = function(a)
  table.insert(b.progress, { t = vim.uv.hrtime() / 1e6, phase = a.data.phase,
    done = a.data.done, total = a.data.total })
end })
"""


def cpu_seconds(pid: int | None) -> float:
    """utime + stime of `pid` and everything below it (/proc; 0 for a process gone)."""
    if not pid:
        return 0.0
    tick = os.sysconf("SC_CLK_TCK")
    total, todo = 0.0, [pid]
    while todo:
        p = todo.pop()
        try:
            fields = Path(f"/proc/{p}/stat").read_text().rsplit(")", 1)[1].split()
            total += (int(fields[11]) + int(fields[12])) / tick  # utime, stime
        except (OSError, IndexError, ValueError):
            continue
        todo += children(p)
    return total


def children(pid: int) -> list[int]:
    out = []
    for task in Path(f"/proc/{pid}/task").glob("*"):
        try:
            out += [int(c) for c in (task / "children").read_text().split()]
        except OSError:
            pass
    return out


def host_pid(nv: pynvim.Nvim) -> int | None:
    """The python3 host: the plugin knows its pid once it answered; else Neovim's child."""
    pid = nv.exec_lua("return require('repocontext.host').pid()")
    if pid:
        return int(pid)
    nvim_pid = nv.eval("getpid()")
    kids = [c for c in children(nvim_pid) if "python" in Path(f"/proc/{c}/comm").read_text()]
    return kids[0] if kids else None


def new_place_plan(root: Path, files: list[str], rng: random.Random, count: int) -> list[tuple]:
    """`count` real lines, each at a new place: typing_plan's choice, one line of it, never
    within 100 lines of the place before in the same file, never the same line twice."""
    plan: list[tuple] = []
    while len(plan) < count:
        path, line, texts = typing_plan(root, files, rng, 1)[0]
        if any(p == path and abs(ln - line) < 100 for p, ln, _ in plan[-1:]):
            continue
        if any(p == path and ln == line for p, ln, _ in plan):
            continue
        plan.append((path, line, texts[0]))
    return plan


def new_place_session(nv: pynvim.Nvim, root: Path, plan, rng: random.Random,
                      window: float) -> dict:  # fmt: skip
    """Each line at a new place: move, enter insert mode, pause 0.5-1.5 s, type at 150 +- 50
    ms a key, <Esc>, then `window` seconds in normal mode. The host's CPU is sampled at each
    step; the engine's counters at the arrival and at the end of the pause."""
    nv.exec_lua(PROBE)
    nv.exec_lua(PROBE_WORK)
    pid = host_pid(nv)
    places = []
    for path, line, text in plan:
        place = {"path": path, "line": line, "text": text.strip()}
        place["cpu_arrive"] = cpu_seconds(pid)
        place["work_arrive"] = work(nv, root)
        nv.command(f"edit! {root / path}")
        indent = text[: len(text) - len(text.lstrip())]
        nv.current.buffer[line - 1] = indent
        nv.current.window.cursor = (line, 0)
        nv.input("A")
        place["key_index"] = nv.exec_lua("return #_G.bench.keys")  # the next key is the first here
        place["pause"] = rng.uniform(0.5, 1.5)
        time.sleep(place["pause"])
        place["work_paused"] = work(nv, root)
        place["cpu_first"] = cpu_seconds(pid)
        for ch in text.strip():
            nv.input(key(ch))
            time.sleep(rng.uniform(0.10, 0.20))
        nv.input("<Esc>")
        place["esc_t"] = nv.exec_lua("return vim.uv.hrtime() / 1e6")
        place["cpu_esc"] = cpu_seconds(pid)
        # sampled every half second: when the work after <Esc> ran, not only how much
        t_esc, place["cpu_series"] = time.perf_counter(), []
        while time.perf_counter() - t_esc < window:
            time.sleep(min(0.5, max(0.0, window - (time.perf_counter() - t_esc))))
            place["cpu_series"].append(round(cpu_seconds(pid) - place["cpu_esc"], 2))
        place["cpu_after"] = cpu_seconds(pid)
        place["keys"] = nv.exec_lua("return #_G.bench.keys") - place["key_index"]
        places.append(place)
    record = nv.exec_lua("return _G.bench")
    # the context the engine builds at each place's first key, asked again afterwards (the
    # engine does not report it per request): same path, text and cursor
    for place in places:
        k = record["keys"][place["key_index"]] if place["key_index"] < len(record["keys"]) else None
        if k is None:
            continue
        payload = {"path": str(root / place["path"]), "line": k["row"], "col": k["col"],
                   "text": k["text"]}  # fmt: skip
        nv.exec_lua(
            "_G.bench_ctx = nil; require('repocontext').request('context', ..., "
            "function(r, e) _G.bench_ctx = r or { error = e } end)",
            payload,
        )
        for _ in range(1000):
            got = nv.exec_lua("return _G.bench_ctx")
            if got:
                place["context"] = got
                break
            time.sleep(0.01)
    return {"record": record, "places": places, "pid": pid}


def place_split(session: dict) -> list[dict]:
    """For each place's first key, and for the keys after it: where the time went."""
    record, out = session["record"], []
    keys, calls = record["keys"], record.get("calls") or []
    done = {d["id"]: d for d in record.get("done") or [] if d.get("id") is not None}
    updates = {int(k): v for k, v in (record.get("updates") or {}).items()}
    visible = per_key_visible(record)
    for place in session["places"]:
        first = place["key_index"]
        rows = []
        for i in range(first, first + place["keys"]):
            k = keys[i]
            nxt = keys[i + 1]["t"] if i + 1 < len(keys) else k["t"] + 5000
            sent = next((c for c in calls if c["name"] == "RepoContextComplete"
                         and k["t"] <= c["t"] < nxt), None)  # fmt: skip
            d = done.get(sent["id"]) if sent else None
            rows.append({"first": i == first, "visible": visible[i], "sent": sent, "done": d,
                         "update": updates.get(sent["id"]) if sent else None, "key": k})  # fmt: skip
        warm_a = place["work_arrive"].get("warming", {})
        warm_p = place["work_paused"].get("warming", {})
        ctx = place.get("context") or {}
        out.append({
            "place": place, "rows": rows,
            "warm_count": warm_p.get("count", 0) - warm_a.get("count", 0),
            "warm_evaluated": warm_p.get("evaluated", 0) - warm_a.get("evaluated", 0),
            "warm_ms": 1000 * (warm_p.get("seconds", 0) - warm_a.get("seconds", 0)),
            "warm_wasted": warm_p.get("wasted", 0) - warm_a.get("wasted", 0),
            "context_ms": (ctx.get("timings_ms") or {}).get("total"),
        })  # fmt: skip
    return out


def per_key_visible(record: dict) -> list[float | None]:
    """analyse()'s rule, per key: ms to the first ghost text before the next key, or None."""
    keys, shown, out = record["keys"], record["shown"], []
    for i, k in enumerate(keys):
        seen = seen_after(keys, shown, i)
        out.append(seen[0]["t"] - k["t"] if seen else None)
    return out


def ms(values: list[float], p: int) -> str:
    return f"{pct(values, p):.0f}" if values else "-"


# the other projects of the new-place run: (label, pip spec, version, source folder)
NEW_PLACE_REPOS = {
    "requests": ("requests 2.32.3", "requests==2.32.3", "2.32.3", "src/requests"),
    "httpx": ("httpx 0.28.1", "httpx==0.28.1", "0.28.1", "httpx"),
    "rich": ("rich 13.9.4", "rich==13.9.4", "13.9.4", "rich"),
}
NEW_PLACE_HEADING = "## A new place every line (issue 20)"
OLD_PARTS = {"cost", "fresh", "human", "request"}


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--server", required=True, help="a llama-server binary: the peer")
    ap.add_argument("--keys", type=int, default=320, help="keystrokes per repository")
    ap.add_argument("--keystrokes", type=int, default=1000)
    ap.add_argument("--out", default=str(HERE / "results/editor.md"))
    ap.add_argument("--setup", default="", help="options added to setup(), e.g. 'debounce_ms = 0'")
    ap.add_argument("--parts", default="cost,fresh,human,request,newplace",
                    help="which parts to run")  # fmt: skip
    ap.add_argument("--repos", default="requests,httpx", help="the new-place run's projects")
    ap.add_argument("--lines", type=int, default=16, help="new-place lines per project")
    ap.add_argument("--window", type=float, default=10.0, help="seconds watched after <Esc>")
    ap.add_argument("--seed", type=int, default=20, help="the new-place run's seed")
    ap.add_argument("--dump", help="write the new-place run's raw records here (JSON)")
    ap.add_argument(
        "--next-edit",
        metavar="MODES",
        help="part 7 only: the human-pace session once per mode, e.g. off,on,off,on",
    )
    ap.add_argument(
        "--human-repos",
        default="repocontext,requests",
        help="the human-pace projects (repocontext, requests)",
    )
    ap.add_argument("--peer-again", metavar="DUMP",
                    help="only replay the peer on a --dump's records (a quiet machine), print rows")  # fmt: skip
    args = ap.parse_args()
    if args.peer_again:
        return peer_again(args.server, Path(args.peer_again))
    global SETUP_EXTRA
    SETUP_EXTRA = args.setup
    parts = set(args.parts.split(","))
    base = Path(tempfile.mkdtemp(prefix="rc-editor-"))
    env = {"XDG_CONFIG_HOME": base / "config", "XDG_DATA_HOME": base / "data",
           "XDG_STATE_HOME": base / "state", "NVIM_RPLUGIN_MANIFEST": base / "rplugin.vim",
           "REPOCONTEXT_HOME": REPO / ".bench-cache" / "home-editor"}  # fmt: skip
    os.environ.update({k: str(v) for k, v in env.items()})
    if args.next_edit:
        out_path = Path(args.out)
        if args.out == str(HERE / "results/editor.md"):
            out_path = HERE / "results/next_edit_typing.md"
        out = run_next_edit_typing(args, base)
        out_path.write_text(out)
        print(out)
        return 0
    out = ""
    if parts & OLD_PARTS:
        out = run_old_parts(args, parts, base)
    elif Path(args.out).exists():  # only the new-place run: the other tables stay as they were
        out = Path(args.out).read_text()
    out = out.split("\n" + NEW_PLACE_HEADING)[0].rstrip("\n") + "\n"
    if "newplace" in parts:
        out += "\n" + run_new_place(args, base)
    Path(args.out).write_text(out)
    print(out)
    return 0


def run_new_place(args, base: Path) -> str:
    """Part 6: each project indexed fully (embeddings included) before the editor starts."""
    started, load0 = time.strftime("%Y-%m-%d %H:%M UTC", time.gmtime()), os.getloadavg()
    rng = random.Random(args.seed)
    runs = []
    for name in args.repos.split(","):
        label, spec, version, src = NEW_PLACE_REPOS[name]
        root = fetch_corpus(spec, version)
        t0 = time.perf_counter()
        repo = Repository(root)
        repo.index()
        repo.embed()
        index_s = time.perf_counter() - t0
        files = sorted(str(p.relative_to(root)) for p in (root / src).rglob("*.py"))
        plan = new_place_plan(root, files, rng, args.lines)
        nv = start(base, True, root, defaults=True)
        try:
            # a user opens a file, then starts moving around: the host starts, the model
            # loads, the project is checked (index on open); the run starts after that
            # the corpora sit inside this repository's .git, which the root markers would
            # take first: the project is named as a user does (and it is indexed already)
            nv.command(f"RepoContext root {root}")
            nv.command(f"edit {root / plan[0][0]}")
            time.sleep(SETTLE_SECONDS)
            work(nv, root)
            session = new_place_session(nv, root, plan, rng, args.window)
            session["work_end"] = work(nv, root)
        finally:
            quit_(nv)
        result = analyse(session["record"], [])
        ends = [pl["esc_t"] for pl in session["places"]]
        peer = peer_replay(args.server, session["record"], ends=ends, max_gap=3.0)
        runs.append({"label": label, "session": session, "result": result, "peer": peer,
                     "split": place_split(session), "index_s": index_s})  # fmt: skip
    load1 = os.getloadavg()
    if args.dump:
        Path(args.dump).write_text(json.dumps(runs, default=str))
    return render_new_place(args, runs, started, load0, load1)


def peer_again(server: str, dump: Path) -> int:
    """The peer replayed at the moments and on the text a new-place run recorded (--dump)."""
    print("| repository | peer: first token before the next key | p50 / p95 ms | llama-server "
          "CPU: total, per request, per shown | load at start / end |")  # fmt: skip
    print("|---|---|---|---|---|")
    for run in json.loads(dump.read_text()):
        s, load0 = run["session"], os.getloadavg()[0]
        peer = peer_replay(server, s["record"], ends=[pl["esc_t"] for pl in s["places"]],
                           max_gap=3.0)  # fmt: skip
        cpu = peer["cpu_s"]
        print(f"| {run['label']} | {peer['in_time']}/{peer['keys']} "
              f"({100 * peer['in_time'] / max(1, peer['keys']):.0f}%) | {ms(peer['first'], 50)} / "
              f"{ms(peer['first'], 95)} | {cpu:.2f} s, {1000 * cpu / max(1, peer['keys']):.0f} ms, "
              f"{cpu / max(1, peer['in_time']):.2f} s | {load0:.2f} / {os.getloadavg()[0]:.2f} |",
              flush=True)  # fmt: skip
    return 0


def human_repos(names: str = "repocontext,requests") -> list[tuple[str, Path, str]]:
    """The human-pace projects: (label, root, source folder)."""
    known = {"repocontext": ("repocontext (this repository)", lambda: REPO, "src/repocontext"),
             "requests": ("requests 2.32.3", lambda: fetch_corpus("requests==2.32.3", "2.32.3"),
                          "src/requests")}  # fmt: skip
    return [(known[n][0], known[n][1](), known[n][2]) for n in names.split(",")]


# part 7: what the next edit does in a session (counted in Neovim)
PROBE_NEXT_EDIT = """
_G.ne_count = { asked = 0, drawn = 0, replies = 0, places = 0 }
local host = require('repocontext.host')
local call = host.call
host.call = function(name, ...)
  if name == "RepoContextNextEdit" then _G.ne_count.asked = _G.ne_count.asked + 1 end
  return call(name, ...)
end
local nextedit = require('repocontext.nextedit')
local receive = nextedit.receive
nextedit.receive = function(reply, ...)
  _G.ne_count.replies = _G.ne_count.replies + 1
  if type(reply) == 'table' and type(reply.places) == 'table' then
    _G.ne_count.places = _G.ne_count.places + #reply.places
  end
  return receive(reply, ...)
end
vim.api.nvim_create_autocmd("User", { pattern = "RepoContextNextEdit", callback = function()
  _G.ne_count.drawn = _G.ne_count.drawn + 1 end })
"""


def run_next_edit_typing(args, base: Path) -> str:
    """Part 7: the human-pace session with next edits off and on, in the order of --next-edit."""
    global SETUP_EXTRA
    started, load0 = time.strftime("%Y-%m-%d %H:%M UTC", time.gmtime()), os.getloadavg()
    repos = human_repos(args.human_repos)
    for _, root, _ in repos:
        Repository(root).index()
        Repository(root).embed()
    extra = args.setup
    rows, dumps = [], []
    for r, (label, root, src) in enumerate(repos):
        files = sorted(str(p.relative_to(root)) for p in (root / src).rglob("*.py"))
        for run, mode in enumerate(args.next_edit.split(",")):
            off = "next_edit = { enabled = false }, " if mode == "off" else ""
            SETUP_EXTRA = off + extra
            rng = random.Random(7 + r)  # the same plan and the same draws for every mode
            plan = typing_plan(root, files, rng, args.keys)
            nv = start(base, True, root)
            try:
                time.sleep(3)  # the engine is started by the first buffer; let it load
                work(nv, root)
                pid = host_pid(nv)
                cpu0 = cpu_seconds(pid)
                nv.exec_lua(PROBE_NEXT_EDIT)
                session = human_session(nv, root, plan, rng)
                counts = nv.exec_lua("return _G.ne_count")
                cpu = cpu_seconds(pid) - cpu0
            finally:
                quit_(nv)
            result = analyse(session["record"], session["pauses"])
            if args.dump:
                session["mode"], session["label"] = mode, label
                dumps.append(session)
            rows.append({"label": label, "mode": mode, "run": run, "result": result,
                         "counts": counts, "cpu": cpu, "accepts": session["accepts"],
                         "seconds": session["seconds"]})  # fmt: skip
            print(json.dumps({k: v for k, v in rows[-1].items() if k != "result"}
                             | {"had": result["had"], "keys": result["keys"],
                                "p50": ms(result["first"], 50), "p95": ms(result["first"], 95)}),
                  flush=True)  # fmt: skip
    SETUP_EXTRA = extra
    if args.dump:
        Path(args.dump).write_text(json.dumps(dumps, default=str))
    return render_next_edit_typing(args, rows, started, load0, os.getloadavg())


def render_next_edit_typing(args, rows, started: str, load0, load1) -> str:
    cmd = (f"python bench/editor.py --server {args.server} --next-edit {args.next_edit} "
           f"--human-repos {args.human_repos} --keys {args.keys}"
           + (f" --setup '{args.setup}'" if args.setup else "")
           + (f" --out {args.out}" if args.out != str(HERE / "results/editor.md") else "")
           + (f" --dump {args.dump}" if args.dump else ""))  # fmt: skip
    lines = [
        "# Typing with next edits on and off (issue 53)",
        "",
        f"Command: `{cmd}`  ",
        f"Machine: {platform.machine()}, {os.cpu_count()} cores, Python "
        f"{platform.python_version()}, {started}; load average (1/5/15 min) {load0[0]:.2f} / "
        f"{load0[1]:.2f} / {load0[2]:.2f} at the start, {load1[0]:.2f} / {load1[1]:.2f} / "
        f"{load1[2]:.2f} at the end",
        "",
        "bench/editor.py's human-pace session (part 3: real lines typed again at 120-250 ms a "
        "key, 0.5-2 s pauses at line ends, a matching suggestion accepted every other time, "
        "`<Esc>` and a new place every two lines; the model is loaded, the plugin asks for "
        "ghost text as for a user) once per mode, in the order given, each in a fresh Neovim "
        "with the same plan and seed; `off` adds `next_edit = { enabled = false }` to setup(), "
        "`on` is the default. No peer replay. Ghost text latency: keystroke to first visible "
        "ghost text, over the keys that got one before the next key (analyse()). Next edits: "
        "requests sent to the host, replies, places in them, proposals drawn. Host CPU: utime "
        "+ stime of the python3 host over the session (/proc).",
        "",
        "| repository | run | next edit | keys with ghost text before the next key | ghost "
        "text p50 / p95 ms | line complete p50 / p95 ms | pauses with a suggestion | "
        "accepted | next-edit requests / places / drawn | host CPU s | session s |",
        "|---|---|---|---|---|---|---|---|---|---|---|",
    ]
    for row in rows:
        r, c = row["result"], row["counts"]
        lines.append(
            f"| {row['label']} | {row['run'] + 1} | {row['mode']} | {r['had']}/{r['keys']} "
            f"({100 * r['had'] / max(1, r['keys']):.0f}%) | {ms(r['first'], 50)} / "
            f"{ms(r['first'], 95)} | {ms(r['line_done'], 50)} / {ms(r['line_done'], 95)} | "
            f"{r['pause_had']}/{r['pauses']} | {row['accepts']} | {c['asked']} / {c['places']} "
            f"/ {c['drawn']} | {row['cpu']:.1f} | {row['seconds']:.0f} |"
        )
    lines += ["", "Pooled per mode (every key of every run of the mode):", "",
              "| repository | next edit | runs | keys with ghost text | ghost text p50 / p95 ms |",
              "|---|---|---|---|---|"]  # fmt: skip
    for label in dict.fromkeys(row["label"] for row in rows):
        for mode in dict.fromkeys(row["mode"] for row in rows):
            mine = [row for row in rows if row["label"] == label and row["mode"] == mode]
            had = sum(row["result"]["had"] for row in mine)
            keys = sum(row["result"]["keys"] for row in mine)
            first = [v for row in mine for v in row["result"]["first"]]
            lines.append(f"| {label} | {mode} | {len(mine)} | {had}/{keys} "
                         f"({100 * had / max(1, keys):.0f}%) | {ms(first, 50)} / "
                         f"{ms(first, 95)} |")  # fmt: skip
    return "\n".join(lines) + "\n"


def run_old_parts(args, parts: set[str], base: Path) -> str:
    repos = human_repos()
    for _, root, _ in repos:
        Repository(root).index()
        Repository(root).embed()
    big = base / "big.py"
    big.write_text(
        "\n".join(f"value_{i} = {i}  # a line of a very long file" for i in range(50_000))
    )

    # 1. keystroke cost
    lines = script_lines(args.keystrokes)
    cost = {}
    for on in (False, True) if "cost" in parts else ():
        nv = start(base, on, REPO)
        try:
            cost[on] = type_keystrokes(nv, lines, args.keystrokes)
            cost[("big", on)] = type_keystrokes(nv, lines, 300, big)
            if on and "request" in parts:
                cost["request"] = request_per_keystroke(nv, lines)
        finally:
            quit_(nv)

    # 2. a fresh editor
    cold = [
        first_ghost_cold(base, REPO, "src/repocontext/cli/parser.py", 14, wait)
        if "fresh" in parts
        else None
        for wait in (1.0, 3.0)
    ]

    # 3. and 4. human pace, then the peer on the same moments
    rng = random.Random(7)
    human = []
    for label, root, src in repos if "human" in parts else ():
        files = sorted(str(p.relative_to(root)) for p in (root / src).rglob("*.py"))
        plan = typing_plan(root, files, rng, args.keys)
        nv = start(base, True, root)
        try:
            time.sleep(3)  # the engine is started by the first buffer; let it load
            before = work(nv, root)
            session = human_session(nv, root, plan, rng)
            after = work(nv, root)
        finally:
            quit_(nv)
        result = analyse(session["record"], session["pauses"])
        peer = peer_replay(args.server, session["record"])
        human.append((label, session, result, peer, before, after))

    if "cost" not in parts:  # a partial run (an experiment): placeholders, said in the header
        cost = {False: (1.0, 0.0, [0.001]), True: (1.0, 0.0, [0.001]),
                ("big", False): (1.0, 0.0, [0.001]), ("big", True): (1.0, 0.0, [0.001]),
                "request": ([], [])}  # fmt: skip
    cost.setdefault("request", ([], []))
    return render(args, cost, cold, human)


def render(args, cost, cold, human) -> str:
    off_wall, off_worst, _ = cost[False]
    on_wall, on_worst, _ = cost[True]
    _, _, big_off = cost[("big", False)]
    _, _, big_on = cost[("big", True)]
    ratio = on_wall / off_wall
    big_ratio = pct(big_on, 95) / pct(big_off, 95)
    firsts, totals = cost["request"]
    lines = [
        "# The plugin in a real Neovim (headless Neovim 0.11 driven over RPC)",
        "",
        f"Command: `python bench/editor.py --server {args.server}"
        + (f" --setup '{args.setup}'" if args.setup else "")
        + (f" --parts {args.parts}" if args.parts != "cost,fresh,human,request,newplace" else "")
        + "`  ",
        f"Machine: {platform.machine()}, {os.cpu_count()} cores, Python "
        f"{platform.python_version()}, {time.strftime('%Y-%m-%d %H:%M')} (shared: compare rows of "
        "one run)",
        "",
        "## Human pace: keystroke to ghost text, as seen in Neovim",
        "",
        "Real lines typed again at 120-250 ms a key, 0.5-2 s pauses at line ends, a matching "
        "suggestion accepted every other time, a new place every two lines. Latencies are "
        "counted for the keystrokes that got a suggestion before the next key (a suggestion "
        "typed through is shown at once, which the p50 reflects); the peer is llama-server "
        "(--cache-reuse 256, cache_prompt, 16 tokens) asked at the same moments on the same "
        "text (streamed), a newer keystroke aborting the request in flight. The peer's first "
        "visible figure is its first streamed token, counted the same way (before the next key); "
        "its 16-token figure is every request that finished.",
        "",
        "| | repository | ours p50 / p95 ms | peer p50 / p95 ms |",
        "|---|---|---|---|",
    ]
    goals = []
    for label, session, r, peer, before, after in human:
        keys = max(1, r["keys"])
        evaluated = (after.get("tokens_evaluated", 0) - before.get("tokens_evaluated", 0)) / keys
        warm_b, warm_a = before.get("warming", {}), after.get("warming", {})
        warm_eval = warm_a.get("evaluated", 0) - warm_b.get("evaluated", 0)
        wasted = warm_a.get("wasted", 0) - warm_b.get("wasted", 0)
        lines += [
            f"| keystroke to first visible ghost text | {label} | {ms(r['first'], 50)} / "
            f"{ms(r['first'], 95)} | {ms(peer['first'], 50)} / {ms(peer['first'], 95)} |",
            f"| keystroke to first line complete (peer: 16 tokens) | {label} | "
            f"{ms(r['line_done'], 50)} / {ms(r['line_done'], 95)} | {ms(peer['latency'], 50)} / "
            f"{ms(peer['latency'], 95)} |",
            f"| keystrokes with a suggestion before the next key | {label} | {r['had']}/{r['keys']} "
            f"({100 * r['had'] / keys:.0f}%) | {peer['in_time']}/{peer['keys']} "
            f"({100 * peer['in_time'] / max(1, peer['keys']):.0f}%) |",
            f"| pauses over 300 ms with a suggestion shown | {label} | {r['pause_had']}/"
            f"{r['pauses']} ({_pause_misses(session)}) | |",
            f"| prompt tokens evaluated per keystroke | {label} | {evaluated:.1f} | |",
            f"| warming: tokens evaluated, of them thrown away | {label} | {warm_eval}, "
            f"{wasted} ({100 * wasted / max(1, warm_eval):.0f}%) | |",
            f"| suggestions accepted | {label} | {session['accepts']} | |",
        ]
        share = r["had"] / keys
        p50_ok = (
            r["line_done"]
            and peer["latency"]
            and pct(r["line_done"], 50) <= 0.8 * pct(peer["latency"], 50)
        )
        p95_ok = (
            r["line_done"]
            and peer["latency"]
            and pct(r["line_done"], 95) <= pct(peer["latency"], 95)
        )
        goals += [
            f"- {label}: first visible p95 <= 100 ms: {ms(r['first'], 95)} ms (**"
            f"{'met' if r['first'] and pct(r['first'], 95) <= 100 else 'not met'}**); a suggestion "
            f"before the next key for at least half the keys: {100 * share:.0f}% (**"
            f"{'met' if share >= 0.5 else 'not met'}**); first line complete p50 <= 0.8x the "
            f"peer's: {ms(r['line_done'], 50)} vs {ms(peer['latency'], 50)} ms (**"
            f"{'met' if p50_ok else 'not met'}**), p95 <= the peer's: {ms(r['line_done'], 95)} vs "
            f"{ms(peer['latency'], 95)} ms (**{'met' if p95_ok else 'not met'}**); pauses with a "
            f"suggestion >= 90%: {100 * r['pause_had'] / max(1, r['pauses']):.0f}% (**"
            f"{'met' if r['pause_had'] >= 0.9 * r['pauses'] else 'not met'}**).",
        ]
    lines += [
        "",
        "## A fresh editor: first keystroke to first ghost text",
        "",
        "Neovim started on an indexed repository, a file opened, a key typed 1 s and 3 s later.",
        "",
        "| typed after opening | first ghost text |",
        "|---|---|",
        f"| 1 s | {cold[0]:.2f} s |" if cold[0] is not None else "| 1 s | none in 60 s |",
        f"| 3 s | {cold[1]:.2f} s |" if cold[1] is not None else "| 3 s | none in 60 s |",
        "",
        f"## Keystroke cost: {args.keystrokes} scripted keystrokes in insert mode",
        "",
        "| | plugin off | plugin on | ratio |",
        "|---|---|---|---|",
        f"| wall time | {off_wall:.2f} s | {on_wall:.2f} s | {ratio:.3f} (goal <= 1.05) |",
        f"| slowest keystroke | {1000 * off_worst:.1f} ms | {1000 * on_worst:.1f} ms | |",
        f"| 50,000-line buffer, per-key p95 (300 keys) | {1000 * pct(big_off, 95):.1f} ms | "
        f"{1000 * pct(big_on, 95):.1f} ms | {big_ratio:.2f} (goal <= 1.5) |",
        "",
        "Each keystroke is followed by an RPC round trip, so these times include the client's "
        "own latency; the ratio is what the plugin adds.",
        "",
        f"## Request per keystroke ({len(firsts)} keystrokes; after each, the reply is awaited)",
        "",
        "| | p50 ms | p95 ms |",
        "|---|---|---|",
        f"| first visible ghost text | {ms([1000 * f for f in firsts], 50)} | "
        f"{ms([1000 * f for f in firsts], 95)} |",
        f"| complete suggestion | {ms([1000 * t for t in totals], 50)} | "
        f"{ms([1000 * t for t in totals], 95)} |",
        "",
        "## Goals",
        "",
        *goals,
        f"- First ghost text in a fresh editor within 2 s of the first keystroke (typed 1 s after "
        f"opening): {cold[0] if cold[0] is None else f'{cold[0]:.2f} s'} (**"
        f"{'met' if cold[0] is not None and cold[0] <= 2 else 'not met'}**).",
        f"- 1,000-keystroke wall ratio at most 1.05: {ratio:.3f} (**"
        f"{'met' if ratio <= 1.05 else 'not met'}**).",
        f"- 50,000-line buffer per-key p95 at most 1.5x plugin off: {big_ratio:.2f}x (**"
        f"{'met' if big_ratio <= 1.5 else 'not met'}**).",
    ]
    return "\n".join(lines) + "\n"


def render_new_place(args, runs, started: str, load0, load1) -> str:
    """The new-place tables: ours and the peer, the CPU rows, the time split of a new place."""

    def f1(v, unit=""):
        return "-" if v is None or v != v else f"{v:.1f}{unit}"

    def f2(v):
        return "-" if v is None or v != v else f"{v:.2f}"

    def share(n, d):
        return f"{n}/{d} ({100 * n / max(1, d):.0f}%)"

    def pm(values, p=50):
        values = [v for v in values if v is not None]
        return pct(values, p) if values else None

    cmd = (f"python bench/editor.py --server {args.server} --parts {args.parts} --repos "
           f"{args.repos} --lines {args.lines} --window {args.window:g} --seed {args.seed}"
           + (f" --setup '{args.setup}'" if args.setup else "")
           + (f" --out {args.out}" if args.out != str(HERE / "results/editor.md") else "")
           + (f" --dump {args.dump}" if args.dump else ""))  # fmt: skip
    lines = [
        NEW_PLACE_HEADING,
        "",
        f"Command: `{cmd}`  ",
        f"Machine: {platform.machine()}, {os.cpu_count()} cores, Python "
        f"{platform.python_version()}, {started}; load average (1/5/15 min) "
        f"{load0[0]:.2f} / {load0[1]:.2f} / {load0[2]:.2f} at the start, {load1[0]:.2f} / "
        f"{load1[1]:.2f} / {load1[2]:.2f} at the end (2 cores shared with other sessions)",
        "",
        "The shape of issue 20: a real Neovim (headless, driven over RPC) with the plugin's "
        "defaults (`setup({ notify_progress = false })`: indexing on open and warming on) on a "
        "project indexed fully, embeddings included, before the editor starts. Each line is a "
        "real line of the project typed again at a **new place** (typing_plan's choice, one "
        "line a place: another file, or at least 100 lines away in the same one): move there, "
        "`A` (insert mode), a pause drawn from 0.5-1.5 s, then the line's characters at 150 "
        f"+- 50 ms a key (uniform, seeded), nothing accepted, `<Esc>`, then {args.window:g} s "
        "in normal mode with the host's CPU watched. Measured in Neovim's own clock (the PROBE "
        "autocmds, analyse()): a key counts when a suggestion was visible before the next key "
        "(or the `<Esc>`). The peer is llama-server (--cache-reuse 256, cache_prompt, 16 "
        "tokens, the same model, `--no-repack` where the CPU needs it) asked at the same "
        "moments on the same text, streamed, the request in flight aborted by the next key and "
        "by `<Esc>`; its key counts when its first token came before the next key (idle gaps "
        "over 3 s are shortened to 3 s in its replay: nothing is in flight then).",
        "",
        "| | repository | ours | peer |",
        "|---|---|---|---|",
    ]
    cpu_rows, split_rows, place_rows, goals, notes = [], [], [], [], []
    for run in runs:
        label, r, peer, s = run["label"], run["result"], run["peer"], run["session"]
        places, split = s["places"], run["split"]
        firsts = [row for sp in split for row in sp["rows"] if row["first"]]
        later = [row for sp in split for row in sp["rows"] if not row["first"]]
        first_seen = [row["visible"] for row in firsts if row["visible"] is not None]
        later_seen = [row["visible"] for row in later if row["visible"] is not None]
        lines += [
            f"| keys with a suggestion before the next key | {label} | {share(r['had'], r['keys'])}"
            f" | {share(peer['in_time'], peer['keys'])} |",
            f"| first visible, p50 / p95 ms (over those shown; peer: first token) | {label} | "
            f"{ms(r['first'], 50)} / {ms(r['first'], 95)} | {ms(peer['first'], 50)} / "
            f"{ms(peer['first'], 95)} |",
            f"| the first key at a new place: shown before the next key; p50 ms | {label} | "
            f"{share(len(first_seen), len(firsts))}; {ms(first_seen, 50)} | |",
            f"| the keys after it: shown before the next key; p50 / p95 ms | {label} | "
            f"{share(len(later_seen), len(later))}; {ms(later_seen, 50)} / "
            f"{ms(later_seen, 95)} | |",
        ]
        # CPU
        after = [pl["cpu_after"] - pl["cpu_esc"] for pl in places]
        typing = sum(pl["cpu_esc"] - pl["cpu_first"] for pl in places)
        pause = sum(pl["cpu_first"] - pl["cpu_arrive"] for pl in places)
        whole = typing + pause
        keys, shown = max(1, r["keys"]), max(1, r["had"])
        peer_cpu = peer.get("cpu_s", float("nan"))
        done_at = sorted(d["t"] for d in s["record"].get("done") or [])
        late = []  # ms from <Esc> to the last final reply that came after it (the cancel)
        for pl in places:
            nxt = [t for t in done_at if pl["esc_t"] <= t <= pl["esc_t"] + 1000 * args.window]
            late.append(nxt[-1] - pl["esc_t"] if nxt else 0.0)
        first_s = [pl["cpu_series"][1] if len(pl.get("cpu_series", [])) > 1 else None
                   for pl in places]  # fmt: skip
        cpu_rows += [
            f"| after `<Esc>`: of it in the first second (median / max); last reply after "
            f"`<Esc>`, ms (median / max) | {label} | {f2(pm(first_s))} / "
            f"{f2(max([v for v in first_s if v is not None], default=None))} s; "
            f"{f1(pm(late))} / {f1(max(late))} | |",
        ]
        cpu_rows += [
            f"| after `<Esc>`, {args.window:g} s: median / max per line, total | {label} | "
            f"{pm(after):.2f} / {max(after):.2f} s, {sum(after):.2f} s over {len(after)} lines "
            f"| (aborted at `<Esc>`) |",
            f"| the place: pause (arrival, warming) + typing | {label} | {pause:.2f} + "
            f"{typing:.2f} = {whole:.2f} s | {peer_cpu:.2f} s |",
            f"| per keystroke (peer: per request) | {label} | {1000 * whole / keys:.0f} ms | "
            f"{1000 * peer_cpu / max(1, peer['keys']):.0f} ms |",
            f"| per shown suggestion (a key with one before the next) | {label} | "
            f"{whole / shown:.2f} s ({(whole + sum(after)) / shown:.2f} s with the time after "
            f"`<Esc>`) | {peer_cpu / max(1, peer['in_time']):.2f} s |",
        ]

        # where a new place's time goes
        def col(rows, fn):
            vals = [fn(row) for row in rows]
            vals = [v for v in vals if v is not None]
            return vals

        def sent_ms(row):
            return row["sent"]["t"] - row["key"]["t"] if row["sent"] else None

        def transport(row):
            d, c = row["done"], row["sent"]
            if not d or not c or d.get("total") is None:
                return None
            return d["t"] - c["t"] - d["total"]

        def dfield(name):
            return lambda one: (one["done"] or {}).get(name)

        def upd(row):
            return row["update"] - row["sent"]["t"] if row["update"] and row["sent"] else None

        def both(fn, unit="", p=50, firsts=firsts, later=later):
            a, b = col(firsts, fn), col(later, fn)
            return (f"{f1(pm(a, p), unit)} / {f1(pm(a, 95), unit)} | "
                    f"{f1(pm(b, p), unit)} / {f1(pm(b, 95), unit)}")  # fmt: skip

        whole_sent = [row["sent"] for row in firsts if row["sent"]]
        split_rows += [
            f"| **{label}** | | |",
            "| warming in the pause: warmings, tokens evaluated, evaluation ms (median / max "
            f"a place) | {f1(pm([sp['warm_count'] for sp in split]))} / "
            f"{max(sp['warm_count'] for sp in split)}; "
            f"{f1(pm([sp['warm_evaluated'] for sp in split]))} / "
            f"{max(sp['warm_evaluated'] for sp in split)}; "
            f"{f1(pm([sp['warm_ms'] for sp in split]))} / "
            f"{f1(max(sp['warm_ms'] for sp in split))} | |",
            "| context build at the first key's place (asked again after the run), ms | "
            f"{f1(pm([sp['context_ms'] for sp in split]))} / "
            f"{f1(pm([sp['context_ms'] for sp in split], 95))} | |",
            "| buffer sent with the request: whole buffers; median bytes | "
            f"{sum(1 for c in whole_sent if c.get('whole'))}/{len(whole_sent)}; "
            f"{f1(pm([c.get('bytes') for c in whole_sent]))} | "
            f"{sum(1 for row in later if row['sent'] and row['sent'].get('whole'))}/"
            f"{sum(1 for row in later if row['sent'])}; "
            f"{f1(pm([row['sent'].get('bytes') for row in later if row['sent']]))} |",
            f"| key to request sent (Lua: timer, snapshot, call), ms | {both(sent_ms)} |",
            f"| request to final reply, less the engine's total (transport, buffer patch, host "
            f"queue), ms | {both(transport)} |",
            f"| engine: first token, ms | {both(dfield('first_token'))} |",
            f"| engine: request sent to first streamed reply in Neovim, ms | {both(upd)} |",
            f"| engine: total, ms (of it llama.cpp) | {both(dfield('total'))} |",
            f"| prompt tokens evaluated | {both(dfield('evaluated'))} |",
            f"| prompt tokens found in the cache | {both(dfield('reused'))} |",
            f"| keystroke to first visible, ms (where shown) | {both(lambda row: row['visible'])} |",
            "| requests sent; final status ok / empty / cancelled / other | "
            + " | ".join(
                f"{sum(1 for row in rows if row['sent'])}; "
                f"{sum(1 for row in rows if (row['done'] or {}).get('status') == 'ok')} / "
                f"{sum(1 for row in rows if (row['done'] or {}).get('status') == 'empty')} / "
                f"{sum(1 for row in rows if (row['done'] or {}).get('status') == 'cancelled')} / "
                f"{sum(1 for row in rows if row['done'] and row['done'].get('status') not in ('ok', 'empty', 'cancelled'))}"
                for rows in (firsts, later)
            )
            + " |",
        ]
        for sp in split:
            pl, row = sp["place"], next((x for x in sp["rows"] if x["first"]), None)
            d = (row or {}).get("done") or {}
            place_rows.append(
                f"| {label.split()[0]} | {pl['path']}:{pl['line']} | {pl['pause']:.2f} | "
                f"{sp['warm_count']}, {sp['warm_evaluated']}, {sp['warm_ms']:.0f} | "
                f"{d.get('evaluated', '-')} / {d.get('reused', '-')} | "
                f"{f1(d.get('first_token'))} | "
                f"{f1(row['visible']) if row else '-'} | "
                f"{sum(1 for x in sp['rows'] if x['visible'] is not None)}/{len(sp['rows'])} | "
                f"{pl['cpu_first'] - pl['cpu_arrive']:.2f} / {pl['cpu_esc'] - pl['cpu_first']:.2f}"
                f" / {pl['cpu_after'] - pl['cpu_esc']:.2f} |"
            )
        # what else ran: indexing, and the engine's counters over the run
        prog = s["record"].get("progress") or []
        phases: dict[str, int] = {}
        for ev in prog:
            phases[ev.get("phase") or "?"] = phases.get(ev.get("phase") or "?", 0) + 1
        w0, w1 = places[0]["work_arrive"], s.get("work_end") or {}
        wa, wb = w0.get("warming", {}), w1.get("warming", {})
        notes.append(
            f"- {label}: indexed fully before the editor ({run['index_s']:.1f} s, up to date "
            f"when already built); indexing progress during the run: "
            f"{', '.join(f'{v} {k}' for k, v in phases.items()) or 'none'}. Engine counters over "
            f"the run: {w1.get('completions', 0) - w0.get('completions', 0)} completions "
            f"({w1.get('cancelled', 0) - w0.get('cancelled', 0)} cancelled), "
            f"{w1.get('tokens_evaluated', 0) - w0.get('tokens_evaluated', 0)} prompt tokens "
            f"evaluated by them; {wb.get('count', 0) - wa.get('count', 0)} warmings, "
            f"{wb.get('evaluated', 0) - wa.get('evaluated', 0)} tokens, of them "
            f"{wb.get('wasted', 0) - wa.get('wasted', 0)} thrown away; what the suggestions "
            f"became: {w1.get('suggestions', {})} (cumulative)."
        )
        # the goals
        ours_share, peer_share = r["had"] / keys, peer["in_time"] / max(1, peer["keys"])
        need = max(0.6, 0.8 * peer_share)
        p95 = pm(r["first"], 95)
        per_shown, peer_per_shown = whole / shown, peer_cpu / max(1, peer["in_time"])
        goals += [
            f"- {label}: a suggestion before the next key for >= max(60%, 0.8x the peer's "
            f"{100 * peer_share:.0f}%) = {100 * need:.0f}% of keys: {100 * ours_share:.0f}% (**"
            f"{'met' if ours_share >= need else 'not met'}**); first visible p95 <= 100 ms: "
            f"{ms(r['first'], 95)} ms (**{'met' if p95 is not None and p95 <= 100 else 'not met'}"
            f"**); host CPU in the {args.window:g} s after `<Esc>` <= 0.2 s: median "
            f"{pm(after):.2f} s, max {max(after):.2f} s (**"
            f"{'met' if max(after) <= 0.2 else 'met at the median, not at the max' if pm(after) <= 0.2 else 'not met'}"
            f"**); CPU per shown suggestion <= the peer's: {per_shown:.2f} s vs "
            f"{peer_per_shown:.2f} s (**{'met' if per_shown <= peer_per_shown else 'not met'}**).",
        ]
    lines += [
        "",
        "### CPU seconds: the Python host (utime + stime of Neovim's python3 host and its "
        "children, /proc) and the peer's llama-server",
        "",
        "| | repository | ours | peer |",
        "|---|---|---|---|",
        *cpu_rows,
        "",
        "### The time split of a new place",
        "",
        "The first key at each new place beside the keys after it, from the plugin's own "
        "records (the calls into the host and each final reply's `timings_ms`, "
        "`tokens_evaluated`, `tokens_reused`, read in Neovim; the engine's counters from "
        "`request('status')` at the arrival and at the end of the pause). The engine's "
        "context is built in parallel with the generation (the prompt uses the context kept "
        "for the file, which the warming built during the pause); its build time is asked "
        "again after the run with `request('context')` at the same place and text.",
        "",
        "| | first key at a new place, p50 / p95 | later keys, p50 / p95 |",
        "|---|---|---|",
        *split_rows,
        "",
        "Per place (the first key; CPU: pause / typing / after `<Esc>`, seconds):",
        "",
        "| | place | pause s | warming: count, tokens, ms | first key: evaluated / reused | "
        "first token ms | visible ms | keys shown | host CPU s |",
        "|---|---|---|---|---|---|---|---|---|",
        *place_rows,
        "",
        *notes,
        "",
        "### Goals (issue 20)",
        "",
        *goals,
    ]
    return "\n".join(lines) + "\n"


if __name__ == "__main__":
    sys.exit(main())
