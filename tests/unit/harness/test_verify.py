"""The harness asks for a check before a turn that changed files ends, unless told not to
(the `verify` argument, or a profile that cannot afford it)."""

import pytest
from langchain_core.messages import HumanMessage

from deepacp.harness import create_deep_agent
from deepacp.harness.profiles import HarnessProfile
from deepacp.session.workspace import session_backend
from deepacp.testing import ScriptedChatModel

EDIT = {
    "tool_calls": [
        {"id": "e1", "name": "write_file", "args": {"file_path": "b.py", "content": "y = 1\n"}}
    ]
}


@pytest.mark.parametrize(
    ("options", "calls"),
    [
        ({}, 3),
        ({"verify": False}, 2),
        ({"profile": HarnessProfile("compact", verify=False)}, 2),
    ],
)
async def test_verify_can_be_turned_off(tmp_path, options, calls):
    workspace, home = tmp_path / "workspace", tmp_path / "home"
    workspace.mkdir()
    home.mkdir()
    (workspace / "pytest.ini").write_text("[pytest]\n")
    backend = session_backend(str(workspace), tmp_path / "scratch", home)  # with a shell
    model = ScriptedChatModel(turns=[EDIT, {"content": "Done."}, {"content": "Not run."}])
    agent = create_deep_agent(model, backend=backend, **options)
    await agent.ainvoke({"messages": [HumanMessage("add b.py")]})
    assert (workspace / "b.py").read_text() == "y = 1\n"
    assert model.calls == calls
