"""What the model sees — the assembled system prompt and the tool schemas of the editor
session's harness — for the default harness and each built-in profile, checked against
reviewed snapshot files in `snapshots/`.

A change to any of them fails here with the diff. When the change is intended, regenerate
the files and review the diff in version control:

    DEEPACP_UPDATE_SNAPSHOTS=1 python -m pytest tests/unit/harness/test_prompt_snapshots.py
"""

from __future__ import annotations

import difflib
import json
import os
from pathlib import Path
from typing import Any

import pytest
from langchain_core.messages import SystemMessage
from langgraph.checkpoint.memory import InMemorySaver
from pydantic import Field

from deepacp.harness.background import InProcessTasks
from deepacp.harness.graph import NO_PROFILE
from deepacp.harness.messages import text_of
from deepacp.harness.profiles import BUILT_IN, HarnessProfile
from deepacp.session.assembly import Contributions, assemble
from deepacp.session.turns.approvals import ApprovalPolicy
from deepacp.session.workspace import session_backend
from deepacp.testing import ScriptedChatModel

SNAPSHOTS = Path(__file__).parent / "snapshots"
UPDATE = os.environ.get("DEEPACP_UPDATE_SNAPSHOTS") == "1"


class CapturingModel(ScriptedChatModel):
    """Keeps every request's messages and tool schemas."""

    seen: list[tuple[list[Any], list[Any]]] = Field(default_factory=list)

    def _next_turn(self, messages, kwargs):
        self.seen.append((list(messages), list(kwargs.get("tools") or [])))
        return super()._next_turn(messages, kwargs)


async def what_the_model_sees(profile: HarnessProfile, tmp_path: Path) -> str:
    workspace, home = tmp_path / "workspace", tmp_path / "home"
    workspace.mkdir()
    home.mkdir()
    backend = session_backend(str(workspace), tmp_path / "scratch", home)
    model = CapturingModel(turns=[{"content": "ok"}])
    agent = assemble(
        model,
        backend,
        ApprovalPolicy(mode="ask"),
        InMemorySaver(),
        Contributions(background=InProcessTasks()),
        planning=True,
        profile=profile,
    )
    await agent.ainvoke(
        {"messages": [{"role": "user", "content": "hi"}]}, {"configurable": {"thread_id": "t"}}
    )
    [(messages, tools)] = model.seen
    system = "".join(text_of(m.content) for m in messages if isinstance(m, SystemMessage))
    return (
        f"# profile: {profile.name}\n\n## system prompt\n\n{system}\n\n## tools\n\n"
        f"{json.dumps(tools, indent=2, ensure_ascii=False)}\n"
    )


@pytest.mark.parametrize("profile", [NO_PROFILE, *BUILT_IN], ids=lambda p: p.name)
async def test_the_prompt_and_tools_match_the_reviewed_snapshot(profile, tmp_path):
    actual = await what_the_model_sees(profile, tmp_path)
    assert str(tmp_path) not in actual  # nothing machine-specific in what the model sees
    path = SNAPSHOTS / f"{profile.name}.txt"
    if UPDATE:
        path.write_text(actual)
    expected = path.read_text() if path.exists() else ""
    if actual != expected:
        diff = "".join(
            difflib.unified_diff(
                expected.splitlines(keepends=True),
                actual.splitlines(keepends=True),
                f"{path.name} (reviewed)",
                f"{path.name} (now)",
            )
        )
        pytest.fail(
            f"what the model sees changed; if intended, regenerate with "
            f"DEEPACP_UPDATE_SNAPSHOTS=1 and review:\n{diff}",
            pytrace=False,
        )
