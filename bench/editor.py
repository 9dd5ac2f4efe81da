"""Responsiveness of the real editor with the plugin, in one run.

    python bench/editor.py [--out bench/results/editor.md]

1. 1,000 scripted keystrokes (typing real lines of this repository in insert mode) in a
   headless Neovim with the plugin on, and in one with it off: wall time of the whole run and
   of the slowest keystroke (each keystroke is sent, then a round trip confirms Neovim has
   processed it).
2. In the same editor, keystroke to first visible ghost text and to a complete suggestion
   (the engine's final reply), p50/p95, over typing sessions on this repository.
"""

from __future__ import annotations

import argparse
import os
import platform
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

from stats import percentile as pct  # noqa: E402

from repocontext.service import Repository  # noqa: E402

INIT = """
vim.opt.runtimepath:prepend({repo!r})
vim.g.python3_host_prog = {python!r}
vim.o.swapfile = false
{setup}
"""


def start(base: Path, plugin_on: bool) -> pynvim.Nvim:
    init = base / ("on.lua" if plugin_on else "off.lua")
    setup = (
        'require("repocontext").setup({ notify_progress = false, index_on_open = false })'
        if plugin_on
        else ""
    )
    init.write_text(INIT.format(repo=str(REPO), python=sys.executable, setup=setup))
    nvim = shutil.which("nvim", path=str(Path(sys.executable).parent)) or "nvim"
    if plugin_on and not (base / "rplugin.vim").exists():
        subprocess.run(
            [
                nvim,
                "--headless",
                "-u",
                str(init),
                "-i",
                "NONE",
                "-c",
                "UpdateRemotePlugins",
                "-c",
                "qa!",
            ],
            check=True,
            capture_output=True,
        )
    nv = pynvim.attach("child", argv=[nvim, "--embed", "--headless", "-u", str(init), "-i", "NONE"])
    nv.command(f"cd {REPO}")
    return nv


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


def type_keystrokes(nv: pynvim.Nvim, lines: list[str], count: int) -> tuple[float, float]:
    nv.command("enew")
    nv.command("setlocal filetype=python")
    nv.command(f"file {REPO / 'scratch_bench.py'}")
    nv.input("i")
    nv.eval("1")
    worst, sent = 0.0, 0
    t0 = time.perf_counter()
    for line in lines:
        for ch in line.strip() + "\n":
            k0 = time.perf_counter()
            nv.input("<CR>" if ch == "\n" else ("<lt>" if ch == "<" else ch))
            nv.eval("1")  # round trip: the keystroke has been processed
            worst = max(worst, time.perf_counter() - k0)
            sent += 1
            if sent >= count:
                return time.perf_counter() - t0, worst
    return time.perf_counter() - t0, worst


def ghost_latency(nv: pynvim.Nvim, lines: list[str]) -> tuple[list[float], list[float]]:
    nv.input("<Esc>")
    nv.command(f"edit! {REPO / 'src/repocontext/cli.py'}")
    firsts, totals = [], []
    for line in lines[:12]:
        nv.command("normal! G")
        nv.input("o")
        for ch in line.strip()[:12]:
            nv.input("<lt>" if ch == "<" else ch)
            k0 = time.perf_counter()
            first = None
            deadline = k0 + 5
            while time.perf_counter() < deadline:
                state = nv.exec_lua(
                    "local s = require('repocontext')._state() "
                    "return {s.text ~= nil, s.result ~= nil}"
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


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--keystrokes", type=int, default=1000)
    ap.add_argument("--out", default=str(HERE / "results/editor.md"))
    args = ap.parse_args()
    base = Path(tempfile.mkdtemp(prefix="rc-editor-"))
    env = {
        "XDG_CONFIG_HOME": base / "config",
        "XDG_DATA_HOME": base / "data",
        "XDG_STATE_HOME": base / "state",
        "NVIM_RPLUGIN_MANIFEST": base / "rplugin.vim",
        "REPOCONTEXT_HOME": REPO / ".bench-cache" / "home-self",
    }
    os.environ.update({k: str(v) for k, v in env.items()})
    Repository(REPO).index()
    Repository(REPO).embed()
    lines = script_lines(args.keystrokes)
    results = {}
    for on in (False, True):
        nv = start(base, on)
        try:
            results[on] = type_keystrokes(nv, lines, args.keystrokes)
            if on:
                results["ghost"] = ghost_latency(nv, lines)
        finally:
            try:
                nv.quit("qa!")
            except Exception:
                pass
    off_wall, off_worst = results[False]
    on_wall, on_worst = results[True]
    firsts, totals = results["ghost"]
    ratio = on_wall / off_wall
    text = (
        "\n".join(
            [
                "# Editor responsiveness (headless Neovim 0.11 driven over RPC)",
                "",
                f"Command: `python bench/editor.py {' '.join(sys.argv[1:])}`  ",
                f"Machine: {platform.machine()}, {os.cpu_count()} cores, Python "
                f"{platform.python_version()}, {time.strftime('%Y-%m-%d %H:%M')}",
                "",
                f"## {args.keystrokes} scripted keystrokes in insert mode",
                "",
                "| | plugin off | plugin on | ratio (goal <= 1.05) |",
                "|---|---|---|---|",
                f"| wall time | {off_wall:.2f} s | {on_wall:.2f} s | {ratio:.3f} |",
                f"| slowest keystroke | {1000 * off_worst:.1f} ms | {1000 * on_worst:.1f} ms | |",
                "",
                "Each keystroke is followed by an RPC round trip, so these times include the client's "
                "own latency; the ratio is what the plugin adds.",
                "",
                f"## Keystroke to ghost text, in the editor ({len(firsts)} keystrokes with a suggestion)",
                "",
                "| | p50 ms | p95 ms |",
                "|---|---|---|",
                f"| first visible ghost text | {1000 * pct(firsts, 50):.0f} | {1000 * pct(firsts, 95):.0f} |"
                if firsts
                else "| first visible ghost text | - | - |",
                f"| complete suggestion | {1000 * pct(totals, 50):.0f} | {1000 * pct(totals, 95):.0f} |"
                if totals
                else "| complete suggestion | - | - |",
                "",
                "## Goals",
                "",
                f"- Wall-time ratio at most 1.05: {ratio:.3f}, **{'met' if ratio <= 1.05 else 'not met'}**.",
                f"- Slowest keystroke under 16 ms (plugin on): {1000 * on_worst:.1f} ms, "
                f"**{'met' if on_worst < 0.016 else 'not met'}**.",
            ]
        )
        + "\n"
    )
    Path(args.out).write_text(text)
    print(text)
    return 0


if __name__ == "__main__":
    sys.exit(main())
