"""Keys in the user's Neovim: with no suggestion to act on, a key does exactly what it did
without the plugin.

Each case starts a real Neovim 0.11 (its own default mappings on, as in every real
configuration) twice, with and without `require("repocontext").setup({})`, types the same keys
with `feedkeys(..., "xt")` and compares the buffers. The buffer is unnamed, so no suggestion
can appear: every key here is one the plugin must hand back. The completion plugins are the
pinned snapshots under tests/vendor/.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import textwrap
import time

import pynvim
import pytest
from conftest import REPO_ROOT
from test_nvim import NVIM

VENDOR = REPO_ROOT / "tests" / "vendor"

# What users have on <Tab> before the plugin comes (beside Neovim's own default).
USER_TAB = {
    "neovim-defaults": "",
    "expr-mapping": r"""
        vim.cmd([[inoremap <expr> <Tab> pumvisible() ? "\<C-n>" : "\<C-t>"]])
    """,
    "plug-mapping": r"""
        vim.cmd([[inoremap <Plug>(MyTab) <C-r>='[tab]'<CR>]])
        vim.cmd([[imap <Tab> <Plug>(MyTab)]])
    """,
    "lua-callback-that-edits": r"""
        vim.keymap.set("i", "<Tab>", function()
          vim.api.nvim_put({ "TAB" }, "c", false, true)
        end)
    """,
    "lua-expr-callback": r"""
        vim.keymap.set("i", "<Tab>", function() return "<C-t>" end, { expr = true })
    """,
    "vimscript-function": r"""
        vim.cmd([[
          function! MyTab() abort
            call setline('.', getline('.') . '<fn>')
            return ''
          endfunction
          inoremap <silent> <Tab> <C-r>=MyTab()<CR>
        ]])
    """,
}

KEYS = {
    "indent": r"ifoo\<CR>\<Tab>x\<Esc>",
    "popup-menu": r"ifoo\<CR>f\<C-n>\<Tab>x\<Esc>",
    "after-text": r"ifoo bar\<Left>\<Left>\<Tab>y\<Esc>",
}


def typed(
    user: str, keys: str, plugin: bool, tmp_path, after: str = "", expr: str = "getline(1, '$')"
):
    """The buffer after `keys` (or `expr` evaluated then), in a Neovim with `user`'s mappings
    (and `after`, set up after the plugin), with or without the plugin."""
    init = tmp_path / f"init-{plugin}.lua"
    setup = (
        f"vim.opt.runtimepath:prepend({str(REPO_ROOT)!r})\nrequire('repocontext').setup({{}})\n"
        if plugin
        else ""
    )
    init.write_text(
        "vim.o.swapfile = false\nvim.o.shadafile = 'NONE'\n"
        + textwrap.dedent(user)
        + setup
        + textwrap.dedent(after)
    )
    out = tmp_path / f"out-{plugin}.json"
    script = tmp_path / "type.vim"
    script.write_text(
        f'enew\ncall feedkeys("{keys}", "xt")\n'
        f"call writefile([json_encode({expr})], {str(out)!r})\nqa!\n"
    )
    env = {**os.environ, "XDG_CONFIG_HOME": str(tmp_path / "cfg"), "XDG_DATA_HOME": str(tmp_path)}
    proc = subprocess.run(
        [NVIM, "--headless", "-i", "NONE", "-u", str(init), "-S", str(script)],
        capture_output=True,
        text=True,
        timeout=60,
        env=env,
        stdin=subprocess.DEVNULL,
    )
    assert out.exists(), proc.stderr
    return json.loads(out.read_text())


@pytest.mark.parametrize("keys", list(KEYS))
@pytest.mark.parametrize("user", list(USER_TAB))
def test_tab_with_no_suggestion_does_what_it_did_without_the_plugin(user, keys, tmp_path):
    without = typed(USER_TAB[user], KEYS[keys], False, tmp_path)
    with_plugin = typed(USER_TAB[user], KEYS[keys], True, tmp_path)
    assert with_plugin == without
    assert not any("<Tab>" in line or "<C-" in line for line in with_plugin)


def test_neovim_defaults_indent_with_tab(tmp_path):
    """The case of the report, spelled out: Neovim's own <Tab> inserts a tab."""
    assert typed("", KEYS["indent"], True, tmp_path) == ["foo", "\tx"]


def test_a_mapping_set_after_the_plugin_is_the_users(tmp_path):
    """A key the user maps after setup() is simply theirs."""
    after = USER_TAB["lua-callback-that-edits"]
    assert typed("", KEYS["indent"], True, tmp_path, after=after) == ["foo", "TABx"]


