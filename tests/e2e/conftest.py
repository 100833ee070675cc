"""The end-to-end suite: the real `deepacp` binary in a process of its own (the ACP harness
in `tests/support/acp.py`, pytest-lsp for `deepacp lsp`, real editors). Every test here is
marked `e2e`."""

from pytest_lsp import pytest_runtest_call, pytest_runtest_makereport  # noqa: F401 (its hooks)

from tests.support.fixtures import (  # noqa: F401 (fixtures)
    agent_factory,
    anthropic_server,
    capabilities,
    editor_client,
    model_requests,
)
