"""Review that talks back (ACP): after the agent writes through the editor, the user accepts,
rejects or edits hunks there; before the next model call the agent reads the files back and
tells the model what changed, with the text as it is now."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from acp import schema as S

from tests.support.acp import EditorRecordingClient
from tests.support.turns import write

BEFORE = "alpha = 1\nbeta = 2\ngamma = 3\n"
WRITTEN = "alpha = 10\nbeta = 2\ngamma = 30\n"
WRITE = {
    "tool_calls": [
        {"id": "w", "name": "write_file", "args": {"file_path": "app.py", "content": WRITTEN}}
    ]
}


def notes(request: dict) -> list[str]:
    return [
        m["content"]
        for m in request["messages"]
        if m["type"] == "human" and m["content"].startswith("[review]")
    ]


@dataclass
class ReviewingClient(EditorRecordingClient):
    """An editor whose user reviews each write right away: `review(path, text)` gives the
    buffer's text after the user's decisions."""

    review: Any = None
    reviewed: list[str] = field(default_factory=list)

    async def write_text_file(self, session_id: str, path: str, content: str, **kwargs: Any):
        response = await super().write_text_file(session_id, path, content, **kwargs)
        if self.review is not None:
            self.buffers[path] = self.review(path, content)
            self.reviewed.append(path)
        return response


async def test_a_rejected_hunk_reaches_the_next_turn_with_the_current_text(
    agent_factory, editor_client, capabilities, model_requests
) -> None:
    turns = [WRITE, {"content": "wrote it"}, {"content": "next answer"}]
    async with agent_factory(turns, client=editor_client, capabilities=capabilities()) as agent:
        path = agent.workspace / "app.py"
        path.write_text(BEFORE)
        session = await agent.new_session()
        await agent.conn.set_session_mode(session_id=session, mode_id="yolo")
        assert (await agent.prompt(session, "change both")).stop_reason == "end_turn"
        assert not any(notes(r) for r in model_requests())  # nothing reviewed yet
        # In review the user rejects the first hunk and keeps the second.
        editor_client.buffers[str(path)] = "alpha = 1\nbeta = 2\ngamma = 30\n"
        assert (await agent.prompt(session, "now go on")).stop_reason == "end_turn"
        [note] = notes(model_requests()[-1])
        assert "app.py, line 1: the user rejected your change" in note
        assert "alpha = 10" in note and "It is now:\n```\nalpha = 1\n```" in note
        assert "gamma" not in note  # the accepted hunk is not mentioned
        messages = model_requests()[-1]["messages"]
        assert messages[-1]["content"] == note  # just before the model's call
        # Told once: a later call does not repeat it.
        await agent.prompt(session, "and again")
        assert notes(model_requests()[-1]) == [note]  # in the history, not added again

        await agent.conn.load_session(cwd=str(agent.workspace), session_id=session)
        replayed = "".join(u.content.text for u in agent.client.of(S.UserMessageChunk))
        assert "[review]" not in replayed  # the note is the agent's, not the user's words


async def test_an_edit_in_review_reaches_a_later_step_of_the_same_turn(
    agent_factory, capabilities, model_requests
) -> None:
    token = "sk-canarysecret" + "x" * 20
    client = ReviewingClient(
        review=lambda path, text: text.replace("gamma = 30", f"gamma = 31  # key {token}")
    )
    turns = [WRITE, {"content": "saw it"}]
    env = {"DEEPACP_TEST_API_KEY": token}
    async with agent_factory(turns, client=client, capabilities=capabilities(), env=env) as agent:
        (agent.workspace / "app.py").write_text(BEFORE)
        session = await agent.new_session()
        await agent.conn.set_session_mode(session_id=session, mode_id="yolo")
        assert (await agent.prompt(session, "change both")).stop_reason == "end_turn"
        assert client.reviewed
        [note] = notes(model_requests()[1])  # the step right after the write
        assert "app.py, line 3: the user changed this text" in note
        assert "gamma = 30" in note and "gamma = 31" in note
        assert token not in note and "[redacted]" in note
        assert "alpha" not in note


async def test_no_note_when_the_user_accepts_everything(
    agent_factory, editor_client, capabilities, model_requests
) -> None:
    created = write("n", "new.py", "x\n")
    turns = [WRITE, created, {"content": "done"}, {"content": "fine"}]
    async with agent_factory(turns, client=editor_client, capabilities=capabilities()) as agent:
        (agent.workspace / "app.py").write_text(BEFORE)
        session = await agent.new_session()
        await agent.conn.set_session_mode(session_id=session, mode_id="yolo")
        await agent.prompt(session, "write")
        await agent.prompt(session, "next")
        assert len(model_requests()) == 4
        assert not any(notes(r) for r in model_requests())


async def test_a_rejected_new_file_is_reported_gone(
    agent_factory, editor_client, capabilities, model_requests
) -> None:
    created = write("n", "new.py", "x\n")
    turns = [created, {"content": "done"}, {"content": "fine"}]
    async with agent_factory(turns, client=editor_client, capabilities=capabilities()) as agent:
        session = await agent.new_session()
        await agent.conn.set_session_mode(session_id=session, mode_id="yolo")
        await agent.prompt(session, "create it")
        editor_client.buffers.pop(str(agent.workspace / "new.py"))  # rejected: no buffer
        await agent.prompt(session, "next")
        [note] = notes(model_requests()[-1])
        assert "new.py: the file no longer exists" in note
