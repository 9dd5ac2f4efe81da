--- What the completion-menu sources (nvim-cmp, blink.cmp) offer: the suggestion as one item.
---
--- The item is the suggestion shown at the cursor, or, when one is being made, that one once
--- it is complete (blink.cmp takes a second answer; nvim-cmp's is given then). The item
--- replaces the word before the cursor with that word plus the suggestion, so that the menu's
--- filter (which matches the word typed) keeps it, and it inserts every line.
local M = {}
local H = {}

local suggestion = require("repocontext.suggestion")

--- The menu item for the suggestion at (row, col) of `buf` (row 0-based, col a byte offset),
--- if one is shown there now.
function M.item_now(buf, row, col) return H.item(buf, row, col) end

--- Call `cb(item or nil)` once the suggestion being made (or about to be: a menu asks on the
--- same key that asks the engine) is complete, or the engine found nothing, or WAIT_MS went
--- by. Returns a function that cancels the wait.
function M.when_ready(buf, row, col, cb)
  local done = false
  local id
  local function finish()
    if done then return end
    done = true
    pcall(vim.api.nvim_del_autocmd, id) -- pcall: it may have been removed already
    cb(H.item(buf, row, col))
  end
  id = vim.api.nvim_create_autocmd("User", {
    pattern = { "RepoContextShown", "RepoContextStatus" },
    callback = function(a)
      -- a final answer: shown complete, or nothing to suggest (or no engine to ask)
      local complete = a.match == "RepoContextShown" and a.data.complete
      local status = a.match == "RepoContextStatus" and a.data.status
      if complete or status == "empty" or status == "down" or status == "off" then finish() end
    end,
  })
  vim.defer_fn(finish, H.WAIT_MS)
  return function()
    done = true
    pcall(vim.api.nvim_del_autocmd, id) -- pcall: as above
  end
end

-- Helper data ----------------------------------------------------------------------------------

-- A menu is not kept waiting longer than this (the first suggestion also loads the model).
-- Menus show their other items meanwhile, and a wait ends at the engine's next final answer.
H.WAIT_MS = 60000

-- Helper functions -----------------------------------------------------------------------------

--- The menu item for the suggestion, if it belongs at (row, col) of `buf`.
function H.item(buf, row, col)
  local s = suggestion.current()
  if not (s.text and s.text ~= "" and s.buf == buf and s.row == row and s.col == col) then return nil end
  local line = vim.api.nvim_buf_get_lines(buf, row, row + 1, false)[1] or ""
  local word_start = (line:sub(1, col):find("[%w_]*$")) - 1
  local word = line:sub(word_start + 1, col)
  local text = word .. s.text
  local first = vim.split(s.text, "\n", { plain = true })[1]
  return {
    label = word .. (first ~= "" and first or s.text:gsub("^\n", "")),
    filterText = text,
    textEdit = {
      newText = text,
      range = {
        start = { line = row, character = word_start },
        ["end"] = { line = row, character = col },
      },
    },
    documentation = {
      kind = "markdown",
      value = ("```%s\n%s\n```"):format(vim.bo[buf].filetype, line:sub(1, col) .. s.text),
    },
    detail = "repocontext",
  }
end

return M
