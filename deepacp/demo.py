"""`deepacp demo`: the agent fixes a bug in a copy of a small example project, offline."""

from __future__ import annotations

import asyncio
import difflib
import shutil
import tempfile
from importlib.resources import files
from pathlib import Path

EXAMPLES = files("deepacp") / "examples"


def copy_example_project(target: Path) -> Path:
    project = target / "demo_project"
    shutil.copytree(str(EXAMPLES / "demo_project"), project)
    return project


def snapshot(root: Path) -> dict[str, str]:
    return {
        p.relative_to(root).as_posix(): p.read_text(encoding="utf-8")
        for p in sorted(root.rglob("*"))
        if p.is_file() and "__pycache__" not in p.parts
    }


def project_diff(before: dict[str, str], after: dict[str, str]) -> str:
    out = []
    for path in sorted(before.keys() | after.keys()):
        old, new = before.get(path, ""), after.get(path, "")
        if old != new:
            out.extend(
                difflib.unified_diff(
                    old.splitlines(keepends=True),
                    new.splitlines(keepends=True),
                    f"a/{path}",
                    f"b/{path}",
                )
            )
    return "".join(out)


async def _run(project: Path) -> None:
    from deepacp import create_deep_agent
    from deepacp.backends import LocalShellBackend
    from deepacp.testing import ScriptedChatModel

    model = ScriptedChatModel.from_file(str(EXAMPLES / "demo_script.json"))
    agent = create_deep_agent(model, backend=LocalShellBackend(project))
    request = {"messages": [{"role": "user", "content": "test_median_even fails; fix it."}]}
    async for _, mode, data in agent.astream(
        request, stream_mode=["messages", "updates"], subgraphs=True
    ):
        if mode == "messages":
            chunk, _ = data
            if chunk.type == "AIMessageChunk" and isinstance(chunk.content, str):
                print(chunk.content, end="", flush=True)
        elif mode == "updates" and "model" in data:
            print()
            for call in data["model"]["messages"][-1].tool_calls:
                print(f"  -> {call['name']} {call['args']}")


def run_demo() -> int:
    with tempfile.TemporaryDirectory(prefix="deepacp-demo-") as tmp:
        project = copy_example_project(Path(tmp))
        before = snapshot(project)
        print(f"deepacp demo: working on a copy of the example project in {project}\n")
        asyncio.run(_run(project))
        print("\nThe change the agent made:\n")
        print(project_diff(before, snapshot(project)))
    return 0
