--- The Python side's life: calls into it, noticing when it dies, and starting it again.
---
--- The engine runs in Neovim's python3 remote-plugin host. When that process dies (llama.cpp
--- can take it down with a native crash), Neovim says nothing and the plugin's calls fail one
--- by one. This module notices within a second, whatever the user is doing: a call that fails,
--- or the host's channel gone (checked every 500 ms while the host is up: a table look-up, no
--- work for the host). It then says so once, stops sending anything (typing costs nothing
--- while the host is down), and starts the host again: automatically once, after a backoff
--- and at a moment the user is not typing (starting a host blocks Neovim for a moment), and
--- on `:RepoContext restart`, which stops the old host first: one engine at a time.
local M = {}
local H = {}

--- unknown (not started yet) | up | down
M.state = "unknown"

--- Called with one line when the host dies, and when it answers again; set by init.lua.
M.on_down = function(_) end
M.on_up = function() end

--- Call the remote function `name`. Returns ok, result (or the error's one line).
---@return boolean, any
function M.call(name, ...)
  if M.state == "down" then return false, H.down_message end
  -- pcall: the remote plugin may be unregistered, or the host dead without our knowing yet
  local ok, result = pcall(vim.fn[name], ...)
  if not ok then
    if H.chan and not H.alive() then
      H.died()
      return false, H.down_message
    end
    return false, H.host_error(result)
  end
  if M.state ~= "up" then
    M.state = "up"
    M.on_up()
  end
  if not H.chan then
    -- The call just started the host (or found it running), so this returns at once.
    local okc, chan = pcall(vim.fn["remote#host#Require"], "python3")
    if okc and type(chan) == "number" and chan > 0 then H.chan = chan end
  end
  H.watch()
  return true, result
end

--- Is the host usable (running, or not started yet)?
function M.usable() return M.state ~= "down" end

--- The Python side says hello on its first reply: its pid and where a crash would be written.
function M.hello(info)
  H.pid = info.pid
  H.crash_log = info.crash_log
end

--- The host's pid, once known (for tests and :checkhealth).
function M.pid() return H.pid or (H.chan and vim.fn.jobpid(H.chan)) or nil end

--- Will the host be started again by itself (after the backoff, at the next pause)? The only
--- way it restarts without `:RepoContext restart`.
function M.restart_scheduled() return H.auto_group ~= nil end

--- Start the host again: stop the old one (its memory, a model included, goes back to the
--- system), re-register python3 with Neovim's remote-plugin machinery (which otherwise keeps
--- the old channel forever) and redefine the plugins' functions and commands, so that the next
--- call starts a fresh host. A host found dead here is reported first, like any other death.
function M.restart()
  if M.state ~= "down" and H.chan and (not H.alive() or (H.pid and not H.pid_alive(H.pid))) then H.died() end
  H.cancel_auto()
  H.stop_watch()
  H.stop_host()
  local ok, err = pcall(vim.api.nvim_exec2, H.REREGISTER, {})
  if not ok then return false, "could not restart the Python host: " .. tostring(err) end
  H.chan, H.pid, H.crash_log = nil, nil, nil
  M.state = "unknown"
  H.down_message = nil
  return true
end

--- Stop the host (Neovim quitting, or a restart); it exits as its channel closes.
function M.stop()
  H.stop_watch()
  H.stop_host()
end

-- Helper data ----------------------------------------------------------------------------------

H.WATCH_MS = 500 -- how often the channel is checked while the host is up
H.STOP_WAIT_MS = 3000 -- how long a restart waits for the old host to exit
H.BACKOFF_MS = 3000 -- the automatic restart waits at least this long
H.AUTO_EVERY_MS = 300000 -- and happens at most once in this time

H.chan = nil
H.pid = nil
H.crash_log = nil
H.timer = nil
H.last_auto = nil
H.auto_group = nil
H.down_message = nil

-- The remote-plugin host registry keeps a channel once it has one; registering python3 again
-- resets it, and each plugin's functions (whose bodies name the old channel) are defined anew
-- through the same bootstrap that :UpdateRemotePlugins' manifest uses.
H.REREGISTER = [[
call remote#host#Register('python3', '*', function('provider#python3#Require'))
for s:plugin in remote#host#PluginsForHost('python3')
  for s:spec in s:plugin.specs
    if s:spec.type ==# 'function'
      execute 'silent! delfunction ' . s:spec.name
      call remote#define#FunctionOnHost('python3', s:plugin.path . ':function:' . s:spec.name, s:spec.sync, s:spec.name, s:spec.opts)
    elseif s:spec.type ==# 'command'
      call remote#define#CommandOnHost('python3', s:plugin.path . ':command:' . s:spec.name, s:spec.sync, s:spec.name, s:spec.opts)
    endif
  endfor
endfor
]]

-- Helper functions -----------------------------------------------------------------------------

function H.alive()
  if not H.chan then return true end
  return next(vim.api.nvim_get_chan_info(H.chan)) ~= nil
end

