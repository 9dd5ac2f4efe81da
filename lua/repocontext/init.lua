--- repocontext: inline completion from a local model, with context from the repository.
---
--- Everything on the keystroke path is here and never waits for Python: a keystroke cancels a
--- suggestion that no longer matches, types through one that does, and otherwise asks the
--- engine after a debounce with a snapshot {path, changedtick, cursor, text}. Replies carry the
--- request id and changedtick they belong to and are dropped when stale.
local M = {}
local H = {}

local config = require("repocontext.config")
local host = require("repocontext.host")
local keymaps = require("repocontext.keymaps")
local sync = require("repocontext.sync")

M.ns = vim.api.nvim_create_namespace("repocontext")

-- Setup ----------------------------------------------------------------------------------------

--- Configure and start. See |repocontext-config|.
---@param opts table|nil
function M.setup(opts)
  config.setup(opts)
  H.enabled = true
  vim.api.nvim_set_hl(0, "RepoContextSuggestion", { link = "Comment", default = true })
  H.create_autocmds()
  H.set_keymaps()
  host.on_down = H.on_host_down
  return M
end

-- Public API -----------------------------------------------------------------------------------

--- Ask for a suggestion now (also when auto_trigger is off).
function M.trigger() H.request(vim.api.nvim_get_current_buf(), true) end

--- Is a suggestion shown?
---@return boolean
function M.visible() return H.state.text ~= nil and H.state.text ~= "" end

--- Insert the whole suggestion (one undo step).
function M.accept()
  return H.accept(function(text) return text end)
end

--- Insert the suggestion's first word.
function M.accept_word()
  return H.accept(function(text) return text:match("^%s*[%w_]+") or text:match("^%s*[^%w_%s]+") or text end)
end

--- Insert the suggestion up to the end of its first line.
function M.accept_line()
  return H.accept(function(text)
    if text:sub(1, 1) == "\n" then return "\n" .. (text:sub(2):match("^[^\n]*") or "") end
    return text:match("^[^\n]*")
  end)
end

--- Hide the suggestion.
function M.dismiss() H.clear() end

--- Show the next / previous candidate. The first next() asks the engine for a second one
--- (its best suggestion that starts differently); it appears when it is ready.
function M.next() H.cycle(1) end
function M.prev() H.cycle(-1) end

--- Enable or disable suggestions (all buffers).
function M.toggle()
  H.enabled = not H.enabled
  if not H.enabled then H.clear() end
  H.notify(H.enabled and "enabled" or "disabled")
  return H.enabled
end

--- Are suggestions enabled?
function M.is_enabled() return H.enabled end

--- Index the repository of the current buffer (in the background).
function M.reindex() H.index(vim.api.nvim_buf_get_name(0), true) end

--- Start the engine's Python host again (after it stopped; see |repocontext-restart|).
function M.restart()
  sync.reset_all()
  local ok, err = host.restart()
  if not ok then return H.notify(err, vim.log.levels.ERROR) end
  H.last_error = nil
  local started, why = host.call("RepoContextHello")
  if not started then
    H.last_error = why
    return H.notify(why, vim.log.levels.ERROR)
  end
  H.indexed = {}
  H.notify("the engine is running again")
end

--- Send a request for a :RepoContext command; `cb(result, err)` runs on the main loop.
function M.request(kind, payload, cb)
  H.next_request = H.next_request + 1
  H.callbacks[H.next_request] = cb
  local ok, err = host.call("RepoContextRequest", H.next_request, kind, payload)
  if not ok then
    H.callbacks[H.next_request] = nil
    cb(nil, err)
  end
end

-- Handlers called from Python (through nvim.async_call) ---------------------------------------

-- Each handler runs its body under pcall: an error in a callback must become a message, not
-- an error in Neovim's main loop while Python waits on the call.
function M._on_update(reply) H.safely(H.on_reply, H.denil(reply), false) end
function M._on_done(reply) H.safely(H.on_reply, H.denil(reply), true) end

