"""Every documented key in a real terminal: Neovim in tmux (80 x 24), real keys sent with `tmux
send-keys` (the Alt keys as the escape sequences a terminal sends), the screen read back with
`tmux capture-pane -e` (colours included).

The API tests (tests/test_nvim.py, tests/test_nvim_keys.py) feed keys inside Neovim; only a
terminal says whether <M-Right>, <M-Down>, <M-]>, <M-[> and <M-\\> reach Neovim as those keys
(ESC ] starts an OSC, ESC [ a CSI, ESC \\ ends a string), whether the ghost text can be told
from code in a dark and a light colour scheme, and whether a message ever makes Neovim stop
for Enter. The suggestion comes from a stand-in llama-server (`StandInServer`) with a fixed
answer for each line typed, so the text on screen is known to the character; where a key
must do what it did without the plugin, the same keys are typed into a Neovim without it and
the two are compared.
"""

from __future__ import annotations

import re
import sys
import time

import pytest
from conftest import REPO_ROOT
from stand_in_server import StandInServer
from test_nvim import eventually
from test_nvim_keys import MENUS, VENDOR
from test_screen import PATIENCE, Screen, screen, tmux  # noqa: F401 (the fixture)

TYPED = "        total = total +"  # typed at line 13 of the fixture's shop/checkout.py
TYPED_IN_MENU = "        total = co"  # the same place: a word, so a completion menu opens

# The stand-in server's answer to a prompt that ends with each line: (the suggestion, the
# second candidate that <M-]> asks for).
ANSWERS = {
    TYPED: (" compute_tax(total, 7)\n        print(total)", " len(items)"),
    TYPED_IN_MENU: ("unt_items(items)\n        print(total)", "mpute_tax(total, 7)"),
}


def answer_of(asked: dict) -> str:
    """A prompt ending with a line of ANSWERS gets its answer (a request that avoids the first
    one, with its second candidate); anything else, and a request for no tokens, nothing."""
    last = str(asked.get("prompt", "")).split("\n")[-1]
    first, second = ANSWERS.get(last, ("", ""))
    if not asked.get("n_predict"):
        return ""
    return second if "logit_bias" in asked else first


# blink.cmp with its "super-tab" keys: <Tab> is the menu's (select and accept)
SUPER_TAB = (
    ["blink.cmp"],
    r"""
    require("blink.cmp").setup({ fuzzy = { implementation = "lua" }, keymap = { preset = "super-tab" },
                                 sources = { default = { "buffer" } } })
    _G.menu_visible = function() return require("blink.cmp").is_menu_visible() end
    """,
)
ALL_MENUS = {**MENUS, "blink.cmp super-tab": SUPER_TAB}
# blink.cmp sets its keys and listeners up on the main loop after setup(): keys typed before
# that open no menu (Lua: true once they are set)
MENU_READY = {
    "nvim-cmp": "return true",
    "blink.cmp": "local t = package.loaded['blink.cmp.completion.trigger']; "
    "return t ~= nil and t.buffer_events ~= nil",
}
SHOW = {"nvim-cmp": "require('cmp').complete()", "blink.cmp": "require('blink.cmp').show()"}


def init_lua(plugin: bool = True, menu: str | None = None, after: str = "") -> str:
    """An init.lua: the plugin with its defaults (or none), then a completion menu's setup
    (tests/vendor), then `after` (a colour scheme)."""
    lines = ["vim.o.swapfile = false"]
    if plugin:
        lines += [
            f"vim.opt.runtimepath:prepend({str(REPO_ROOT)!r})",
            f"vim.g.python3_host_prog = {sys.executable!r}",
            'require("repocontext").setup({})',
        ]
    if menu:
        dirs, lua = ALL_MENUS[menu]
        if not (VENDOR / dirs[0]).is_dir():
            pytest.skip(f"{menu} is not in tests/vendor (see tests/vendor/README.md)")
        lines.append(f"local VENDOR = {str(VENDOR)!r}")
        lines += [f"vim.opt.runtimepath:prepend(VENDOR .. '/{d}')" for d in dirs]
        lines.append(lua)
    return "\n".join([*lines, after, ""])


