"""The first minute in a real Neovim: jumps, restarts, files outside any project, a dead
engine while idle, and what the editor says while it works.

Each test has a Neovim of its own (they kill hosts, change roots or index on open), started
with the plugin's defaults where the case is about defaults, and every message the plugin
shows is recorded with its level.
"""

from __future__ import annotations

import os
import re
import shutil
import signal
import textwrap
from pathlib import Path

import pynvim
import pytest
from conftest import write_tree
from test_nvim import (
    BASE_CONFIG,
    NVIM,
    PROJECT,
    TYPED_PLACES,
    eventually,
    extmarks,
    open_at,
    suggestion,
    wait_for,
)

from repocontext import Repository

INIT = """
{extra}
vim.opt.runtimepath:prepend({repo!r})
vim.g.python3_host_prog = {python!r}
vim.o.swapfile = false
require("repocontext").setup({opts})
require("repocontext.probe").start() -- what the tests count and wait on
_G.notes = {{}}
vim.notify = function(m, l) table.insert(_G.notes, {{ m, l or vim.log.levels.INFO }}) end
_G.echoes = {{}}
local echo = vim.api.nvim_echo
vim.api.nvim_echo = function(chunks, history, o)
  table.insert(_G.echoes, chunks[1][1])
  return echo(chunks, history, o)
end
_G.beside = {{}} -- cycling's notes beside the line
local set_extmark = vim.api.nvim_buf_set_extmark
vim.api.nvim_buf_set_extmark = function(b, ns, r, c, o)
  if ns == require("repocontext.suggestion").note_ns then table.insert(_G.beside, o.virt_text[1][1]) end
  return set_extmark(b, ns, r, c, o)
end
_G.statuses = {{}}
vim.api.nvim_create_autocmd("User", {{
  pattern = "RepoContextStatus",
  callback = function(a) table.insert(_G.statuses, a.data.status) end,
}})
"""


@pytest.fixture
def start(env, tmp_path):
    """start(opts_lua, home=None, environ=None) -> a Neovim of its own with `setup(opts)`
    (environ: variables to set for it over the module's)."""
    from conftest import REPO_ROOT

    started = []

    def make(
        opts: str = "{ debounce_ms = 10 }",
        home: Path | None = None,
        extra: str = "",
        environ: dict | None = None,
    ):
        init = tmp_path / f"init{len(started)}.lua"
        init.write_text(INIT.format(repo=str(REPO_ROOT), python=_python(), opts=opts, extra=extra))
        saved = {k: os.environ.get(k) for k in [*env["environ"], "HOME", *(environ or {})]}
        os.environ.update({**env["environ"], **(environ or {})})
        if home is not None:
            os.environ["HOME"] = str(home)
        try:
            nv = pynvim.attach(
                "child", argv=[NVIM, "--embed", "--headless", "-u", str(init), "-i", "NONE"]
            )
        finally:
            for k, v in saved.items():
                if v is None:
                    os.environ.pop(k, None)
                else:
                    os.environ[k] = v
        nv.command(f"cd {env['root']}")
        started.append(nv)
        return nv

    yield make
    for nv in started:
        try:
            nv.quit("qa!")
        except Exception:
            pass
        nv.close()


def _python() -> str:
    import sys

    return sys.executable


def notes(nvim, level: str | None = None) -> list[str]:
    got = nvim.exec_lua("return _G.notes")
    want = {"ERROR": 4, "WARN": 3, "INFO": 2}.get(level) if level else None
    return [m for m, lvl in got if want is None or lvl == want]


def host_children(nvim) -> list[int]:
    """The live Python processes whose parent is this Neovim (its remote-plugin hosts)."""
    nvim_pid = nvim.call("getpid")
    out = []
    for stat in Path("/proc").glob("[0-9]*/stat"):
        try:
            fields = stat.read_text().rsplit(")", 1)[1].split()
            cmdline = (stat.parent / "cmdline").read_bytes()
        except (OSError, IndexError):
            continue
        state, ppid = fields[0], int(fields[1])
        if ppid == nvim_pid and state != "Z" and b"python" in cmdline:
            out.append(int(stat.parent.name))
    return out


# --- 2. jumps ---------------------------------------------------------------------------------