function M._on_result(reply)
  reply = H.denil(reply)
  local cb = H.callbacks[reply.id]
  H.callbacks[reply.id] = nil
  if cb then H.safely(cb, reply.result, reply.error) end
end

function M._on_hello() end

function M._on_error(message)
  H.last_error = message
  H.notify(message, vim.log.levels.ERROR)
end

function M._on_progress(p)
  p = H.denil(p)
  vim.api.nvim_exec_autocmds("User", { pattern = "RepoContextProgress", data = p })
  H.progress = p
  if config.options.notify_progress and p.done == p.total then
    H.notify(("%s: %s %d/%d"):format(vim.fn.fnamemodify(p.root, ":t"), p.phase, p.done, p.total))
  end
end

function M._on_indexed(report)
  report = H.denil(report)
  vim.api.nvim_exec_autocmds(
    "User",
    { pattern = "RepoContextProgress", data = vim.tbl_extend("force", report, { phase = "done" }) }
  )
  if report.error then
    H.notify(report.error, vim.log.levels.ERROR)
  elseif config.options.notify_progress then
    H.notify(
      ("indexed %s: %d files in %.1f s"):format(vim.fn.fnamemodify(report.root, ":t"), report.files, report.seconds)
    )
  end
end

--- A language server's answer for the object before the dot at this line and column, if one
--- came (see H.ask_language_server).
function M._receiver_location(buf, row, col)
  local hint = H.receiver_hint
  buf = buf == 0 and vim.api.nvim_get_current_buf() or buf
  if hint and hint.buf == buf and hint.line == row and col > hint.col then return hint.location end
  return nil
end

--- State for tests and statuslines (read-only).
function M._state() return H.state end

--- How many completion requests were sent to the engine (for tests).
function M._requests_sent() return H.requests_sent end

--- How many requests in flight a burst of keys stopped (for tests).
function M._cancels_sent() return H.cancels_sent end

--- The last error the Python side reported, if any (also shown by :RepoContext status).
function M.last_error() return H.last_error end

-- Helper data ----------------------------------------------------------------------------------

H.enabled = true
H.state = {}
H.request_id = 0
H.requests_sent = 0
H.in_flight = nil -- the id of the request whose final reply has not come yet
H.cancels_sent = 0
H.next_request = 0
H.callbacks = {}
H.lsp_asked = {}
H.receiver_hint = nil
H.timer = nil
H.indexed = {}
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

function H.notify(msg, level)
  vim.schedule(function() vim.notify("(repocontext) " .. msg, level or vim.log.levels.INFO) end)
end

function H.on_host_down(message)
  sync.reset_all()
  H.last_error = message
  H.clear()
  for id, cb in pairs(H.callbacks) do
    H.callbacks[id] = nil
    H.safely(cb, nil, message)
  end
  H.notify(message, vim.log.levels.ERROR)
end

function H.create_autocmds()
  local group = vim.api.nvim_create_augroup("repocontext", { clear = true })
  vim.api.nvim_create_autocmd("TextChangedI", { group = group, callback = function(a) H.on_text_changed(a.buf) end })
  -- Warm the prompt before the keystroke (see H.warm): on entering a buffer (deferred, so the
  -- screen is drawn first: the first call starts the Python host), insert mode, and pauses.
  vim.api.nvim_create_autocmd("BufEnter", {
    group = group,
    callback = function(a)
      vim.defer_fn(function() H.warm(a.buf) end, config.options.warm_delay_ms)
    end,
  })
  vim.api.nvim_create_autocmd("InsertEnter", { group = group, callback = function(a) H.warm(a.buf) end })
  vim.api.nvim_create_autocmd("CursorHoldI", {
    group = group,
    callback = function(a)
      if not M.visible() then H.warm(a.buf) end
    end,
  })
  vim.api.nvim_create_autocmd({ "InsertLeave", "BufLeave" }, { group = group, callback = function() H.clear() end })
  vim.api.nvim_create_autocmd("CursorMovedI", {
    group = group,
    callback = function()
      local s = H.state
      if s.text and (s.row ~= vim.api.nvim_win_get_cursor(0)[1] - 1 or s.col ~= vim.api.nvim_win_get_cursor(0)[2]) then
        H.clear()
      end
    end,
  })
  vim.api.nvim_create_autocmd("CompleteChanged", { group = group, callback = function() H.hide() end })
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
      if config.options.index_on_open and H.enabled_for(a.buf) then H.index(vim.api.nvim_buf_get_name(a.buf), false) end
    end,
  })
  vim.api.nvim_create_autocmd("BufWritePost", {
    group = group,
    callback = function(a)
      if config.options.index_on_open and H.enabled_for(a.buf) then H.index(vim.api.nvim_buf_get_name(a.buf), true) end
    end,
  })
