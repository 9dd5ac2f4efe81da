--- Indexing the user's projects from the editor: when, and what the user hears about it.
---
--- A project is indexed when one of its files is opened (once per session) and updated when
--- one is saved (quietly). Its first index says how it goes, at each quarter, and when it is
--- done (`notify_progress`); the statusline shows the percentage (suggestion.lua). A file in
--- no project goes too, with no root: the engine decides (a folder indexed before, say one
--- the user chose, is its project), or answers that it is in none, and then the user is told
--- once per folder and nothing is indexed.
local M = {}
local H = {}

local config = require("repocontext.config")
local host = require("repocontext.host")
local roots = require("repocontext.roots")
local suggestion = require("repocontext.suggestion")

--- Index the project of `buf` (once per session; again with `force`: a save).
function M.index(buf, force)
  local path = vim.api.nvim_buf_get_name(buf)
  if path == "" then return end
  local root = roots.of(buf)
  if H.asked[root or vim.fs.dirname(path)] and not force then return end
  M.index_root(root, path, false)
end

--- Index `root` (nil: let the engine decide for `path`); `first`: report it as a first index.
function M.index_root(root, path, first)
  if not host.usable() then return end
  local key = root or vim.fs.dirname(path)
  if not H.asked[key] or first then H.first[root or H.UNKNOWN] = {} end
  if first and not root then H.asked_outside[key] = true end
  H.asked[key] = path
  local ok, err = host.call("RepoContextIndex", path, true, root or "")
  if not ok then H.notify(err, vim.log.levels.ERROR) end
end

--- Forget what was asked: the engine stopped, or restarts, and the next one knows nothing of
--- it. A first index still running is kept for `resume`; its percentage goes from the
--- statusline now (it stayed at "embed 18%" for ever).
function M.reset()
  for root in pairs(H.first) do
    if root ~= H.UNKNOWN and H.asked[root] then H.unfinished[root] = H.asked[root] end
  end
  H.asked, H.first = {}, {}
  suggestion.set_progress(nil)
end

--- A new engine is up: it goes on with the first indexes the last one left unfinished (what
--- was indexed and embedded is in the index already; the rest is done), with their progress.
function M.resume()
  local unfinished = H.unfinished
  H.unfinished = {}
  for root, path in pairs(unfinished) do
    M.index_root(root, path, true)
  end
end

--- Progress from the engine: {phase, done, total, percent?, root, message?}.
function M.on_progress(p)
  p.percent = p.percent or ((p.total or 0) > 0 and math.floor(100 * p.done / p.total) or nil)
  vim.api.nvim_exec_autocmds("User", { pattern = "RepoContextProgress", modeline = false, data = p })
  local first = H.first[p.root] or H.first[H.UNKNOWN]
  suggestion.set_progress(first and p or nil)
  if not (first and config.options.notify_progress) then return end
  if p.phase == "waiting" then
    if first.waiting then return end
    first.waiting = true
    return H.notify((p.message or "waiting for another index") .. ": using what is there meanwhile")
  end
  if not p.percent then return end
  -- the windows follow the vectors' 100 %: said when they start and end, the statusline has the rest
  if p.phase == "windows" and p.percent > 0 and p.percent < 100 then return end
  local quarter = math.floor(p.percent / 25)
  local key = p.phase .. quarter
  if first[key] or (quarter == 0 and p.done > 0) then return end
  first[key] = true
  H.notify(
    ("%s %s: %d%% (%d/%d)"):format(
      H.PHASE_WORDS[p.phase] or p.phase,
      vim.fn.fnamemodify(p.root, ":t"),
      p.percent,
      p.done,
      p.total
    )
  )
end

--- The engine's report at the end of a run (see Session.index in runtime/session.py).
function M.on_indexed(report)
  if report.outside or report.project == false then
    local folder = vim.fs.dirname(report.path or "")
    -- said once per folder, and again when asked (:RepoContext reindex said nothing)
    local asked = H.asked_outside[folder]
    H.asked_outside[folder] = nil
    if report.path and (asked or not H.told_outside[folder]) then
      H.told_outside[folder] = true
      H.notify(roots.outside_message(report.path))
    end
    return
  end
  local data = vim.tbl_extend("force", report, { phase = "done" })
  vim.api.nvim_exec_autocmds("User", { pattern = "RepoContextProgress", modeline = false, data = data })
  local first = report.root and (H.first[report.root] or H.first[H.UNKNOWN])
  if report.root then
    H.first[report.root], H.first[H.UNKNOWN] = nil, nil
  end
  suggestion.set_progress(nil)
  if report.error then return H.notify(report.error, vim.log.levels.ERROR) end
  if not (first and config.options.notify_progress) then return end -- a save: quiet
  if report.busy then return H.notify(report.note or "another index is still running") end
  local changed = (report.added or 0) + (report.updated or 0) + (report.removed or 0) + (report.embedded or 0)
  if changed == 0 and not report.indexed_by then return end -- up to date already: nothing to say
  H.notify(
    ("indexed %s: %d files in %.1f s%s"):format(
      vim.fn.fnamemodify(report.root, ":t"),
      report.files or 0,
      report.seconds or 0,
      report.indexed_by and ("; by " .. report.indexed_by) or ""
    )
  )
end

-- Helper data ----------------------------------------------------------------------------------

H.asked = {} -- root (or the folder of a file with no root) -> the path it was asked for
H.unfinished = {} -- root -> path: first indexes an engine left when it stopped (`resume`)
H.first = {} -- root -> {} while the first index of the session runs (its messages said)
H.told_outside = {} -- folders told they are in no project
H.asked_outside = {} -- folders in no project whose index was asked for by hand (reindex)
H.UNKNOWN = "" -- the key of a first index whose root the engine decides
-- what each progress phase is called in a notification ("windows": the later windows of long
-- source definitions, embedded after every chunk has its vector)
H.PHASE_WORDS = { index = "indexing", embed = "embedding", windows = "embedding long definitions" }

-- Helper functions -----------------------------------------------------------------------------

function H.notify(msg, level) require("repocontext.message").say(msg, level) end

return M