@pytest.fixture
def term(screen, env, tmp_path):  # noqa: F811 (the fixture)
    """term(plugin=True, menu=None, after="", file="shop/checkout.py", **screen's) -> a Screen
    of 80 x 24 whose suggestions come from a StandInServer; `file=None`: an unnamed buffer,
    where no suggestion is ever asked for."""
    server = StandInServer(answer_of, sure=True)
    config = tmp_path / "stand-in.toml"
    config.write_text(f'[generation]\nserver_url = "{server.url}"\nhard_deadline_ms = 1000000000\n')

    def make(plugin=True, menu=None, after="", file="shop/checkout.py", **kw) -> Screen:
        files = [str(env["root"] / file)] if file else []
        s = screen(files=files, init=init_lua(plugin, menu, after), REPOCONTEXT_CONFIG=str(config),
                   **kw)  # fmt: skip
        # low, as tmux users set it (it is how long tmux waits after an <Esc> from its own
        # client; the keys here go into the pane directly, as a terminal's escape sequences)
        tmux("set-option", "-s", "escape-time", "10")
        nv(s).command(f"cd {env['root']}")  # started in the project, as a person does
        until(s, lambda: nv(s).eval("v:vim_did_enter"))
        if menu:
            ready = MENU_READY[ALL_MENUS[menu][0][0]]
            until(s, lambda: nv(s).exec_lua(ready))
        return s

    yield make
    server.close()


# Reading the screen ----------------------------------------------------------------------------


def nv(s: Screen):
    """`s.nvim`, once Neovim is not waiting at a prompt: there it answers nothing but
    nvim_get_mode, and the test would hang on its next call (a Lua error or a message too
    wide for the screen is such a prompt). Fails at once instead, with the screen."""
    mode = s.nvim.api.get_mode()
    if mode["mode"].startswith("r"):
        raise AssertionError(f"Neovim waits at a prompt ({mode}):\n" + "\n".join(s.text()))
    return s.nvim


Cell = tuple[str, str | None, str | None]  # character, foreground, background (SGR; None: default)


def cells(s: Screen) -> list[list[Cell]]:
    """The whole screen, row by row, each character with its colours (tmux writes only the
    changes: a row goes on in the colours the one before ended with)."""
    rows, fg, bg = [], None, None
    for line in tmux("capture-pane", "-t", s.name, "-p", "-e").split("\n"):
        row = []
        for sgr, ch in re.findall(r"\x1b\[([0-9;:]*)m|(.)", line):
            if ch:
                row.append((ch, fg, bg))
            else:
                fg, bg = colours_after(sgr, fg, bg)
        rows.append(row)
    return rows


def colours_after(sgr: str, fg: str | None, bg: str | None) -> tuple[str | None, str | None]:
    parts = sgr.split(";") if sgr else ["0"]
    i = 0
    while i < len(parts):
        p = parts[i]
        if p in ("0", ""):
            fg = bg = None
        elif p == "39":
            fg = None
        elif p == "49":
            bg = None
        elif p in ("38", "48") and i + 1 < len(parts):
            n = 3 if parts[i + 1] == "5" else 5
            value = ";".join(["38", *parts[i + 1 : i + n]])
            fg, bg = (value, bg) if p == "38" else (fg, value)
            i += n - 1
        elif re.fullmatch(r"3[0-7]|9[0-7]", p):
            fg = p
        elif re.fullmatch(r"4[0-7]|10[0-7]", p):
            bg = str(int(p) - 10)  # as the same colour's foreground, to compare the two
        i += 1
    return fg, bg


def text_of(row: list[Cell]) -> str:
    return "".join(ch for ch, _, _ in row)


def ghost_colour(s: Screen) -> str:
    """The SGR foreground the ghost text is drawn in (RepoContextSuggestion's colour)."""
    if nv(s).eval("&termguicolors"):
        rgb = nv(s).eval("synIDattr(synIDtrans(hlID('RepoContextSuggestion')), 'fg#', 'gui')")
        return "38;2;" + ";".join(str(int(rgb[i : i + 2], 16)) for i in (1, 3, 5))
    return "38;5;" + nv(s).eval("synIDattr(synIDtrans(hlID('RepoContextSuggestion')), 'fg')")


