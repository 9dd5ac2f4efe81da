"""Headless run of the main job: open a file of this repository in Neovim with repocontext,
type the start of a line, and print the ghost text that appears (or why none did)."""

import sys
import time

import pynvim

nvim_bin, init, root = sys.argv[1:4]
started = time.time()
nv = pynvim.attach("child", argv=[nvim_bin, "--embed", "--headless", "-u", init, "-i", "NONE"])
nv.command(f"cd {root}")
nv.command("edit src/repocontext/cli/__init__.py")
last = len(nv.current.buffer)
nv.current.window.cursor = (last, 0)
nv.input("o<CR>def print_version():<CR>")
deadline = time.time() + 90
while time.time() < deadline and not nv.exec_lua("return require('repocontext').visible()"):
    time.sleep(0.1)
state = nv.exec_lua("return require('repocontext')._state()")
text = state.get("text") if isinstance(state, dict) else None
if text:
    # what the index was doing meanwhile (the plugin embeds in the background)
    progress = nv.exec_lua("""
      local p = require('repocontext.suggestion').progress
      if p and p.total and p.total > 0 and p.done < p.total then
        return ('%s %d of %d'):format(p.phase, p.done, p.total)
      end
      return 'done'
    """)
    print(
        f"ghost text {time.time() - started:.1f} s after Neovim started (the index in the "
        f"background: {progress}), after typing `def print_version():` in "
        "src/repocontext/cli/__init__.py:"
    )
    print(text)
    code = 0
else:
    print("no ghost text appeared:", nv.exec_lua("return require('repocontext').last_error()"))
    code = 1
nv.input("<Esc>")
try:
    nv.command("qa!")
except (EOFError, OSError):
    pass  # Neovim has exited, as asked
sys.exit(code)
