--- Configuration: the defaults (one literal table) and their validation. Every wrong option
--- is named in the error; unknown keys warn. The table between the minidoc markers, its `---`
--- comments included, is copied into doc/repocontext.txt by scripts/gen_help.py, so its lines
--- stay within 76 columns (the help's 78, less its indent).
local M = {}
local H = {}

-- stylua: ignore start
--minidoc_replace_start
M.defaults = {
  --- Show suggestions while typing (false: only on `trigger()`).
  auto_trigger = true,
  --- Keys closer together than this wait for this much quiet (others: asked
  --- at once).
  debounce_ms = 60,
  --- Filetypes: `["*"] = true` enables all; `python = false` disables one.
  filetypes = { ["*"] = true },
  --- Buffers over this size get no suggestions.
  max_file_bytes = 1000000,
  --- No suggestions while the cursor is in a comment or a string
  --- (tree-sitter).
  disable_in_comments = false,
  --- Index the project of a file when it is opened, and update it on save.
  index_on_open = true,
  --- A project's root is the nearest folder with one of these, tried in
  --- order (an entry that is a list: markers of equal rank). A file in no
  --- project is never indexed.
  root_markers = {
    { ".git", ".hg", ".svn", ".jj" },
    {
      "pyproject.toml", "setup.py", "setup.cfg", "package.json", "go.mod",
      "Cargo.toml", "Gemfile", "pom.xml", "build.gradle", "composer.json",
      "deno.json", "CMakeLists.txt", "Makefile",
    },
  },
  --- Say how a project's first index goes (at each quarter) with
  --- vim.notify.
  notify_progress = true,
  --- While a suggestion is being made, show a sign at the end of the line.
  indicator = false,
  --- While the model loads (the first key waits for it), say so at the end
  --- of the line.
  loading_sign = true,
  --- Hide the suggestion while Neovim's popup menu or nvim-cmp's menu is
  --- open.
  hide_during_completion = true,
  --- When the engine cannot tell the type of the object before a dot, ask
  --- the buffer's language server (typeDefinition), waiting at most
  --- `lsp_timeout_ms`.
  lsp = true,
  lsp_timeout_ms = 300,
  --- Prepare the model and the prompt before the keystroke: on entering a
  --- buffer and after a move in insert mode without typing (both after
  --- `warm_delay_ms`), on entering insert mode and when typing pauses; each
  --- place once.
  warm = true,
  warm_delay_ms = 100,
  --- Default keys (insert mode); `false` disables one. Set only where free.
  keymaps = {
    accept = "<Tab>",
    accept_word = "<M-Right>",
    accept_line = "<M-Down>",
    dismiss = "<C-]>",
    next = "<M-]>",
    prev = "<M-[>",
    trigger = "<M-\\>",
  },
  --- Next edits (|repocontext-next-edit|): after a change in normal mode or
  --- on leaving insert mode, the same change offered at the next place (a
  --- sign, the new line beside the old). Its keys are normal mode's and
  --- taken only while one is shown; `false` disables one. Set only where
  --- free.
  next_edit = {
    enabled = true,
    --- Jump to the place; on its line: make the change.
    jump_or_apply = "<Tab>",
    dismiss = "<Esc>",
  },
}
--minidoc_replace_end
-- stylua: ignore end

M.options = vim.deepcopy(M.defaults)

--- Merge `opts` over the defaults after checking every key and type.
---@param opts table|nil
---@return table
function M.setup(opts)
  opts = opts or {}
  H.check_type("opts", opts, "table")
  H.check_keys(opts, M.defaults, "")
  local merged = vim.tbl_deep_extend("force", vim.deepcopy(M.defaults), opts)
  if opts.root_markers ~= nil then merged.root_markers = opts.root_markers end -- a list replaces
  H.check_type("auto_trigger", merged.auto_trigger, "boolean")
  H.check_type("debounce_ms", merged.debounce_ms, "number")
  H.check_type("filetypes", merged.filetypes, "table")
  H.check_type("max_file_bytes", merged.max_file_bytes, "number")
  H.check_type("disable_in_comments", merged.disable_in_comments, "boolean")
  H.check_type("index_on_open", merged.index_on_open, "boolean")
  H.check_type("notify_progress", merged.notify_progress, "boolean")
  H.check_type("root_markers", merged.root_markers, "table")
  for i, entry in ipairs(merged.root_markers) do
    local names = type(entry) == "table" and entry or { entry }
    for _, name in ipairs(names) do
      if type(name) ~= "string" then
        H.error(("`root_markers[%d]` should be a file name or a list of them, not %s"):format(i, type(name)))
      end
    end
  end
  H.check_type("indicator", merged.indicator, "boolean")
  H.check_type("loading_sign", merged.loading_sign, "boolean")
  H.check_type("hide_during_completion", merged.hide_during_completion, "boolean")
  H.check_type("lsp", merged.lsp, "boolean")
  H.check_type("lsp_timeout_ms", merged.lsp_timeout_ms, "number")
  H.check_type("warm", merged.warm, "boolean")
  H.check_type("warm_delay_ms", merged.warm_delay_ms, "number")
  H.check_type("keymaps", merged.keymaps, "table")
  for name, lhs in pairs(merged.keymaps) do
    if lhs ~= false and type(lhs) ~= "string" then
      H.error(("`keymaps.%s` should be a string or false, not %s"):format(name, type(lhs)))
    end
  end
  H.check_type("next_edit", merged.next_edit, "table")
  H.check_type("next_edit.enabled", merged.next_edit.enabled, "boolean")
  for _, name in ipairs({ "jump_or_apply", "dismiss" }) do
    local lhs = merged.next_edit[name]
    if lhs ~= false and type(lhs) ~= "string" then
      H.error(("`next_edit.%s` should be a string or false, not %s"):format(name, type(lhs)))
    end
  end
  for ft, on in pairs(merged.filetypes) do
    if type(on) ~= "boolean" then H.error(("`filetypes.%s` should be a boolean, not %s"):format(ft, type(on))) end
  end
  if merged.debounce_ms < 0 then H.error("`debounce_ms` should be 0 or more") end
  if merged.lsp_timeout_ms <= 0 then H.error("`lsp_timeout_ms` should be more than 0") end
  if merged.warm_delay_ms < 0 then H.error("`warm_delay_ms` should be 0 or more") end
  M.options = merged
  return merged
end

function H.error(msg) error("(repocontext) " .. msg, 0) end

function H.check_type(name, value, want)
  if type(value) ~= want then H.error(("`%s` should be a %s, not %s"):format(name, want, type(value))) end
end

function H.check_keys(opts, defaults, prefix)
  for key, value in pairs(opts) do
    local path = prefix .. key
    if defaults[key] == nil then
      require("repocontext.message").say(("unknown option `%s` is ignored"):format(path), vim.log.levels.WARN)
    elseif
      type(value) == "table"
      and type(defaults[key]) == "table"
      and key ~= "filetypes"
      and key ~= "root_markers"
    then
      H.check_keys(value, defaults[key], path .. ".")
    end
  end
end

return M