def until(s: Screen, check, timeout: float = PATIENCE) -> None:
    """Wait for `check` (a callable); on time-out, fail with what the screen shows."""
    try:
        eventually(check, timeout)
    except AssertionError:
        raise AssertionError("timed out; the screen:\n" + "\n".join(s.text())) from None


def row_with(s: Screen, *texts: str, timeout: float = PATIENCE) -> int:
    """The first screen row that shows each of `texts`, waited for."""
    found: list[int] = []

    def look() -> bool:
        lines = enumerate(s.text())
        found[:] = [i for i, line in lines if all(t in line for t in texts)][:1]
        return bool(found)

    try:
        eventually(look, timeout)
    except AssertionError:
        raise AssertionError(f"{texts!r} not on one row:\n" + "\n".join(s.text())) from None
    return found[0]


def ghost_on(s: Screen, row: int, colour: str) -> str:
    """The characters of screen row `row` drawn in the ghost text's colour."""
    return "".join(ch for ch, fg, _ in cells(s)[row] if fg == colour)


def settled(s: Screen, timeout: float = PATIENCE) -> list[str]:
    """The screen's text once two looks 0.3 s apart agree (a menu drawn on a timer)."""
    deadline = time.time() + timeout
    before = s.text()
    while True:
        time.sleep(0.3)
        now = s.text()
        if now == before:
            return now
        assert time.time() < deadline, "the screen kept changing:\n" + "\n".join(now)
        before = now


def message_row(s: Screen) -> str:
    text = s.text()
    return text[-2] if text[-1] == "" else text[-1]


def calm(s: Screen) -> None:
    """No message made Neovim stop for Enter: none was wider than the 80 columns."""
    text = "\n".join(s.text())
    assert "Press ENTER" not in text, text
    assert "-- More --" not in text, text


def buffer(s: Screen) -> list[str]:
    return nv(s).current.buffer[:]


def wait_line(s: Screen, row: int, text: str, timeout: float = PATIENCE) -> None:
    """Line `row` (1-based) of the buffer is `text` (typed keys go through the terminal)."""
    try:
        eventually(lambda: nv(s).current.buffer[row - 1] == text, timeout)
    except AssertionError:
        raise AssertionError(f"line {row}: {nv(s).current.buffer[row - 1]!r} != {text!r}") from None


def in_insert_mode(s: Screen) -> bool:
    return "-- INSERT --" in message_row(s)


# Typing to a suggestion -----------------------------------------------------------------------


def type_line_13(s: Screen, typed: str, menu: str | None = None) -> None:
    """`typed` typed with real keys in place of line 13 of shop/checkout.py (and, with `menu`,
    its menu open)."""
    nv(s).current.buffer[12] = ""
    nv(s).current.window.cursor = (13, 0)
    s.keys("A")
    s.keys(typed, literal=True)
    wait_line(s, 13, typed)
    if menu:
        menu_open(s, menu)


def menu_open(s: Screen, menu: str) -> None:
    """Wait for the menu to open. The first completion in a buffer at times opens none
    (nvim-cmp and blink.cmp alike, with or without this plugin: the keys came faster than
    their sources read the buffer); a person would type on, here the menu is opened as its
    own key would (nvim-cmp's complete(), blink.cmp's <C-space>), with the same items."""
    since = time.time()
    show = SHOW[ALL_MENUS[menu][0][0]]

    def opened() -> bool:
        if nv(s).exec_lua("return _G.menu_visible()"):
            return True
        if time.time() > since + 3:
            nv(s).exec_lua(show)
        return False

    until(s, opened)


def suggested(s: Screen, typed: str, menu: str | None = None) -> tuple[int, str, str]:
    """`typed` at line 13, and its suggestion on screen: (the screen row of line 13, the
    suggestion's first line, its second line)."""
    type_line_13(s, typed, menu)
    first, second = ANSWERS[typed][0].split("\n")
    row = row_with(s, typed + first)
    colour = ghost_colour(s)
    until(s, lambda: ghost_on(s, row, colour) == first)
    if not menu:  # a menu's window may cover the line below
        until(s, lambda: ghost_on(s, row + 1, colour) == second)
    assert in_insert_mode(s)
    return row, first, second


