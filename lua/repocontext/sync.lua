--- What the engine knows of each buffer: the whole text once, then only the lines changed.
---
--- A request carries the buffer. Sending all of a 50,000-line file at every keystroke cost
--- Neovim 16-39 ms of its main loop; instead each buffer is sent whole the first time (and
--- whenever the engine says it lost track), and after that as one patch: the span of lines
--- changed since the last request (tracked with nvim_buf_attach), which while typing is one
--- line. The engine keeps the text and applies the patches (bridge.py).
local M = {}
local H = {}

--- The buffer's part of a request: {text, version} or {patch = {base, hunks}, version}, each
--- hunk {first, last, lines} replacing lines [first, last) (0-based) of the text of version
--- `base`; hunks are in order and do not overlap.
---@param buf integer
---@return table
function M.payload(buf)
  local st = H.state(buf)
  st.version = st.version + 1
  local changed = 0
  for _, sp in ipairs(st.spans) do
    changed = changed + sp.hi - sp.lo
  end
  if not st.sent or changed > H.MAX_PATCH_LINES or #st.spans > H.MAX_HUNKS then
    st.sent, st.spans = true, {}
    return { text = table.concat(vim.api.nvim_buf_get_lines(buf, 0, -1, false), "\n"), version = st.version }
  end
  local hunks, shift = {}, 0 -- shift: lines added by the hunks before this one
  for _, sp in ipairs(st.spans) do
    table.insert(hunks, {
      first = sp.lo - shift,
      last = sp.hi - shift - sp.delta,
      lines = vim.api.nvim_buf_get_lines(buf, sp.lo, sp.hi, false),
    })
    shift = shift + sp.delta
  end
  st.spans = {}
  return { patch = { base = st.version - 1, hunks = hunks }, version = st.version }
end

--- The engine lost track of `buf` (it restarted, or a patch did not apply): send it whole.
function M.reset(buf)
  if H.bufs[buf] then H.bufs[buf].sent = false end
end

--- Forget every buffer (the engine's host restarted).
function M.reset_all()
  for buf in pairs(H.bufs) do
    M.reset(buf)
  end
end

-- Helpers -------------------------------------------------------------------------------------

H.bufs = {}
H.MAX_PATCH_LINES = 2000 -- more lines changed than this: the whole text goes instead
H.MAX_HUNKS = 64

function H.state(buf)
  local st = H.bufs[buf]
  if st then return st end
  st = { version = 0, sent = false, spans = {} }
  H.bufs[buf] = st
  vim.api.nvim_buf_attach(buf, false, {
    on_lines = function(_, _, _, first, last_old, last_new) H.track(st, first, last_old, last_new) end,
    on_reload = function() st.sent = false end,
    on_detach = function() H.bufs[buf] = nil end,
  })
  return st
end

--- Record one change (lines [first, last_old) became [first, last_new)) in the spans changed
--- since the last request: each span {lo, hi, delta} covers current lines [lo, hi) and added
--- `delta` lines; a change merges the spans it touches and moves the ones after it.
function H.track(st, first, last_old, last_new)
  local d = last_new - last_old
  local merged = { lo = first, hi = last_new, delta = d }
  local before, after = {}, {}
  for _, sp in ipairs(st.spans) do
    if sp.hi < first then
      table.insert(before, sp)
    elseif sp.lo > last_old then
      table.insert(after, { lo = sp.lo + d, hi = sp.hi + d, delta = sp.delta })
    else
      merged.lo = math.min(merged.lo, sp.lo)
      merged.hi = math.max(merged.hi, sp.hi + d)
      merged.delta = merged.delta + sp.delta
    end
  end
  table.insert(before, merged)
  vim.list_extend(before, after)
  st.spans = before
end

return M
