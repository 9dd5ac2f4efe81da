--- The plugin's keys (insert mode's, and normal mode's next-edit keys), set so that the
--- user's own mappings are never lost.
---
--- The first time a key is taken, whatever was mapped to it is kept (the user's mapping, a
--- plugin's, or Neovim's own default: 0.11 maps `<Tab>` to a snippet jump). A key with nothing
--- to act on hands itself back with `feed_previous()`: the old mapping is copied, as it was
--- (expr, callback, remap, `<Plug>`), to a `<Plug>` key of our own, and that key is fed right
--- where the typed one was. Neovim then runs the old mapping itself, so an expression is
--- evaluated, a callback may edit the buffer, and a `<Plug>` target is reached: what the key
--- did before, exactly (nvim-cmp's fallback does the same). Returning the old mapping's keys
--- from an expression instead typed `<Tab>` as text, and cannot edit the buffer (textlock).
--- `setup()` called again first `restore()`s every key (as copilot.lua's keymaps do), so an
--- option turned off leaves the user's mapping, not ours.
local M = {}
local H = {}

--- Map `lhs` in `mode` ("i", the default, or "n") to `rhs` (a function), remembering what
--- was there before.
---@param lhs string
---@param rhs function
---@param opts table|nil extra keymap options (desc is prefixed with "[repocontext] ")
---@param mode string|nil
function M.set(lhs, rhs, opts, mode)
  mode = mode or "i"
  local saved = H.saved_in(mode)
  if saved[lhs] == nil then
    local previous = vim.fn.maparg(lhs, mode, false, true)
    saved[lhs] = (previous.lhs ~= nil and not H.ours(previous)) and previous or false
  end
  opts = vim.tbl_extend("force", { desc = "" }, opts or {})
  opts.desc = "[repocontext] " .. opts.desc
  vim.keymap.set(mode, lhs, rhs, opts)
end

--- The mapping of `lhs` in `mode` (default "i") from before the plugin took it (maparg's
--- dict), or nil.
function M.previous(lhs, mode) return H.saved_in(mode or "i")[lhs] or nil end

--- Is `lhs` free in `mode` (default "i") for a default mapping (nothing mapped, or only the
--- plugin's own)?
function M.free(lhs, mode)
  mode = mode or "i"
  local saved = H.saved_in(mode)
  if saved[lhs] ~= nil then return saved[lhs] == false end
  local current = vim.fn.maparg(lhs, mode, false, true)
  return current.lhs == nil or H.ours(current)
end

--- Do what `lhs` did in `mode` (default "i") before the plugin mapped it, at the place of the
--- key just typed. Call it from a (non-expression) mapping of `lhs` made with `M.set`. In
--- normal mode the count typed before the key goes with it (`3<Tab>`).
function M.feed_previous(lhs, mode)
  mode = mode or "i"
  local previous = H.saved_in(mode)[lhs]
  local count = (mode == "n" and vim.v.count > 0) and tostring(vim.v.count) or ""
  if not previous then
    -- "i": before the keys still waiting (typeahead), "n": the key itself, never remapped
    return vim.api.nvim_feedkeys(count .. vim.keycode(lhs), "in", false)
  end
  vim.api.nvim_feedkeys(count .. vim.keycode(H.plug_for(lhs, previous, mode)), "im", false)
end

--- Put every key back as it was before the plugin, and forget.
function M.restore()
  for mode, saved in pairs(H.saved) do
    for lhs, previous in pairs(saved) do
      local current = vim.fn.maparg(lhs, mode, false, true)
      if current.lhs ~= nil and H.ours(current) then vim.keymap.del(mode, lhs) end
      if previous then vim.fn.mapset(mode, false, previous) end
    end
  end
  H.saved = {}
end

-- Helper data ---------------------------------------------------------------------------------

H.saved = {} -- mode -> lhs -> maparg() dict of the mapping before ours, or false for none

-- Helper functions ----------------------------------------------------------------------------

function H.saved_in(mode)
  H.saved[mode] = H.saved[mode] or {}
  return H.saved[mode]
end

function H.ours(mapping) return type(mapping.desc) == "string" and mapping.desc:find("^%[repocontext%]") ~= nil end

--- A `<Plug>` key that does what `previous` did: the same rhs or callback, expr, remap and
--- keycode handling. Made again each time, so a changed mapping is replayed as it is now.
function H.plug_for(lhs, previous, mode)
  local plug = "<Plug>(repocontext-previous-"
    .. (mode == "i" and "" or mode .. "-")
    .. vim.fn.keytrans(vim.keycode(lhs))
    .. ")"
  local noremap = previous.noremap == 1
  local rhs = previous.rhs or ""
  -- A remapped rhs that types the key itself would come back to us and loop: replay it
  -- unmapped (what Vim does for a rhs that starts with its own lhs).
  if not noremap and rhs:find(vim.pesc(lhs)) then noremap = true end
  vim.api.nvim_set_keymap(mode, plug, rhs, {
    callback = previous.callback,
    expr = previous.expr == 1,
    noremap = noremap,
    silent = true,
    nowait = true,
    replace_keycodes = previous.replace_keycodes == 1 or nil,
    desc = "[repocontext] what " .. lhs .. " did before",
  })
  return plug
end

return M