def test_a_jump_into_the_modified_buffer_being_edited_moves_the_cursor(start, env):
    nvim = start()
    nvim.command(f"edit! {env['root'] / 'shop/checkout.py'}")
    nvim.current.buffer.append("# an unsaved line", 0)  # the buffer is modified, not saved
    nvim.current.window.cursor = (15, 0)
    # a result in this very file (as `:RepoContext definition` or a picked result jumps)
    nvim.exec_lua(
        "require('repocontext.commands').jump(...)", str(env["root"] / "shop/checkout.py"), 5
    )
    assert nvim.current.window.cursor == (5, 0)
    assert nvim.current.buffer[0] == "# an unsaved line"
    assert nvim.eval("&modified") == 1
    # and into another buffer that is loaded and modified, from a modified one
    nvim.command(f"edit! {env['root'] / 'shop/tax.py'}")
    nvim.current.buffer.append("# also unsaved", 0)
    nvim.command("set nohidden")
    nvim.exec_lua(
        "require('repocontext.commands').jump(...)", str(env["root"] / "shop/checkout.py"), 3
    )
    assert nvim.current.buffer.name.endswith("shop/checkout.py")
    assert nvim.current.window.cursor == (3, 0) and nvim.current.buffer[0] == "# an unsaved line"
    assert notes(nvim, "ERROR") == []
    # and through the real command: definition of compute_tax, from the modified buffer
    nvim.current.window.cursor = (7, 12)
    nvim.command("RepoContext definition")
    wait_for(nvim, "return vim.api.nvim_buf_get_name(0):match('shop/tax.py') ~= nil")
    assert nvim.current.buffer[0] == "# also unsaved"
    assert notes(nvim, "ERROR") == []


# --- 3. one engine at a time ------------------------------------------------------------------


def test_restarts_leave_one_engine_and_the_old_ones_exit(start, env):
    nvim = start()
    open_at(nvim, env, "shop/checkout.py", 13, "        total = total +")
    suggestion(nvim)  # the host is up, with a model loaded
    first = nvim.exec_lua("return require('repocontext.host').pid()")
    assert host_children(nvim) == [first]
    nvim.input("<Esc>")
    pids = [first]
    for _ in range(2):
        nvim.command("RepoContext restart")
        pid = wait_for(nvim, "return require('repocontext.host').pid()", 60)
        pids.append(pid)
        assert host_children(nvim) == [pid]
    assert len(set(pids)) == 3
    for old in pids[:-1]:
        assert not Path(f"/proc/{old}").exists() or "Z" in _state(old)
    open_at(nvim, env, "shop/checkout.py", 13, "        total = total +")
    assert suggestion(nvim)
    assert notes(nvim, "ERROR") == []


def _state(pid: int) -> str:
    try:
        return Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0]
    except OSError:
        return "Z"


# --- 4. outside any project -------------------------------------------------------------------


def test_a_file_in_no_project_is_never_indexed_and_still_gets_suggestions(start, env, tmp_path):
    home = tmp_path / "home"
    (home / "Downloads").mkdir(parents=True)
    (home / "Downloads" / "invoice.py").write_text("SECRET_TOTAL = 1\n")
    (home / "other-project" / ".git").mkdir(parents=True)
    (home / "other-project" / "main.py").write_text("print('other')\n")
    (home / ".git").mkdir()  # a dotfiles repository: the home is still no project
    notes_py = home / "notes.py"
    notes_py.write_text("def add(a, b):\n    return a + b\n\n\ndef twice(x):\n    return\n")
    indexes = Path(env["environ"]["REPOCONTEXT_HOME"]) / "indexes"
    before = set(indexes.glob("*.sqlite"))
    nvim = start("{ debounce_ms = 10, index_on_open = true }", home=home)
    nvim.command(f"edit {notes_py}")
    said = wait_for(nvim, "for _, n in ipairs(_G.notes) do if n[1]:find('in no project') "
                          "then return n[1] end end")  # fmt: skip
    assert ":RepoContext root" in said
    nvim.current.window.cursor = (6, 0)
    nvim.input("A add(x,")
    assert suggestion(nvim)  # from the buffer alone
    nvim.input("<Esc>")
    nvim.command("write")
    nvim.command("edit " + str(home / "Downloads" / "invoice.py"))  # another folder, same home
    eventually(lambda: len([n for n in notes(nvim) if "in no project" in n]) >= 2)
    assert set(indexes.glob("*.sqlite")) == before  # nothing indexed, no index file made
    assert len([n for n in notes(nvim) if "in no project" in n]) == 2  # once per folder
    assert notes(nvim, "ERROR") == []
    nvim.command("RepoContext reindex")  # asked: it says so again (it said nothing)
    eventually(lambda: len([n for n in notes(nvim) if "in no project" in n]) == 3)
    assert set(indexes.glob("*.sqlite")) == before
    # the user asks: that folder becomes a root and is indexed
    nvim.command(f"RepoContext root {home / 'Downloads'}")
    wait_for(nvim, "for _, n in ipairs(_G.notes) do if n[1]:find('^%(repocontext%) indexed') "
                   "then return true end end", 120)  # fmt: skip
    assert len(set(indexes.glob("*.sqlite")) - before) == 1


