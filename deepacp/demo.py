"""`deepacp demo`: an ACP client drives `deepacp --stdio`, offline, the way an editor does.

A scripted model fixes a bug in a copy of a small example project. The demo prints what an
editor would show — streamed text, thoughts, the plan, tool cards, the diff and then the
permission prompt for it — then loads the session again in a fresh server process, and
leaves the fixed copy where it says.
"""

from __future__ import annotations

import asyncio
import os
import shutil
import sys
import tempfile
from importlib.resources import files
from pathlib import Path
from typing import Any, cast

from deepacp.diffs import unified_diff
from deepacp.events import PLAN_MARKS
from deepacp.installation import server_command

EXAMPLES = files("deepacp") / "examples"
PROMPT = "test_median_even fails; please fix it."
REPLAYED = {
    "user_message_chunk": "your message",
    "agent_message_chunk": "the agent's messages",
    "agent_thought_chunk": "its thoughts",
    "plan": "the plan",
    "tool_call": "its tool calls",
    "tool_call_update": "their results",
}
"""What a replayed session update redraws, in words (others are not worth a mention)."""


def copy_example_project(target: Path) -> Path:
    project = target / "demo_project"
    shutil.copytree(str(EXAMPLES / "demo_project"), project)
    return project


class DemoClient:
    """Prints session updates as an editor's agent panel would show them."""

    def __init__(self, interactive: bool) -> None:
        self.interactive = interactive
        self.cards: dict[str, tuple[str, str]] = {}
        self.thought = ""
        self.in_text = False
        self.replaying = False
        self.replayed: dict[str, int] = {}
        self.shown_diffs: set[str] = set()
        """Edits whose diff was shown with their permission question already."""

    def _line(self, text: str = "") -> None:
        if self.thought:
            print(f"  (thinking) {self.thought}")
            self.thought = ""
        if self.in_text:
            print()
            self.in_text = False
        print(text, flush=True)

    async def session_update(self, session_id: str, update: Any, **_: Any) -> None:
        from acp import schema as S

        if self.replaying:
            kind = getattr(update, "session_update", type(update).__name__)
            self.replayed[kind] = self.replayed.get(kind, 0) + 1
        elif isinstance(update, S.AgentThoughtChunk):
            self.thought += update.content.text
        elif isinstance(update, S.AgentMessageChunk):
            if self.thought or not self.in_text:
                self._line()
            print(update.content.text, end="", flush=True)
            self.in_text = True
        elif isinstance(update, S.AgentPlanUpdate):
            self._line("  plan:")
            for entry in update.entries:
                print(f"    {PLAN_MARKS.get(entry.status, '[?]')} {entry.content}")
        elif isinstance(update, S.ToolCallStart):
            self.cards[update.tool_call_id] = (update.kind or "other", update.title)
            self._line(f"  > {update.kind}: {update.title}")
        elif isinstance(update, S.ToolCallProgress) and update.status in ("completed", "failed"):
            self._finished(update)

    def _finished(self, update: Any) -> None:
        from acp import schema as S

        kind, title = self.cards.get(update.tool_call_id, ("other", ""))
        self._line(f"    {update.status}: {title}")
        for content in update.content or []:
            if isinstance(content, S.FileEditToolCallContent):
                if update.tool_call_id not in self.shown_diffs:
                    self._diff(content, "the whole-file diff your editor shows for review:")
            elif kind == "execute":
                for line in content.content.text.strip().splitlines()[-4:]:
                    print(f"      | {line}")

    def _diff(self, content: Any, heading: str) -> None:
        diff = unified_diff(Path(content.path).name, content.old_text, content.new_text)
        self._line(f"    {heading}")
        print("".join(f"      {line}" for line in diff.splitlines(keepends=True)), end="")

    async def request_permission(self, session_id: str, tool_call: Any, options: Any, **_: Any):
        from acp import schema as S

        title = tool_call.title or self.cards.get(tool_call.tool_call_id, ("", "a tool call"))[1]
        for content in tool_call.content or []:  # the change first, then whether to make it
            if isinstance(content, S.FileEditToolCallContent):
                self._diff(content, "the change, as your editor shows it before you allow it:")
                self.shown_diffs.add(tool_call.tool_call_id)
        choice = "allow_once"
        if self.interactive:
            answer = await asyncio.to_thread(
                input, f"    allow `{title}`? [y]es / [a]lways / [n]o: "
            )
            choice = {"a": "allow_always", "n": "reject_once"}.get(
                answer.strip().lower()[:1], choice
            )
        else:
            self._line(f"    permission asked for `{title}`: auto-approved (not a terminal)")
        return S.RequestPermissionResponse(
            outcome=S.AllowedOutcome(outcome="selected", option_id=choice)
        )


async def _drive(project: Path, home: Path, interactive: bool) -> str:
    from acp import PROTOCOL_VERSION, spawn_agent_process
    from acp.helpers import text_block
    from acp.interfaces import Client

    env = {
        **os.environ,
        "DEEPACP_HOME": str(home),
        "DEEPACP_MODEL": f"scripted:{EXAMPLES / 'demo_script.json'}",
    }
    client = DemoClient(interactive)
    # It implements what it advertises; the SDK answers anything else "method not found".
    as_client = cast(Client, client)
    command, *args = server_command()
    async with spawn_agent_process(
        as_client, command, *args, env=env, cwd=project, transport_kwargs={"stderr": None}
    ) as (conn, _):
        agent = (await conn.initialize(protocol_version=PROTOCOL_VERSION)).agent_info
        if agent is not None:
            print(f"connected to {agent.name} {agent.version} over stdio\n")
        session = (await conn.new_session(cwd=str(project), mcp_servers=[])).session_id
        print(f"you: {PROMPT}\n")
        response = await conn.prompt(session_id=session, prompt=[text_block(PROMPT)])
        client._line(f"\n(turn ended: {response.stop_reason})")

    print("\nStarting a fresh server process and loading the session from disk...")
    client.replaying = True
    async with spawn_agent_process(
        as_client, command, *args, env=env, cwd=project, transport_kwargs={"stderr": None}
    ) as (conn, _):
        await conn.initialize(protocol_version=PROTOCOL_VERSION)
        await conn.load_session(cwd=str(project), session_id=session, mcp_servers=[])
    print(replay_summary(client.replayed))
    return session


def replay_summary(replayed: dict[str, int]) -> str:
    """What loading the session back showed, in words a person reads."""
    shown = [words for kind, words in REPLAYED.items() if replayed.get(kind)]
    if not shown:
        return "The fresh server found the session but had nothing to redraw."
    listed = ", ".join(shown[:-1]) + (f" and {shown[-1]}" if len(shown) > 1 else shown[0])
    return (
        f"The fresh server redrew the whole conversation from disk ({listed}), as your "
        "editor does when you reopen a session."
    )


def run_demo() -> int:
    interactive = sys.stdin.isatty() and sys.stdout.isatty()
    tmp = Path(tempfile.mkdtemp(prefix="deepacp-demo-"))  # kept: the fixed file is there
    project = copy_example_project(tmp)
    print("deepacp demo: an ACP client (standing in for your editor) drives `deepacp --stdio`")
    print(f"on a copy of a small example project: {project}\n")
    asyncio.run(_drive(project, tmp / "home", interactive))
    print(f"\nThe fixed project is kept in {project}: open stats.py there to see the fix.")
    print(f"When you are done with it: rm -r {tmp}")
    print("To try deepacp on your own code: `deepacp setup` picks a model and stores its key,")
    print("then `deepacp doctor` prints the set-up for your editor.")
    return 0
