"""Shared fixtures: temporary workspaces, and running scripted tool calls through an agent."""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import Any

import pytest

from tests.support.docker import docker_box  # noqa: F401 (fixture: one daemon for the run)
from tests.support.postgres import postgres_server, postgres_url  # noqa: F401 (fixtures)
from tests.support.tiers import (  # noqa: F401 (hooks: markers by folder, timeouts, groups)
    pytest_addoption,
    pytest_collection_finish,
    pytest_collection_modifyitems,
)

SECRET = "TOP-SECRET-CONTENT"


@pytest.fixture(autouse=True)
def isolated_home(
    tmp_path_factory: pytest.TempPathFactory, monkeypatch: pytest.MonkeyPatch
) -> Path:
    """Every test gets its own $DEEPACP_HOME and no model or database configured from the
    environment."""
    home = tmp_path_factory.mktemp("deepacp-home")
    monkeypatch.setenv("DEEPACP_HOME", str(home))
    monkeypatch.delenv("DEEPACP_MODEL", raising=False)
    monkeypatch.delenv("DEEPACP_DATABASE_URL", raising=False)
    return home


@pytest.fixture
def in_process(request: pytest.FixtureRequest) -> bool:
    """Whether `agent_factory` serves ACP in the test's process: everywhere but in tests
    marked `e2e`, which drive the real binary."""
    return request.node.get_closest_marker("e2e") is None


@pytest.fixture
def sandbox(tmp_path: Path) -> tuple[Path, Path]:
    """(workspace, outside): a workspace with a few files, and a sibling folder holding a
    secret that no tool call may read, list, change or delete."""
    workspace = tmp_path / "workspace"
    outside = tmp_path / "outside"
    (workspace / "src").mkdir(parents=True)
    outside.mkdir()
    (workspace / "src" / "app.py").write_text("def main():\n    return 1\n")
    (workspace / "README.md").write_text("# project\n")
    (outside / "secret.txt").write_text(SECRET)
    return workspace, outside


RunCalls = Callable[..., Awaitable[dict[str, Any]]]


@pytest.fixture
def run_calls() -> RunCalls:
    """Run one model turn of tool calls through create_deep_agent; return the final state.

    Tool results are in `state["results"]` keyed by tool call id.
    """
    from langchain_core.messages import ToolMessage

    from deepacp import create_deep_agent
    from deepacp.testing import ScriptedChatModel

    async def run(
        backend: Any, calls: list[dict], files: dict | None = None, **kwargs: Any
    ) -> dict:
        for i, call in enumerate(calls):
            call.setdefault("id", f"call_{i}")
        model = ScriptedChatModel(turns=[{"tool_calls": calls}, {"content": "done"}])
        agent = create_deep_agent(model, backend=backend, **kwargs)
        state: dict[str, Any] = {"messages": [{"role": "user", "content": "go"}]}
        if files is not None:
            state["files"] = files
        result = await agent.ainvoke(state)
        result["results"] = {
            m.tool_call_id: m for m in result["messages"] if isinstance(m, ToolMessage)
        }
        return result

    return run