NOTES_LINES = ["def add(a, b):", "    return a + b", "", "", "def twice(x):", "    return"]


def test_a_new_file_where_a_folder_was_deleted_gets_suggestions_and_no_error_per_key(
    start, env, tmp_path, monkeypatch
):
    """A folder indexed once and deleted since (its index is left), and a root chosen in this
    session and deleted since: a new file in either, in a folder not made (again) yet, is in
    no project: suggestions from the open buffers, and no error for any key."""
    home = tmp_path / "home"
    scratch = write_tree(home / "scratch", {"calc.py": "def total(xs):\n    return sum(xs)\n"})
    monkeypatch.setenv("REPOCONTEXT_HOME", env["environ"]["REPOCONTEXT_HOME"])
    Repository(scratch).index()
    shutil.rmtree(scratch)
    drafts = write_tree(home / "drafts", {"a.py": "x = 1\n"})
    nvim = start("{ debounce_ms = 10, index_on_open = true }", home=home)
    nvim.command(f"RepoContext root {drafts}")
    wait_for(nvim, "for _, n in ipairs(_G.notes) do if n[1]:find('^%(repocontext%) indexed') "
                   "then return true end end", 120)  # fmt: skip
    shutil.rmtree(drafts)
    for folder in (scratch, drafts):
        draft = folder / "new" / "draft.py"
        nvim.command(f"edit {draft}")
        nvim.current.buffer[:] = NOTES_LINES
        nvim.current.window.cursor = (6, 0)
        nvim.input("A add(x,")
        wait_for(nvim, "return require('repocontext').visible() or vim.iter(_G.notes):any("
                       "function(n) return n[2] == vim.log.levels.ERROR end)")  # fmt: skip
        assert notes(nvim, "ERROR") == [], draft
        assert suggestion(nvim)  # from the buffer alone
        nvim.input(" 2")  # more keys, each a request
        wait_for(nvim, "return require('repocontext').visible() "
                       "and vim.api.nvim_get_current_line():find('add%(x, 2') ~= nil")  # fmt: skip
        nvim.input("<Esc>")
        eventually(lambda: nvim.exec_lua("return require('repocontext').status()") == "idle")
        assert notes(nvim, "ERROR") == [], draft
        assert not folder.exists()  # nothing was made for it
    assert any("draft.py: in no project" in n for n in notes(nvim))


# --- 5. a dead engine, noticed while idle -----------------------------------------------------


@pytest.mark.parametrize("mode", ["insert", "normal"])
def test_a_host_killed_while_the_user_is_idle_is_noticed_and_the_ghost_text_goes(start, env, mode):
    nvim = start()
    open_at(nvim, env, "shop/checkout.py", 13, "        total = total +")
    suggestion(nvim)
    if mode == "normal":
        nvim.input("<Esc>")
    else:
        # the user reads the suggestion: nothing is due, nothing is in flight, nothing is
        # typed; the death is noticed by the watch alone, not by a call that fails
        wait_for(
            nvim,
            "return require('repocontext.probe').settled()"
            " and not require('repocontext.request').in_flight()",
        )
        assert extmarks(nvim)
    pid = nvim.exec_lua("return require('repocontext.host').pid()")
    nvim.exec_lua("_G.killed_at = vim.uv.now()")
    os.kill(pid, signal.SIGKILL)  # no key is typed from here on
    wait_for(nvim, "return require('repocontext.host').state == 'down'", 30)
    waited = nvim.exec_lua("return vim.uv.now() - _G.killed_at")
    assert waited < 5000  # the watch runs every 500 ms; a loaded machine may be slower
    assert not extmarks(nvim)
    assert nvim.exec_lua("return require('repocontext').status()") == "down"
    errors = notes(nvim, "ERROR")
    assert len(errors) == 1 and "stopped" in errors[0]