def test_a_second_setup_that_turns_keys_off_gives_them_back(tmp_path):
    after = "require('repocontext').setup({ keymaps = { accept = false, dismiss = false } })\n"
    maps = "[get(maparg('<Tab>', 'i', 0, 1), 'desc', ''), maparg('<C-]>', 'i')]"
    tab, dismiss = typed("", "", True, tmp_path, after=after, expr=maps)
    assert tab.startswith("vim.snippet.jump")  # Neovim's own <Tab> again
    assert dismiss == ""  # <C-]> was free before the plugin: free again
    assert typed("", r"ia\<Tab>b\<Esc>", True, tmp_path, after=after) == ["a\tb"]


# The completion plugins people use, with the keys their READMEs suggest. Their snapshots are
# not committed (third-party code); tests/vendor/README.md says which commits were tested
# and where they go.
MENUS = {
    "nvim-cmp": (
        ["nvim-cmp", "cmp-buffer"],
        r"""
        vim.opt.runtimepath:append(VENDOR .. "/cmp-buffer/after")
        local cmp = require("cmp")
        cmp.setup({
          sources = { { name = "buffer", keyword_length = 1 } },
          mapping = cmp.mapping.preset.insert({
            ["<CR>"] = cmp.mapping.confirm({ select = false }),
            ["<Tab>"] = cmp.mapping(function(fallback)
              if cmp.visible() then cmp.select_next_item() else fallback() end
            end, { "i", "s" }),
          }),
        })
        _G.menu_visible = function() return cmp.visible() end
        """,
    ),
    "blink.cmp": (
        ["blink.cmp"],
        r"""
        require("blink.cmp").setup({ fuzzy = { implementation = "lua" },
                                     sources = { default = { "buffer" } } })
        _G.menu_visible = function() return require("blink.cmp").is_menu_visible() end
        """,
    ),
}


def with_menu(menu: str, plugin: bool, first: str, keys: str, tmp_path, plugin_first: bool):
    """Type `first` as a person would (the menu opens on a timer after a key), wait until the
    menu is open when `first` ends in a word, then `keys` with feedkeys(..., "xt")."""
    dirs, lua = MENUS[menu]
    if not (VENDOR / dirs[0]).is_dir():
        pytest.skip(f"{menu} is not in tests/vendor (see tests/vendor/README.md)")
    init = tmp_path / f"menu-{plugin}.lua"
    ours = (
        f"vim.opt.runtimepath:prepend({str(REPO_ROOT)!r})\nrequire('repocontext').setup({{}})\n"
        if plugin
        else ""
    )
    menu_setup = (
        f"local VENDOR = {str(VENDOR)!r}\n"
        + "".join(f"vim.opt.runtimepath:prepend(VENDOR .. '/{d}')\n" for d in dirs)
        + textwrap.dedent(lua)
    )
    body = ours + menu_setup if plugin_first else menu_setup + ours
    init.write_text("vim.o.swapfile = false\n" + body)
    nv = pynvim.attach("child", argv=[NVIM, "--embed", "--headless", "-u", str(init), "-i", "NONE"])
    try:
        nv.command("enew")
        typed_so_far = ""
        for chunk in first:  # each chunk once the one before is on screen, as a person types
            nv.input(chunk)
            typed_so_far += chunk
            line = typed_so_far[1:].split("\r")[-1]
            deadline = time.time() + 30
            while nv.api.get_current_line() != line or nv.api.get_mode()["blocking"]:
                assert time.time() < deadline, f"{chunk!r} was not typed"
                time.sleep(0.01)
        if first[-1].isalpha():
            deadline = time.time() + 30
            while not nv.exec_lua("return _G.menu_visible()"):
                assert time.time() < deadline, f"{menu}'s menu did not open"
                time.sleep(0.02)
        nv.command(f'call feedkeys("{keys}", "xt")')
        return nv.current.buffer[:]
    finally:
        nv.close()


@pytest.mark.parametrize("plugin_first", [True, False], ids=["plugin-first", "menu-first"])
@pytest.mark.parametrize(
    "case",
    [(["ifoobar\r"], r"\<Tab>x\<Esc>"), (["ifoobar\r", "fo", "o"], r"\<Tab>x\<Esc>")],
    ids=["no-menu", "menu-open"],
)
@pytest.mark.parametrize("menu", list(MENUS))
def test_tab_with_a_completion_plugin_does_what_it_did_without_ours(
    menu, case, plugin_first, tmp_path
):
    first, keys = case
    without = with_menu(menu, False, first, keys, tmp_path, plugin_first)
    with_plugin = with_menu(menu, True, first, keys, tmp_path, plugin_first)
    assert with_plugin == without
    assert not any("<" in line for line in with_plugin)


if __name__ == "__main__":  # pragma: no cover - a quick look by hand
    sys.exit(pytest.main([__file__, "-q"]))
