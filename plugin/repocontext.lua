-- The :RepoContext command, available before setup(); everything else starts in setup().
if vim.g.loaded_repocontext then return end
vim.g.loaded_repocontext = true

vim.api.nvim_create_user_command("RepoContext", function(opts) require("repocontext.commands").run(opts.args) end, {
  nargs = "*",
  desc = "[repocontext] " .. table.concat(require("repocontext.commands").names(), ", "),
  complete = function(arglead, cmdline) return require("repocontext.commands").complete(arglead, cmdline) end,
})
