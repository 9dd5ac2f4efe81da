--- A language server's word on the object before a dot, when the engine could not type it.
---
--- The engine says so in its reply (`receiver_unresolved`); the buffer's language server is
--- asked where that type is defined (typeDefinition, else definition), once per position. An
--- answer within `lsp_timeout_ms` has the engine asked again at once (if the cursor is still
--- there); a later one is kept for the next keystrokes at that place, which send it along.
local M = {}
local H = {}

local config = require("repocontext.config")
local suggestion = require("repocontext.suggestion")

--- Ask about `at` ({line, col}) for the suggestion in progress; `again(buf)` asks the engine
--- again when the answer comes in time.
function M.ask(at, again)
  local s = suggestion.current()
  local buf, id = s.buf, s.id
  if not config.options.lsp or not buf then return end
  local key = ("%d:%d:%d"):format(buf, at.line, at.col)
  if H.asked[key] then return end
  local method = "textDocument/typeDefinition"
  local client = vim.lsp.get_clients({ bufnr = buf, method = method })[1]
  if not client then
    method = "textDocument/definition"
    client = vim.lsp.get_clients({ bufnr = buf, method = method })[1]
  end
  if not client then return end
  H.asked[key] = true
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
    H.hint = {
      buf = buf,
      line = at.line,
      col = at.col,
      location = { path = vim.uri_to_fname(uri), line = range.start.line + 1 },
    }
    if
      not expired
      and suggestion.current().id == id
      and vim.api.nvim_get_current_buf() == buf
      and vim.fn.mode():sub(1, 1) == "i"
    then
      again(buf)
    end
  end, buf)
end

--- The answer for the object before the dot at (row, col) of `buf`, if one came.
function M.receiver_location(buf, row, col)
  local hint = H.hint
  buf = buf == 0 and vim.api.nvim_get_current_buf() or buf
  if hint and hint.buf == buf and hint.line == row and col > hint.col then return hint.location end
  return nil
end

-- Helper data ----------------------------------------------------------------------------------

H.asked = {} -- "buf:line:col" -> asked already
H.hint = nil -- the last answer: {buf, line, col, location = {path, line}}

return M