WITH_MENUS = pytest.mark.parametrize("menu", [None, "blink.cmp"], ids=["no menu", "blink menu"])


def typed_for(menu: str | None) -> str:
    return TYPED_IN_MENU if menu else TYPED


# The keys ------------------------------------------------------------------------------------


@WITH_MENUS
def test_tab_accepts_the_whole_suggestion_as_one_undo_step(term, menu):
    """<Tab> (`accept`): the buffer gets the whole suggestion, every line, drawn as code (no
    ghost colour left), and one `u` takes it back. Fails with the <Tab> mapping gone (the
    buffer gets spaces), and with the undo block not closed (`u` takes the typing too)."""
    s = term(menu=menu)
    typed = typed_for(menu)
    row, first, second = suggested(s, typed, menu)
    s.keys("Tab")
    wait_line(s, 13, typed + first)
    assert buffer(s)[13] == second
    colour = ghost_colour(s)
    until(s, lambda: not ghost_on(s, row, colour) and not ghost_on(s, row + 1, colour))
    assert s.text()[row].startswith(typed + first)
    assert in_insert_mode(s)
    s.keys("Escape")
    until(s, lambda: not in_insert_mode(s))
    s.keys("u")
    wait_line(s, 13, typed)
    assert buffer(s)[13] == "    return total"
    calm(s)


@pytest.mark.parametrize("key", ["Tab", "M-Down"])
def test_dot_after_an_accept_repeats_what_was_typed_not_the_suggestion(term, key):
    """`.` repeats only what was typed around an accepted suggestion (|repocontext-mappings|):
    after the line typed, an accept (<Tab>: two lines; <M-Down>: one) and ` # ok`, `.` on the
    last line appends the line typed and ` # ok`, not the accepted text, which is in the
    buffer exactly as shown. Fails when the accepted text is typed in (fed as keys) instead
    of put there: 'autoindent' indents <Tab>'s second line again, and `.` repeats
    <M-Down>'s line."""
    s = term()
    row, first, second = suggested(s, TYPED)
    s.keys(key)
    wait_line(s, 13, TYPED + first)
    s.keys(" # ok", literal=True)
    accepted = [TYPED + first, second + " # ok"] if key == "Tab" else [TYPED + first + " # ok"]
    wait_line(s, 12 + len(accepted), accepted[-1])
    s.keys("Escape")
    until(s, lambda: not in_insert_mode(s))
    s.keys("G")
    s.keys(".")
    last = "    return total" + TYPED + " # ok"
    until(s, lambda: buffer(s)[-1] != "    return total")
    assert buffer(s)[12:] == [*accepted, last]
    row_with(s, last)
    calm(s)


@WITH_MENUS
def test_alt_right_accepts_a_word_and_leaves_the_rest_on_screen(term, menu):
    """<M-Right> (`accept_word`), sent as the terminal sends it (ESC [1;3C): the first word
    goes into the buffer, the rest stays drawn as ghost text after it, insert mode goes on.
    Fails with the mapping gone (<M-Right> moves the cursor, the buffer has no word)."""
    s = term(menu=menu)
    typed = typed_for(menu)
    row, first, _ = suggested(s, typed, menu)
    word = re.match(r"\s*\w+", first).group(0)
    s.keys("M-Right")
    wait_line(s, 13, typed + word)
    colour = ghost_colour(s)
    until(s, lambda: ghost_on(s, row, colour) == first[len(word) :])
    assert s.text()[row].startswith(typed + first)  # the word as code, then the rest as ghost
    assert in_insert_mode(s)
    calm(s)


@WITH_MENUS
def test_alt_down_accepts_a_line_then_the_next(term, menu):
    """<M-Down> (`accept_line`), sent as ESC [1;3B: the first line of the suggestion goes into
    the buffer, the second stays suggested; a second <M-Down> takes it as a new line. Fails
    with the mapping gone (<M-Down> moves the cursor down)."""
    s = term(menu=menu)
    typed = typed_for(menu)
    row, first, second = suggested(s, typed, menu)
    s.keys("M-Down")
    wait_line(s, 13, typed + first)
    assert buffer(s)[13] == "    return total"
    colour = ghost_colour(s)
    if not menu:
        until(s, lambda: ghost_on(s, row + 1, colour) == second)
    assert not ghost_on(s, row, colour)
    s.keys("M-Down")
    wait_line(s, 14, second)
    assert buffer(s)[12:15] == [typed + first, second, "    return total"]
    assert in_insert_mode(s)
    calm(s)


