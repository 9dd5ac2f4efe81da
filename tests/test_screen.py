"""What the screen shows, read from a real terminal: Neovim in tmux, its cells (colours
included) read back with `tmux capture-pane -e`.

The API says what the plugin drew; only the screen says whether a person can tell the ghost
text from code, and whether Neovim stopped to wait for Enter. Each test has a Neovim of its own
in a terminal of 80 columns (tmux's `tmux-256color`), with the plugin's defaults, driven by real
keys (`tmux send-keys`) and read over its `--listen` socket.
"""

from __future__ import annotations

import itertools
import os
import re
import shlex
import shutil
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest
from conftest import REPO_ROOT, write_tree
from stand_in_server import StandInServer

pynvim = pytest.importorskip("pynvim")

from test_nvim import NVIM, eventually, wait_for  # noqa: E402

TMUX = shutil.which("tmux")
pytestmark = pytest.mark.skipif(TMUX is None, reason="tmux is not installed (apt install tmux)")

INIT = """
vim.opt.runtimepath:prepend({repo!r})
vim.g.python3_host_prog = {python!r}
vim.o.swapfile = false
require("repocontext").setup({{}})
"""

TYPED = "        total = total +"  # at line 13 of the fixture's shop/checkout.py
SERVER = f"rc-screen-{os.getpid()}"  # a tmux server of the tests' own
_names = itertools.count()
# How long a wait may take before it fails: a wait returns as soon as what it waits for holds,
# so this only decides how late a real failure is reported. The whole suite run with both
# cores kept busy once saw a `tmux send-keys` take over 30 s and a first suggestion arrive
# after 30 s (2026-12-06): a deadline a loaded machine can miss is a flaky test.
PATIENCE = 120


def tmux_result(*args: str) -> subprocess.CompletedProcess:
    return subprocess.run(
        [TMUX, "-L", SERVER, "-f", "/dev/null", *args],
        capture_output=True,
        text=True,
        timeout=PATIENCE,
    )


def tmux(*args: str, check: bool = False) -> str:
    out = tmux_result(*args)
    if check and out.returncode != 0:
        raise AssertionError(f"tmux {args[0]} failed ({out.returncode}): {out.stderr.strip()}")
    return out.stdout


class Screen:
    """One Neovim in a tmux pane of `columns` x `lines`."""

    def __init__(
        self,
        base: Path,
        environ: dict,
        columns: int,
        lines: int,
        files: list[str],
        init: str | None = None,
    ):
        self.name = f"s{next(_names)}"
        self.sock = base / f"{self.name}.sock"
        lua = base / f"{self.name}.lua"
        # `init`: an init.lua of the test's own (tests/test_screen_keys.py), else INIT
        lua.write_text(init or INIT.format(repo=str(REPO_ROOT), python=sys.executable))
        # the terminal is tmux's: its TERM, and COLORTERM only where the test says so
        skip = {"TERM", "COLORTERM", "TMUX", "TMUX_PANE"}
        exports = [f"export {k}={shlex.quote(v)}" for k, v in environ.items() if k not in skip]
        if environ.get("COLORTERM"):
            exports.append(f"export COLORTERM={shlex.quote(environ['COLORTERM'])}")
        argv = [NVIM, "--listen", str(self.sock), "-u", str(lua), "-i", "NONE", *files]
        script = base / f"{self.name}.sh"
        script.write_text("\n".join([*exports, f"cd {shlex.quote(str(base))}", shlex.join(argv)]))
        new = ["new-session", "-d", "-s", self.name, "-x", str(columns), "-y", str(lines),
               f"sh {shlex.quote(str(script))}"]  # fmt: skip
        made, deadline = tmux_result(*new), time.time() + 30
        # the server the test before killed was still going: a new one, once it has gone
        while "server exited unexpectedly" in made.stderr and time.time() < deadline:
            time.sleep(0.1)
            made = tmux_result(*new)
        if made.returncode != 0:
            raise AssertionError(f"tmux new-session failed ({made.returncode}): {made.stderr}")
        # the pane stays when Neovim exits at once, so that what it printed can be read
        tmux("set-option", "-t", self.name, "remain-on-exit", "on")
        try:
            eventually(self.sock.exists, PATIENCE)
        except AssertionError:
            pane = tmux("capture-pane", "-t", self.name, "-p").strip()
            sessions = tmux("list-sessions").strip()
            raise AssertionError(
                f"Neovim made no socket in 30 s; its pane: {pane!r}; tmux sessions: {sessions!r}"
            ) from None
        # the socket's file is there once bound, a moment before Neovim listens on it
        deadline = time.time() + 30
        while True:
            try:
                self.nvim = pynvim.attach("socket", path=str(self.sock))
                break
            except ConnectionRefusedError:
                if time.time() > deadline:
                    raise
                time.sleep(0.05)

    def keys(self, *keys: str, literal: bool = False) -> None:
        tmux("send-keys", "-t", self.name, *(["-l"] if literal else []), *keys)

    def text(self) -> list[str]:
        return tmux("capture-pane", "-t", self.name, "-p").split("\n")

    def colours(self, row: int) -> list[tuple[str, str | None]]:
        """Screen row `row` (0-based) as (character, its foreground: an SGR colour, None for
        the terminal's default)."""
        line = tmux("capture-pane", "-t", self.name, "-p", "-e").split("\n")[row]
        out, fg = [], None
        for sgr, ch in re.findall(r"\x1b\[([0-9;]*)m|(.)", line):
            if ch:
                out.append((ch, fg))
                continue
            fg = foreground(sgr, fg)
        return out

    def close(self) -> None:
        try:
            self.nvim.close()
        except Exception:
            pass
        tmux("kill-session", "-t", self.name)


