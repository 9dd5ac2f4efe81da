--- Messages to the user: one screen line each, and never a hit-enter prompt.
---
--- Neovim stops the editor ("Press ENTER or type command to continue") when a message is wider
--- than the room left on the last line (`v:echospace`) or when several pile up before the
--- screen is drawn, and in insert mode `-- INSERT --` covers a message at once. So a message is
--- cut to fit, with the whole of it kept in `M.recent` (`:RepoContext status` lists it); of
--- several in one moment only the most severe is shown; and one made in insert mode is shown
--- when insert mode ends. A `vim.notify` that a plugin replaced (nvim-notify, noice, fidget,
--- snacks) gets the whole text at once: those never prompt.
local M = {}
local H = {}

--- The last messages, whole, oldest first: { {time = os.time(), level = ..., text = ...} }.
M.recent = {}

--- Say `msg` ("(repocontext) " is put before it) at `level` (vim.log.levels; INFO by default).
function M.say(msg, level)
  level = level or vim.log.levels.INFO
  local text = "(repocontext) " .. msg
  table.insert(M.recent, { time = os.time(), level = level, text = text })
  if #M.recent > H.MAX_RECENT then table.remove(M.recent, 1) end
  if vim.notify ~= H.builtin then
    return vim.schedule(function() vim.notify(text, level) end)
  end
  if not H.pending or level >= H.pending.level then H.pending = { text = text, level = level } end
  if not H.scheduled then
    H.scheduled = true
    vim.schedule(H.flush)
  end
end

--- `text` cut to `width` display cells, with "…" where it was cut.
function M.fit(text, width)
  if vim.fn.strdisplaywidth(text) <= width then return text end
  if width < 1 then return "" end
  local cut = vim.fn.strcharpart(text, 0, width - 1)
  while vim.fn.strdisplaywidth(cut) > width - 1 do
    cut = vim.fn.strcharpart(cut, 0, vim.fn.strchars(cut) - 1)
  end
  return cut .. "…"
end

-- Helper data ----------------------------------------------------------------------------------

H.MAX_RECENT = 20
H.builtin = vim.notify -- Neovim's own, as found when the plugin loads
H.pending = nil -- the message to show at the next flush: {text, level}
H.scheduled = false
H.waiting = false -- for insert mode to end

-- Helper functions -----------------------------------------------------------------------------

function H.flush()
  H.scheduled = false
  if not H.pending then return end
  local mode = vim.api.nvim_get_mode().mode:sub(1, 1)
  if vim.o.showmode and (mode == "i" or mode == "R") then
    if not H.waiting then
      H.waiting = true
      vim.api.nvim_create_autocmd("InsertLeave", {
        once = true,
        callback = function()
          H.waiting = false
          vim.schedule(H.flush)
        end,
      })
    end
    return
  end
  local p = H.pending
  H.pending = nil
  vim.notify(M.fit(p.text, vim.v.echospace), p.level)
end

return M
