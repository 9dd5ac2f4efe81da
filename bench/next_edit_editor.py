"""bench/next_edit.py's cases replayed in a real Neovim: does the plugin propose what the
in-process engine proposes?

    python bench/next_edit_editor.py [--cases 20] [--repos ...] [--follow] [--out FILE]

bench/next_edit.py calls the engine in-process on the file as git has it. A user's places come
another way: the Lua side keeps the buffer's lines, sends the buffer and the lines an edit
changed (nextedit.lua, sync.lua), the bridge rebuilds the text before and after the edit
(bridge.py), and the session's engine answers with its memory of the user's edits. This bench
checks that path on real history: for the first `--cases` cases of each repository (newest
first, those with later places in the edited file), a real Neovim (the pip wheel, `nvim
--embed --headless`, the plugin with its defaults but `index_on_open = false` and
`auto_trigger = false`: no index, no ghost text, the completion's server a stand-in) opens the
file as it was before the commit (under a temporary project, one folder per case), puts the
cursor on the first changed line, and types the commit's new line with real keys (`0C`, the
line, `<Esc>`). The plugin asks the engine on InsertLeave; its reply (every place, as
nextedit.lua keeps them) is compared with the in-process engine's on the same case, at the
engine's own threshold, and labelled as bench/next_edit.py labels it.

`--follow`: each case carried through as next_edit_sequential.follow reads the plugin, with
its keys: the drawn place taken with <Tab> (jump) and <Tab> (apply) while it is the commit's,
and at the first wrong one drawn the topmost change left typed by hand; the places taken and
the wrong ones drawn are compared with the in-process replay's, case by case.

A case whose typed line did not come out as the commit's (an indent rule of the file type
re-indenting it) is counted apart and not compared.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import shutil
import subprocess
import sys
import tempfile
import time
from collections import Counter
from collections.abc import Callable
from pathlib import Path

import pynvim

HERE = Path(__file__).resolve().parent
REPO = HERE.parent
sys.path.insert(0, str(REPO / "src"))
sys.path.insert(0, str(HERE))
sys.path.insert(0, str(REPO / "tests"))  # the terminal tests' stand-in llama-server

from next_edit import DEFAULT_REPOS, cached_cases, git_dir, label_of  # noqa: E402
from next_edit_latency import INIT  # noqa: E402
from next_edit_sequential import Row, follow  # noqa: E402
from stand_in_server import StandInServer  # noqa: E402

from repocontext.nextedit import propose  # noqa: E402
from repocontext.nextedit.memory import REPEATED_LOGIT  # noqa: E402
from repocontext.nextedit.propose import MIN_CONFIDENCE  # noqa: E402

WAIT_S = 5.0
SETTLE_S = 4.0
SETUP = "index_on_open = false, auto_trigger = false"
# every reply the plugin takes, its places as nextedit.lua keeps them
PROBE = """
_G.ne_replies = {}
local nextedit = require('repocontext.nextedit')
local receive = nextedit.receive
nextedit.receive = function(reply, ...)
  table.insert(_G.ne_replies, reply)
  return receive(reply, ...)
