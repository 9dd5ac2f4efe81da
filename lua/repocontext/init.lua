--- repocontext: inline completion from a local model, with context from the repository.
---
--- Everything on the keystroke path is here and never waits for Python: a keystroke cancels a
--- suggestion that no longer matches, types through one that does, and otherwise asks the
--- engine after a debounce with a snapshot {path, changedtick, cursor, text}. Replies carry the
--- request id and changedtick they belong to and are dropped when stale.
---
--- (About 700 lines: the keystroke path, setup and the autocommands that drive it read in one
--- place; what runs off that path is in its own module: commands, indexing, the suggestion's
--- drawing, sync, next edits.)
local M = {}
local H = {}

local config = require("repocontext.config")
local host = require("repocontext.host")
local indexing = require("repocontext.indexing")
local keymaps = require("repocontext.keymaps")
local lsp = require("repocontext.lsp")
local message = require("repocontext.message")
local nextedit = require("repocontext.nextedit")
local replay = require("repocontext.replay")
local request = require("repocontext.request")
local roots = require("repocontext.roots")
local suggestion = require("repocontext.suggestion")
local sync = require("repocontext.sync")

M.ns = suggestion.ns

-- Setup ----------------------------------------------------------------------------------------

--- Configure and start: `opts` over |repocontext-defaults|, every option checked (a wrong
--- one is named in the error; unknown keys warn). Again: the new options, and the keys it no
--- longer takes go back to what they were.
---@param opts table|nil
function M.setup(opts)
  config.setup(opts)
  H.enabled = true
  H.set_highlights()
  H.create_autocmds()
  replay.setup()
  keymaps.restore() -- a second setup(): keys it no longer takes go back to what they were
  H.set_keymaps()
  host.on_down = H.on_host_down
  host.on_up = function()
    suggestion.set_engine("up")
    indexing.resume()
  end
  require("repocontext.sources.cmp").register() -- nvim-cmp, if there (again on InsertEnter)
  nextedit.clear()
  nextedit.remember(vim.api.nvim_get_current_buf()) -- set up after the first buffer's BufEnter
  return M
end

-- Public API -----------------------------------------------------------------------------------

--- Ask for a suggestion now (also when auto_trigger is off).
function M.trigger() H.request(vim.api.nvim_get_current_buf(), true) end

--- Is a suggestion shown?
---@return boolean
function M.visible() return suggestion.visible() end

--- Insert the whole suggestion (one undo step). Returns whether it inserted anything.
function M.accept()
  return H.accept(function(text) return text end)
end

--- Insert the suggestion's first word (returns whether it inserted anything).
function M.accept_word()
  return H.accept(function(text) return text:match("^%s*[%w_]+") or text:match("^%s*[^%w_%s]+") or text end)
end

--- Insert the suggestion up to the end of its first line (returns whether it inserted
--- anything).
function M.accept_line()
  return H.accept(function(text)
    if text:sub(1, 1) == "\n" then return "\n" .. (text:sub(2):match("^[^\n]*") or "") end
    return text:match("^[^\n]*")
  end)
end

--- Hide the suggestion.
function M.dismiss() suggestion.clear() end

--- Show the next candidate. The first next() asks the engine for a second one (its best
--- suggestion that starts differently); it appears when it is ready. Beside the line:
--- "suggestion 2/3", or that there is no other.
function M.next() H.cycle(1) end

--- Show the previous candidate (see next()).
function M.prev() H.cycle(-1) end

--- Jump to the next edit's place (|repocontext-next-edit|); the jump list keeps where the
--- cursor was. Returns whether one was shown.
function M.next_edit_jump() return nextedit.jump() end

--- Make the next edit's change (one undo step); the place after it is shown next. Returns
--- whether it changed the buffer.
function M.next_edit_apply() return nextedit.apply() end

--- Hide the next edit's proposal (its places are forgotten).
function M.next_edit_dismiss() nextedit.clear() end

--- Is a next edit shown in the current buffer?
---@return boolean
function M.next_edit_visible() return nextedit.visible() end

--- The next edit's remaining places, every file's, nearest first: {path, line (1-based),
--- col, end_col (0-based bytes), old_text, new_text, new_line, confidence, kind, rule,
--- distance}; what `:RepoContext next` lists.
function M.next_edits() return nextedit.places() end