function H.watch()
  if H.timer and H.timer:is_active() then return end
  H.timer = H.timer or vim.uv.new_timer()
  H.timer:start(
    H.WATCH_MS,
    H.WATCH_MS,
    vim.schedule_wrap(function()
      if M.state ~= "up" then return H.stop_watch() end
      if not H.alive() then return H.died() end
    end)
  )
end

--- Close the old host's channel and wait (briefly) for its process to go, so that a restart
--- never leaves two engines, each with a model in memory.
function H.stop_host()
  local chan, pid = H.chan, H.pid or (H.chan and H.chan_pid(H.chan))
  if not chan or not H.alive() then return end
  H.chan = nil
  pcall(vim.fn.jobstop, chan) -- pcall: the channel may have closed meanwhile
  if not pid then return end
  local gone = vim.wait(H.STOP_WAIT_MS, function() return not H.pid_alive(pid) end, 20)
  if not gone then vim.uv.kill(pid, "sigkill") end
end

function H.chan_pid(chan)
  local ok, pid = pcall(vim.fn.jobpid, chan) -- pcall: not a job channel
  return ok and pid > 0 and pid or nil
end

function H.pid_alive(pid)
  local ok, err = vim.uv.kill(pid, 0)
  if ok then
    -- a zombie is dead too: /proc says so on Linux
    local stat = io.open("/proc/" .. pid .. "/stat")
    if stat then
      local line = stat:read("*l") or ""
      stat:close()
      return line:match("^%d+ %b() (%a)") ~= "Z"
    end
    return true
  end
  return err ~= nil and err:find("ESRCH") == nil
end

function H.stop_watch()
  if H.timer then H.timer:stop() end
end

function H.died()
  if M.state == "down" then return end
  M.state = "down"
  H.stop_watch()
  local cause = H.crash_cause()
  H.chan = nil
  local auto = H.last_auto == nil or vim.uv.now() - H.last_auto > H.AUTO_EVERY_MS
  -- what to do first, the cause after it: a message wider than the screen is cut (message.lua)
  local why = cause and (" (" .. cause .. ")") or ""
  if auto then
    H.down_message = "the engine stopped; it restarts in a few seconds, or now with :RepoContext restart" .. why
    H.schedule_auto()
  else
    H.down_message = "the engine stopped again; :RepoContext restart starts it, :checkhealth says more" .. why
  end
  M.on_down(H.down_message)
end

--- What the host's fault handler wrote before it died ("Segmentation fault in
--- llama_cpp/_internals.py, decode"), if anything.
function H.crash_cause()
  if not H.crash_log or vim.fn.filereadable(H.crash_log) == 0 then return nil end
  local fatal, frame, any_frame, in_current
  for _, line in ipairs(vim.fn.readfile(H.crash_log, "", 400)) do
    fatal = fatal or line:match("^Fatal Python error: (.+)$")
    if line:match("^Current thread") then in_current = true end
    -- the innermost frame (frames are listed most recent first), of the crashing thread if named
    local file, fn = line:match('^%s+File "(.-)", line %d+ in (%S+)')
    if file then
      local where = vim.fn.fnamemodify(file, ":h:t") .. "/" .. vim.fn.fnamemodify(file, ":t") .. ", " .. fn
      any_frame = any_frame or where
      if in_current and not frame then frame = where end
    end
  end
  if not fatal then return nil end
  frame = frame or any_frame
  return fatal .. (frame and (" in " .. frame) or "") .. " (details: " .. H.crash_log .. ")"
end

--- The automatic restart: after the backoff, at the next moment the user pauses (starting the
--- host blocks the editor while Python imports), never in the middle of typing.
function H.schedule_auto()
  H.cancel_auto()
  local due = vim.uv.now() + H.BACKOFF_MS
  H.auto_group = vim.api.nvim_create_augroup("repocontext-restart", { clear = true })
  local function try()
    if M.state ~= "down" or vim.uv.now() < due then return end
    H.cancel_auto()
    H.last_auto = vim.uv.now()
    M.restart()
    -- one call starts it, so the next keystroke finds it ready
    M.call("RepoContextHello")
  end
  vim.api.nvim_create_autocmd(
    { "CursorHold", "CursorHoldI", "FocusGained", "InsertLeave" },
    { group = H.auto_group, callback = try }
  )
  vim.defer_fn(function()
    -- No pause came (a test, or a user who went away): the next hold will do it.
    if M.state == "down" and vim.fn.mode():sub(1, 1) ~= "i" then try() end
  end, H.BACKOFF_MS + 50)
end

function H.cancel_auto()
  if H.auto_group then
    pcall(vim.api.nvim_del_augroup_by_id, H.auto_group) -- pcall: it may already be gone
    H.auto_group = nil
  end
end

function H.host_error(err)
  local first = tostring(err):gsub("\n.*", "")
  if first:find("Unknown function") then
    return "run :UpdateRemotePlugins and restart Neovim (the remote plugin is not registered)"
  end
  return ("the engine cannot start; :checkhealth repocontext says why (%s)"):format(first)
end

return M
