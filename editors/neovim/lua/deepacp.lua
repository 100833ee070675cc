-- deepacp for Neovim's built-in LSP client (Neovim 0.7 or newer).
--
--   require("deepacp").setup({ init_options = { model = "anthropic:claude-sonnet-4-5" } })
--
-- :DeepacpEdit {instruction}        ask for a change to the current file
-- :'<,'>DeepacpEdit {instruction}   ... to the selected lines
-- :DeepacpAccept / :DeepacpReject   accept or reject the whole proposal
-- :DeepacpCancel                    stop a running edit
-- Review hunk by hunk with vim.lsp.buf.code_action() on a highlighted change.

local M = {}

M.config = {
  cmd = { "deepacp", "lsp" },
  init_options = {},
  filetypes = nil, -- nil: attach to every file buffer
}
M.client_id = nil
M.last = nil -- the result of the last edit: proposal id, files, hunk count, summary

local function notify(message, level)
  vim.notify("deepacp: " .. message, level or vim.log.levels.INFO)
end

function M.client()
  return M.client_id and vim.lsp.get_client_by_id(M.client_id) or nil
end

function M.attach(bufnr)
  bufnr = bufnr or vim.api.nvim_get_current_buf()
  if vim.bo[bufnr].buftype ~= "" then
    return
  end
  if M.client() == nil then
    M.client_id = vim.lsp.start_client({
      name = "deepacp",
      cmd = M.config.cmd,
      root_dir = vim.fn.getcwd(),
      init_options = M.config.init_options,
    })
  end
  if M.client_id then
    vim.lsp.buf_attach_client(bufnr, M.client_id)
  end
end

local function execute(command, arguments, on_result, sync)
  local client = M.client()
  if client == nil then
    notify("the language server is not running", vim.log.levels.ERROR)
    return nil
  end
  local params = { command = command, arguments = arguments }
  if sync then
    local response = client.request_sync("workspace/executeCommand", params, 600000, 0)
    if response == nil or response.err then
      notify(vim.inspect(response and response.err), vim.log.levels.ERROR)
      return nil
    end
    if on_result then
      on_result(response.result)
    end
    return response.result
  end
  client.request("workspace/executeCommand", params, function(err, result)
    if err then
      notify(err.message or vim.inspect(err), vim.log.levels.ERROR)
    elseif on_result then
      on_result(result)
    end
  end, 0)
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
  notify("working on: " .. instruction)
  return execute("deepacp.edit", { args }, function(result)
    if result and result.cancelled then
      notify("cancelled")
      return
    end
    M.last = result
    if result and result.proposal then
      notify(string.format("%d change(s) proposed: %s", result.hunks, result.summary or ""))
    else
      notify(result and result.summary or "no change proposed")
    end
  end, opts.sync)
end

local function proposal_action(title, bufnr)
  local client = M.client()
  local params = {
    textDocument = { uri = vim.uri_from_bufnr(bufnr) },
    range = { start = { line = 0, character = 0 }, ["end"] = { line = 0, character = 0 } },
    context = { diagnostics = {} },
  }
  local response = client.request_sync("textDocument/codeAction", params, 10000, bufnr)
  for _, action in ipairs((response and response.result) or {}) do
    if action.title == title then
      return action
    end
  end
  return nil
end

-- Apply a code action the way Neovim does: its edit natively, then its command.
local function apply_action(action)
  local client = M.client()
  if action.edit then
    vim.lsp.util.apply_workspace_edit(action.edit, client.offset_encoding or "utf-16")
  end
  if action.command then
    execute(action.command.command, action.command.arguments, nil, true)
  end
end

function M.accept()
  local action = proposal_action("deepacp: Accept proposal", 0)
  if action == nil then
    notify("no proposal to accept here", vim.log.levels.WARN)
    return false
  end
  apply_action(action)
  notify("proposal accepted (write the buffers to save it)")
  return true
end

function M.reject()
  if M.last and M.last.proposal then
    execute("deepacp.rejectProposal", { M.last.proposal }, function()
      notify("proposal rejected")
    end)
  end
end

function M.cancel()
  execute("deepacp.cancel", {}, nil, false)
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
  vim.api.nvim_create_user_command("DeepacpEdit", function(command)
    local range = nil
    if command.range > 0 then
      range = { command.line1, command.line2 }
    end
    M.edit(command.args, range)
  end, { nargs = "+", range = true, desc = "deepacp: ask for a change" })
  vim.api.nvim_create_user_command("DeepacpAccept", M.accept, { desc = "deepacp: accept the proposal" })
  vim.api.nvim_create_user_command("DeepacpReject", M.reject, { desc = "deepacp: reject the proposal" })
  vim.api.nvim_create_user_command("DeepacpCancel", M.cancel, { desc = "deepacp: stop the running edit" })
end

return M
