-- deepacp for Neovim's built-in LSP client (Neovim 0.7 or newer).
--
--   require("deepacp").setup({ init_options = { model = "anthropic:claude-sonnet-4-5" } })
--
-- :DeepacpEdit {instruction}        ask for a change to the current file
-- :'<,'>DeepacpEdit {instruction}   ... to the selected lines
-- :DeepacpAccept / :DeepacpReject   accept or reject everything still pending in the proposal
-- :DeepacpCancel                    stop a running edit
-- Review hunk by hunk with vim.lsp.buf.code_action() on a highlighted change.
--
-- One server runs per project: the nearest folder above the file that holds one of
-- `root_markers` (the file's own folder when none does). Accepted changes go into buffers;
-- nothing is saved until you :write. The server says how each request ended.

local M = {}

M.config = {
  cmd = { "deepacp", "lsp" },
  init_options = {},
  filetypes = nil, -- nil: attach to every file buffer
  root_markers = { ".git", ".hg", ".jj", ".deepacp", "pyproject.toml", "package.json", "Cargo.toml", "go.mod" },
}
M.last = nil -- the result of the last edit: proposal id, files, hunk count, summary

local uv = vim.uv or vim.loop
local current_api = vim.fn.has("nvim-0.11") == 1 -- client methods are called with `:` there
local started = {} -- Neovim 0.7 only: project folder -> client id (vim.lsp.start tracks it later)
local views = {} -- files the server showed (a proposal's diff): read, not edited, so no server

local function notify(message, level)
  vim.notify("deepacp: " .. message, level or vim.log.levels.INFO)
end

local function buffer(bufnr)
  return (bufnr == nil or bufnr == 0) and vim.api.nvim_get_current_buf() or bufnr
end

-- The project folder of a file: the nearest folder above it holding a root marker.
function M.root(path)
  local folder = vim.fn.fnamemodify(path, ":p:h")
  local current = folder
  while true do
    for _, marker in ipairs(M.config.root_markers) do
      if uv.fs_stat(current .. "/" .. marker) then
        return current
      end
    end
    local parent = vim.fn.fnamemodify(current, ":h")
    if parent == current then
      return folder
    end
    current = parent
  end
end

-- The deepacp client of a buffer (the current one by default).
function M.client(bufnr)
  bufnr = buffer(bufnr)
  if vim.lsp.get_clients then
    return vim.lsp.get_clients({ bufnr = bufnr, name = "deepacp" })[1]
  end
  for _, client in pairs(vim.lsp.buf_get_clients(bufnr)) do
    if client.name == "deepacp" then
      return client
    end
  end
  return nil
end

function M.attach(bufnr)
  bufnr = buffer(bufnr)
  local name = vim.api.nvim_buf_get_name(bufnr)
  if vim.bo[bufnr].buftype ~= "" or name == "" or views[name] then
    return nil
  end
  local root = M.root(name)
  local config = {
    name = "deepacp",
    cmd = M.config.cmd,
    root_dir = root,
    workspace_folders = { { uri = vim.uri_from_fname(root), name = root } },
    init_options = M.config.init_options,
    handlers = {
      ["window/showDocument"] = function(err, result, ctx, config)
        views[vim.uri_to_fname(result.uri)] = true
        return vim.lsp.handlers["window/showDocument"](err, result, ctx, config)
      end,
    },
  }
  if vim.lsp.start then -- reuses the client of the same project
    return vim.lsp.start(config, { bufnr = bufnr })
  end
  local id = started[root]
  if id == nil or vim.lsp.get_client_by_id(id) == nil then
    id = vim.lsp.start_client(config)
    started[root] = id
  end
  if id then
    vim.lsp.buf_attach_client(bufnr, id)
  end
  return id
end

local function request(client, method, params, handler, bufnr)
  if current_api then
    return client:request(method, params, handler, bufnr)
  end
  return client.request(method, params, handler, bufnr)
end

local function request_sync(client, method, params, timeout, bufnr)
  if current_api then
    return client:request_sync(method, params, timeout, bufnr)
  end
  return client.request_sync(method, params, timeout, bufnr)
end

local function execute(command, arguments, on_result, sync)
  local bufnr = vim.api.nvim_get_current_buf()
  local client = M.client(bufnr)
  if client == nil then
    notify("no language server for this buffer (is it a file?)", vim.log.levels.ERROR)
    return nil
  end
  local params = { command = command, arguments = arguments }
  if sync then
    local response, err = request_sync(client, "workspace/executeCommand", params, 600000, bufnr)
    if response == nil or response.err then
      notify((response and response.err.message) or err or "no answer", vim.log.levels.ERROR)
      return nil
    end
    if on_result then
      on_result(response.result)
    end
    return response.result
  end
  request(client, "workspace/executeCommand", params, function(err, result)
    if err then
      notify(err.message or vim.inspect(err), vim.log.levels.ERROR)
    elseif on_result then
      on_result(result)
    end
  end, bufnr)
end

-- Ask for a change. `range` is {first_line, last_line} (1-based), or nil for the whole file.
function M.edit(instruction, range, opts)
  opts = opts or {}
  local args = { uri = vim.uri_from_bufnr(0), instruction = instruction }
  if range then
    args.range = {
      start = { line = range[1] - 1, character = 0 },
      ["end"] = { line = range[2] - 1, character = 0 },
    }
  end
  notify("working on: " .. tostring(instruction))
  return execute("deepacp.edit", { args }, function(result)
    M.last = result
  end, opts.sync)
end

-- Accept (or reject) everything still pending in this project's proposal, whichever file
-- it is in; the server says what it applied and what is left where.
function M.accept(opts)
  return execute("deepacp.acceptProposal", {}, nil, (opts or {}).sync)
end

function M.reject(opts)
  return execute("deepacp.rejectProposal", {}, nil, (opts or {}).sync)
end

function M.cancel()
  return execute("deepacp.cancel", {}, nil, false)
end

function M.setup(opts)
  M.config = vim.tbl_deep_extend("force", M.config, opts or {})
  local group = vim.api.nvim_create_augroup("deepacp", { clear = true })
  vim.api.nvim_create_autocmd({ "BufReadPost", "BufNewFile" }, {
    group = group,
    callback = function(args)
      local filetypes = M.config.filetypes
      if filetypes == nil or vim.tbl_contains(filetypes, vim.bo[args.buf].filetype) then
        M.attach(args.buf)
      end
    end,
  })
  vim.api.nvim_create_autocmd("BufWritePre", {
    group = group,
    callback = function(args)
      -- A file deepacp proposed can be in a folder that does not exist yet.
      local folder = vim.fn.fnamemodify(args.match, ":p:h")
      if M.client(args.buf) ~= nil and vim.fn.isdirectory(folder) == 0 then
        vim.fn.mkdir(folder, "p")
      end
    end,
  })
  vim.api.nvim_create_user_command("DeepacpEdit", function(command)
    local range = nil
    if command.range > 0 then
      range = { command.line1, command.line2 }
    end
    M.edit(command.args, range)
  end, { nargs = "+", range = true, desc = "deepacp: ask for a change" })
  vim.api.nvim_create_user_command("DeepacpAccept", function()
    M.accept()
  end, { desc = "deepacp: accept everything pending in the proposal" })
  vim.api.nvim_create_user_command("DeepacpReject", function()
    M.reject()
  end, { desc = "deepacp: reject everything pending in the proposal" })
  vim.api.nvim_create_user_command("DeepacpCancel", M.cancel, { desc = "deepacp: stop the running edit" })
end

return M
