"""Fixtures for the end-to-end suite: the ACP harness lives in `tests/support/acp.py`, the
provider-wire servers (for the real provider clients) in `tests/providers/`."""

from tests.providers.conftest import (  # noqa: F401  (fixtures)
    anthropic_server,
    ollama_server,
    openai_server,
)
from tests.support.acp import (  # noqa: F401  (fixtures)
    agent_factory,
    capabilities,
    editor_client,
    model_requests,
)
from tests.support.langgraph import langgraph_server  # noqa: F401  (fixture)
