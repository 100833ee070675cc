-- Driven by tests/e2e/test_neovim.py: the shipped module, a real Neovim, a real server.
-- DEEPACP_TEST_SCENARIO names one of the scenarios below. Each drives Neovim as a user
-- would (commands, the native code-action menu) and records what the user would see —
-- messages, hints, buffers, files on disk — in a JSON report that the test asserts on.
local env = os.getenv
local report = { messages = {}, version = vim.version().minor }
local deepacp

local function finish(error_text)
  report.error = error_text
  local file = io.open(env("DEEPACP_TEST_RESULT"), "w")
  file:write(vim.json.encode(report))
  file:close()
  vim.cmd(error_text and "cquit 1" or "qall!")
end

local function wait(what, predicate)
  if not vim.wait(30000, predicate, 20) then
    error("timed out waiting for " .. what)
  end
end

-- What the user is told, by the module (vim.notify) or by the server (window/showMessage).
vim.notify = function(message)
  table.insert(report.messages, message)
end
vim.lsp.handlers["window/showMessage"] = function(_, result)
  table.insert(report.messages, result.message)
  return vim.NIL
end

local function said(pattern)
  for _, message in ipairs(report.messages) do
    if message:find(pattern, 1, true) then
      return message
    end
  end
  return nil
end

local function on_disk(path)
  local file = io.open(path, "rb")
  if file == nil then
    return vim.NIL -- JSON null: not on disk
  end
  local bytes = file:read("*a")
  file:close()
  return bytes
end

local function open(path)
  vim.cmd("edit " .. vim.fn.fnameescape(path))
  wait("the language server of " .. path, function()
    local client = deepacp.client()
    return client ~= nil and client.initialized
  end)
end

local function hints(bufnr)
  local out = {}
  for _, d in ipairs(vim.diagnostic.get(bufnr or 0)) do
    if d.source == "deepacp" then
      table.insert(out, { line = d.lnum + 1, message = d.message })
    end
  end
  table.sort(out, function(a, b)
    return a.line < b.line
  end)
  return out
end

-- Open the code-action menu on `line` as the user would and pick `title` (nil: pick
-- nothing); returns the titles offered.
local function code_action(line, title)
  vim.api.nvim_win_set_cursor(0, { line, 0 })
  local offered = {}
  vim.ui.select = function(items, _, on_choice)
    local chosen = nil
    for index, item in ipairs(items) do
      local action = item.action or item[2]
      table.insert(offered, action.title)
      if action.title == title then
        chosen = index
      end
    end
    on_choice(chosen and items[chosen] or nil, chosen)
  end
  vim.lsp.buf.code_action()
  wait("the code-action menu", function()
    return #offered > 0
  end)
  return offered
end

local function command(name, arguments)
  local responses = vim.lsp.buf_request_sync(0, "workspace/executeCommand", {
    command = name,
    arguments = arguments,
  }, 20000)
  local _, response = next(responses or {})
  if response == nil then
    return { err = { message = "no answer" } }
  end
  return { err = response.err or response.error, result = response.result } -- 0.7: `error`
end

local function lines(bufnr)
  return vim.api.nvim_buf_get_lines(bufnr or 0, 0, -1, false)
end

-- How many of the messages so far contain any of `patterns`.
local function count(...)
  local n = 0
  for _, message in ipairs(report.messages) do
    for _, pattern in ipairs({ ... }) do
      if message:find(pattern, 1, true) then
        n = n + 1
        break
      end
    end
  end
  return n
end

local scenarios = {}

-- The proposal is made against the unsaved buffer and reaches the disk only on :write.
function scenarios.unsaved()
  open(env("DEEPACP_TEST_FILE"))
  vim.api.nvim_buf_set_lines(0, 0, 1, false, { "VERSION = '1.0.0-unsaved'" })
  report.result = deepacp.edit("bump the version", nil, { sync = true })
  deepacp.accept({ sync = true })
  report.before_write = on_disk(env("DEEPACP_TEST_FILE"))
  vim.cmd("write")
end

