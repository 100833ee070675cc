"""Fixtures for the end-to-end suite: the ACP harness lives in `tests/support/acp.py`."""

from tests.support.acp import (  # noqa: F401  (fixtures)
    agent_factory,
    capabilities,
    editor_client,
    model_requests,
)