def without_plugin(term, menu: str | None, keys: list[str], typed: str) -> list[str]:
    """The buffer after `typed` at line 13 and `keys`, in a Neovim without the plugin."""
    s = term(plugin=False, menu=menu)
    type_line_13(s, typed, menu)
    for key in keys:
        s.keys(key)
    s.keys("Escape")
    until(s, lambda: not in_insert_mode(s))
    settled(s)
    return buffer(s)


@WITH_MENUS
def test_ctrl_bracket_dismisses_and_tab_then_does_what_it_did_without_the_plugin(term, menu):
    """<C-]> (`dismiss`): the ghost text goes from the screen, the buffer keeps what was typed;
    <Tab> with nothing suggested then does Neovim's own <Tab>, as in a Neovim without the
    plugin. Fails with the mapping gone (the ghost text stays), and with a <Tab> that does
    nothing when there is no suggestion."""
    s = term(menu=menu)
    typed = typed_for(menu)
    row, first, _ = suggested(s, typed, menu)
    s.keys("C-]")
    colour = ghost_colour(s)
    until(s, lambda: not ghost_on(s, row, colour) and not ghost_on(s, row + 1, colour))
    assert first not in s.text()[row]
    assert buffer(s)[12] == typed and in_insert_mode(s)
    s.keys("Tab")
    s.keys("Escape")
    until(s, lambda: not in_insert_mode(s))
    settled(s)
    assert buffer(s) == without_plugin(term, menu, ["C-]", "Tab"], typed)
    calm(s)


@WITH_MENUS
def test_alt_brackets_show_the_other_suggestion_and_back(term, menu):
    """<M-]> (`next`, ESC ] from a terminal: the start of an OSC) asks for a second
    candidate and shows it, "suggestion 2/2" beside the line; <M-[> (`prev`, ESC [: the start
    of a CSI) shows the first again, "suggestion 1/2"; <Tab> accepts the one shown. Fails
    with either mapping gone."""
    s = term(menu=menu)
    typed = typed_for(menu)
    row, first, _ = suggested(s, typed, menu)
    other = ANSWERS[typed][1]
    colour = ghost_colour(s)
    s.keys("M-]")
    until(s, lambda: ghost_on(s, row, colour) == other)
    row_with(s, typed + other, "suggestion 2/2")  # for 2 seconds
    s.keys("M-[")
    until(s, lambda: ghost_on(s, row, colour) == first)
    row_with(s, typed + first, "suggestion 1/2")
    s.keys("M-]")
    until(s, lambda: ghost_on(s, row, colour) == other)
    s.keys("Tab")
    wait_line(s, 13, typed + other)
    assert in_insert_mode(s)
    calm(s)


@WITH_MENUS
def test_alt_backslash_asks_for_a_suggestion_again(term, menu):
    """<M-\\> (`trigger`, ESC \\ from a terminal: a string terminator): after <C-]> hid the
    suggestion, it asks again and the suggestion is back on screen. Fails with the mapping
    gone."""
    s = term(menu=menu)
    typed = typed_for(menu)
    row, first, _ = suggested(s, typed, menu)
    colour = ghost_colour(s)
    s.keys("C-]")
    until(s, lambda: not ghost_on(s, row, colour))
    s.keys("M-\\")
    until(s, lambda: ghost_on(s, row, colour) == first)
    assert buffer(s)[12] == typed and in_insert_mode(s)
    s.keys("Tab")
    wait_line(s, 13, typed + first)
    calm(s)


# <Tab> and the completion menus ---------------------------------------------------------------