def test_a_kill_right_before_restart_is_reported(start, env):
    nvim = start()
    open_at(nvim, env, "shop/checkout.py", 13, "        total = total +")
    suggestion(nvim)
    nvim.input("<Esc>")
    pid = nvim.exec_lua("return require('repocontext.host').pid()")
    os.kill(pid, signal.SIGKILL)
    eventually(lambda: _state(pid) == "Z")  # dead (Neovim has not reaped it yet, or just did)
    nvim.command("RepoContext restart")  # typed before the watch looked, or just after
    wait_for(nvim, "for _, n in ipairs(_G.notes) do if n[1]:find('running again') then "
                   "return true end end")  # fmt: skip
    errors = notes(nvim, "ERROR")
    assert len(errors) == 1 and "stopped" in errors[0]
    assert nvim.exec_lua("return require('repocontext.host').pid()") not in (None, pid)


# --- 7. what the editor says ------------------------------------------------------------------


def test_status_events_cycling_messages_and_a_quiet_save(start, env):
    nvim = start("{ debounce_ms = 10, index_on_open = true }")
    nvim.exec_lua("""
      _G.indexed = 0
      vim.api.nvim_create_autocmd('User', { pattern = 'RepoContextProgress', callback = function(a)
        if a.data.phase == 'done' then _G.indexed = _G.indexed + 1 end
      end })
    """)
    open_at(nvim, env, "shop/checkout.py", 13, "        total = total +")
    suggestion(nvim)
    eventually(lambda: nvim.exec_lua("return require('repocontext').status()") == "idle")
    assert nvim.exec_lua("return _G.statuses")[-2:] == ["working", "idle"]
    assert nvim.exec_lua("return require('repocontext').statusline()") == ""
    nvim.exec_lua("require('repocontext').next()")  # asks for a second candidate
    beside = "return table.concat(_G.beside, '|')"
    eventually(lambda: "looking for another suggestion" in nvim.exec_lua(beside))
    eventually(
        lambda: any(s in nvim.exec_lua(beside) for s in ("suggestion 2/2", "no other suggestion")),
        60,
    )
    nvim.input("<Esc>")
    wait_for(nvim, "return _G.indexed >= 1", 120)  # the index run on opening is done
    count, runs = len(notes(nvim)), nvim.exec_lua("return _G.indexed")
    nvim.command("write")
    wait_for(nvim, f"return _G.indexed > {runs}", 120)  # the save's index run is done too
    assert notes(nvim)[count:] == []  # and it said nothing


STAND_IN_SHOWN = """
local sug = require('repocontext.suggestion')
local buf = vim.api.nvim_get_current_buf()
local row, col = unpack(vim.api.nvim_win_get_cursor(0))
local reply = { id = 515151, bufnr = buf, changedtick = vim.b[buf].changedtick }
sug.begin(reply.id, buf, row - 1, col, vim.api.nvim_get_current_line():sub(1, col), {})
require('repocontext')._on_done(vim.tbl_extend('force', reply, { suggestion = ' 1', status = 'ok' }))
"""