--- Enable or disable suggestions (all buffers); returns whether they are on now.
function M.toggle()
  H.enabled = not H.enabled
  if not H.enabled then nextedit.clear() end
  suggestion.set_engine(H.enabled and "on" or "off")
  H.notify(H.enabled and "enabled" or "disabled")
  return H.enabled
end

--- What the engine is doing: idle | working | empty (nothing to suggest) | indexing | down |
--- off. Each change fires `User RepoContextStatus` (see |repocontext-statusline|).
function M.status() return suggestion.status end

--- A short text for a statusline ("" while idle, or why the last suggestion was hidden: "repocontext
--- hidden: unsure"); see |repocontext-statusline|.
function M.statusline() return suggestion.statusline() end

--- Use `dir` (default: the current directory) as the project root of the buffers in it, and
--- index it (see |repocontext-roots|).
function M.set_root(dir)
  local root, err = roots.choose(dir ~= nil and dir ~= "" and dir or vim.fn.getcwd())
  if not root then return H.notify(err, vim.log.levels.ERROR) end
  H.notify(("project root: %s (indexing it)"):format(root))
  indexing.index_root(root, vim.api.nvim_buf_get_name(0), true)
end

--- Are suggestions enabled?
function M.is_enabled() return H.enabled end

--- Index the repository of the current buffer (in the background).
function M.reindex() indexing.index_root(roots.of(0), vim.api.nvim_buf_get_name(0), true) end

--- Start the engine's Python host again (after it stopped; see |repocontext-restart|).
function M.restart()
  sync.reset_all()
  indexing.reset() -- before the new engine is up: it resumes an unfinished first index
  suggestion.on_loading({ state = "ready" }) -- the old engine's load ends with it, unsaid
  local ok, err = host.restart()
  if not ok then return H.notify(err, vim.log.levels.ERROR) end
  H.last_error = nil
  local started, why = host.call("RepoContextHello")
  if not started then
    H.last_error = why
    return H.notify(why, vim.log.levels.ERROR)
  end
  H.notify("the engine is running again")
end

--- Send a look-up, as |:RepoContext| does: `kind` is "search", "context", "definition",
--- "references", "status" or "models"; `cb(result, err)` runs on the main loop.
function M.request(kind, payload, cb)
  if payload.path and payload.root == nil then payload.root = roots.of_path(payload.path) or "" end
  request.look_up(kind, payload, cb)
end

-- Handlers called from Python (through nvim.async_call) ---------------------------------------

-- Each handler runs its body under pcall: an error in a callback must become a message, not
-- an error in Neovim's main loop while Python waits on the call.
function M._on_update(reply) H.safely(H.on_reply, H.denil(reply), false) end
function M._on_done(reply) H.safely(H.on_reply, H.denil(reply), true) end

function M._on_result(reply)
  reply = H.denil(reply)
  local cb = request.answered(reply.id)
  if cb then H.safely(cb, reply.result, reply.error) end
end

function M._on_hello() end

--- The places for the edit just made (see nextedit.lua).
function M._on_next_edit(reply) H.safely(nextedit.receive, H.denil(reply), H.resend_next_edit) end

--- The engine is loading its model, or done (see suggestion.on_loading).
function M._on_loading(p) H.safely(suggestion.on_loading, H.denil(p)) end

function M._on_error(message)
  H.last_error = message
  H.notify(message, vim.log.levels.ERROR)
end

--- Indexing progress and results (see indexing.lua).
function M._on_progress(p) H.safely(indexing.on_progress, H.denil(p)) end
function M._on_indexed(report) H.safely(indexing.on_indexed, H.denil(report)) end

--- A language server's answer for the object before the dot here, if one came (lsp.lua).
function M._receiver_location(buf, row, col) return lsp.receiver_location(buf, row, col) end

--- State for tests and statuslines (read-only). What tests and benches count (requests sent,
--- whether a key is settled) and the levers bench/savings.py turns off are in probe.lua,
--- off the keystroke path.
function M._state() return suggestion.current() end

--- The last error the Python side reported, if any (also shown by :RepoContext status).
function M.last_error() return H.last_error end

-- Helper data ----------------------------------------------------------------------------------

H.enabled = true
H.moved_tick = nil -- the changedtick at the last CursorMovedI: unchanged means a move, not a key
H.yanks = {}
-- Other modified buffers go with each request (their unsaved text is what the index should
-- show); one larger than this is left out rather than copied at every keystroke.
H.MAX_OTHER_BUFFER_LINES = 5000
H.skip_buftypes = { prompt = true, terminal = true, help = true, nofile = true, quickfix = true }
H.skip_filetypes = { TelescopePrompt = true, ["fzf"] = true, ["snacks_picker_input"] = true, ["minipick"] = true }

-- Helper functions -----------------------------------------------------------------------------

function H.safely(fn, ...)
  local ok, err = pcall(fn, ...)
  if not ok then
    H.last_error = tostring(err)
    H.notify("internal error: " .. tostring(err), vim.log.levels.ERROR)
  end
end

--- Python's None arrives as vim.NIL (truthy in Lua): turn it into nil, recursively.
function H.denil(v)
  if v == vim.NIL then return nil end
  if type(v) ~= "table" then return v end
  local out = {}
  for k, x in pairs(v) do
    out[k] = H.denil(x)
  end
  return out
end

--- The ghost text's colour, in a GUI colour and a 256-colour one (copilot.vim's grey): linked
--- to Comment it looked like typed code without 'termguicolors', as Neovim 0.11's default
--- colour scheme gives Comment no cterm colour. `default`: a user's own highlight wins; set
--- again after `:colorscheme`, which clears it.
function H.set_highlights()
  vim.api.nvim_set_hl(0, "RepoContextSuggestion", { fg = "#808080", ctermfg = 244, default = true })
  vim.api.nvim_set_hl(0, "RepoContextIndicator", { link = "NonText", default = true })
  -- the next edit: the new line as added text in a diff, the old text struck through in its
  -- own colours (so that it still reads as the code it is)
  vim.api.nvim_set_hl(0, "RepoContextNextEdit", { link = "DiffAdd", default = true })
  vim.api.nvim_set_hl(0, "RepoContextNextEditOld", { strikethrough = true, default = true })
  vim.api.nvim_set_hl(0, "RepoContextNextEditSign", { link = "RepoContextNextEdit", default = true })