end

function H.index(path, force)
  if path == "" then return end
  local root = vim.fs.root(path, ".git") or vim.fs.dirname(path)
  if H.indexed[root] and not force then return end
  if not host.usable() then return end
  H.indexed[root] = true
  local ok, err = host.call("RepoContextIndex", path, true)
  if not ok then H.last_error = err end
end

function H.enabled_for(buf)
  if not H.enabled or not vim.api.nvim_buf_is_valid(buf) then return false end
  local bo = vim.bo[buf]
  if H.skip_buftypes[bo.buftype] or H.skip_filetypes[bo.filetype] or not bo.modifiable then return false end
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
  local s = H.state
  local row, col = unpack(vim.api.nvim_win_get_cursor(0))
  row = row - 1
  if s.text and s.buf == buf and s.row == row then
    -- Type-through: the new text before the cursor is the old plus the suggestion's start.
    local line = vim.api.nvim_buf_get_lines(buf, row, row + 1, false)[1] or ""
    local before = line:sub(1, col)
    if #before > #s.before and before:sub(1, #s.before) == s.before then
      local typed = before:sub(#s.before + 1)
      if s.text:sub(1, #typed) == typed and #typed < #s.text then
        s.text = s.text:sub(#typed + 1)
        s.before, s.col = before, col
        s.candidates, s.index, s.asked_alternative = { s.text }, 1, true
        s.changedtick = vim.b[buf].changedtick
        H.render()
        return
      end
    end
  end
  H.clear()
  if config.options.auto_trigger then H.debounce(buf) end
end

--- A key typed at least `debounce_ms` after the one before (a person typing) is asked for at
--- once; keys closer together (a burst: a macro, a paste, fast typing) wait for `debounce_ms`
--- of quiet, and the request in flight (for text already gone) is stopped. Measured in
--- bench/results/editor.md: a 60 ms wait before every request was most of the time to the
--- first ghost text, and a generation running through a burst only slows Neovim.
function H.debounce(buf)
  if H.timer then H.timer:stop() end
  H.timer = H.timer or vim.uv.new_timer()
  local now = vim.uv.now()
  local wait = (now - (H.key_at or -math.huge) >= config.options.debounce_ms) and 0 or config.options.debounce_ms
  H.key_at = now
  if wait > 0 and H.in_flight then
    H.in_flight = nil
    H.cancels_sent = H.cancels_sent + 1
    host.call("RepoContextCancel", vim.api.nvim_buf_get_name(buf))
  end
  H.timer:start(
    wait,
    0,
    vim.schedule_wrap(function()
      if vim.api.nvim_get_current_buf() == buf and vim.fn.mode():sub(1, 1) == "i" then H.request(buf, false) end
    end)
  )
end

function H.in_comment_or_string()
  -- pcall: no parser for this filetype, or the tree is not ready
  local ok, node = pcall(vim.treesitter.get_node, { ignore_injections = false })
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
  if not manual and config.options.disable_in_comments and H.in_comment_or_string() then return end
  if H.completion_menu_open() then return end
  H.request_id = H.request_id + 1
  local row, col = unpack(vim.api.nvim_win_get_cursor(0))
  local line = vim.api.nvim_buf_get_lines(buf, row - 1, row, false)[1] or ""
  H.state = {
    id = H.request_id,
    buf = buf,
    row = row - 1,
    col = col,
    before = line:sub(1, col),
    changedtick = vim.b[buf].changedtick,
    text = nil,
    candidates = {},
    index = 1,
  }
  local req = H.snapshot(buf, row, col)
  H.state.request = req
  H.requests_sent = H.requests_sent + 1
  local ok, err = host.call("RepoContextComplete", req)
  H.in_flight = ok and H.request_id or nil
  if not ok and host.usable() then
    local first = H.last_error == nil
    H.last_error = err
    if manual or first then H.notify(H.last_error, vim.log.levels.ERROR) end
  end
end

--- What the engine is asked with: the buffer, the cursor, the editor's other state.
function H.snapshot(buf, row, col)
  return vim.tbl_extend("error", sync.payload(buf), {
    id = H.request_id,
    bufnr = buf,
    changedtick = vim.b[buf].changedtick,
    path = vim.api.nvim_buf_get_name(buf),
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
  if H.state.id and H.state.buf == buf and H.state.request and not H.state.result then return end
  if vim.api.nvim_get_current_buf() ~= buf then return end
  local row, col = unpack(vim.api.nvim_win_get_cursor(0))
  host.call("RepoContextWarm", H.snapshot(buf, row, col))
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
  if done and reply.id == H.in_flight then H.in_flight = nil end
  local s = H.state
  if reply.id ~= s.id or reply.bufnr ~= s.buf then return end -- a newer request owns the screen
  if not vim.api.nvim_buf_is_valid(s.buf) or vim.b[s.buf].changedtick ~= reply.changedtick then return end
  if vim.api.nvim_get_current_buf() ~= s.buf or vim.fn.mode():sub(1, 1) ~= "i" then return end
  if reply.status == "error" then
    if reply.resend then -- the engine lost this buffer's text: send it whole, ask again
      sync.reset(s.buf)
      return H.request(s.buf, false)
    end
    H.last_error = reply.error
    return
  end
  if reply.alternative then return H.on_alternative(reply, done) end
  local text = reply.suggestion or ""
  if done then
    s.candidates = text ~= "" and { text } or {}
    s.index = 1
    s.result = reply
    if reply.receiver_unresolved then H.ask_language_server(reply.receiver_unresolved) end
    if s.want_alternative and #s.candidates == 1 then H.ask_alternative(s) end
  end
  s.text = text ~= "" and text or nil
  H.render()
end

--- The engine could not tell the type of the object before the dot: ask the buffer's language
--- server where that type is defined (typeDefinition, else definition), once per position. An
--- answer within `lsp_timeout_ms` asks the engine again at once (if the cursor is still
--- there); a later one is kept for the next keystrokes at that place.
function H.ask_language_server(at)
  local s = H.state
  local buf, id = s.buf, s.id
  if not config.options.lsp or not buf then return end
  local key = ("%d:%d:%d"):format(buf, at.line, at.col)
  if H.lsp_asked[key] then return end
  local method = "textDocument/typeDefinition"
  local client = vim.lsp.get_clients({ bufnr = buf, method = method })[1]
  if not client then
    method = "textDocument/definition"
    client = vim.lsp.get_clients({ bufnr = buf, method = method })[1]
  end
  if not client then return end
  H.lsp_asked[key] = true
  local text = vim.api.nvim_buf_get_lines(buf, at.line - 1, at.line, false)[1] or ""
  local params = {
    textDocument = vim.lsp.util.make_text_document_params(buf),
    position = {
      line = at.line - 1,
      character = vim.str_utfindex(text, client.offset_encoding, math.min(at.col, #text), false),
    },
  }
  local expired = false
  local timer = vim.defer_fn(function() expired = true end, config.options.lsp_timeout_ms)
  client:request(method, params, function(err, result)
    if err or not result then return end
    timer:stop()
    local loc = result[1] or result
    local uri, range = loc.uri or loc.targetUri, loc.range or loc.targetSelectionRange
    if not uri or not range then return end
    H.receiver_hint = {
      buf = buf,
      line = at.line,
      col = at.col,
      location = { path = vim.uri_to_fname(uri), line = range.start.line + 1 },
    }
    if
      not expired
      and H.state.id == id
      and vim.api.nvim_get_current_buf() == buf
      and vim.fn.mode():sub(1, 1) == "i"
    then
      H.request(buf, false)
    end
  end, buf)
end

function H.completion_menu_open()
  if vim.fn.pumvisible() == 1 then return true end
  -- pcall: nvim-cmp / blink.cmp may not be installed
  local ok, cmp = pcall(require, "cmp")
  if ok and type(cmp.visible) == "function" and cmp.visible() then return true end
  local okb, blink = pcall(require, "blink.cmp")
  if okb and type(blink.is_visible) == "function" and blink.is_visible() then return true end
  return false
end

function H.render()
  local s = H.state
  vim.api.nvim_buf_clear_namespace(s.buf or 0, M.ns, 0, -1)
  if not s.text or s.text == "" or H.completion_menu_open() then return end
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
  -- for statuslines and measurements: what is shown, and whether it is complete
  vim.api.nvim_exec_autocmds("User", {
    pattern = "RepoContextShown",
    modeline = false,
    data = { text = s.text, complete = s.result ~= nil, source = s.result and s.result.source },
  })
end

function H.hide()
  if H.state.buf and vim.api.nvim_buf_is_valid(H.state.buf) then
    vim.api.nvim_buf_clear_namespace(H.state.buf, M.ns, 0, -1)
  end
end

function H.clear()
  H.hide()
  H.state = { id = H.state.id }
end

function H.cycle(step)
  local s = H.state
  if not s.candidates or #s.candidates == 0 then
    -- still streaming: ask for the second candidate once this one is complete
    if s.text then s.want_alternative = true end
    return
  end
  if #s.candidates == 1 and not s.asked_alternative then return H.ask_alternative(s) end
  if #s.candidates < 2 then return end
  s.index = (s.index - 1 + step) % #s.candidates + 1
  s.text = s.candidates[s.index]
  H.render()
end

--- A second candidate: the same request, with the shown suggestion to start differently from.
function H.ask_alternative(s)
  s.asked_alternative = true
  local req = H.snapshot(s.buf, s.row + 1, s.col)
  req.id, req.changedtick, req.avoid = s.id, s.changedtick, s.candidates[1]
  host.call("RepoContextComplete", req)
end

function H.on_alternative(reply, done)
  local s = H.state
  local text = reply.suggestion or ""
  if not done or text == "" or vim.tbl_contains(s.candidates, text) then return end
  table.insert(s.candidates, text)
  s.index = #s.candidates
  s.text = text
  H.render()
end

function H.accept(pick)
  local s = H.state
  if not M.visible() then return false end
  local text = pick(s.text)
  if not text or text == "" then return false end
  local buf, row, col = s.buf, s.row, s.col
  H.clear()
  -- Setting 'undolevels' to itself closes the undo block: the insertion is its own step.
  vim.bo[buf].undolevels = vim.bo[buf].undolevels
  local lines = vim.split(text, "\n", { plain = true })
  vim.api.nvim_buf_set_text(buf, row, col, row, col, lines)
  local end_row = row + #lines - 1
  local end_col = (#lines == 1 and col or 0) + #lines[#lines]
  vim.api.nvim_win_set_cursor(0, { end_row + 1, end_col })
  return true
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
end

--- The accept key: accepts a shown suggestion, else does what it did before the plugin came.
function H.map_accept(lhs)
  keymaps.set(lhs, function()
    if M.visible() and vim.fn.pumvisible() == 0 then
      vim.schedule(M.accept)
      return ""
    end
    if vim.fn.pumvisible() == 1 and lhs == "<Tab>" then return "<C-n>" end
    local previous = keymaps.previous(lhs)
    if previous and previous.rhs and previous.rhs ~= "" then
      return previous.expr == 1 and vim.api.nvim_eval(previous.rhs) or vim.keycode(previous.rhs)
    end
    if previous and previous.callback then return previous.callback() or "" end
    return vim.keycode(lhs)
  end, { expr = true, replace_keycodes = false, desc = "accept, else " .. lhs .. " as before" })
end

return M
