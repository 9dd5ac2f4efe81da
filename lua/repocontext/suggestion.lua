--- The suggestion on screen and the engine's state, with one owner.
---
--- Everything that shows, changes or drops the ghost text goes through here: a request that
--- starts (`begin`), the text streamed and finished (`receive`), type-through (`type_through`),
--- cycling (`cycle`, `add_candidate`), accepting (`take`) and clearing (`clear`). The same
--- module keeps the status a statusline shows (`status`, `statusline`) and announces each
--- change with `User RepoContextStatus`.
local M = {}
local H = {}

local config = require("repocontext.config")

M.ns = vim.api.nvim_create_namespace("repocontext")
M.working_ns = vim.api.nvim_create_namespace("repocontext-working")
M.loading_ns = vim.api.nvim_create_namespace("repocontext-loading")
M.note_ns = vim.api.nvim_create_namespace("repocontext-note") -- cycling's "suggestion 2/3"

--- The statuses, in the order a statusline is likely to care about them.
M.STATUSES = { "idle", "working", "empty", "indexing", "down", "off" }

-- Public functions -----------------------------------------------------------------------------

--- The state of the suggestion (read-only for callers): id, buf, row, col, before, changedtick,
--- text (what is shown), candidates, index, result (the final reply), request.
function M.current() return H.state end

--- Is a suggestion shown (or hidden only while a completion menu is open)?
function M.visible() return H.state.text ~= nil and H.state.text ~= "" end