end

function H.notify(msg, level) message.say(msg, level) end

function H.on_host_down(message)
  sync.reset_all()
  indexing.reset()
  H.last_error = message
  local waiting = request.forget()
  suggestion.set_engine("down")
  for _, cb in ipairs(waiting) do
    H.safely(cb, nil, message)
  end
  H.notify(message, vim.log.levels.ERROR)
end

function H.create_autocmds()
  local group = vim.api.nvim_create_augroup("repocontext", { clear = true })
  vim.api.nvim_create_autocmd("TextChangedI", { group = group, callback = function(a) H.on_text_changed(a.buf) end })
  -- the next edit: asked once an edit is done, never while typing (see nextedit.lua)
  vim.api.nvim_create_autocmd("TextChanged", { group = group, callback = function(a) H.next_edit(a.buf) end })
  vim.api.nvim_create_autocmd("InsertLeave", {
    group = group,
    callback = function(a)
      vim.schedule(function() H.next_edit(a.buf) end) -- once back in normal mode
    end,
  })
  vim.api.nvim_create_autocmd("ColorScheme", { group = group, callback = H.set_highlights })
  -- Warm the prompt before the keystroke (see H.warm): on entering a buffer (deferred, so the
  -- screen is drawn first: the first call starts the Python host), insert mode, and pauses.
  vim.api.nvim_create_autocmd("BufEnter", {
    group = group,
    callback = function(a)
      if H.next_edit_on(a.buf) then nextedit.remember(a.buf) end
      vim.defer_fn(function() H.warm(a.buf) end, config.options.warm_delay_ms)
    end,
  })
  vim.api.nvim_create_autocmd("InsertEnter", {
    group = group,
    callback = function(a)
      require("repocontext.sources.cmp").register() -- nvim-cmp loaded after setup()
      nextedit.clear() -- never shown while typing
      H.moved_tick = vim.b[a.buf].changedtick
      H.warm(a.buf)
    end,
  })
  vim.api.nvim_create_autocmd("CursorHoldI", {
    group = group,
    callback = function(a)
      if not M.visible() then H.warm(a.buf) end
    end,
  })
  vim.api.nvim_create_autocmd(
    { "InsertLeave", "BufLeave", "FocusLost" },
    { group = group, callback = function(a) H.leave(a.buf) end }
  )
  vim.api.nvim_create_autocmd("CursorMovedI", {
    group = group,
    callback = function(a)
      local s = suggestion.current()
      local row, col = unpack(vim.api.nvim_win_get_cursor(0))
      local tick = vim.b[a.buf].changedtick
      -- A typed key moves the cursor (this event) before TextChangedI, which decides whether
      -- it typed through the suggestion; only a move that changed no text, or left the row,
      -- clears it here.
      local typed = tick ~= s.changedtick and s.row == row - 1
      if s.text and (s.row ~= row - 1 or s.col ~= col) and not typed then suggestion.clear() end
      -- moved without typing (arrows, the mouse, a jump): the old place's work stops, and the
      -- prompt at the new one is warmed once the cursor rests
      if H.moved_tick == tick then H.jumped(a.buf) end
      H.moved_tick = tick
    end,
  })
  -- a completion menu hides the suggestion while it is open (see |repocontext-menus|)
  vim.api.nvim_create_autocmd("CompleteChanged", { group = group, callback = function() suggestion.hide() end })
  vim.api.nvim_create_autocmd("CompleteDone", {
    group = group,
    callback = function()
      vim.schedule(function()
        if suggestion.visible() then suggestion.render() end
      end)
    end,
  })
  vim.api.nvim_create_autocmd("TextYankPost", {
    group = group,
    callback = function()
      local text = table.concat(vim.v.event.regcontents or {}, "\n")
      if text ~= "" then
        table.insert(H.yanks, text)
        if #H.yanks > 3 then table.remove(H.yanks, 1) end
      end
    end,
  })
  vim.api.nvim_create_autocmd({ "BufReadPost", "BufNewFile" }, {
    group = group,
    callback = function(a)
      if config.options.index_on_open and H.enabled_for(a.buf) then indexing.index(a.buf, false) end
    end,
  })
  vim.api.nvim_create_autocmd("BufWritePost", {
    group = group,
    callback = function(a)
      if config.options.index_on_open and H.enabled_for(a.buf) then indexing.index(a.buf, true) end
    end,
  })
