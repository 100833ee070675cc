"""The Language Server Protocol face: `deepacp lsp`."""
