--- :checkhealth repocontext — the Python host, the packages, SQLite, the models, the index.
local M = {}
local H = {}

function M.check()
  local h = vim.health
  h.start("repocontext: Python host")
  if vim.fn.has("python3") == 0 then
    return h.error("the python3 provider is not available", {
      "install pynvim and repocontext into one Python: pip install repocontext pynvim",
      "point Neovim at it: vim.g.python3_host_prog = '/path/to/that/python'",
    })
  end
  h.ok("python3 provider: " .. (vim.g.python3_host_prog or "python3 on PATH"))
  local host = require("repocontext.host")
  if not host.usable() then
    return h.error(
      require("repocontext").last_error() or "the engine's Python host stopped",
      { ":RepoContext restart" }
    )
  end
  -- pcall: an unregistered remote plugin or a broken Python host raises here; report it
  -- (remote functions are defined lazily, so exists() cannot tell before the first call)
  local ok, info = pcall(vim.fn.RepoContextHealth, H.checked_path())
  if not ok then
    if tostring(info):find("Unknown function") then
      return h.error("the remote plugin is not registered", { "run :UpdateRemotePlugins and restart Neovim" })
    end
    return h.error("the Python side failed: " .. H.last_line(info), {
      "run :RepoContext restart; if this comes back, please report this line",
      "the host itself: :checkhealth provider",
    })
  end
  info = vim.tbl_map(function(x) return x ~= vim.NIL and x or nil end, info)
  h.start("repocontext: packages")
  for name, err in pairs(info.packages or {}) do
    if err == vim.NIL or err == nil then
      h.ok(name)
    else
      h.error(name .. ": " .. err, { "pip install --force-reinstall repocontext" })
    end
  end
  if info.import_error then
    return h.error(
      "repocontext cannot be imported: " .. info.import_error,
      { "pip install repocontext into g:python3_host_prog's Python" }
    )
  end
  if info.machine then
    h.start("repocontext: CPU and llama.cpp")
    local m = info.machine
    h.info("CPU: " .. m.cpu.summary)
    h.info("llama.cpp: " .. m.llama_cpp)
    h.ok(m.extra_buffers.reason)
    if m.weight_buffers_mib then
      local parts = {}
      for name, mib in pairs(m.weight_buffers_mib) do
        table.insert(parts, ("%s %.1f MiB"):format(name, mib))
      end
      table.sort(parts)
      h.info("model weights in: " .. table.concat(parts, ", "))
    end
  end
  h.start("repocontext: engine")
  for _, c in ipairs(info.checks or {}) do
    if c.ok and c.warn and c.warn ~= vim.NIL then
      h.warn(c.name .. ": " .. c.message .. "; " .. c.warn)
    elseif c.ok then
      h.ok(c.name .. ": " .. c.message)
    else
      h.error(c.name .. ": " .. c.message, c.advice ~= vim.NIL and { c.advice } or nil)
    end
  end
  for _, e in ipairs(info.recent_errors or {}) do
    h.warn("recent error: " .. e)
  end
end

-- Helper functions -----------------------------------------------------------------------------

--- The file whose project is checked: the buffer :checkhealth was run from. The report's own
--- buffer (health://) is current by now; the user's is its alternate. Without one (it was
--- an empty buffer, replaced): the current directory.
---@return string
function H.checked_path()
  local name = vim.api.nvim_buf_get_name(0)
  if vim.startswith(name, "health://") then
    local alternate = vim.fn.bufnr("#")
    name = alternate > 0 and vim.api.nvim_buf_get_name(alternate) or ""
  end
  return name ~= "" and name or vim.fn.getcwd()
end

--- One line of an error from the Python host: an exception reaches Neovim as a whole
--- traceback ("Traceback (most recent call last): ... ValueError: what"), whose last line
--- says what went wrong.
---@param err any
---@return string
function H.last_line(err)
  local last = ""
  for line in tostring(err):gmatch("[^\n]+") do
    if line:match("%S") then last = vim.trim(line) end
  end
  return last ~= "" and last or "no message"
end

return M