end

--- The user left the place (<Esc>, another buffer, another window): the suggestion goes, and so
--- does every piece of work for that place, a request waiting for quiet, the generation, the
--- speculation after it and a warming (bench/editor.py measures the CPU spent after <Esc>).
function H.leave(buf)
  suggestion.clear()
  request.stop_timers()
  if host.state ~= "up" then return end
  request.cancel(buf)
end

--- An edit may be done in `buf` (insert mode left, a change in normal mode): ask for its next
--- places (nextedit.lua decides whether the text changed, and drops the proposal it made
--- stale). A macro's changes are remembered, not asked about.
function H.next_edit(buf)
  if not H.next_edit_on(buf) or vim.api.nvim_get_current_buf() ~= buf then return end
  local send = replay.executing() and function() end or function(before, id) H.send_next_edit(before, id, buf) end
  nextedit.changed(buf, send)
end

function H.next_edit_on(buf) return H.enabled and nextedit.enabled() and H.enabled_for(buf) end

--- Ask the engine for the next places of the edit in `buf` whose old lines are `before`.
function H.send_next_edit(before, id, buf)
  buf = buf or vim.api.nvim_get_current_buf()
  if not vim.api.nvim_buf_is_valid(buf) then return end
  local req = vim.tbl_extend("error", sync.payload(buf), {
    id = id,
    bufnr = buf,
    changedtick = vim.b[buf].changedtick,
    path = vim.api.nvim_buf_get_name(buf),
    root = roots.of(buf) or "",
    before = before,
    buffers = H.modified_buffers(buf),
    min_confidence = nextedit.min_confidence,
  })
  local ok, err = host.call("RepoContextNextEdit", req)
  if not ok then nextedit.last_error = err end
end

--- The engine lost the buffer's text before it could read the edit: send it whole, ask again.
function H.resend_next_edit(before, id, buf)
  sync.reset(buf)
  H.send_next_edit(before, id, buf)