def test_a_suggestion_a_gate_hid_says_why_in_the_statusline_and_the_status(start, env, tmp_path):
    """With `min_confidence = 1.0` no line of the model's is sure enough: the confidence gate
    hides every suggestion. The statusline says so ("hidden: unsure"), and still does after
    insert mode ends, where it said nothing before; `:RepoContext status` says it whole;
    `User RepoContextStatus` carries the reason. A suggestion shown clears it."""
    home = tmp_path / "strict-home"
    home.mkdir()
    (home / "config.toml").write_text(BASE_CONFIG + "min_confidence = 1.0\n")
    project = write_tree(
        tmp_path / "strict",
        {
            "pyproject.toml": "[project]\nname = 'strict'\n",
            "shop/checkout.py": PROJECT["shop/checkout.py"],
        },
    )
    nvim = start(
        "{ debounce_ms = 10, index_on_open = false }", environ={"REPOCONTEXT_HOME": str(home)}
    )
    nvim.exec_lua("""
      _G.hidden = {}
      vim.api.nvim_create_autocmd('User', { pattern = 'RepoContextStatus', callback = function(a)
        table.insert(_G.hidden, a.data.hidden and a.data.hidden.code or 'none')
      end })
    """)
    statusline = "return require('repocontext').statusline()"
    nvim.command(f"edit {project / 'shop/checkout.py'}")
    assert nvim.exec_lua(statusline) == ""  # idle, nothing hidden yet
    results = []
    for typed in TYPED_PLACES:  # the model proposes something at one of them at least
        nvim.current.buffer[12] = ""
        nvim.current.window.cursor = (13, 0)
        nvim.input("A" + typed)
        wait_for(nvim, "return require('repocontext')._state().result ~= nil", 120)
        results.append(nvim.exec_lua("return require('repocontext')._state().result"))
        if results[-1].get("gate") == "confidence-drop":
            break
        nvim.input("<Esc>")
    assert results[-1].get("gate") == "confidence-drop", results
    assert not nvim.exec_lua("return require('repocontext').visible()")
    assert nvim.exec_lua(statusline) == "repocontext hidden: unsure"
    assert nvim.exec_lua("return _G.hidden")[-1] == "confidence-drop"
    nvim.input("<Esc>")
    eventually(lambda: nvim.exec_lua("return require('repocontext').status()") == "idle")
    assert nvim.exec_lua(statusline) == "repocontext hidden: unsure"  # kept: it said "" here
    nvim.command("RepoContext status")
    wait_for(nvim, "return vim.api.nvim_buf_get_name(0):match('repocontext://status') ~= nil")
    said = [line for line in nvim.current.buffer[:] if line.startswith("nothing shown at ")]
    assert len(said) == 1, nvim.current.buffer[:]
    assert ": hidden: the model was unsure (confidence 0." in said[0] and said[0].endswith(" < 1)")
    nvim.command("bwipeout")
    # a suggestion shown (stood in for: none is sure enough here) clears it, and says so
    nvim.input("A")
    wait_for(nvim, "return vim.fn.mode() == 'i'", 10)
    nvim.exec_lua(STAND_IN_SHOWN)
    assert nvim.exec_lua("return require('repocontext').visible()")
    assert nvim.exec_lua(statusline) == ""
    assert nvim.exec_lua("return _G.hidden")[-1] == "none"
    nvim.input("<Esc>")


def test_a_key_the_editor_does_not_ask_about_says_why(start, env, tmp_path):
    """With `disable_in_comments`, a key typed in a comment asks the engine nothing: the
    statusline says why ("off: comment") instead of nothing, `:RepoContext status` says it
    whole, and a key in code that shows a suggestion clears it."""
    nvim = start("{ debounce_ms = 10, index_on_open = false, disable_in_comments = true }")
    statusline = "return require('repocontext').statusline()"
    # Lua: Neovim ships its tree-sitter parser, which tells a comment
    script = write_tree(tmp_path / "lua", {"init.lua": "local total = 0\n\n"}) / "init.lua"
    nvim.command(f"edit {script}")
    nvim.current.window.cursor = (2, 0)
    nvim.input("A-- the total of the ")
    eventually(lambda: nvim.exec_lua(statusline) == "repocontext off: comment")
    # the keys before `--` asked; the one in flight was let go, nothing is left "working"
    assert nvim.exec_lua("return require('repocontext').status()") == "idle"
    nvim.input("<Esc>")
    nvim.command("RepoContext status")
    wait_for(nvim, "return vim.api.nvim_buf_get_name(0):match('repocontext://status') ~= nil")
    said = [line for line in nvim.current.buffer[:] if line.startswith("nothing shown at ")]
    assert len(said) == 1 and said[0].endswith(
        "not asked: the cursor is in a comment or a string (disable_in_comments)"
    ), nvim.current.buffer[:]
    nvim.command("bwipeout")
    nvim.input("A")
    wait_for(nvim, "return vim.fn.mode() == 'i'", 10)
    nvim.exec_lua(STAND_IN_SHOWN)
    assert nvim.exec_lua(statusline) == ""
    nvim.input("<Esc>")


