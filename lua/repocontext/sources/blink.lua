--- A blink.cmp source: the suggestion as a menu item (see |repocontext-menus|). In blink.cmp's
--- setup: `sources.providers.repocontext = { name = "repocontext", module =
--- "repocontext.sources.blink", async = true }`, and "repocontext" in `sources.default`. It
--- answers at once with what is shown, and again when the suggestion being made is ready.
local M = {}

local sources = require("repocontext.sources")

function M.new() return setmetatable({}, { __index = M }) end

function M:enabled() return true end

function M:get_completions(ctx, callback)
  local row, col = ctx.cursor[1] - 1, ctx.cursor[2]
  local function answer(item)
    if item then
      item.kind = require("blink.cmp.types").CompletionItemKind.Snippet
      item.insertTextFormat = vim.lsp.protocol.InsertTextFormat.PlainText
    end
    callback({ items = item and { item } or {}, is_incomplete_forward = true, is_incomplete_backward = true })
  end
  local now = sources.item_now(ctx.bufnr, row, col)
  answer(now)
  if now then
    return function() end
  end
  return sources.when_ready(ctx.bufnr, row, col, function(item)
    if item then answer(item) end
  end)
end

return M