end

function H.enabled_for(buf)
  if not H.enabled or not vim.api.nvim_buf_is_valid(buf) then return false end
  local bo = vim.bo[buf]
  -- readonly (`:view`, a file without write permission): for reading; typing there warns
  if H.skip_buftypes[bo.buftype] or H.skip_filetypes[bo.filetype] or not bo.modifiable or bo.readonly then
    return false
  end
  local fts = config.options.filetypes
  local on = fts[bo.filetype]
  if on == nil then on = fts["*"] end
  if not on then return false end
  local name = vim.api.nvim_buf_get_name(buf)
  if name == "" then return false end
  local size = vim.fn.getfsize(name)
  if size > config.options.max_file_bytes then return false end
  return true
end

function H.on_text_changed(buf)
  if replay.executing() then return end -- a macro's keys: no reply could keep up
  local s = suggestion.current()
  -- our own insertion of a part of the suggestion (suggestion.took): nothing to ask
  if s.text and s.buf == buf and s.changedtick == vim.b[buf].changedtick then return end
  local row, col = unpack(vim.api.nvim_win_get_cursor(0))
  -- Type-through: the new text before the cursor is the old plus the suggestion's start.
  local line = vim.api.nvim_buf_get_lines(buf, row - 1, row, false)[1] or ""
  if suggestion.type_through(buf, row - 1, col, line:sub(1, col)) then return end
  suggestion.retire(true) -- the typed text contradicts it: it goes at once
  if config.options.auto_trigger then request.after_key(buf, function() H.request(buf, false) end) end
end

--- A key the plugin asks nothing about: the request in flight, for an earlier key, is moot
--- (its answer would be dropped and leave the status "working"), and the reason is kept.
function H.not_asked(buf, code, reason, short)
  if suggestion.status == "working" and host.state == "up" then request.cancel(buf) end
  suggestion.not_asked(code, reason, short)
end

function H.in_comment_or_string()
  -- the character before the cursor: typing at a line's end, the cursor is past the comment's
  -- last character, where the node is the whole file's (disable_in_comments never held there)
  local row, col = unpack(vim.api.nvim_win_get_cursor(0))
  -- pcall: no parser for this filetype, or the tree is not ready
  local ok, node =
    pcall(vim.treesitter.get_node, { ignore_injections = false, pos = { row - 1, math.max(col - 1, 0) } })
  if not ok or not node then return false end
  local t = node:type()
  return t:find("comment") ~= nil or t:find("string") ~= nil
end

function H.request(buf, manual)
  if not host.usable() then
    -- the host is down: say so when asked, otherwise cost the keystroke nothing
    if manual then H.notify(H.last_error or "the engine is not running", vim.log.levels.ERROR) end
    return
  end
  if not manual and not H.enabled_for(buf) then return end
  if not manual and config.options.disable_in_comments and H.in_comment_or_string() then
    return H.not_asked(
      buf,
      "in-comment",
      "not asked: the cursor is in a comment or a string (disable_in_comments)",
      "off: comment"
    )
  end
  if vim.fn.pumvisible() == 1 then -- Neovim's menu owns the keys while it is open
    return H.not_asked(buf, "menu-open", "not asked: the completion menu is open", "off: menu")
  end
  local id = request.next_id()
  local row, col = unpack(vim.api.nvim_win_get_cursor(0))
  local line = vim.api.nvim_buf_get_lines(buf, row - 1, row, false)[1] or ""
  local req = H.snapshot(buf, row, col)
  suggestion.begin(id, buf, row - 1, col, line:sub(1, col), req)
  local ok, err = request.send(req)
  if not ok then
    suggestion.failed()
    if host.usable() then
      local first = H.last_error == nil
      H.last_error = err
      if manual or first then H.notify(H.last_error, vim.log.levels.ERROR) end
    end
  end
end

--- What the engine is asked with: the buffer, the cursor, the editor's other state.
function H.snapshot(buf, row, col)
  return vim.tbl_extend("error", sync.payload(buf), {
    id = request.id(),
    bufnr = buf,
    changedtick = vim.b[buf].changedtick,
    path = vim.api.nvim_buf_get_name(buf),
    root = roots.of(buf) or "", -- "": in no project, the open buffers are all the context
    line = row,
    col = col,
    buffers = H.modified_buffers(buf),
    edits = H.recent_edits(buf),
    yanks = H.yanks,
    -- a language server's answer for the object before the dot on this line (see below)
    receiver_location = M._receiver_location(buf, row, col),
  })