def foreground(sgr: str, fg: str | None) -> str | None:
    """The foreground after SGR parameters `sgr`, from `fg` before them."""
    parts = sgr.split(";") if sgr else ["0"]
    i = 0
    while i < len(parts):
        p = parts[i]
        if p in ("0", "", "39"):
            fg = None
        elif p == "38" and i + 1 < len(parts):
            n = 3 if parts[i + 1] == "5" else 5
            fg = ";".join(parts[i : i + n])
            i += n - 1
        elif re.fullmatch(r"3[0-7]|9[0-7]", p):
            fg = p
        i += 1
    return fg


@pytest.fixture
def screen(env, tmp_path):
    """screen(columns=80, lines=24, files=(), init=None, **environ) -> a Screen, closed after
    the test."""
    made = []

    def make(columns: int = 80, lines: int = 24, files=(), init: str | None = None, **environ):
        s = Screen(tmp_path, {**env["environ"], **environ}, columns, lines, list(files), init)
        made.append(s)
        return s

    yield make
    for s in made:
        s.close()
    tmux("kill-server")


def type_at_line_13(s: Screen, env) -> str:
    """`TYPED` typed with real keys at line 13 of shop/checkout.py; the suggestion's first line,
    once the final reply has it on screen."""
    nv = s.nvim
    nv.command(f"edit! {env['root'] / 'shop/checkout.py'}")
    nv.current.buffer[12] = ""
    nv.current.window.cursor = (13, 0)
    s.keys("A")
    s.keys(TYPED, literal=True)
    wait_for(nv, "return require('repocontext')._state().result ~= nil "
                 "and require('repocontext').visible()")  # fmt: skip
    first = nv.exec_lua("return require('repocontext')._state().text").split("\n")[0]
    eventually(lambda: any(TYPED + first in line for line in s.text()))
    return first


@pytest.mark.parametrize("truecolor", [False, True], ids=["256 colours", "truecolor"])
def test_the_ghost_text_has_a_colour_of_its_own_with_and_without_truecolor(screen, env, truecolor):
    """Linked to Comment, the ghost text was drawn in the code's own colour without truecolor
    (Neovim 0.11's default colour scheme gives Comment only a GUI colour): `x = next(` showed
    `iter_values)` as if typed."""
    s = screen(**({"COLORTERM": "truecolor"} if truecolor else {}))
    # Neovim sets 'termguicolors' from COLORTERM at VimEnter, and answers on its socket
    # before that: with both cores busy the test read the option first
    eventually(lambda: s.nvim.eval("v:vim_did_enter") == 1)
    assert s.nvim.eval("&termguicolors") == truecolor
    first = type_at_line_13(s, env)
    row = next(i for i, line in enumerate(s.text()) if TYPED + first in line)
    cells = s.colours(row)
    start = "".join(ch for ch, _ in cells).index(TYPED + first)
    code = {fg for ch, fg in cells[start : start + len(TYPED)] if ch.isalpha()}
    ghost = {fg for ch, fg in cells[start + len(TYPED) : start + len(TYPED) + len(first)]}
    assert len(ghost) == 1 and None not in ghost, cells  # one colour, not the terminal's own
    assert not ghost & code, (ghost, code)


def test_the_ghost_text_is_drawn_only_in_the_window_being_typed_in(screen, env):
    """Two windows on one buffer (`:split`): the ghost text was drawn in both."""
    s = screen(lines=60)  # room for line 13 in both windows
    s.nvim.command(f"edit! {env['root'] / 'shop/checkout.py'}")
    s.nvim.command("split")
    first = type_at_line_13(s, env)
    rows = [line for line in s.text() if TYPED in line]
    assert len(rows) == 2, rows  # the line typed, in both windows
    assert sum(TYPED + first in line for line in rows) == 1, rows


def message_line(s: Screen) -> str:
    return s.text()[-2] if s.text()[-1] == "" else s.text()[-1]


def no_prompt_and_one_line(s: Screen, start: str) -> None:
    """The screen shows the plugin's message, beginning with `start`, on the last line alone,
    and Neovim is not waiting for Enter (read from the screen only: at a prompt, Neovim would
    not answer on its socket)."""
    eventually(lambda: start in message_line(s) or "Press ENTER" in "\n".join(s.text()), PATIENCE)
    text = "\n".join(s.text())
    assert "Press ENTER" not in text, text
    assert text.count("(repocontext)") == 1, text


