--- :RepoContext {subcommand} — looking things up by hand in the same index.
local M = {}
local message = require("repocontext.message")
local H = {}

--- Every subcommand: its name, its arguments, what it does and how it runs. `desc` and the
--- `---` comment above an entry are its text in doc/repocontext.txt (scripts/gen_help.py
--- writes it there, and tests/test_help.py checks that the help is what this table says).
M.subcommands = {
  --- The session keeps its searcher: models loaded, vectors in memory, the tree checked for
  --- changes beside each question (about 55 ms a question on Django's 45,750 chunks).
  {
    name = "search",
    args = "{query}",
    desc = "search the index; results in the quickfix list and through vim.ui.select (Telescope, fzf-lua...)",
    run = function(rest) H.search(rest) end,
  },
  {
    name = "context",
    desc = "the snippets a completion at the cursor gets, with source, score, tokens and why",
    run = function() H.context() end,
  },
  --- A function, method, class, type or constant; in JavaScript, TypeScript and Go a
  --- module-level variable too (`var ErrNotFound`, `const emailRegex`), in Python an
  --- UPPER_CASE one. A parameter or local variable (Python, JavaScript, TypeScript, Go, Rust,
  --- C, C++, Java, Lua, Ruby: the function around the cursor binds it, in the buffer as it is,
  --- saved or not): the binding that reaches the cursor. A name imported under another
  --- (`compute_tax as ct`): the definition of its own name, and a message that says so. A
  --- field (which the index does not hold) that the buffer declares: its declaration; a
  --- member read in its own type's code (`self.root`, `c.lines`) is that type's field before
  --- any function of the name. A keyword argument's name (`f(rate=r)` on `rate`): the
  --- parameter of the function called. A module in an import: its file. Where the index
  --- has none, the message says why: another spelling it has, or the module the buffer
  --- imports the name from (`fmt`, `os.path`).
  {
    name = "definition",
    desc = "jump to the definition of the word under the cursor, at the name",
    run = function() H.definition() end,
  },
  --- The index's graph: calls (on an object too), inherited bases, imports of it, the uses
  --- first; with fewer than 3 there, or for a type (its uses in signatures are not in the
  --- graph), the chunks that hold the name as a whole word follow, marked textual. Each is shown at the line and column where it uses the name. A
  --- parameter or local variable: the lines of its function that use it, flagged local (the
  --- index knows no locals: it gave every chunk of the project holding the word). A name
  --- imported under another (`compute_tax as ct`): the references of its own name, which the
  --- list's title shows. A field read in its own type's code (`self.root`, `c.lines`): the
  --- file's lines that use it as a member, then other files' chunks that read a `.root`. On a keyword (`func`, `def`, `return`) both commands say so instead.
  {
    name = "references",
    desc = "uses of the word under the cursor (quickfix and vim.ui.select)",
    run = function() H.references() end,
  },
  --- The places the engine found for the last edit (|repocontext-next-edit|), the buffer's
  --- nearest first, then the files the index links to the name; each entry's text is the
  --- change and the line as it would be.
  {
    name = "next",
    desc = "the next edit's remaining places, every file's, in the quickfix list (opened)",
    run = function() require("repocontext.nextedit").quickfix() end,
  },
  --- In detail: the index's files, its vectors in percent, when it was made and a run in
  --- progress; the engine's pid and memory; the generation model, the CPU and llama.cpp's
  --- build; the work done and what the gates hid; why the last suggestion showed nothing
  --- ("nothing shown at 12:03:04: hidden: the model was unsure (confidence 0.31 < 0.45)";
  --- |repocontext-hidden|); recent errors and the plugin's last messages whole.
  {
    name = "status",
    desc = "index, engine, models, CPU, recent latency and errors, in a scratch buffer",
    run = function() H.status() end,
  },
  --- They are the default, model_path, and those of Ollama, LM Studio and llama.cpp, with
  --- family, size and prompt layout; `measure` times the one in use, or the first whose name
  --- holds {name} (|repocontext-models|).
  {
    name = "model",
    args = "[measure [{name}]]",
    desc = "the generation models this machine has; measure: time one here",
    run = function(rest) H.model(rest) end,
  },
  { name = "reindex", desc = "index the project again (in the background)", run = function() H.rc().reindex() end },
  --- See |repocontext-roots|.
  {
    name = "root",
    args = "[{dir}]",
    desc = "use {dir} (default: the current directory) as the project root, and index it",
    run = function(rest) H.rc().set_root(rest) end,
  },
  --- See |repocontext-restart|.
  {
    name = "restart",
    desc = "start the engine's Python host again after it stopped",
    run = function() H.rc().restart() end,
  },
  { name = "toggle", desc = "enable / disable suggestions", run = function() H.rc().toggle() end },
}

--- The subcommands' names, in order.
function M.names()
  return vim.tbl_map(function(c) return c.name end, M.subcommands)
end

--- Run `:RepoContext {args}`.
---@param args string
function M.run(args)
  local sub, rest = args:match("^%s*(%S+)%s*(.-)%s*$")
  if not sub then return H.error("say what to do: " .. table.concat(M.names(), ", ")) end
  for _, command in ipairs(M.subcommands) do
    if command.name == sub then return command.run(rest) end
  end
  H.error(("unknown subcommand %q; use one of: %s"):format(sub, table.concat(M.names(), ", ")))
end

--- Completion for the command line.
function M.complete(arglead, cmdline)
  if cmdline:match("^%s*%S+%s+%S+%s") then return {} end
  return vim.tbl_filter(function(s) return s:find(arglead, 1, true) == 1 end, M.names())
end

-- Helpers ---------------------------------------------------------------------------------

function H.error(msg) message.say(msg, vim.log.levels.ERROR) end

function H.rc() return require("repocontext") end

function H.path()
  local name = vim.api.nvim_buf_get_name(0)
  return name ~= "" and name or vim.fn.getcwd() .. "/."
end

function H.to_items(result, word)
  local items = {}
  -- results of one name with different heads (`Value.from` of several `impl From<X>`) show
  -- their signature, as `repocontext search` does (search/results.py heads_to_show)
  local heads = {}
  for _, r in ipairs(result.results or {}) do
    if r.symbol and type(r.signature) == "string" then
      heads[r.symbol] = heads[r.symbol] or {}
      heads[r.symbol][r.signature] = true
    end
  end
  for _, r in ipairs(result.results or {}) do
    local text = r.symbol or r.kind
    if r.symbol and type(r.signature) == "string" and vim.tbl_count(heads[r.symbol]) > 1 then
      local head = vim.trim(r.signature:gsub("%s+", " "))
      text = ("%s  %s"):format(text, #head > 80 and (head:sub(1, 77) .. "...") or head)
    end
    local item = {
      filename = result.root .. "/" .. r.path,
      lnum = r.start_line,
      end_lnum = r.end_line,
      text = ("%s%s"):format(text, r.role ~= "source" and (" [" .. r.role .. "]") or ""),
    }
    if word then H.locate(item, word) end
    table.insert(items, item)
  end
  return items
end

--- Point `item` at the first line of its result that has `word` as a whole word, with its
--- column and text: a reference's result is the whole function (or block) that uses the
--- name, which starts at its `def`, and the use is further down. The buffer's text where the
--- file is loaded (what the user sees), else the file's.
function H.locate(item, word)
  local buf = H.buffer_of(item.filename)
  local lines
  if buf and vim.api.nvim_buf_is_loaded(buf) then
    lines = vim.api.nvim_buf_get_lines(buf, item.lnum - 1, item.end_lnum, false)
  else
    local ok, head = pcall(vim.fn.readfile, item.filename, "", item.end_lnum)
    lines = ok and vim.list_slice(head, item.lnum) or {}
  end
  local whole = vim.regex([[\V\C\<]] .. word:gsub([[\]], [[\\]]) .. [[\>]])
  for i, line in ipairs(lines) do
    local from = whole:match_str(line)
    if from then
      item.lnum, item.col = item.lnum + i - 1, from + 1
      item.text = ("%s: %s"):format(item.text, vim.trim(line))
      return
    end
  end
end

--- The buffer of `filename` (made a full path), if there is one.
function H.buffer_of(filename)
  local path = vim.fs.normalize(vim.fn.fnamemodify(filename, ":p"))
  for _, b in ipairs(vim.api.nvim_list_bufs()) do
    if vim.api.nvim_buf_get_name(b) == path then return b, path end
  end
  return nil, path
end

--- The results in the quickfix list and a picker. `word`: each result is a use of it, shown at
--- the line that uses it.
function H.show_list(title, result, word)
  local items = H.to_items(result, word)
  vim.fn.setqflist({}, " ", { title = title, items = items })
  if #items == 0 then
    -- why, where the search says (`notes`: nothing near enough in meaning, vectors not made yet)
    local why = (result.notes or {})[1]
    return message.say("nothing found for " .. title .. (why and (": " .. why) or ""))
  end
  vim.ui.select(items, {
    -- one line: a long query's title wrapped into several above the list
    prompt = message.fit(title, vim.o.columns - 1),
    format_item = function(it) return ("%s:%d  %s"):format(vim.fn.fnamemodify(it.filename, ":."), it.lnum, it.text) end,
  }, function(choice)
    if choice then M.jump(choice.filename, choice.lnum, choice.col) end
  end)
end

--- Show `filename` at line `lnum` (and byte column `col`, 1-based) in the current window: the buffer already loaded if there is
--- one (modified or not: its unsaved text is what the user is working on), else the file.
--- A failure is a message, never an error in the user's face.
function M.jump(filename, lnum, col)
  local target, path = H.buffer_of(filename)
  local ok, err = true, nil
  if target and target ~= vim.api.nvim_get_current_buf() then
    -- pcall: E37 ('nohidden' and the current buffer modified), or an autocmd's error
    ok, err = pcall(vim.api.nvim_win_set_buf, 0, target)
    if not ok then
      ok, err = pcall(vim.cmd, "hide buffer " .. target)
    end
  elseif not target then
    ok, err = pcall(vim.cmd, "hide edit " .. vim.fn.fnameescape(path)) -- pcall: as above
  end
  if not ok then
    return H.error(
      ("cannot open %s: %s"):format(vim.fn.fnamemodify(path, ":~:."), (tostring(err):gsub("^.-Vim%(%a+%):", "")))
    )
  end
  local last = vim.api.nvim_buf_line_count(0)
  vim.api.nvim_win_set_cursor(0, { math.max(1, math.min(lnum, last)), math.max(0, (col or 1) - 1) })
end

function H.search(query)
  if query == "" then return H.error("usage: :RepoContext search {query}") end
  H.rc().request("search", { path = H.path(), query = query }, function(result, err)
    if err then return H.error(err) end
    H.show_list("search: " .. query, result)
  end)
end

function H.word() return vim.fn.expand("<cword>") end

--- A look-up's request: the word under the cursor, and the buffer with the cursor, so that the
--- tree can tell a keyword or a local name (search/lookups.py) from a name for the index.
function H.lookup(word)
  local row, col = unpack(vim.api.nvim_win_get_cursor(0))
  local text = table.concat(vim.api.nvim_buf_get_lines(0, 0, -1, false), "\n")
  return { path = H.path(), word = word, text = text, line = row, col = col }
end

function H.definition()
  local word = H.word()
  if word == "" then return H.error("no word under the cursor") end
  H.rc().request("definition", H.lookup(word), function(result, err)
    if err then return H.error(err) end
    local first = (result.results or {})[1]
    if not first then
      -- the look-up's own reason where it gives one (another spelling, the module it comes from)
      return message.say((result.notes or {})[1] or ("no definition of " .. word .. " in the index"))
    end
    -- on the name where the definition's lines show it (a local's binding, a function's head)
    local item =
      { filename = result.root .. "/" .. first.path, lnum = first.start_line, end_lnum = first.end_line, text = "" }
    H.locate(item, word)
    local own = (first.symbol or ""):match("[%w_$]+$")
    local renamed = not item.col and own and own ~= word
    if renamed then H.locate(item, own) end
    M.jump(item.filename, item.lnum, item.col)
    -- a name imported under another lands on the other: the look-up's note says so
    if renamed and (result.notes or {})[1] then message.say(result.notes[1]) end
  end)
end

function H.references()
  local word = H.word()
  if word == "" then return H.error("no word under the cursor") end
  H.rc().request("references", H.lookup(word), function(result, err)
    if err then return H.error(err) end
    -- a name imported under another (`compute_tax as ct`) is answered by its own name
    local own = result.query and result.query ~= word and result.query
    H.show_list("references: " .. word .. (own and (" (" .. own .. ")") or ""), result, own or word)
  end)
end

function H.scratch(title, lines)
  vim.cmd("botright new")
  local buf = vim.api.nvim_get_current_buf()
  vim.bo[buf].buftype, vim.bo[buf].bufhidden, vim.bo[buf].swapfile = "nofile", "wipe", false
  pcall(vim.api.nvim_buf_set_name, buf, title) -- pcall: a buffer of that name may exist
  vim.api.nvim_buf_set_lines(buf, 0, -1, false, lines)
  vim.bo[buf].modifiable = false
  return buf
end

function H.model(rest)
  local measure = rest:match("^measure%s*(.-)$")
  if rest ~= "" and not measure then return H.error("say `model` or `model measure [{name}]`") end
  if measure then message.say("repocontext: loading and timing the model, a few seconds") end
  H.rc().request("models", { path = H.path(), measure = measure }, function(r, err)
    if err then return H.error(err) end
    H.scratch("repocontext://models", vim.split(r.report, "\n"))
  end)
end

function H.context()
  local row, col = unpack(vim.api.nvim_win_get_cursor(0))
  local text = table.concat(vim.api.nvim_buf_get_lines(0, 0, -1, false), "\n")
  local payload =
    { path = H.path(), line = row, col = col, text = text, receiver_location = H.rc()._receiver_location(0, row, col) }
  H.rc().request("context", payload, function(p, err)
    if err then return H.error(err) end
    local lines = { ("context for %s:%d:%d"):format(p.file, p.line, p.col) }
    if not p.retrieved then
      table.insert(lines, "no retrieval: " .. (p.skip_reason or ""))
    else
      table.insert(lines, "retrieved because " .. table.concat(p.reasons or {}, "; "))
      if p.receiver then
        table.insert(
          lines,
          ("%s is %s"):format(
            p.receiver.expression,
            #p.receiver.types > 0 and table.concat(p.receiver.types, ", ") or "of a type not known"
          )
        )
      end
      table.insert(lines, ("%d of %d tokens"):format(p.tokens, p.budget))
      for i, s in ipairs(p.snippets) do
        table.insert(lines, "")
        table.insert(
          lines,
          ("%d. %s:%d-%d %s [%s] score %.2f, %d tokens: %s"):format(
            i,
            s.path,
            s.start_line,
            s.end_line,
            s.symbol or "",
            s.source,
            s.score,
            s.tokens,
            s.why or ""
          )
        )
        for _, l in ipairs(vim.split(s.text, "\n", { plain = true })) do
          table.insert(lines, "    " .. l)
        end
      end
    end
    H.scratch("repocontext://context", lines)
  end)
end

--- The engine's process: its pid and, where /proc says, its resident memory.
function H.host_line()
  local pid = require("repocontext.host").pid()
  if not pid then return "engine: not started" end
  local ok, status = pcall(vim.fn.readfile, ("/proc/%d/status"):format(pid))
  for _, line in ipairs(ok and status or {}) do
    local kb = line:match("^VmRSS:%s+(%d+)")
    if kb then return ("engine: pid %d, %d MB resident"):format(pid, math.floor(tonumber(kb) / 1024)) end
  end
  return ("engine: pid %d"):format(pid)
end

function H.status()
  H.rc().request("status", { path = H.path() }, function(s, err)
    if err then return H.scratch("repocontext://status", { "engine: " .. err, unpack(H.recent_messages()) }) end
    local lines = { "root:  " .. (s.root or "none: this file is in no project (:RepoContext root {dir})") }
    if s.index then table.insert(lines, "index: " .. s.index) end
    if s.indexed then
      table.insert(
        lines,
        ("files: %d, chunks: %d, symbols: %d, skipped: %d"):format(s.files, s.chunks, s.symbols, s.skipped)
      )
      table.insert(
        lines,
        ("vectors: %d of %d, %d%% (%s)"):format(
          s.vectors.embedded,
          s.vectors.chunks,
          s.vectors.chunks > 0 and math.floor(100 * s.vectors.embedded / s.vectors.chunks) or 100,
          s.vectors.model or "none yet"
        )
      )
      if (s.vectors.windows_pending or 0) > 0 and (s.vectors.missing or 0) == 0 then
        table.insert(
          lines,
          ("later windows: %d source chunks not yet read past the model's first window"):format(
            s.vectors.windows_pending
          )
        )
      end
      if s.indexed_at then
        table.insert(lines, "indexed at: " .. os.date("%Y-%m-%d %H:%M:%S", math.floor(s.indexed_at)))
      end
    elseif s.root then
      table.insert(lines, "not indexed yet: :RepoContext reindex")
    end
    local running = require("repocontext.suggestion").progress
    if running and (running.total or 0) > 0 then
      table.insert(lines, ("running: %s %d of %d"):format(running.phase, running.done, running.total))
    end
    table.insert(lines, H.host_line())
    table.insert(lines, "generation: " .. (s.generation.server or s.generation.model))
    if s.engine then
      table.insert(lines, "cpu: " .. s.engine.cpu.summary)
      table.insert(lines, "llama.cpp: " .. s.engine.llama_cpp)
      table.insert(lines, s.engine.extra_buffers.reason)
    end
    table.insert(
      lines,
      "recent completion latency (median): "
        .. (s.recent_latency_ms and (("%.0f ms"):format(s.recent_latency_ms)) or "none yet")
    )
    if s.work then
      local w = s.work.warming
      table.insert(
        lines,
        ("work: %d completions, %d prompt tokens evaluated; warmed %d times (%d tokens, %d unused)"):format(
          s.work.completions,
          s.work.tokens_evaluated,
          w.count,
          w.evaluated,
          w.wasted
        )
      )
    end
    if s.work and s.work.suggestions then table.insert(lines, H.outcomes(s.work.suggestions)) end
    local hidden = s.work and s.work.last_hidden
    local here = require("repocontext.suggestion").hidden
    if here and here.not_asked then hidden = here end -- the editor's own "no", newer than a reply
    if hidden then
      table.insert(lines, ("nothing shown at %s: %s"):format(os.date("%H:%M:%S", math.floor(hidden.at)), hidden.reason))
    end
    for _, e in ipairs(s.recent_errors or {}) do
      table.insert(lines, "recent error: " .. e)
    end
    vim.list_extend(lines, H.recent_messages())
    H.scratch("repocontext://status", lines)
  end)
end

--- The plugin's last messages, whole (the message line shows them cut to its width).
function H.recent_messages()
  local out = {}
  for _, m in ipairs(message.recent) do
    table.insert(out, ("message %s: %s"):format(os.date("%H:%M:%S", m.time), m.text))
  end
  return out
end

--- "suggestions: 12 shown (2 cut), 5 hidden: confidence 4, syntax 1; 3 empty" from the counts
--- the engine keeps of what each finished suggestion became (see :h repocontext-gates).
function H.outcomes(counts)
  local shown, cut, hidden, why = counts.shown or 0, 0, 0, {}
  for outcome, n in pairs(counts) do
    local gate, action = outcome:match("^(%a+)%-(%a+)$")
    if action == "cut" then
      shown, cut = shown + n, cut + n
    elseif action == "drop" then
      hidden = hidden + n
      why[#why + 1] = ("%s %d"):format(gate, n)
    end
  end
  table.sort(why)
  local line = ("suggestions: %d shown"):format(shown) .. (cut > 0 and (" (%d cut)"):format(cut) or "")
  if hidden > 0 then line = line .. (", %d hidden: %s"):format(hidden, table.concat(why, ", ")) end
  if (counts.nothing or 0) > 0 then line = line .. ("; %d empty"):format(counts.nothing) end
  return line
end

return M
