--- Macros that accepted a suggestion replay the text that was accepted.
---
--- A macro records the keys typed, so an accept is recorded as `<Tab>`. When the macro runs,
--- no suggestion is on screen (the engine answers after the keys have gone by), and the key
--- would do what it does without the plugin: an indent. So while a register is recorded,
--- each press of an accept key is remembered in order, with the text it inserted or none
--- (it fell back); when that register runs, the n-th press does what the n-th press did while
--- recording. `3@q` runs the presses three times over. A register changed since it was
--- recorded (yanked into, `:let @q = ...`) is replayed as its keys say, with no text of ours.
local M = {}
local H = {}

function M.setup()
  local group = vim.api.nvim_create_augroup("repocontext.replay", { clear = true })
  vim.api.nvim_create_autocmd("RecordingEnter", { group = group, callback = function() H.recording = {} end })
  vim.api.nvim_create_autocmd("RecordingLeave", { group = group, callback = H.on_recorded })
end

--- Remember a press of an accept key while a register is recorded: the text it inserted, or
--- nil where it fell back to the key's old meaning.
---@param text string|nil
function M.note(text)
  if H.recording and vim.fn.reg_recording() ~= "" then table.insert(H.recording, { text = text }) end
end

--- While a recorded macro runs: what this press of an accept key did when it was recorded
--- (`{ text = ... }`, text nil for a fallback). Nil when no macro runs, or its register was
--- not recorded with an accept in it, or has changed since.
---@return { text: string|nil }|nil
function M.next_press()
  local reg = vim.fn.reg_executing()
  if reg == "" then return nil end
  reg = reg:lower()
  local macro = H.macros[reg]
  if not macro then return nil end
  if macro.contents ~= nil and macro.contents ~= vim.fn.getreg(reg) then
    H.macros[reg] = nil
    return nil
  end
  local n = (H.position[reg] or 0) % #macro.presses + 1
  H.position[reg] = n
  if not H.rewind_scheduled then
    -- A macro's keys run with no pause for the event loop: this runs once it has finished
    -- (or stopped on an error), so that the next run starts from its first press again.
    H.rewind_scheduled = true
    vim.schedule(function()
      H.position, H.rewind_scheduled = {}, false
    end)
  end
  return macro.presses[n]
end

--- Is a macro running now? (Work for a suggestion is waste then: its keys go faster than any
--- reply.)
function M.executing() return vim.fn.reg_executing() ~= "" end

-- Helper data ---------------------------------------------------------------------------------

H.recording = nil -- the presses of the register being recorded, in order
H.macros = {} -- register (lowercase) -> { presses = { {text=}, ... }, contents = what it held }
H.position = {} -- register -> presses replayed in the run now going on
H.rewind_scheduled = false

-- Helper functions ----------------------------------------------------------------------------

function H.on_recorded()
  local presses, reg = H.recording, (vim.v.event.regname or ""):lower()
  H.recording = nil
  if reg == "" then return end
  local appended = vim.v.event.regname:match("%u") ~= nil -- `qQ` appends to register q
  if appended and H.macros[reg] and presses then
    vim.list_extend(H.macros[reg].presses, presses)
    presses = H.macros[reg].presses
  end
  local accepted = presses and vim.iter(presses):any(function(p) return p.text ~= nil end)
  if not accepted then
    H.macros[reg] = nil
    return
  end
  local macro = { presses = presses }
  H.macros[reg] = macro
  -- The register is written after this event: read what it holds once it is there, so that a
  -- register changed later is told apart.
  vim.schedule(function()
    if H.macros[reg] == macro then macro.contents = vim.fn.getreg(reg) end
  end)
end

return M
