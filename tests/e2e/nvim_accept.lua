-- Driven by tests/e2e/test_neovim.py: the shipped module, a real Neovim, a real server.
local function fail(message)
  local file = io.open(os.getenv("DEEPACP_TEST_RESULT"), "w")
  file:write("FAIL: " .. message)
  file:close()
  vim.cmd("cquit 1")
end

local ok, err = pcall(function()
  vim.opt.runtimepath:prepend(os.getenv("DEEPACP_NVIM_RTP"))
  local deepacp = require("deepacp")
  deepacp.setup({
    cmd = { os.getenv("DEEPACP_BIN"), "lsp" },
    init_options = { model = os.getenv("DEEPACP_TEST_MODEL") },
  })
  vim.cmd("edit " .. os.getenv("DEEPACP_TEST_FILE"))
  if not vim.wait(20000, function()
    local client = deepacp.client()
    return client ~= nil and client.initialized
  end, 50) then
    fail("the language server did not start")
  end
  -- An unsaved change: the proposal must be made against it.
  vim.api.nvim_buf_set_lines(0, 0, 1, false, { "VERSION = '1.0.0-unsaved'" })
  local result = deepacp.edit("bump the version", nil, { sync = true })
  if result == nil or result.proposal == nil then
    fail("no proposal: " .. vim.inspect(result))
  end
  if not deepacp.accept() then
    fail("no Accept proposal code action")
  end
  vim.cmd("write")
  local file = io.open(os.getenv("DEEPACP_TEST_RESULT"), "w")
  file:write("OK " .. result.proposal)
  file:close()
  vim.cmd("qall!")
end)
if not ok then
  fail(tostring(err))
end