end

--- Before a keystroke needs it: have the engine evaluate the prompt at the cursor (and load
--- the model, the first time), generating nothing. Sent when a buffer is entered, when insert
--- mode starts and when the user pauses; the next real request cancels it, and it is never
--- sent while one is waited for.
function H.warm(buf)
  if not config.options.warm or not host.usable() or not H.enabled_for(buf) then return end
  local s = suggestion.current()
  if s.id and s.buf == buf and s.request and not s.result then return end
  if vim.api.nvim_get_current_buf() ~= buf then return end
  local row, col = unpack(vim.api.nvim_win_get_cursor(0))
  -- the same text and place warmed already (BufEnter's deferred warming after InsertEnter's
  -- at an arrival): a second one would only cancel the first and evaluate it again
  local place = table.concat({ buf, vim.b[buf].changedtick, row, col }, ":")
  request.warm(place, function() return H.snapshot(buf, row, col) end)
end

--- The cursor moved in insert mode without typing: stop the work for the old place at once,
--- and warm the new one `warm_delay_ms` after the cursor rests there.
function H.jumped(buf)
  if request.in_flight() then H.leave(buf) end
  request.after_rest(buf, function() H.warm(buf) end)
end

function H.modified_buffers(current)
  local out = {}
  for _, b in ipairs(vim.api.nvim_list_bufs()) do
    if
      b ~= current
      and vim.api.nvim_buf_is_loaded(b)
      and vim.bo[b].modified
      and vim.bo[b].buftype == ""
      and vim.api.nvim_buf_line_count(b) <= H.MAX_OTHER_BUFFER_LINES
    then
      local name = vim.api.nvim_buf_get_name(b)
      if name ~= "" then out[name] = table.concat(vim.api.nvim_buf_get_lines(b, 0, -1, false), "\n") end
    end
  end
  return out
end

function H.recent_edits(current)
  local out = {}
  for _, b in ipairs(vim.api.nvim_list_bufs()) do
    if b ~= current and vim.api.nvim_buf_is_loaded(b) and vim.bo[b].buftype == "" then
      local name = vim.api.nvim_buf_get_name(b)
      -- pcall: getchangelist() fails on buffers that were never displayed
      local ok, list = pcall(vim.fn.getchangelist, b)
      if ok and name ~= "" and list[1] and #list[1] > 0 then table.insert(out, { name, list[1][#list[1]].lnum }) end
    end
  end
  return out
end

function H.on_reply(reply, done)
  request.replied(reply.id, done)
  if not suggestion.matches(reply) then return end
  local s = suggestion.current()
  if reply.status == "error" then
    if reply.resend then -- the engine lost this buffer's text: send it whole, ask again
      sync.reset(s.buf)
      return H.request(s.buf, false)
    end
    H.last_error = reply.error
    return suggestion.failed()
  end
  if reply.alternative then return suggestion.add_candidate(reply, done) end
  suggestion.receive(reply, done)
  if done then
    if reply.receiver_unresolved then lsp.ask(reply.receiver_unresolved, function(buf) H.request(buf, false) end) end
    if suggestion.wants_alternative() then H.ask_alternative(s) end
  end
end

function H.cycle(step)
  if suggestion.cycle(step) == "ask" then H.ask_alternative(suggestion.current()) end
end

--- A second candidate: the same request, with the shown suggestion to start differently from.
function H.ask_alternative(s)
  local req = H.snapshot(s.buf, s.row + 1, s.col)
  req.id, req.changedtick, req.avoid = s.id, s.changedtick, s.candidates[1]
  request.ask_alternative(req)
end

function H.accept(pick)
  local press = replay.next_press()
  if press then
    -- a macro runs: this press inserts what it inserted when the macro was recorded
    suggestion.clear()
    if not press.text then return false end
    local row, col = unpack(vim.api.nvim_win_get_cursor(0))
    H.insert(vim.api.nvim_get_current_buf(), row - 1, col, press.text)
    return true
  end
  local taken = suggestion.take(pick)
  replay.note(taken and taken.text)
  if not taken then return false end
  H.insert(taken.buf, taken.row, taken.col, taken.text)
  if taken.rest then suggestion.took(taken) end
  return true
