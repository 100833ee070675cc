"""The user's hooks: commands run on a session's events (see `runner.SessionHooks`)."""

from deepacp.session.hooks.runner import MAX_STOP_CONTINUES, SessionHooks

__all__ = ["MAX_STOP_CONTINUES", "SessionHooks"]