def tab_in_a_menu(term, menu: str, plugin: bool) -> tuple[list[str], list[str]]:
    """In an unnamed buffer (no suggestion is ever asked for there) that has `foobar`: `fo` on
    the next line (the menu opens), <Tab>. (the screen once settled, the buffer after `x` and
    <Esc>). `foobar` is there before the keys: typed in the same burst, blink.cmp's buffer
    source at times offered nothing (with or without this plugin)."""
    s = term(plugin=plugin, menu=menu, file=None)
    nv(s).current.buffer[:] = ["foobar", ""]
    nv(s).current.window.cursor = (2, 0)
    s.keys("i")
    s.keys("fo", literal=True)
    until(s, lambda: nv(s).current.buffer[:] == ["foobar", "fo"])
    menu_open(s, menu)
    settled(s)
    s.keys("Tab")
    shown = settled(s)
    s.keys("x")
    s.keys("Escape")
    until(s, lambda: not in_insert_mode(s))
    calm(s)
    return shown, buffer(s)


@pytest.mark.parametrize("menu", list(ALL_MENUS))
def test_tab_with_no_suggestion_and_a_menu_open_does_what_the_menu_does(term, menu):
    """With nothing suggested and nvim-cmp's or blink.cmp's menu open, <Tab> does what it does
    without the plugin: nvim-cmp (its README's <Tab>) selects the next item, blink.cmp's
    default keys hand <Tab> on (Neovim's own), its "super-tab" keys accept the item. The
    screen after <Tab> and the buffer are the same as without the plugin. Fails with a <Tab>
    of ours that does nothing without a suggestion, or one that shadows the menu's."""
    shown, text = tab_in_a_menu(term, menu, plugin=True)
    without_shown, without_text = tab_in_a_menu(term, menu, plugin=False)
    assert text == without_text
    assert shown == without_shown
    if menu != "blink.cmp":  # blink.cmp's default <Tab> is not the menu's
        assert text == ["foobar", "foobarx"]


def test_tab_with_nvim_cmps_menu_open_is_the_menus_even_with_a_suggestion(term):
    """nvim-cmp's menu hides the suggestion while open and keeps <Tab>
    (|repocontext-menus|): no ghost text on screen beside the menu, and <Tab> selects the
    menu's next item, as without the plugin. Fails when the suggestion is drawn under the
    menu, and with a <Tab> of ours that takes the key from nvim-cmp."""
    menu = "nvim-cmp"
    s = term(menu=menu)
    type_line_13(s, TYPED_IN_MENU, menu)
    until(s, lambda: nv(s).exec_lua("return require('repocontext')._state().result ~= nil"))
    settled(s)
    row = row_with(s, TYPED_IN_MENU)
    assert not ghost_on(s, row, ghost_colour(s))
    assert nv(s).exec_lua("return require('repocontext').visible()")  # made, kept, not drawn
    s.keys("Tab")
    settled(s)
    s.keys("Escape")
    until(s, lambda: not in_insert_mode(s))
    assert buffer(s) == without_plugin(term, menu, ["Tab"], TYPED_IN_MENU)
    assert buffer(s)[12] != TYPED_IN_MENU + ANSWERS[TYPED_IN_MENU][0].split("\n")[0]
    calm(s)


@pytest.mark.parametrize("key", ["M-Right", "M-Down"])
def test_accept_keys_take_nothing_the_menu_hides(term, key):
    """While nvim-cmp's menu hides the suggestion, <M-Right> and <M-Down> insert none of it:
    the user cannot see it, so it is not there to take (they inserted it before). Fails
    when `take` ignores the menu."""
    menu = "nvim-cmp"
    s = term(menu=menu)
    type_line_13(s, TYPED_IN_MENU, menu)
    until(s, lambda: nv(s).exec_lua("return require('repocontext')._state().result ~= nil"))
    settled(s)
    assert nv(s).exec_lua("return require('repocontext').visible()")  # made, kept, not drawn
    first_word = re.match(r"\w+", ANSWERS[TYPED_IN_MENU][0]).group()  # "unt_items"
    s.keys(key)
    settled(s)
    assert first_word not in buffer(s)[12], buffer(s)[12]
    calm(s)


# Commands and health --------------------------------------------------------------------------