def still_inserting(s: Screen, seconds: float = 3.0) -> None:
    """For `seconds` (the message is due in them), insert mode stays on screen, with no prompt
    and no message that `-- INSERT --` would cover. From Neovim's first drawing: its socket
    answers before the screen is drawn."""
    eventually(lambda: any(line.strip() for line in s.text()), PATIENCE)
    deadline = time.time() + seconds
    while time.time() < deadline:
        text = "\n".join(s.text())
        assert "Press ENTER" not in text and "(repocontext)" not in text, text
        assert "-- INSERT --" in message_line(s), text
        time.sleep(0.1)


@pytest.mark.parametrize("mode", ["normal", "insert"])
def test_a_missing_update_remote_plugins_says_so_in_one_line(screen, env, tmp_path, mode):
    """Unregistered, the plugin said what to do in 133 characters: two lines and a prompt."""
    empty = tmp_path / "empty-rplugin.vim"
    empty.write_text("")
    # +startinsert: insert mode before the warming's first call, warm_delay_ms after the
    # buffer opened
    start = ["+startinsert"] if mode == "insert" else []
    s = screen(files=[*start, str(env["root"] / "shop/checkout.py")],
               NVIM_RPLUGIN_MANIFEST=str(empty))  # fmt: skip
    if mode == "insert":
        still_inserting(s)
        s.keys("Escape")
    no_prompt_and_one_line(s, "(repocontext) run :UpdateRemotePlugins")


def test_a_file_in_no_project_says_so_in_one_line(screen, tmp_path):
    loose = write_tree(tmp_path / "loose", {"notes.py": "def add(a, b):\n    return a + b\n"})
    s = screen(files=[str(loose / "notes.py")])
    no_prompt_and_one_line(s, "(repocontext) notes.py: in no project")


@pytest.mark.parametrize("mode", ["normal", "insert"])
def test_an_engine_that_dies_says_so_in_one_line(screen, env, mode):
    s = screen()
    type_at_line_13(s, env)
    if mode == "normal":
        s.keys("Escape")
        eventually(lambda: "-- INSERT --" not in message_line(s))
    s.nvim.command("set laststatus=2 statusline=%f%=%{v:lua.require'repocontext'.statusline()}")
    pid = s.nvim.exec_lua("return require('repocontext.host').pid()")
    os.kill(pid, signal.SIGKILL)  # from here on the screen alone: a prompt would block the socket
    # the statusline says so at once, with no key typed (nothing else redraws it)
    eventually(lambda: "repocontext ✗" in "\n".join(s.text()), PATIENCE)
    if mode == "insert":  # shown when insert mode ends: `-- INSERT --` would cover it
        still_inserting(s)
        s.keys("Escape")
    no_prompt_and_one_line(s, "(repocontext) the engine stopped")


def test_cycling_says_which_suggestion_beside_the_line_in_insert_mode(screen, env):
    """Cycling's "suggestion 2/2" went to the message area, where `-- INSERT --` covered it
    at once."""
    s = screen(columns=160)  # room beside the line for the ghost text and the note
    type_at_line_13(s, env)
    s.nvim.input("<M-]>")  # the default mapping; tmux would send ESC ], an OSC to Neovim

    def said() -> str | None:
        row = next((ln for ln in s.text() if TYPED in ln), "")
        return next((w for w in ("suggestion 2/2", "no other suggestion") if w in row), None)

    eventually(lambda: "looking for another suggestion" in "\n".join(s.text()) or said(), PATIENCE)
    eventually(said, 60)
    assert "-- INSERT --" in message_line(s)


def test_a_sign_at_the_cursor_says_what_the_first_suggestion_waits_for(screen, env, tmp_path):
    """After Neovim opened, the first suggestion waited about 15 s for the model with nothing on
    the screen. Now the end of the cursor's line says what it waits for (here a server that
    takes 4 s to answer, as one loading its model does), with no statusline of the user's, and
    the sign goes once the engine is ready."""
    # a server that takes 4 s to answer its first question, then completes with " 1"
    server = StandInServer(lambda asked: " 1", props_delay=4.0)
    config = tmp_path / "slow-server.toml"
    config.write_text(f'[generation]\nserver_url = "{server.url}"\n')
    try:
        s = screen(files=[str(env["root"] / "shop/checkout.py")], REPOCONTEXT_CONFIG=str(config))
        sign = "repocontext: asking its server…"
        eventually(lambda: any(sign in line for line in s.text()), PATIENCE)
        row = next(line for line in s.text() if sign in line)
        cursor = s.nvim.current.window.cursor[0]
        assert s.nvim.current.buffer[cursor - 1] in row  # on the cursor's line
        eventually(lambda: not any(sign in line for line in s.text()), PATIENCE)
        # and it does not come back with the next keys
        s.keys("A")
        s.keys(" x", literal=True)
        time.sleep(1.0)
        assert not any("repocontext:" in line for line in s.text())
    finally:
        server.close()
