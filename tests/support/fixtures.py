"""The fixtures every folder that drives ACP shares: the harness (`acp.py`) and the
provider-wire servers (`tests/providers/`). A conftest.py imports them with `*`."""

from tests.providers.conftest import anthropic_server, ollama_server, openai_server
from tests.support.acp import agent_factory, capabilities, editor_client, model_requests

__all__ = [
    "agent_factory",
    "anthropic_server",
    "capabilities",
    "editor_client",
    "model_requests",
    "ollama_server",
    "openai_server",
]