-- Four files, hunk by hunk: hints and hover, a rejected hunk, a stale one, a created file
-- accepted into its open buffer, and :DeepacpAccept for the rest.
function scenarios.review()
  local root = env("DEEPACP_TEST_ROOT")
  open(root .. "/calc.py")
  local calc = vim.api.nvim_get_current_buf()
  report.result = deepacp.edit("tidy the helpers", nil, { sync = true })
  report.edit_messages = vim.deepcopy(report.messages)
  wait("hints in calc.py", function()
    return #hints(calc) == 2
  end)
  report.hints = hints(calc)
  local util = vim.uri_to_bufnr(vim.uri_from_fname(root .. "/util.py"))
  wait("hints in util.py, which is not open", function()
    return #hints(util) > 0
  end)
  report.util_hints = #hints(util)
  local hovered = vim.lsp.buf_request_sync(calc, "textDocument/hover", {
    textDocument = { uri = vim.uri_from_bufnr(calc) },
    position = { line = 1, character = 4 },
  }, 10000)
  local _, answer = next(hovered)
  report.hover = answer.result.contents.value

  code_action(2, "deepacp: Reject hunk")
  wait("the rejected hunk's hint to go", function()
    return #hints(calc) == 1
  end)
  vim.api.nvim_buf_set_lines(calc, 4, 5, false, { "def sub(a, b, c=0):" })
  wait("the stale hint", function()
    local left = hints(calc)
    return #left == 1 and left[1].message:find("stale", 1, true) ~= nil
  end)
  report.stale_hint = hints(calc)[1]
  report.stale_actions = code_action(5, nil)

  open(root .. "/notes/todo.md") -- not on disk yet: Neovim opens it as one empty line
  wait("the new file's hint", function()
    return #hints() == 1
  end)
  code_action(1, "deepacp: Accept this hunk")
  wait("the new file's text", function()
    return lines()[1] == "- test the helpers"
  end)
  report.todo_before_write = on_disk(root .. "/notes/todo.md")
  vim.cmd("write")

  vim.cmd("buffer " .. calc)
  report.messages = {}
  deepacp.accept({ sync = true })
  report.accept_messages = vim.deepcopy(report.messages)
  report.new_before_write = on_disk(root .. "/docs/new.md")
  report.util_before_write = on_disk(root .. "/util.py")
  vim.cmd("wall")
  report.messages = {}
  deepacp.accept({ sync = true })
  report.accept_again = vim.deepcopy(report.messages)
end