def test_first_index_reports_progress_in_percent(start, env, tmp_path):
    project = tmp_path / "fresh"
    (project / "pkg").mkdir(parents=True)
    (project / "pyproject.toml").write_text("[project]\nname = 'fresh'\n")
    for i in range(30):
        (project / "pkg" / f"mod{i}.py").write_text(
            textwrap.dedent(f"""
                def function_{i}(value):
                    \"\"\"Return value plus {i}.\"\"\"
                    return value + {i}
            """)
        )
    # long enough to have later windows: that phase then takes several batches
    for i in range(12):
        steps = "".join(f"    total = total * {j} + value // {j + 1}\n" for j in range(1, 40))
        (project / "pkg" / f"long{i}.py").write_text(
            f"def long_{i}(value):\n    total = {i}\n{steps}    return total\n"
        )
    nvim = start("{ debounce_ms = 10, index_on_open = true }")
    nvim.exec_lua("""
      _G.percents = {}
      vim.api.nvim_create_autocmd('User', { pattern = 'RepoContextProgress', callback = function(a)
        if a.data.percent then table.insert(_G.percents, a.data.phase .. a.data.percent) end
      end })
    """)
    nvim.command(f"edit {project / 'pkg' / 'mod3.py'}")
    wait_for(nvim, "for _, n in ipairs(_G.notes) do if n[1]:find('indexed fresh') "
                   "then return true end end", 180)  # fmt: skip
    percents = nvim.exec_lua("return _G.percents")
    assert any(p.startswith("index") for p in percents)
    # the later windows follow the vectors, with a percentage and words of their own
    assert percents.index("windows100") > percents.index("embed100"), percents
    done = r"\(repocontext\) embedding long definitions fresh: 100% \((\d+)/\1\)"
    assert any(re.fullmatch(done, n) for n in notes(nvim)), notes(nvim)
    said = [n for n in notes(nvim) if "long definitions" in n]
    assert len(said) == 2 and " 0% (0/" in said[0], said  # its start and end, no quarters
    assert any("%" in n for n in notes(nvim))
    assert notes(nvim, "ERROR") == []
    assert nvim.exec_lua("return require('repocontext').statusline()") == ""


def test_a_restart_during_the_first_embedding_resumes_it_and_clears_the_percentage(
    start, env, tmp_path
):
    """`:RepoContext restart` while a project's first index embeds: the old engine's
    percentage leaves the statusline at once (it stayed at "embed 18%" for ever), the new
    engine takes the embedding up again without being asked (it stopped at 472 of 1,392
    chunks), and when it is done every chunk has its vector and the statusline is empty."""
    project = tmp_path / "big"
    (project / "pkg").mkdir(parents=True)
    (project / "pyproject.toml").write_text("[project]\nname = 'big'\n")
    for i in range(240):  # about 10 s of embedding in the editor's small batches
        (project / "pkg" / f"mod{i}.py").write_text(
            f'def function_{i}(value):\n    """Return value plus {i}."""\n    return value + {i}\n'
        )
    nvim = start("{ debounce_ms = 10, index_on_open = true }")
    nvim.exec_lua("""
      _G.embeds, _G.done = 0, 0
      vim.api.nvim_create_autocmd('User', { pattern = 'RepoContextProgress', callback = function(a)
        if a.data.phase == 'embed' then _G.embeds = _G.embeds + 1 end
        if a.data.phase == 'done' then _G.done = _G.done + 1 end
      end })
    """)
    path = project / "pkg" / "mod3.py"
    nvim.command(f"edit {path}")
    wait_for(nvim, "return _G.embeds >= 1", 180)
    old = nvim.exec_lua("return require('repocontext.host').pid()")
    nvim.command("RepoContext restart")
    assert "embed" not in nvim.exec_lua("return require('repocontext').statusline()")
    assert nvim.exec_lua("return _G.done") == 0  # the first run never finished
    wait_for(nvim, "return _G.done >= 1", 180)  # the new engine finished it, unasked
    assert nvim.exec_lua("return require('repocontext.host').pid()") != old
    nvim.exec_lua(
        "_G.st = nil; require('repocontext').request('status', { path = ... }, "
        "function(r, e) _G.st = r or e end)",
        str(path),
    )
    status = wait_for(nvim, "return _G.st", 60)
    assert status["vectors"]["missing"] == 0 and status["vectors"]["embedded"] >= 240
    assert nvim.exec_lua("return require('repocontext').statusline()") == ""
    assert notes(nvim, "ERROR") == []


