--- The plugin's insert-mode keys, set so that the user's own mappings are never lost.
---
--- The first time a key is taken, whatever the user had mapped to it is kept; a key the
--- plugin maps by default falls back to it (`<Tab>` still indents, or drives the completion
--- menu). `setup()` called again maps the same keys again without taking the plugin's own
--- mapping for the user's, and `restore()` puts the user's mappings back (as copilot.lua's
--- keymaps do).
local M = {}
local H = {}

--- Map `lhs` in insert mode to `rhs` (a function), remembering what was there before.
---@param lhs string
---@param rhs function
---@param opts table|nil extra keymap options (desc is prefixed with "[repocontext] ")
function M.set(lhs, rhs, opts)
  local key = H.key(lhs)
  if H.saved[key] == nil then
    local previous = vim.fn.maparg(lhs, "i", false, true)
    H.saved[key] = (previous.lhs ~= nil and not H.ours(previous)) and previous or false
  end
  opts = vim.tbl_extend("force", { desc = "" }, opts or {})
  opts.desc = "[repocontext] " .. opts.desc
  vim.keymap.set("i", lhs, rhs, opts)
end

--- The user's mapping of `lhs` from before the plugin took it (maparg's dict), or nil.
function M.previous(lhs) return H.saved[H.key(lhs)] or nil end

--- Is `lhs` free for a default mapping (nothing mapped, or only the plugin's own)?
function M.free(lhs)
  if H.saved[H.key(lhs)] ~= nil then return H.saved[H.key(lhs)] == false end
  return vim.fn.maparg(lhs, "i") == ""
end

--- Put every key back as the user had it, and forget.
function M.restore()
  for key, previous in pairs(H.saved) do
    local lhs = key
    pcall(vim.keymap.del, "i", lhs) -- pcall: the user may have unmapped it meanwhile
    if previous then vim.fn.mapset("i", false, previous) end
  end
  H.saved = {}
end

-- Helpers -------------------------------------------------------------------------------------

H.saved = {}

function H.key(lhs) return lhs end

function H.ours(mapping) return type(mapping.desc) == "string" and mapping.desc:find("^%[repocontext%]") ~= nil end

return M