--- The typed text contradicts the suggestion, or a new request starts: its ghost text goes at
--- once, and with `forget` the suggestion too (`clear`). bench/savings.py measures what this
--- is worth by keeping it drawn until a newer reply is rendered (probe.lua's `retire` lever).
function M.retire(forget)
  if forget then return M.clear() end
  H.wipe()
end

--- A request was sent for the cursor at (row, col) of `buf`: the old suggestion goes.
function M.begin(id, buf, row, col, before, request)
  M.retire()
  H.state = {
    id = id,
    buf = buf,
    row = row,
    col = col,
    before = before,
    changedtick = vim.b[buf].changedtick,
    asked_tick = vim.b[buf].changedtick, -- the request's; `changedtick` follows type-through
    typed = "", -- typed through since the request: its replies lose it (M.receive)
    candidates = {},
    index = 1,
    request = request,
  }
  H.set_status("working")
end

--- Is `reply` for the suggestion in progress, and does the buffer still look as it did (or as
--- it did plus only what was typed through the suggestion)?
function M.matches(reply)
  local s = H.state
  if reply.id ~= s.id or reply.bufnr ~= s.buf then return false end -- a newer request owns the screen
  if not vim.api.nvim_buf_is_valid(s.buf) then return false end
  local tick = vim.b[s.buf].changedtick
  local through = s.typed ~= "" and reply.changedtick == s.asked_tick and tick == s.changedtick
  if tick ~= reply.changedtick and not through then return false end
  return vim.api.nvim_get_current_buf() == s.buf and vim.fn.mode():sub(1, 1) == "i"
end

--- Streamed (`done` false) or final text for the suggestion in progress. After type-through
--- the reply still starts where the request was made: it loses what was typed since, and
--- where it does not start with that (the final gates cut or dropped what was streamed), the
--- suggestion goes.
function M.receive(reply, done)
  local s = H.state
  local text = reply.suggestion or ""
  if s.typed and s.typed ~= "" and reply.changedtick == s.asked_tick then
    text = (#text > #s.typed and text:sub(1, #s.typed) == s.typed) and text:sub(#s.typed + 1) or ""
  end
  if done then
    s.candidates = text ~= "" and { text } or {}
    s.index = 1
    s.result = reply
  end
  s.text = text ~= "" and text or nil
  -- a suggestion on screen is the end of any wait the loading sign spoke of
  if s.text and M.loading then M.on_loading({ state = "ready" }) end
  M.render()
  if done then
    -- why nothing is shown (nil: something is); a cancelled reply's reason is the newer key's
    if reply.status ~= "cancelled" then M.hidden = text == "" and reply.hidden or nil end
    H.set_status(text ~= "" and "idle" or "empty") -- after: the text is there
  end
end

--- The engine gave up on this request (an error): nothing to show.
function M.failed()
  H.state.result = H.state.result or {}
  H.set_status("idle")
end

--- The text before the cursor grew by what the suggestion starts with: show the rest and keep
--- it. Returns false (and changes nothing) when the typed text does not match.
function M.type_through(buf, row, col, before)
  local s = H.state
  if not (s.text and s.buf == buf and s.row == row) then return false end
  if not (#before > #s.before and before:sub(1, #s.before) == s.before) then return false end
  local typed = before:sub(#s.before + 1)
  if s.text:sub(1, #typed) ~= typed or #typed >= #s.text then return false end
  s.text = s.text:sub(#typed + 1)
  s.typed = (s.typed or "") .. typed
  s.before, s.col = before, col
  s.candidates, s.index, s.asked_alternative = { s.text }, 1, true
  s.changedtick = vim.b[buf].changedtick
  M.render()
  return true
end

--- Take the suggestion (cut by `pick`) off the screen for inserting: {buf, row, col, text,
--- rest}. `rest`: what stays suggested after it, when a part of the first line was taken (a
--- word): `M.took` shows it once the text is in.
function M.take(pick)
  local s = H.state
  -- hidden behind a completion menu, it is not on screen to be taken
  if not M.visible() or H.menu_hides() then return nil end
  local text = pick(s.text)
  if not text or text == "" then return nil end
  local out = { buf = s.buf, row = s.row, col = s.col, text = text }
  local rest = s.text:sub(#text + 1)
  if rest ~= "" and not text:find("\n", 1, true) and s.text:sub(1, #text) == text then
    out.rest = rest
    H.wipe()
  else
    M.clear()
  end
  return out
end

--- A part of the suggestion was inserted at its place (`take` gave `rest`): the rest stays on
--- screen at once, as if the part had been typed through (not one round trip later).
function M.took(taken)
  local s = H.state
  s.text = taken.rest
  s.before = s.before .. taken.text
  s.col = taken.col + #taken.text
  s.typed = (s.typed or "") .. taken.text
  s.candidates, s.index, s.asked_alternative = { s.text }, 1, true
  s.changedtick = vim.b[s.buf].changedtick
  M.render()
end

--- Show the suggestion (again), unless a completion menu that hides it is open.
function M.render()
  local s = H.state
  H.wipe()
  if not s.text or s.text == "" or H.menu_hides() then return end
  if not vim.api.nvim_buf_is_valid(s.buf) then return end
  local lines = vim.split(s.text, "\n", { plain = true })
  local virt_lines = {}
  for i = 2, #lines do
    table.insert(virt_lines, { { lines[i], "RepoContextSuggestion" } })
  end
  local opts = { virt_text_pos = "inline", hl_mode = "combine", priority = 200 }
  if lines[1] ~= "" then opts.virt_text = { { lines[1], "RepoContextSuggestion" } } end
  if #virt_lines > 0 then opts.virt_lines = virt_lines end
  s.extmark = vim.api.nvim_buf_set_extmark(s.buf, M.ns, s.row, s.col, opts)
  H.only_here()
  -- for statuslines and measurements: what is shown, and whether it is complete
  vim.api.nvim_exec_autocmds("User", {
    pattern = "RepoContextShown",
    modeline = false,
    data = { text = s.text, complete = s.result ~= nil, source = s.result and s.result.source },
  })
end

--- Off the screen, kept (a completion menu opened): `render()` shows it again.
function M.hide() H.wipe() end

--- Gone: off the screen and forgotten (the id stays, so late replies are dropped).
function M.clear()
  H.wipe()
  H.state = { id = H.state.id }
  if M.status == "working" or M.status == "empty" then H.set_status("idle") end
end

--- Move through the candidates by `step`. Returns "ask" when the engine should be asked for
--- another one, "wait" when it was asked already, or nil.
function M.cycle(step)
  local s = H.state
  if not s.candidates or #s.candidates == 0 then
    if s.text then
      s.want_alternative = true -- still streaming: ask once this one is complete
      return "wait"
    end
    return H.say("no suggestion to cycle through")
  end
  if #s.candidates == 1 and not s.asked_alternative then
    s.asked_alternative = true
    H.say("looking for another suggestion...")
    return "ask"
  end
  if #s.candidates < 2 then return H.say("no other suggestion") end
  s.index = (s.index - 1 + step) % #s.candidates + 1
  s.text = s.candidates[s.index]
  M.render()
  H.say(("suggestion %d/%d"):format(s.index, #s.candidates))
end

--- A second candidate arrived (the answer to `cycle`'s "ask").
function M.add_candidate(reply, done)
  local s = H.state
  if not done then return end
  local text = reply.suggestion or ""
  if text == "" or vim.tbl_contains(s.candidates, text) then return H.say("no other suggestion") end
  table.insert(s.candidates, text)
  s.index = #s.candidates
  s.text = text
  M.render()
  H.say(("suggestion %d/%d"):format(s.index, #s.candidates))
end

--- Should a second candidate be asked for now that the first is complete?
function M.wants_alternative()
  local s = H.state
  if s.want_alternative and #s.candidates == 1 and not s.asked_alternative then
    s.asked_alternative = true
    return true
  end
  return false
end

-- Status --------------------------------------------------------------------------------------

--- idle | working | empty (nothing to suggest here) | indexing | down (engine stopped) | off
M.status = "idle"
M.loading = nil -- what the engine waits for while it loads its model (`on_loading`)
M.progress = nil -- {phase, done, total, root} while a first index runs
--- Why the last final reply showed nothing, from the engine: {code, reason, short} (see
--- complete/outcome.py), nil once one shows something. A suggestion a gate hid ("-drop") stays
--- in the statusline after the reply, until one is shown: the screen alone cannot say why.
M.hidden = nil

--- The engine stopped ("down") or answers again ("up"); suggestions turned "off" or "on".
function M.set_engine(state)
  if state == "down" or state == "off" then
    M.clear()
    M.hidden = nil -- the reason was the old engine's, or is moot while off
    return H.set_status(state)
  end
  if (state == "up" and M.status == "down") or (state == "on" and M.status == "off") then H.set_status("idle") end
end

--- Indexing progress ({phase, done, total, root}, or nil when it ended).
function M.set_progress(p)
  M.progress = p
  if p and M.status == "idle" then H.set_status("indexing") end
  if not p and M.status == "indexing" then H.set_status("idle") end
  vim.cmd("redrawstatus!") -- an ended one too: "embed 100%" stayed until something else redrew
end

--- A short text for a statusline: "" while idle, else what the engine is doing, or why the
--- last suggestion was hidden ("repocontext hidden: unsure").
function M.statusline()
  local st, hidden = M.status, M.hidden
  if M.loading and st ~= "down" then return "repocontext loading…" end
  if st == "working" then return "repocontext …" end
  if st == "empty" then return "repocontext " .. (hidden and hidden.short or "∅") end
  if st == "down" then return "repocontext ✗" end
  if st == "off" then return "repocontext off" end
  local p = M.progress
  if p and p.total and p.total > 0 then
    return ("repocontext %s %d%%"):format(p.phase, math.floor(100 * p.done / p.total))
  end
  if hidden and (hidden.code:match("%-drop$") or hidden.not_asked) then return "repocontext " .. hidden.short end
  return ""
end

--- The plugin did not ask the engine at this key (the editor's own trigger said no): why, kept
--- like a gate's reason until a suggestion is shown, for the statusline and `:RepoContext
--- status`. `code`: "in-comment" or "menu-open".
function M.not_asked(code, reason, short)
  local same = M.hidden and M.hidden.code == code
  M.hidden = { code = code, reason = reason, short = short, not_asked = true, at = os.time() }
  if M.status == "working" then return H.set_status("idle") end -- announces the reason too
  if same then return end
  pcall(vim.cmd, "redrawstatus!")
  vim.api.nvim_exec_autocmds(
    "User",
    { pattern = "RepoContextStatus", modeline = false, data = { status = M.status, hidden = M.hidden } }
  )
end

--- The suggestion is drawn in the window being typed in, not in every window that shows its
--- buffer (a `:split` of the same file showed the ghost text twice). Neovim 0.11's namespace
--- scoping is still experimental (`nvim__ns_set`): where it is missing, both windows show it.
function H.only_here()
  if not vim.api.nvim__ns_set then return end
  pcall(vim.api.nvim__ns_set, M.ns, { wins = { vim.api.nvim_get_current_win() } })
end

-- Helper data ----------------------------------------------------------------------------------

H.state = {}
H.NOTE_MS = 2000
H.note = nil -- cycling's note on screen: {buf, mark}

-- Helper functions -----------------------------------------------------------------------------

function H.wipe()
  local buf = H.state.buf
  if buf and vim.api.nvim_buf_is_valid(buf) then
    vim.api.nvim_buf_clear_namespace(buf, M.ns, 0, -1)
    vim.api.nvim_buf_clear_namespace(buf, M.working_ns, 0, -1)
  end
  H.unnote()
end

function H.set_status(status)
  if status == M.status then return end
  M.status = status
  if status == "down" and M.loading then M.on_loading({ state = "ready" }) end
  H.show_working()
  -- the statusline component is drawn again at once: nothing else redraws it while a request
  -- runs or after the engine died (pcall: not allowed under textlock)
  pcall(vim.cmd, "redrawstatus!")
  vim.api.nvim_exec_autocmds(
    "User",
    { pattern = "RepoContextStatus", modeline = false, data = { status = status, hidden = M.hidden } }
  )
end

--- The engine is loading its model (or asking its server for the first time): the first
--- suggestion waits for it, seconds on a small machine, and a screen that shows nothing looks
--- broken. `p`: {state = "loading", what} or {state = "ready"}. While it lasts, the statusline
--- says "repocontext loading…" and, with `loading_sign`, the end of the cursor's line says
--- what it waits for; the sign follows the cursor and goes when the model is ready (once per
--- engine: it never shows again on later keys).
function M.on_loading(p)
  M.loading = p.state == "loading" and (p.what or "loading") or nil
  H.show_loading()
  pcall(vim.cmd, "redrawstatus!")
  local group = vim.api.nvim_create_augroup("repocontext-loading", { clear = true })
  if M.loading then
    vim.api.nvim_create_autocmd({ "CursorMoved", "CursorMovedI", "BufEnter" }, {
      group = group,
      callback = H.show_loading,
    })
  end
end

function H.show_loading()
  if H.loading_buf and vim.api.nvim_buf_is_valid(H.loading_buf) then
    vim.api.nvim_buf_clear_namespace(H.loading_buf, M.loading_ns, 0, -1)
  end
  H.loading_buf = nil
  if not (M.loading and config.options.loading_sign) then return end
  local buf = vim.api.nvim_get_current_buf()
  if vim.bo[buf].buftype ~= "" then return end
  local row = vim.api.nvim_win_get_cursor(0)[1] - 1
  H.loading_buf = buf
  vim.api.nvim_buf_set_extmark(buf, M.loading_ns, row, 0, {
    virt_text = { { "repocontext: " .. M.loading .. "…", "RepoContextIndicator" } },
    virt_text_pos = "eol",
  })
end

--- The optional sign at the end of the line while a suggestion is being made (`indicator`).
function H.show_working()
  local s = H.state
  if not (config.options.indicator and s.buf and vim.api.nvim_buf_is_valid(s.buf)) then return end
  vim.api.nvim_buf_clear_namespace(s.buf, M.working_ns, 0, -1)
  local sign = ({ working = "…", empty = "∅" })[M.status]
  if sign and s.row and s.row < vim.api.nvim_buf_line_count(s.buf) then
    vim.api.nvim_buf_set_extmark(s.buf, M.working_ns, s.row, 0, {
      virt_text = { { sign, "RepoContextIndicator" } },
      virt_text_pos = "eol",
    })
  end
end

--- Is a completion menu open that the suggestion should hide behind? Neovim's own popup menu
--- and nvim-cmp's menu take `<Tab>` while open, so the suggestion hides; blink.cmp's menu opens
--- on almost every key and its default keys leave `<Tab>` to us, so the suggestion stays (see
--- |repocontext-menus|). `hide_during_completion = false` never hides.
function H.menu_hides()
  local hide = config.options.hide_during_completion
  if not hide then return false end
  if vim.fn.pumvisible() == 1 then return true end
  -- pcall: nvim-cmp may not be installed
  local ok, cmp = pcall(require, "cmp")
  if ok and type(cmp) == "table" and type(cmp.visible) == "function" and cmp.visible() then return true end
  return false
end

--- Cycling's word ("suggestion 2/3"), beside the line for `NOTE_MS`: in the message area
--- `-- INSERT --` covered it at once. It goes with the suggestion, too.
function H.say(msg)
  H.unnote()
  local buf = vim.api.nvim_get_current_buf()
  local row = vim.api.nvim_win_get_cursor(0)[1] - 1
  H.note = {
    buf = buf,
    mark = vim.api.nvim_buf_set_extmark(buf, M.note_ns, row, 0, {
      virt_text = { { "  " .. msg, "RepoContextIndicator" } },
      virt_text_pos = "eol",
    }),
  }
  H.note_timer = H.note_timer or vim.uv.new_timer()
  H.note_timer:start(H.NOTE_MS, 0, vim.schedule_wrap(H.unnote))
  return nil
end

function H.unnote()
  local note = H.note
  H.note = nil
  if note and vim.api.nvim_buf_is_valid(note.buf) then vim.api.nvim_buf_clear_namespace(note.buf, M.note_ns, 0, -1) end
end

return M