def test_health_says_in_one_line_what_is_wrong_with_the_index_home(start, env):
    """A real misconfiguration the engine cannot work with: `~someone` in REPOCONTEXT_HOME
    for a user that does not exist. :checkhealth names the variable, in one line."""
    nvim = start(environ={"REPOCONTEXT_HOME": "~nosuchuser21/repocontext"})
    nvim.command("checkhealth repocontext")
    text = "\n".join(nvim.current.buffer[:])
    assert "Traceback" not in text and "internal error" not in text
    assert (
        "ERROR configuration: REPOCONTEXT_HOME is set to ~nosuchuser21/repocontext, but "
        "~nosuchuser21 is no user's home directory here" in text
    )
    assert "set REPOCONTEXT_HOME to a full path" in text


# --- 8. completion menus ----------------------------------------------------------------------

VENDOR = Path(__file__).resolve().parent / "vendor"

BLINK = """
vim.opt.runtimepath:prepend({vendor!r} .. "/blink.cmp")
require("blink.cmp").setup({{
  fuzzy = {{ implementation = "lua" }},
  sources = {{
    default = {{ "repocontext", "buffer" }},
    providers = {{
      repocontext = {{ name = "repocontext", module = "repocontext.sources.blink", async = true }},
    }},
  }},
}})
"""

CMP = """
vim.opt.runtimepath:prepend({vendor!r} .. "/nvim-cmp")
vim.opt.runtimepath:prepend({vendor!r} .. "/cmp-buffer")
vim.opt.runtimepath:append({vendor!r} .. "/cmp-buffer/after")
local cmp = require("cmp")
cmp.setup({{
  sources = {{ {{ name = "repocontext" }}, {{ name = "buffer", keyword_length = 1 }} }},
  mapping = cmp.mapping.preset.insert({{
    ["<CR>"] = cmp.mapping.confirm({{ select = false }}),
    ["<Tab>"] = cmp.mapping(function(fallback)
      if cmp.visible() then cmp.select_next_item() else fallback() end
    end, {{ "i", "s" }}),
  }}),
}})
"""


def need(name: str) -> None:
    if not (VENDOR / name).is_dir():
        pytest.skip(f"{name} is not in tests/vendor (see tests/vendor/README.md)")


def test_with_blink_cmp_the_suggestion_is_seen_beside_its_menu_and_offered_in_it(start, env):
    need("blink.cmp")
    nvim = start(extra=BLINK.format(vendor=str(VENDOR)))
    open_at(nvim, env, "shop/checkout.py", 13, "        total = tot")
    wait_for(nvim, "return require('blink.cmp').is_menu_visible()")
    suggestion(nvim)
    text = wait_for(nvim, "local s = require('repocontext')._state() return s.result and s.text")
    # both at once: blink's menu open, and the ghost text drawn
    assert nvim.exec_lua("return require('blink.cmp').is_menu_visible()") and extmarks(nvim)
    labels = wait_for(
        nvim,
        """
        local out = {}
        for _, item in ipairs(require('blink.cmp').get_items()) do
          if item.source_id == 'repocontext' then table.insert(out, item.label) end
        end
        return #out > 0 and out or nil
        """,
    )
    assert labels == ["tot" + text.split("\n")[0]]
    nvim.input("<Tab>")  # blink's default <Tab> leaves the key to us: the suggestion is taken
    eventually(
        lambda: nvim.current.buffer[12].startswith("        total = tot" + text.split("\n")[0])
    )


def test_with_nvim_cmp_the_suggestion_can_be_taken_from_the_menu(start, env):
    need("nvim-cmp")
    nvim = start(extra=CMP.format(vendor=str(VENDOR)))
    open_at(nvim, env, "shop/checkout.py", 13, "        total = total +")
    suggestion(nvim)
    text = wait_for(nvim, "local s = require('repocontext')._state() return s.result and s.text")
    nvim.exec_lua("require('cmp').complete()")
    wait_for(
        nvim,
        """
        for _, e in ipairs(require('cmp').get_entries()) do
          if e.source.name == 'repocontext' then return true end
        end
        """,
    )
    assert not extmarks(nvim)  # hidden while nvim-cmp's menu is open
    nvim.exec_lua("""
      local cmp = require('cmp')
      for _ = 1, #cmp.get_entries() do
        local e = cmp.get_selected_entry()
        if e and e.source.name == 'repocontext' then break end
        cmp.select_next_item({ behavior = cmp.SelectBehavior.Select })
      end
      cmp.confirm({ select = false })
    """)
    expected = ("        total = total +" + text).split("\n")
    eventually(lambda: nvim.current.buffer[12 : 12 + len(expected)] == expected)
