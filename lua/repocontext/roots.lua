--- Which project a buffer belongs to, decided once per buffer.
---
--- A root is the nearest folder with a project marker (`root_markers`: a list whose entries are
--- tried in order, an entry that is a list being markers of equal rank, as in Neovim 0.12's
--- `vim.fs.root`), or a folder the user chose with `:RepoContext root`. The home directory and
--- `/` are never taken on their own (a dotfiles `.git` in `~` must not make the whole home a
--- project). A file in no project has no root: it is not indexed, and its suggestions use the
--- open buffers alone.
local M = {}
local H = {}

local config = require("repocontext.config")

--- The root of `buf`'s project, or nil when it is in none.
---@param buf integer
---@return string|nil
function M.of(buf)
  buf = buf == 0 and vim.api.nvim_get_current_buf() or buf
  local cached = vim.b[buf].repocontext_root
  if cached ~= nil and H.generation[buf] == H.current_generation then return cached ~= "" and cached or nil end
  local root = M.of_path(vim.api.nvim_buf_get_name(buf))
  vim.b[buf].repocontext_root = root or ""
  H.generation[buf] = H.current_generation
  return root
end

--- The root for a path (a file, or a folder).
---@param path string
---@return string|nil
function M.of_path(path)
  if path == "" then return nil end
  path = vim.fs.normalize(vim.fn.fnamemodify(path, ":p"))
  local best
  for dir in pairs(H.chosen) do
    if (path == dir or vim.startswith(path, dir .. "/")) and (not best or #dir > #best) then best = dir end
  end
  if best then return best end
  local start = vim.fn.isdirectory(path) == 1 and path or vim.fs.dirname(path)
  for _, entry in ipairs(config.options.root_markers) do
    local names = type(entry) == "table" and entry or { entry }
    local dir = start
    while dir do
      if H.allowed(dir) and H.has_any(dir, names) then return dir end
      local parent = vim.fs.dirname(dir)
      dir = parent ~= dir and parent or nil
    end
  end
  return nil
end

--- Take `dir` as a project root (the user asked, so the home directory is allowed too).
---@return string|nil root, string|nil error
function M.choose(dir)
  local full = vim.fs.normalize(vim.fn.fnamemodify(vim.fn.expand(dir), ":p")):gsub("/$", "")
  if full == "" then full = "/" end
  if vim.fn.isdirectory(full) == 0 then
    return nil, ("%s is not a directory; use :RepoContext root {directory}"):format(dir)
  end
  H.chosen[full] = true
  H.current_generation = H.current_generation + 1 -- every buffer looks again
  return full
end

--- The one line that says a file is in no project, and what to do about it (short: 68 cells
--- fit the message line of an 80-column Neovim; message.lua cuts a longer one).
function M.outside_message(path)
  return ("%s: in no project; :RepoContext root {dir} indexes one"):format(vim.fn.fnamemodify(path, ":t"))
end

-- Helper data ----------------------------------------------------------------------------------

H.chosen = {} -- folders the user chose as roots
H.generation = {} -- buf -> H.current_generation when its root was decided
H.current_generation = 0

-- Helper functions -----------------------------------------------------------------------------

function H.allowed(dir)
  local home = vim.fs.normalize(vim.uv.os_homedir() or "")
  return dir ~= "/" and dir ~= home and not dir:match("^%a:/?$")
end

function H.has_any(dir, names)
  for _, name in ipairs(names) do
    if vim.uv.fs_stat(dir .. "/" .. name) then return true end
  end
  return false
end

return M