def pick(s: Screen, wanted: str) -> None:
    """In vim.ui.select's list on screen (Neovim's own: inputlist()), type the number of the
    first item that shows `wanted`, and <Enter>."""
    row_with(s, "Type number and <Enter>")
    lines = s.text()
    item = next((ln for ln in lines if re.match(r"\d+: ", ln) and wanted in ln), None)
    assert item, f"no item shows {wanted!r}:\n" + "\n".join(lines)
    s.keys(item.split(":")[0], "Enter")
    until(s, lambda: "Type number" not in "\n".join(s.text()))


def test_search_lists_results_on_screen_and_jumps_to_the_one_picked(term):
    """`:RepoContext search` typed in normal mode: Neovim's own vim.ui.select lists the
    results, its title (a long query) on one row of the 80; picking tax.py's number jumps to
    its line. Fails when the title is not cut to the screen's width (it wraps), and when the
    jump goes to another line."""
    s = term()
    query = "compute the tax owed on an amount at a rate " * 3
    s.keys(f":RepoContext search {query}", literal=True)
    s.keys("Enter")
    title = row_with(s, "search: compute the tax owed")
    lines = s.text()
    assert lines[title].rstrip().endswith("…") and len(lines[title].rstrip()) <= 80, lines
    assert re.match(r"1: ", lines[title + 1]), "\n".join(lines)  # the title took one row
    pick(s, "shop/tax.py:1 ")
    until(s, lambda: nv(s).api.buf_get_name(0).endswith("shop/tax.py"))
    assert nv(s).current.window.cursor[0] == 1
    row_with(s, "def compute_tax(amount, rate):")
    calm(s)


def test_references_and_definition_jump_where_the_name_is(term):
    """`:RepoContext references` on compute_tax's definition lists its uses; picking the one
    in checkout.py lands on the call, at the name; `:RepoContext definition` there jumps back
    to the `def`. Fails when a reference lands on the function's first line, and when the
    definition's jump goes elsewhere."""
    s = term(file="shop/tax.py")
    nv(s).current.window.cursor = (1, 6)  # on compute_tax
    s.keys(":RepoContext references", "Enter")
    pick(s, "compute_tax(subtotal, 7)")
    until(s, lambda: nv(s).api.buf_get_name(0).endswith("shop/checkout.py"))
    line = "    tax = compute_tax(subtotal, 7)"
    assert nv(s).current.line == line
    assert tuple(nv(s).current.window.cursor) == (6, line.index("compute_tax"))
    s.keys(":RepoContext definition", "Enter")
    until(s, lambda: nv(s).api.buf_get_name(0).endswith("shop/tax.py"))
    assert nv(s).current.window.cursor[0] == 1
    row_with(s, "def compute_tax(amount, rate):")
    calm(s)


def test_checkhealth_reports_every_part_ok_on_screen(term, env):
    """`:checkhealth repocontext` typed in a terminal: each section is there, every check OK
    (the stand-in server answers, the file's project is indexed), no ERROR or WARNING. Fails
    when the call to the Python side breaks (ERROR: not registered) and when it asks about
    the report's own buffer (health://: in no project) instead of the file it was run from."""
    s = term()
    s.keys(":checkhealth repocontext", "Enter")
    until(s, lambda: nv(s).api.buf_get_name(0).startswith("health://"))
    until(s, lambda: any("index:" in ln or "ERROR" in ln for ln in buffer(s)), 60)
    report = "\n".join(buffer(s))
    for section in ("Python host", "packages", "engine"):
        assert f"repocontext: {section}" in report, report
    assert "ERROR" not in report and "WARNING" not in report, report
    assert "OK generation model: llama-server at" in report, report
    assert f"OK index: {env['root']}: 3 files" in report, report  # the file's project
    row_with(s, "repocontext: Python host")
    calm(s)


def test_a_message_wider_than_the_screen_is_cut_to_one_row(term):
    """A message of the plugin longer than 80 columns (`:RepoContext` with an unknown
    subcommand lists every subcommand: 130 characters) is cut to the last row, "…" where it
    was cut, and Neovim does not stop for Enter. Fails when messages are not cut."""
    s = term()
    s.keys(":RepoContext frobnicate", "Enter")
    until(
        s,
        lambda: "unknown subcommand" in "\n".join(s.text()) or "Press ENTER" in "\n".join(s.text()),
    )
    calm(s)
    said = message_row(s).rstrip()
    assert said.startswith("(repocontext) unknown subcommand") and said.endswith("…"), said
    assert len(said) <= 80


