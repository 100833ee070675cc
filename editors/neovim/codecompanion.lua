-- CodeCompanion.nvim: deepacp as an ACP adapter for the chat.
require("codecompanion").setup({
  adapters = {
    acp = {
      deepacp = function()
        return require("codecompanion.adapters").extend("gemini_cli", {
          name = "deepacp",
          formatted_name = "deepacp",
          commands = { default = { "deepacp", "--stdio" } },
          defaults = { auth_method = "model-api-key" },
          env = { DEEPACP_MODEL = "anthropic:claude-sonnet-4-5" },
        })
      end,
    },
  },
  interactions = { chat = { adapter = "deepacp" } },
})