-- Requests that must be refused before any model call, and one server per project.
function scenarios.refusals()
  local a, b = env("DEEPACP_TEST_ROOT"), env("DEEPACP_OTHER_ROOT")
  open(a .. "/a.py")
  local first = deepacp.client()
  local uri = vim.uri_from_bufnr(0)
  local requests = {
    outside = { { uri = vim.uri_from_fname(b .. "/b.py"), instruction = "tidy" } },
    missing = { { uri = vim.uri_from_fname(a .. "/missing.py"), instruction = "tidy" } },
    empty = { { uri = uri, instruction = "  " } },
    number = { { uri = uri, instruction = 42 } },
    no_instruction = { { uri = uri } },
    bare_number = { 42 },
  }
  report.errors = {}
  for name, arguments in pairs(requests) do
    local response = command("deepacp.edit", arguments)
    report.errors[name] = response.err and response.err.message or "accepted"
  end
  report.messages = {}
  deepacp.edit(" ", nil, { sync = true }) -- through the module: the user sees the reason
  report.module_error = report.messages[#report.messages]
  open(b .. "/b.py")
  local second = deepacp.client()
  report.roots = { first.config.root_dir, second.config.root_dir }
  report.same_client = first.id == second.id
end

-- A request the agent answers without a change is announced once.
function scenarios.no_change()
  open(env("DEEPACP_TEST_FILE"))
  report.result = deepacp.edit("bump the version", nil, { sync = true })
end

-- "Show diff" from the code-action menu shows the diff on any Neovim.
function scenarios.show_diff()
  open(env("DEEPACP_TEST_FILE"))
  deepacp.edit("bump the version", nil, { sync = true })
  local capabilities = vim.lsp.protocol.make_client_capabilities()
  report.show_document = (capabilities.window.showDocument or {}).support == true
  report.messages = {}
  code_action(1, "deepacp: Show diff")
  wait("the diff", function()
    return said("@@") ~= nil or vim.api.nvim_buf_get_name(0):match("%.diff$") ~= nil
  end)
  report.diff_buffer = vim.api.nvim_buf_get_name(0):match("%.diff$") and lines() or nil
  -- Every server started so far, initialized or not (client ids count up from 1).
  report.server_roots = {}
  for id = 1, 10 do
    local client = vim.lsp.get_client_by_id(id)
    if client ~= nil then
      table.insert(report.server_roots, client.config.root_dir)
    end
  end
end

-- A hunk appended at the end of the file, beside one at the top: the menu on the last line
-- offers it on its own, and accepting it writes exactly what the agent wrote there.
function scenarios.append_one()
  open(env("DEEPACP_TEST_FILE"))
  report.result = deepacp.edit("add two", nil, { sync = true })
  wait("two hints", function()
    return #hints() == 2
  end)
  report.hints = hints()
  local last = vim.api.nvim_buf_line_count(0)
  report.last_line_actions = code_action(last, "deepacp: Accept this hunk")
  if vim.tbl_contains(report.last_line_actions, "deepacp: Accept this hunk") then
    wait("the appended lines and one hint left", function()
      return #lines() > last and #hints() == 1
    end)
  end
  report.hints_after = hints()
  vim.cmd("write")
end

-- A proposal that only appends, accepted whole (:DeepacpAccept), then :write.
function scenarios.append_all()
  open(env("DEEPACP_TEST_FILE"))
  local before = #lines()
  deepacp.edit("add two", nil, { sync = true })
  deepacp.accept({ sync = true })
  wait("the appended lines", function()
    return #lines() > before
  end)
  report.buffer = lines()
  vim.cmd("write")
end

-- The user adds a line above a proposed hunk and edits inside it, rejects it from the menu
-- on the line they edited, and asks for the next edit: the model hears where it is now.
function scenarios.moved_note()
  open(env("DEEPACP_TEST_FILE"))
  deepacp.edit("return two", nil, { sync = true })
  wait("the hint", function()
    return #hints() == 1
  end)
  report.hint = hints()[1]
  vim.api.nvim_buf_set_lines(0, 0, 0, false, { "import os" })
  vim.api.nvim_buf_set_lines(0, 2, 3, false, { "    return 111" })
  wait("the stale hint", function()
    local now = hints()
    return #now == 1 and now[1].message:find("stale", 1, true) ~= nil
  end)
  report.stale_hint = hints()[1]
  local title = "deepacp: reject hunk (the text changed since it was proposed)"
  report.actions = code_action(3, title)
  if vim.tbl_contains(report.actions, title) then
    wait("the rejected hunk's hint to go", function()
      return #hints() == 0
    end)
  end
  deepacp.edit("and the next thing", nil, { sync = true })
end

-- calc.py open, with the proposal of "document sub" made; the messages so far forgotten.
local function sub_documented()
  local root = env("DEEPACP_TEST_ROOT")
  open(root .. "/calc.py")
  deepacp.edit("document sub", nil, { sync = true })
  report.messages = {}
end

-- Once both accepts have their outcome: keep the messages, and save every buffer.
local function both_outcomes_saved()
  wait("both accepts' outcomes", function()
    return count("not saved yet", "already being applied") >= 2
  end)
  report.accept_messages = vim.deepcopy(report.messages)
  vim.cmd("wall")
end

-- :DeepacpAccept pressed twice in one burst: the proposal is applied once.
function scenarios.double_accept()
  sub_documented()
  vim.cmd("DeepacpAccept")
  vim.cmd("DeepacpAccept")
  both_outcomes_saved()
  report.messages = {}
  deepacp.accept({ sync = true }) -- once it has landed
  report.accept_after = vim.deepcopy(report.messages)
end

-- The editor slow to answer: while it holds the first edit, the key is pressed again.
function scenarios.slow_accept()
  sub_documented()
  report.edits = 0
  local apply = vim.lsp.handlers["workspace/applyEdit"]
  vim.lsp.handlers["workspace/applyEdit"] = function(...)
    report.edits = report.edits + 1
    if report.edits == 1 then
      vim.cmd("DeepacpAccept")
      vim.wait(10000, function()
        return said("already being applied") ~= nil or report.edits > 1
      end, 10)
    end
    return apply(...)
  end
  vim.cmd("DeepacpAccept")
  both_outcomes_saved()
end

-- Two edits at once: the one that ends last keeps the other's proposal beside its own.
function scenarios.two_edits()
  local root = env("DEEPACP_TEST_ROOT")
  open(root .. "/calc.py")
  deepacp.edit("ALPHA check sub") -- runs on
  wait("ALPHA's edit", function()
    local file = io.open(env("DEEPACP_TEST_RECORD"), "r")
    if file == nil then
      return false
    end
    local count = #vim.split(file:read("*a"), "\n", { trimempty = true })
    file:close()
    return count >= 2
  end)
  deepacp.edit("BETA swap add", nil, { sync = true })
  deepacp.cancel() -- ALPHA ends last, its edit kept
  wait("ALPHA's outcome", function()
    return said("cancelled; the 1 change") ~= nil
  end)
  report.hints = hints()
  report.announced = said("cancelled; the 1 change")
  report.titles = code_action(2, nil)
  report.messages = {}
  deepacp.accept({ sync = true })
  deepacp.accept({ sync = true })
  wait("both accepts' outcomes", function()
    return count("not saved yet", "nothing left", "nothing accepted") >= 2
  end)
  vim.cmd("write")
end

local ok, err = pcall(function()
  vim.opt.runtimepath:prepend(env("DEEPACP_NVIM_RTP"))
  deepacp = require("deepacp")
  deepacp.setup({
    cmd = { env("DEEPACP_BIN"), "lsp" },
    init_options = { model = env("DEEPACP_TEST_MODEL") },
  })
  scenarios[env("DEEPACP_TEST_SCENARIO")]()
  if vim.fn.has("nvim-0.10") == 1 then
    vim.cmd("checkhealth vim.deprecated")
    report.deprecated = table.concat(lines(), "\n")
  end
end)
finish(not ok and tostring(err) or nil)