end

--- Put `text` into the buffer at (row, col), 0-based, as its own undo step, the cursor after it.
function H.insert(buf, row, col, text)
  -- Setting 'undolevels' to itself closes the undo block: the insertion is its own step.
  vim.bo[buf].undolevels = vim.bo[buf].undolevels
  local lines = vim.split(text, "\n", { plain = true })
  vim.api.nvim_buf_set_text(buf, row, col, row, col, lines)
  local end_row = row + #lines - 1
  local end_col = (#lines == 1 and col or 0) + #lines[#lines]
  vim.api.nvim_win_set_cursor(0, { end_row + 1, end_col })
end

-- Keys: <Plug> mappings always; defaults only where the key is free (Tab falls back). --------

function H.set_keymaps()
  local plugs = {
    RepoContextAccept = M.accept,
    RepoContextAcceptWord = M.accept_word,
    RepoContextAcceptLine = M.accept_line,
    RepoContextDismiss = M.dismiss,
    RepoContextNext = M.next,
    RepoContextPrev = M.prev,
    RepoContextTrigger = M.trigger,
  }
  for name, fn in pairs(plugs) do
    vim.keymap.set("i", "<Plug>(" .. name .. ")", function() fn() end, { desc = "[repocontext] " .. name })
  end
  local keys = config.options.keymaps
  local actions = {
    accept_word = M.accept_word,
    accept_line = M.accept_line,
    dismiss = M.dismiss,
    next = M.next,
    prev = M.prev,
    trigger = M.trigger,
  }
  for name, fn in pairs(actions) do
    local lhs = keys[name]
    if lhs and keymaps.free(lhs) then keymaps.set(lhs, function() fn() end, { desc = name:gsub("_", " ") }) end
  end
  if keys.accept then H.map_accept(keys.accept) end
  H.set_next_edit_keys()
end

--- The next edit's keys, in normal mode: <Plug> mappings always; the defaults only where
--- free, and only while a proposal is shown (else the key does what it did before).
function H.set_next_edit_keys()
  local plugs = {
    RepoContextNextEditJump = M.next_edit_jump,
    RepoContextNextEditApply = M.next_edit_apply,
    RepoContextNextEditDismiss = M.next_edit_dismiss,
  }
  for name, fn in pairs(plugs) do
    vim.keymap.set("n", "<Plug>(" .. name .. ")", function() fn() end, { desc = "[repocontext] " .. name })
  end
  local keys = config.options.next_edit
  if not keys.enabled then return end
  local tab, dismiss = keys.jump_or_apply, keys.dismiss
  if tab and keymaps.free(tab, "n") then
    keymaps.set(tab, function()
      local place = nextedit.visible() and nextedit.shown()
      if not place then return keymaps.feed_previous(tab, "n") end
      if vim.api.nvim_win_get_cursor(0)[1] ~= place.line then
        M.next_edit_jump()
      else
        M.next_edit_apply()
      end
    end, { desc = "next edit: jump there, then apply; else " .. tab .. " as before" }, "n")
  end
  if dismiss and keymaps.free(dismiss, "n") then
    keymaps.set(dismiss, function()
      if not nextedit.visible() then return keymaps.feed_previous(dismiss, "n") end
      M.next_edit_dismiss()
    end, { desc = "next edit: dismiss; else " .. dismiss .. " as before" }, "n")
  end
end

--- The accept key: accepts a shown suggestion, else does exactly what it did before the plugin
--- came (Neovim's own `<Tab>`, the user's mapping, a completion plugin's): see keymaps.lua.
--- A mapping that runs a function, not an expression, so that accepting edits the buffer in
--- order with the keys typed after it.
function H.map_accept(lhs)
  keymaps.set(lhs, function()
    if replay.executing() then
      if not M.accept() then keymaps.feed_previous(lhs) end
      return
    end
    if M.visible() and vim.fn.pumvisible() == 0 then
      M.accept()
      return
    end
    replay.note(nil)
    keymaps.feed_previous(lhs)
  end, { desc = "accept, else " .. lhs .. " as before" })
end

return M