# Colour schemes -------------------------------------------------------------------------------

SCHEMES = {
    "default dark": "vim.o.background = 'dark'",
    "default light": "vim.o.background = 'light'",
    "shine (light)": "vim.cmd.colorscheme('shine')",
}


def rgb(colour: str | None) -> tuple[int, int, int] | None:
    """An SGR colour (38;5;N or 38;2;R;G;B) as red, green, blue; None for the terminal's own
    (or one of its 16 colours, which the terminal chooses)."""
    if colour is None:
        return None
    parts = [int(p) for p in colour.split(";")[1:]]
    if parts[0] == 2:
        return parts[1], parts[2], parts[3]
    n = parts[1]
    if n < 16:
        return None
    if n >= 232:
        grey = 8 + 10 * (n - 232)
        return grey, grey, grey
    n -= 16
    levels = [0, 95, 135, 175, 215, 255]
    return levels[n // 36], levels[n // 6 % 6], levels[n % 6]


def contrast(a: tuple[int, int, int], b: tuple[int, int, int]) -> float:
    """WCAG's contrast ratio of two colours (1: the same, 21: black on white)."""

    def luminance(c: tuple[int, int, int]) -> float:
        lin = [(v / 255 / 12.92) if v <= 10 else ((v / 255 + 0.055) / 1.055) ** 2.4 for v in c]
        return 0.2126 * lin[0] + 0.7152 * lin[1] + 0.0722 * lin[2]

    hi, lo = sorted((luminance(a), luminance(b)), reverse=True)
    return (hi + 0.05) / (lo + 0.05)


@pytest.mark.parametrize("truecolor", [False, True], ids=["256 colours", "truecolor"])
@pytest.mark.parametrize("scheme", list(SCHEMES))
def test_the_ghost_text_is_visible_and_not_code_in_a_dark_and_a_light_scheme(
    term, scheme, truecolor
):
    """In Neovim's default scheme (dark, and light with `background=light`) and in `shine`,
    with 256 colours and truecolor: the ghost text has one colour of its own, not the code's
    on its line, readable on its background (contrast 3:1 or more where the colours are
    known). Fails with RepoContextSuggestion linked to Comment (without truecolor: the code's
    colour in the default scheme; shine's grey 248 on white: 2.4:1) or a pale grey (254)
    on a light background."""
    s = term(after=SCHEMES[scheme], **({"COLORTERM": "truecolor"} if truecolor else {}))
    assert nv(s).eval("&termguicolors") == truecolor
    want = "light" if "light" in scheme else "dark"
    assert nv(s).eval("&background") == want
    type_line_13(s, TYPED)
    first, second = ANSWERS[TYPED][0].split("\n")
    row = row_with(s, TYPED + first)  # found by place, not by colour: that is under test
    row_with(s, second)
    settled(s)
    shown = cells(s)
    assert text_of(shown[row + 1]).startswith(second)
    line = text_of(shown[row])
    start = line.index(TYPED + first)
    code = shown[row][start : start + len(TYPED)]
    ghost = shown[row][start + len(TYPED) : start + len(TYPED) + len(first)]
    ghost += shown[row + 1][: len(second)]
    colours = {fg for _, fg, _ in ghost}
    assert len(colours) == 1 and None not in colours, ghost  # one colour, not the terminal's
    assert not colours & {fg for ch, fg, _ in code if ch.strip()}, (colours, code)
    # the terminal's own background (no colour given) is taken as 'background' says: white for
    # light, black for dark (what a person who sets it has)
    own = (255, 255, 255) if want == "light" else (0, 0, 0)
    for ch, fg, bg in ghost:
        assert fg != bg, (ch, fg, bg)
        behind = rgb(bg) or (own if bg is None else None)
        if rgb(fg) and behind:
            assert contrast(rgb(fg), behind) >= 3.0, (ch, fg, bg)
    calm(s)
