"""The in-process ACP tier: the real `DeepacpAgent` and the ACP SDK's client in one process
(`tests/support/inprocess.py`), with the same wire validation as tests/e2e/."""

import pytest

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


@pytest.fixture
def in_process() -> bool:
    return True
