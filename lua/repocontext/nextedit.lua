--- The next edit (issue 53): after the user changes one place, the same change offered at
--- the next place, shown as a sign and the new line beside the old one, in normal mode only.
---
--- The engine is asked once an edit is done, never while typing: on leaving insert mode and
--- after a change in normal mode (`cw`, `.`, `r`, `x`), with the text of the buffer before
--- the edit (kept here since the last one) as the lines it changed, and the buffer itself
--- as a completion's request carries it (sync.lua). A reply carries the request's id and the
--- buffer's changedtick; one that no longer matches, or that comes in insert mode, is
--- dropped. Every place the engine found is kept (the other files' too, for
--- `:RepoContext next`); the first one in the buffer is shown. Any edit but the plugin's own
--- application of a place clears it, and so does insert mode.
local M = {}
local H = {}

local config = require("repocontext.config")
local host = require("repocontext.host")
local message = require("repocontext.message")

M.ns = vim.api.nvim_create_namespace("repocontext-next-edit")

--- How sure a place must be to be proposed; nil: the engine's own threshold. A lever for
--- tests and benches (tests/test_next_edit_screen.py sets it so that the engine's tuning
--- does not decide whether the editor's side is tested), not an option.
M.min_confidence = nil

-- Public functions -----------------------------------------------------------------------------

--- Are next edits on (the option) and the engine usable?
function M.enabled() return config.options.next_edit.enabled and host.usable() end

--- Keep `buf`'s text as the base the next edit is measured from (a buffer entered), unless it
--- is kept already.
function M.remember(buf)
  if H.base and H.base.buf == buf and H.base.tick == vim.b[buf].changedtick then return end
  H.keep(buf)
end

--- An edit may be done in `buf` (insert mode left, a change in normal mode): when its text
--- moved on from the base, the shown proposal goes, and `send(before, id)` asks for the places
--- of this edit, `before` = {first, last, lines}: the buffer's lines [first, last) (0-based)
--- were `lines` before it; only the reply to request `id` is taken. An undo or redo asks
--- nothing (its places are the ones just applied).
---@param buf integer
---@param send fun(before: table, id: integer, buf: integer)
function M.changed(buf, send)
  local tick = vim.b[buf].changedtick
  local base = H.base
  if base and base.buf == buf and base.tick == tick then return end -- seen, or our own change
  if H.list and H.list.buf == buf then M.clear() end
  H.keep(buf)
  if not base or base.buf ~= buf or not H.base.lines or not base.lines then return end
  local undo = vim.fn.undotree() -- `buf` is the current buffer (init.lua checks)
  if undo.seq_cur ~= undo.seq_last then return end
  local before = H.span(base.lines, H.base.lines)
  if before then H.ask(buf, before, send) end
end

--- The engine's places for the request asked last (`reply.id`). Dropped when a newer one was
--- asked, the buffer changed since, or the user is not in normal mode in it. A reply saying
--- the engine lost the buffer's text asks again once with `send` (the buffer is sent whole).
function M.receive(reply, send)
  local asked = H.asked
  if not asked or reply.id ~= asked.id or reply.bufnr ~= asked.buf then return end
  H.asked = nil
  local buf = asked.buf
  if not vim.api.nvim_buf_is_valid(buf) or vim.b[buf].changedtick ~= reply.changedtick then return end
  if reply.resend and not asked.again then return H.ask(buf, asked.before, send, true) end
  if vim.api.nvim_get_current_buf() ~= buf or vim.fn.mode() ~= "n" then return end
  if reply.error then
    M.last_error = reply.error
    return
  end
  if not reply.places or #reply.places == 0 then return end
  H.list = { buf = buf, tick = reply.changedtick, name = vim.api.nvim_buf_get_name(buf), places = reply.places }
  M.render()
end

--- The place shown, and its buffer (nil when none is, or its buffer changed since).
---@return table|nil, integer|nil
function M.shown()
  local list = H.list
  if not list or not vim.api.nvim_buf_is_valid(list.buf) then return nil end
  if vim.b[list.buf].changedtick ~= list.tick then return nil end
  for _, place in ipairs(list.places) do
    if place.path == list.name then return place, list.buf end
  end
  return nil
end

--- Is a proposal shown in the current buffer?
function M.visible()
  local place, buf = M.shown()
  return place ~= nil and buf == vim.api.nvim_get_current_buf()
end

--- Move the cursor to the proposal (the jump list remembers where it was). Returns whether
--- there was one.
function M.jump()
  local place, buf = M.shown()
  if not place or buf ~= vim.api.nvim_get_current_buf() then return false end
  vim.cmd("normal! m'")
  vim.api.nvim_win_set_cursor(0, { place.line, place.col })
  return true
end

--- Make the proposed change (one undo step), the cursor on it; then the next place is shown.
--- Returns whether it changed anything: a line that is no longer the one the place was
--- proposed for is left as it is (and that place dropped).
function M.apply()
  local place, buf = M.shown()
  if not place or buf ~= vim.api.nvim_get_current_buf() then return false end
  H.drop(place)
  local line = vim.api.nvim_buf_get_lines(buf, place.line - 1, place.line, false)[1]
  if line == nil or (place.line_text and line ~= place.line_text) then
    M.render()
    return false
  end
  -- only the part of the line that differs is set: marks and the rest of the line stay
  local new = place.new_line
  local head = 0
  while head < #line and head < #new and line:byte(head + 1) == new:byte(head + 1) do
    head = head + 1
  end
  local tail = 0
  while tail < #line - head and tail < #new - head and line:byte(#line - tail) == new:byte(#new - tail) do
    tail = tail + 1
  end
  local lines = vim.split(new:sub(head + 1, #new - tail), "\n", { plain = true })
  -- Setting 'undolevels' to itself closes the undo block: the change is its own step.
  vim.bo[buf].undolevels = vim.bo[buf].undolevels
  vim.api.nvim_buf_set_text(buf, place.line - 1, head, place.line - 1, #line - tail, lines)
  H.shift(place, #lines - 1)
  vim.api.nvim_win_set_cursor(0, { place.line, place.col })
  H.keep(buf) -- our own change: no request, no clearing (M.changed sees the tick)
  H.list.tick = vim.b[buf].changedtick
  M.render()
  return true
end

--- The remaining places, every file's: {path, line, col, end_col, old_text, new_text,
--- new_line, ...} (empty when none is kept, or the buffer changed since).
function M.places()
  local list = H.list
  if not list or not vim.api.nvim_buf_is_valid(list.buf) or vim.b[list.buf].changedtick ~= list.tick then return {} end
  return vim.deepcopy(list.places)
end

--- The remaining places in the quickfix list, the proposed line as each entry's text, and the
--- list opened.
function M.quickfix()
  local places = M.places()
  if #places == 0 then return message.say("no next edit: change a name and leave insert mode first") end
  local items = {}
  for _, p in ipairs(places) do
    table.insert(items, {
      filename = p.path,
      lnum = p.line,
      col = p.col + 1,
      end_col = p.end_col + 1,
      text = ("%s -> %s: %s"):format(p.old_text, p.new_text, vim.trim(p.new_line)),
    })
  end
  vim.fn.setqflist({}, " ", { title = "repocontext next edits", items = items })
  vim.cmd("copen")
end

--- Draw the shown place: a sign, the old text struck through, the new line at the end.
function M.render()
  H.wipe()
  local place, buf = M.shown()
  if not place then return end
  H.drawn = buf
  local row = place.line - 1
  local width = #(vim.api.nvim_buf_get_lines(buf, row, row + 1, false)[1] or "")
  vim.api.nvim_buf_set_extmark(buf, M.ns, row, math.min(place.col, width), {
    end_col = math.min(place.end_col, width),
    hl_group = "RepoContextNextEditOld",
    sign_text = H.SIGN,
    sign_hl_group = "RepoContextNextEditSign",
    virt_text = { { " " .. H.SIGN .. " " .. vim.trim(place.new_line), "RepoContextNextEdit" } },
    virt_text_pos = "eol",
    priority = 200,
  })
  vim.api.nvim_exec_autocmds("User", { pattern = "RepoContextNextEdit", modeline = false })
end

--- Hide the proposal and forget the places.
function M.clear()
  H.list = nil
  H.wipe()
end

-- Helper data ----------------------------------------------------------------------------------

H.SIGN = "→"
H.MAX_LINES = 20000 -- a buffer longer than this is not copied at each edit: no next edits
H.base = nil -- {buf, tick, lines}: the text the next edit is measured from
H.asked = nil -- {id, buf, before, again}: the request whose reply is waited for
H.list = nil -- {buf, tick, name, places}: the engine's places, the shown one first in `buf`
H.drawn = nil -- the buffer the extmark is in
H.last_id = 0

-- Helper functions -----------------------------------------------------------------------------

function H.ask(buf, before, send, again)
  H.last_id = H.last_id + 1
  H.asked = { id = H.last_id, buf = buf, before = before, again = again }
  send(before, H.last_id, buf)
end

function H.keep(buf)
  local count = vim.api.nvim_buf_line_count(buf)
  local lines = count <= H.MAX_LINES and vim.api.nvim_buf_get_lines(buf, 0, -1, false) or nil
  H.base = { buf = buf, tick = vim.b[buf].changedtick, lines = lines }
end

--- The lines that differ between `old` and `new` (whole buffers): {first, last, lines}, the
--- lines [first, last) of `new` (0-based) were `lines` of `old`; nil when they are the same.
function H.span(old, new)
  local first = 0
  while first < #old and first < #new and old[first + 1] == new[first + 1] do
    first = first + 1
  end
  if first == #old and first == #new then return nil end
  local tail = 0
  while tail < #old - first and tail < #new - first and old[#old - tail] == new[#new - tail] do
    tail = tail + 1
  end
  return { first = first, last = #new - tail, lines = vim.list_slice(old, first + 1, #old - tail) }
end

function H.drop(place)
  for i, p in ipairs(H.list.places) do
    if p == place then return table.remove(H.list.places, i) end
  end
end

--- The places after `applied` in its file move down by the lines it added.
function H.shift(applied, added)
  if added == 0 then return end
  for _, p in ipairs(H.list.places) do
    if p.path == applied.path and p.line > applied.line then p.line = p.line + added end
  end
end

function H.wipe()
  if H.drawn and vim.api.nvim_buf_is_valid(H.drawn) then vim.api.nvim_buf_clear_namespace(H.drawn, M.ns, 0, -1) end
  H.drawn = nil
end

return M