end
"""


def keys(text: str) -> str:
    """`text` as keys typed in insert mode (`<` is a key's name to nvim_input)."""
    return text.replace("<", "<lt>")


def case_file(root: Path, folder: str, case, before: str) -> tuple[Path, list, list[str]] | None:
    """The edited file as it was before the commit, written under `root/folder`; with the
    case's later places in it and its lines (None: not a case here)."""
    first = case.places[0]
    here = [p for p in case.places[1:] if p.path == first.path]
    lines = before.split("\n")
    if not here or lines[first.line - 1] != first.old:
        return None
    path = root / folder / first.path
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(before)
    return path, here, lines


def replay(nv, root: Path, n: int, case, before: str) -> dict | None:
    found = case_file(root, f"c{n}", case, before)
    if found is None:
        return None
    path, here, lines = found
    first = case.places[0]
    after_lines = list(lines)
    after_lines[first.line - 1] = first.new
    engine = propose(before, "\n".join(after_lines), first.path)
    expected = {p.line: p.new.rstrip() for p in here}
    nv.command(f"edit {path}")
    replies = nv.exec_lua("return #_G.ne_replies")
    nv.current.window.cursor = (first.line, 0)
    nv.input("0C" + keys(first.new) + "<Esc>")
    deadline = time.monotonic() + WAIT_S
    reply = None
    while time.monotonic() < deadline:
        got = nv.exec_lua("local n = ... return _G.ne_replies[n + 1]", replies)
        if got is not None:
            reply = got
            break
        time.sleep(0.01)
    typed = nv.current.buffer[first.line - 1]
    nv.command("bwipe!")
    record = {
        "repo": case.repo, "commit": case.commit[:10], "path": first.path, "line": first.line,
        "typed_ok": typed == first.new, "replied": reply is not None,
        "error": (reply or {}).get("error"),
        "engine": [(p.line, p.new_line, label_of(case, lines, expected, p.line, p.new_line))
                   for p in engine],
        "editor": [(p["line"], p["new_line"],
                    label_of(case, lines, expected, p["line"], p["new_line"]))
                   for p in (reply or {}).get("places") or []
                   if Path(p["path"]).resolve() == path.resolve()],
    }  # fmt: skip
    return record


def follow_in_editor(nv, root: Path, n: int, case, before: str) -> dict | None:
    """The case followed as next_edit_sequential.follow reads the plugin, with its real keys:
    the drawn place taken with <Tab> (jump) and <Tab> (apply) while it is the commit's; at
    the first wrong one drawn, the topmost change left typed by hand (`0C` … `<Esc>`)."""
    found = case_file(root, f"f{n}", case, before)
    if found is None:
        return None
    path, here, lines = found
    first = case.places[0]
    engine = Row()
    follow(case, before, engine, logit=REPEATED_LOGIT, threshold=MIN_CONFIDENCE)
    expected = {p.line: p.new.rstrip() for p in here}
    left = {p.line: p for p in here}
    seen: set[tuple[int, str]] = set()
    got = {"right": 0, "wrong": 0, "typed_ok": True, "keys": 0}
    nv.command(f"edit {path}")

    def by_hand(place) -> None:
        replies = nv.exec_lua("return #_G.ne_replies")
        nv.current.window.cursor = (place.line, 0)
        nv.input("0C" + keys(place.new) + "<Esc>")
        _until(lambda: nv.exec_lua("return #_G.ne_replies") > replies)
        got["typed_ok"] &= nv.current.buffer[place.line - 1] == place.new

    by_hand(first)
    while True:
        while True:
            shown = nv.exec_lua("return require('repocontext.nextedit').shown()")
            if not shown:
                break
            kind = label_of(case, lines, expected, shown["line"], shown["new_line"])
            if kind not in ("right", "other"):
                if (shown["line"], shown["new_line"]) not in seen:
                    seen.add((shown["line"], shown["new_line"]))
                    got["wrong"] += 1
                break
            tick = nv.eval("b:changedtick")
            if nv.current.window.cursor[0] != shown["line"]:
                nv.input("<Tab>")
                got["keys"] += 1
                _until(lambda: nv.current.window.cursor[0] == shown["line"])  # noqa: B023
            nv.input("<Tab>")
            got["keys"] += 1
            _until(lambda: nv.eval("b:changedtick") != tick)  # noqa: B023
            if kind == "right" and left.pop(shown["line"], None) is not None:
                got["right"] += 1
        if not left:
            break
        by_hand(left.pop(min(left)))
    nv.command("bwipe!")
    return {
        "repo": case.repo, "commit": case.commit[:10], "path": first.path,
        "typed_ok": got["typed_ok"], "later": len(here), "tabs": got["keys"],
        "engine": (engine.right, engine.wrong), "editor": (got["right"], got["wrong"]),
    }  # fmt: skip


def _until(ready: Callable[[], bool]) -> bool:
    deadline = time.monotonic() + WAIT_S
    while time.monotonic() < deadline:
        if ready():
            return True
        time.sleep(0.005)
    return False


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--repos", default=",".join(DEFAULT_REPOS))
    ap.add_argument("--cases", type=int, default=20, help="cases per repository")
    ap.add_argument("--out", default=None)
    ap.add_argument("--dump", default=None, help="each case's two lists of places (JSON)")
    ap.add_argument("--follow", action="store_true", help="follow the plugin with <Tab>")
    args = ap.parse_args()
    started = time.strftime("%Y-%m-%d %H:%M UTC", time.gmtime())
    base = Path(tempfile.mkdtemp(prefix="rc-next-edit-editor-"))
    home = base / "home"
    home.mkdir()
    server = StandInServer(lambda asked: "")
    (home / "config.toml").write_text(f'[generation]\nserver_url = "{server.url}"\n')
    env = {"XDG_CONFIG_HOME": base / "config", "XDG_DATA_HOME": base / "data",
           "XDG_STATE_HOME": base / "state", "XDG_CACHE_HOME": base / "cache",
           "NVIM_RPLUGIN_MANIFEST": base / "rplugin.vim", "REPOCONTEXT_HOME": home}  # fmt: skip
    os.environ.update({k: str(v) for k, v in env.items()})
    os.environ.pop("REPOCONTEXT_CONFIG", None)
    root = base / "project"
    root.mkdir()
    subprocess.run(["git", "init", "-q", str(root)], check=True)
    init = base / "init.lua"
    init.write_text(INIT.format(repo=str(REPO), python=sys.executable, setup=SETUP))
    nvim = shutil.which("nvim", path=str(Path(sys.executable).parent)) or "nvim"
    subprocess.run([nvim, "--headless", "-u", str(init), "-i", "NONE", "-c",
                    "UpdateRemotePlugins", "-c", "qa!"], check=True, capture_output=True)  # fmt: skip
    records = []
    nv = pynvim.attach("child", argv=[nvim, "--embed", "--headless", "-u", str(init), "-i", "NONE"])
    try:
        nv.command(f"cd {root}")
        nv.exec_lua(PROBE)
        (root / "start.py").write_text("x = 1\n")
        nv.command(f"edit {root / 'start.py'}")  # the Python host starts (the plugin's warming)
        time.sleep(SETTLE_S)
        nv.command("bwipe!")
        n = 0
        for repo in args.repos.split(","):
            taken = 0
            for case, before in cached_cases(repo, git_dir(repo), None):
                if taken >= args.cases or before is None:
                    continue
                run = follow_in_editor if args.follow else replay
                record = run(nv, root, n, case, before)
                n += 1
                if record is None:
                    continue
                taken += 1
                records.append(record)
            mine = [r for r in records if r["repo"] == repo]
            print(repo, (follow_summary if args.follow else summary)(mine), file=sys.stderr)
    finally:
        try:
            nv.quit("qa!")
        except Exception:
            pass
        server.close()
        shutil.rmtree(base, ignore_errors=True)
    if args.dump:
        Path(args.dump).write_text(json.dumps(records, indent=1))
    report = (render_follow if args.follow else render)(records, args, started)
    print(report)
    if args.out:
        Path(args.out).write_text(report)
    return 0


def summary(records: list[dict]) -> dict:
    out: Counter = Counter()
    for r in records:
        out["cases"] += 1
        if not r["typed_ok"]:
            out["typed otherwise"] += 1
            continue
        if not r["replied"]:
            out["no reply"] += 1
        if r["error"]:
            out["error"] += 1
        same = [tuple(p) for p in r["engine"]] == [tuple(p) for p in r["editor"]]
        out["same places"] += same
        for _, _, lab in r["engine"]:
            out[f"engine {lab}"] += 1
        for _, _, lab in r["editor"]:
            out[f"editor {lab}"] += 1
    return dict(out)


def follow_summary(records: list[dict]) -> dict:
    out: Counter = Counter()
    for r in records:
        out["cases"] += 1
        if not r["typed_ok"]:
            out["typed otherwise"] += 1
            continue
        out["later"] += r["later"]
        out["same"] += tuple(r["engine"]) == tuple(r["editor"])
        out["engine right"] += r["engine"][0]
        out["engine wrong"] += r["engine"][1]
        out["editor right"] += r["editor"][0]
        out["editor wrong"] += r["editor"][1]
        out["tabs"] += r["tabs"]
    return dict(out)


def render_follow(records: list[dict], args, started: str) -> str:
    nvim = subprocess.run(["nvim", "--version"], capture_output=True, text=True).stdout
    command = "python bench/next_edit_editor.py --follow" + (
        f" --cases {args.cases}" if args.cases != 20 else ""
    )
    out = [
        f"Command: `{command}`  ",
        f"Machine: {platform.machine()}, {os.cpu_count()} cores, Python "
        f"{platform.python_version()}, {nvim.split(chr(10))[0]}, {started}",
        "",
        "| repository | cases | typed otherwise | later places | same right and wrong "
        "| right (in-process / Neovim) | wrong drawn (in-process / Neovim) | <Tab> pressed |",
        "|---|---|---|---|---|---|---|---|",
    ]
    repos = list(dict.fromkeys(r["repo"] for r in records))
    for name, rows in [*((r, [x for x in records if x["repo"] == r]) for r in repos),
                       ("**all**", records)]:  # fmt: skip
        s = follow_summary(rows)
        out.append(
            f"| {name} | {s.get('cases', 0)} | {s.get('typed otherwise', 0)} "
            f"| {s.get('later', 0)} | {s.get('same', 0)} "
            f"| {s.get('engine right', 0)} / {s.get('editor right', 0)} "
            f"| {s.get('engine wrong', 0)} / {s.get('editor wrong', 0)} | {s.get('tabs', 0)} |"
        )
    differ = [r for r in records if r["typed_ok"] and tuple(r["engine"]) != tuple(r["editor"])]
    if differ:
        out += ["", "Cases that differ (first 10; right, wrong):", ""]
        for r in differ[:10]:
            out.append(f"- {r['repo']} {r['commit']} {r['path']}: in-process {r['engine']}, "
                       f"Neovim {r['editor']}")  # fmt: skip
    return "\n".join(out) + "\n"


def render(records: list[dict], args, started: str) -> str:
    nvim = subprocess.run(["nvim", "--version"], capture_output=True, text=True).stdout
    command = "python bench/next_edit_editor.py" + (
        f" --cases {args.cases}" if args.cases != 20 else ""
    )
    if args.repos != ",".join(DEFAULT_REPOS):
        command += f" --repos {args.repos}"
    head = (
        "| repository | cases | typed otherwise | no reply | same places | right (engine / "
        "editor) | wrong, steps included (engine / editor) |\n|---|---|---|---|---|---|---|"
    )
    out = [
        f"Command: `{command}`  ",
        f"Machine: {platform.machine()}, {os.cpu_count()} cores, Python "
        f"{platform.python_version()}, {nvim.split(chr(10))[0]}, {started}",
        "",
        head,
    ]
    repos = list(dict.fromkeys(r["repo"] for r in records))
    for name, rows in [*((r, [x for x in records if x["repo"] == r]) for r in repos),
                       ("**all**", records)]:  # fmt: skip
        s = summary(rows)
        wrong = {
            who: sum(s.get(f"{who} {lab}", 0) for lab in ("wrong", "otherwise", "step"))
            for who in ("engine", "editor")
        }
        out.append(
            f"| {name} | {s.get('cases', 0)} | {s.get('typed otherwise', 0)} "
            f"| {s.get('no reply', 0)} | {s.get('same places', 0)} "
            f"| {s.get('engine right', 0)} / {s.get('editor right', 0)} "
            f"| {wrong['engine']} / {wrong['editor']} |"
        )
    differ = [r for r in records if r["typed_ok"] and r["engine"] != r["editor"]]
    if differ:
        out += ["", "Cases whose places differ (first 10):", ""]
        for r in differ[:10]:
            out.append(f"- {r['repo']} {r['commit']} {r['path']}:{r['line']}: engine "
                       f"{len(r['engine'])} places, editor {len(r['editor'])}"
                       + (f" (error: {r['error']})" if r["error"] else ""))  # fmt: skip
    return "\n".join(out) + "\n"


if __name__ == "__main__":
    raise SystemExit(main())
