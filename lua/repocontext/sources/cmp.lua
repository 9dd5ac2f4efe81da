--- nvim-cmp: the suggestion as a menu item (see |repocontext-menus|), and the ghost text
--- hidden while nvim-cmp's menu is open (its <Tab> selects in the menu then).
--- setup() registers the source as "repocontext" when nvim-cmp is installed.
local M = {}

local sources = require("repocontext.sources")
local suggestion = require("repocontext.suggestion")

--- Register the source and the menu's events with nvim-cmp (once); false without nvim-cmp.
function M.register()
  local ok, cmp = pcall(require, "cmp") -- pcall: nvim-cmp may not be installed
  if not ok or type(cmp) ~= "table" or type(cmp.register_source) ~= "function" then return false end
  if M.id then return true end
  M.id = cmp.register_source("repocontext", M.new())
  if type(cmp.event) == "table" and type(cmp.event.on) == "function" then
    cmp.event:on("menu_opened", function() suggestion.render() end) -- render() hides it
    cmp.event:on("menu_closed", function() vim.schedule(suggestion.render) end)
  end
  return true
end

function M.new() return setmetatable({}, { __index = M }) end

function M:get_debug_name() return "repocontext" end

function M:get_keyword_pattern() return [[\k*]] end

function M:complete(params, callback)
  local ctx = params.context
  local row, col = ctx.cursor.row - 1, ctx.cursor.col - 1
  local function answer(item)
    if item then item.kind = require("cmp").lsp.CompletionItemKind.Snippet end
    callback({ items = item and { item } or {}, isIncomplete = true })
  end
  local now = sources.item_now(ctx.bufnr, row, col)
  if now then return answer(now) end
  sources.when_ready(ctx.bufnr, row, col, answer) -- nvim-cmp shows the other sources meanwhile
end

return M
