--- The requests to the engine: their ids, the one in flight, the timers that send them, and
--- the one cancel. As `suggestion.lua` owns what the screen shows, this module owns what has
--- been asked and not yet answered; init.lua decides when to ask.
---
--- A key typed `debounce_ms` or more after the one before (a person typing) is asked for at
--- once; keys closer together (a burst: a paste, fast typing) stop the request in flight and
--- wait for `debounce_ms` of quiet (bench/results/editor.md: a 60 ms wait before every request
--- was most of the time to the first ghost text, and a generation running through a burst only
--- slows Neovim). A warming is sent once per text and place.
---
--- What tests and benches count here (requests, cancels, warmings, a request due) is counted
--- by probe.lua, which wraps these functions when a test turns it on: nothing on a user's key.
local M = {}
local H = {}

local config = require("repocontext.config")
local host = require("repocontext.host")
local roots = require("repocontext.roots")

--- A new request id (the newest: replies to older ones are dropped by suggestion.lua).
---@return integer
function M.next_id()
  H.id = H.id + 1
  H.warmed = nil -- a real request evaluates this place's prompt anyway
  return H.id
end

--- The newest request id.
function M.id() return H.id end

--- Send the completion request `req` (made with `M.next_id()`); true if the host took it,
--- else false and its error.
---@return boolean, string|nil
function M.send(req)
  local ok, err = host.call("RepoContextComplete", req)
  H.in_flight = ok and req.id or nil
  return ok, err
end

--- A reply came; `done`: the final one, so nothing of that request is in flight any more.
function M.replied(id, done)
  if done and id == H.in_flight then H.in_flight = nil end
end

--- Is a request's final reply still to come?
function M.in_flight() return H.in_flight ~= nil end

--- Stop the engine's work for `buf` (the request in flight, its speculation, a warming): the
--- user left the place, or a burst of keys made it stale.
function M.cancel(buf)
  H.in_flight = nil
  if not vim.api.nvim_buf_is_valid(buf) then return end
  host.call("RepoContextCancel", vim.api.nvim_buf_get_name(buf), roots.of(buf) or "")
end

--- A second candidate for the shown suggestion: the same request (its id) asked again with
--- `avoid`; its replies are the same request's.
function M.ask_alternative(req) host.call("RepoContextComplete", req) end

--- A look-up for a :RepoContext command (search, context, definition, ...): `cb(result, err)`
--- gets its reply (`M.answered`), or the error at once when the host cannot take it.
function M.look_up(kind, payload, cb)
  H.next_lookup = H.next_lookup + 1
  local id = H.next_lookup
  H.lookups[id] = cb
  local ok, err = host.call("RepoContextRequest", id, kind, payload)
  if not ok then
    H.lookups[id] = nil
    cb(nil, err)
  end
end

--- The callback waiting for look-up `id`'s reply (nil for one already answered), now done.
function M.answered(id)
  local cb = H.lookups[id]
  H.lookups[id] = nil
  return cb
end

--- The host went down: nothing is in flight any more (its replies will not come). Returns the
--- look-ups' callbacks still waiting, for the caller to tell them.
---@return function[]
function M.forget()
  H.in_flight = nil
  local waiting = vim.tbl_values(H.lookups)
  H.lookups = {}
  return waiting
end

--- After a key: `ask()` at once for a key typed `debounce_ms` after the one before, else after
--- `debounce_ms` of quiet, the request in flight stopped meanwhile.
---@param buf integer
---@param ask function called in the main loop, only if `buf` is still current in insert mode
function M.after_key(buf, ask)
  H.debounce = H.debounce or vim.uv.new_timer()
  H.debounce:stop()
  local now = vim.uv.now()
  local wait = (now - (H.key_at or -math.huge) >= config.options.debounce_ms) and 0 or config.options.debounce_ms
  H.key_at = now
  if wait > 0 and H.in_flight then M.cancel(buf) end
  H.debounce:start(wait, 0, vim.schedule_wrap(function() M.due(buf, ask) end))
end

--- A key's wait is over (`after_key`): `ask()`, if `buf` is still current in insert mode.
function M.due(buf, ask) H.in_insert(buf, ask)() end

--- `fn()` once the cursor has rested `warm_delay_ms` (a move in insert mode without typing);
--- a newer call replaces it.
function M.after_rest(buf, fn)
  H.rest = H.rest or vim.uv.new_timer()
  H.rest:stop()
  H.rest:start(config.options.warm_delay_ms, 0, vim.schedule_wrap(H.in_insert(buf, fn)))
end

--- Stop the timers (the user left the place: nothing is asked for it any more).
function M.stop_timers()
  if H.debounce then H.debounce:stop() end
  if H.rest then H.rest:stop() end
  H.warmed = nil
end

--- Send a warming of the request `make()` returns, unless this text and place were warmed
--- already (BufEnter's deferred warming after InsertEnter's at an arrival: a second would
--- only cancel the first and evaluate it again). `make` runs only when the warming is sent:
--- a request carries the buffer's next version (sync.lua), and a version made and never
--- sent left every later patch without its base, so the engine dropped every warming after.
---@param place string "buf:changedtick:row:col"
---@param make fun(): table
function M.warm(place, make)
  if H.warmed == place then return end
  H.warmed = place
  host.call("RepoContextWarm", make())
end

-- Helper data ---------------------------------------------------------------------------------

H.id = 0
H.in_flight = nil -- the id of the request whose final reply has not come yet
H.debounce = nil -- the timer of the next request (M.after_key)
H.rest = nil -- the timer of a warming after the cursor moved (M.after_rest)
H.key_at = nil -- vim.uv.now() of the last key
H.warmed = nil -- the place of the last warming sent, until a request or M.stop_timers()
H.next_lookup = 0
H.lookups = {} -- look-up id -> the callback waiting for its reply

-- Helper functions ----------------------------------------------------------------------------

--- `fn` for a timer: it runs only if `buf` is still current in insert mode.
function H.in_insert(buf, fn)
  return function()
    if vim.api.nvim_get_current_buf() == buf and vim.fn.mode():sub(1, 1) == "i" then fn() end
  end
end

return M
