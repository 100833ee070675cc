"""The session runtime: one agent thread, its mode and approvals, driven turn by turn."""
