--- Hooks for tests and benches, kept off the keystroke path.
---
--- The plugin never loads this module. A test or a bench turns it on with
--- `require("repocontext.probe").start()` (after `setup()`, before the keys it watches): it
--- wraps the few public functions it watches (request.lua's, suggestion.lua's) and adds an
--- autocmd of its own. Until then a key costs nothing for it: no counter, no table, no check.
local M = {}
local H = {}

local request = require("repocontext.request")
local suggestion = require("repocontext.suggestion")

--- Turn the hooks on (once: a second call only sets `levers`, see `M.ablate`).
---@param levers table|nil
function M.start(levers)
  if not H.started then
    H.started = true
    H.watch()
  end
  M.ablate(levers)
  return M
end

--- What was sent to the engine since `start()`: completion requests, cancels (a burst of keys,
--- a place left), warmings.
M.counts = { requests = 0, cancels = 0, warms = 0 }

--- Has the plugin seen the buffer's last change, and decided on it (a request due or none)?
--- Tests wait on this state, not on the clock.
---@param buf integer|nil default: the current buffer
function M.settled(buf)
  buf = buf or vim.api.nvim_get_current_buf()
  return H.seen[buf] == vim.b[buf].changedtick and not H.due
end

--- For bench/savings.py, which measures what each part of the ghost text's behaviour is worth
--- by turning it off: `{ type_through = false }` asks again at every key, even one that types
--- the suggestion's next character; `{ retire = false }` leaves a suggestion the typed text
--- contradicts on screen until a reply replaces it. Not options: neither helps anybody. `{}`
--- (or nil) turns both on again.
---@param levers table|nil
function M.ablate(levers) H.levers = levers or {} end

-- Helper data ----------------------------------------------------------------------------------

H.started = false
H.seen = {} -- buffer -> the changedtick of the last TextChangedI
H.due = false -- a request is due after a key: its timer runs, or its callback waits
H.levers = {}

-- Helper functions -----------------------------------------------------------------------------

function H.watch()
  local group = vim.api.nvim_create_augroup("repocontext-probe", { clear = true })
  vim.api.nvim_create_autocmd("TextChangedI", {
    group = group,
    callback = function(a) H.seen[a.buf] = vim.b[a.buf].changedtick end,
  })
  H.wrap(request, "send", function(send, req)
    M.counts.requests = M.counts.requests + 1
    return send(req)
  end)
  H.wrap(request, "cancel", function(cancel, buf)
    if vim.api.nvim_buf_is_valid(buf) then M.counts.cancels = M.counts.cancels + 1 end
    return cancel(buf)
  end)
  -- a warming is sent when request.warm makes it (a place warmed already makes none)
  H.wrap(request, "warm", function(warm, place, make)
    return warm(place, function()
      M.counts.warms = M.counts.warms + 1
      return make()
    end)
  end)
  H.wrap(request, "after_key", function(after_key, ...)
    H.due = true
    return after_key(...)
  end)
  H.wrap(request, "due", function(due, ...)
    H.due = false
    return due(...)
  end)
  H.wrap(request, "stop_timers", function(stop_timers)
    H.due = false
    return stop_timers()
  end)
  H.wrap(suggestion, "type_through", function(type_through, ...)
    if H.levers.type_through == false then return false end
    return type_through(...)
  end)
  H.wrap(suggestion, "retire", function(retire, ...)
    if H.levers.retire == false then return end
    return retire(...)
  end)
end

--- `module[name]` becomes `with(original, ...)`: the callers look it up at each call.
function H.wrap(module, name, with)
  local original = module[name]
  module[name] = function(...) return with(original, ...) end
end

return M
