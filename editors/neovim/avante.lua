-- avante.nvim: deepacp as an ACP provider (avante's agent panel).
require("avante").setup({
  provider = "deepacp",
  acp_providers = {
    deepacp = {
      command = "deepacp",
      args = { "--stdio" },
      env = {
        DEEPACP_MODEL = "anthropic:claude-sonnet-4-5",
        ANTHROPIC_API_KEY = os.getenv("ANTHROPIC_API_KEY"),
      },
    },
  },
})
