-- Driven by tests/e2e/test_screenshots.py: a real Neovim (its terminal UI, in tmux) as a user
-- sets it up from editors/neovim/README.md, asks for a change and hovers over its hint. Once
-- the hover shows the diff, it writes DEEPACP_SHOT_READY; the test then captures the pane.
local env = os.getenv
vim.opt.runtimepath:append(env("DEEPACP_NVIM_RTP"))
vim.o.termguicolors = true
vim.o.number = true
vim.o.laststatus = 2
vim.o.cmdheight = 2 -- the request's two messages, without a hit-enter prompt
vim.diagnostic.config({ virtual_text = { prefix = "●" }, signs = true })

local deepacp = require("deepacp")
deepacp.setup({ cmd = { env("DEEPACP_BIN"), "lsp" }, init_options = { model = env("DEEPACP_TEST_MODEL") } })

local function hinted()
  for _, d in ipairs(vim.diagnostic.get(0)) do
    if d.source == "deepacp" then
      return true
    end
  end
  return false
end

local function floating()
  for _, win in ipairs(vim.api.nvim_list_wins()) do
    if vim.api.nvim_win_get_config(win).relative ~= "" then
      return true
    end
  end
  return false
end

-- Steps taken on a timer, so the screen is drawn between them as a user sees it.
local step = "attach"
local timer = vim.loop.new_timer()
timer:start(100, 100, vim.schedule_wrap(function()
  if step == "attach" then
    local client = deepacp.client()
    if client ~= nil and client.initialized then
      step = "edit"
      vim.cmd("DeepacpEdit make add explicit about its result")
    end
  elseif step == "edit" and hinted() then
    step = "hover"
    vim.api.nvim_win_set_cursor(0, { 2, 4 })
    vim.lsp.buf.hover({ border = "rounded" })
  elseif step == "hover" and floating() then
    step = "done"
    timer:stop()
    vim.cmd("redraw")
    local file = io.open(env("DEEPACP_SHOT_READY"), "w")
    file:write("ready")
    file:close()
  end
end))
