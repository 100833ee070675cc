from pathlib import Path

from langchain_core.messages import AIMessage, HumanMessage, ToolMessage

from deepacp.backends import FilesystemBackend
from deepacp.events import (
    MessageChunk,
    Notice,
    PlanUpdated,
    ThoughtChunk,
    ToolFinished,
    ToolStarted,
    UserMessage,
)
from deepacp.harness.contracts import NoticeSignal
from deepacp.session.turns.cards import describe_call, proposed_diff, tool_finished
from deepacp.session.turns.projection import LiveProjection, replay, stop_reason


def test_titles_kinds_and_locations(tmp_path: Path) -> None:
    backend = FilesystemBackend(tmp_path)
    kind, title, locations = describe_call(
        "read_file", {"file_path": "src/a.py", "offset": 9}, backend
    )
    assert (kind, title) == ("read", "Read src/a.py")
    assert locations[0].path == str(tmp_path / "src" / "a.py") and locations[0].line == 10
    assert describe_call("execute", {"command": "pytest -x"}, backend)[1] == "pytest -x"
    assert describe_call("grep", {"pattern": "TODO"}, backend)[:2] == (
        "search",
        "Search 'TODO' in .",
    )
    assert describe_call("mcp_tool", {}, backend)[0] == "other"
    # A hostile path still gets a card, just no location.
    assert describe_call("read_file", {"file_path": "../etc"}, backend)[2] == []


def test_an_ls_of_the_root_is_titled_as_the_root(tmp_path: Path) -> None:
    backend = FilesystemBackend(tmp_path)
    for args in ({}, {"path": None}, {"path": ""}):
        assert describe_call("ls", args, backend)[1] == "List ."


def test_a_sub_agents_calls_are_titled_as_cards_are_and_keep_their_title(tmp_path: Path) -> None:
    from deepacp.events import SubagentStep
    from deepacp.harness.contracts import SubagentStepSignal

    live = LiveProjection(FilesystemBackend(tmp_path), None)
    started = SubagentStepSignal("t1", "c1", "read_file", {"file_path": "a.py"}, "in_progress")
    ended = SubagentStepSignal("t1", "c1", "read_file", {}, "completed")
    assert live.feed((), "custom", started) == [
        SubagentStep("t1", "c1", "read_file", "Read a.py", "read", "in_progress")
    ]
    assert live.feed((), "custom", ended) == [
        SubagentStep("t1", "c1", "read_file", "Read a.py", "read", "completed")
    ]
    assert live.feed(("task:1",), "custom", started) == []  # a grandchild's stays inside


def test_replay_and_live_share_one_projection(tmp_path: Path) -> None:
    backend = FilesystemBackend(tmp_path)
    call = {"id": "c1", "name": "write_file", "args": {"file_path": "a.txt", "content": "x"}}
    todos = {
        "id": "c2",
        "name": "write_todos",
        "args": {"todos": [{"content": "do it", "status": "pending"}]},
    }
    ai = AIMessage(
        "writing", tool_calls=[call, todos], additional_kwargs={"reasoning_content": "hmm"}
    )
    artifact = {
        "path": "a.txt",
        "abs_path": str(tmp_path / "a.txt"),
        "old_text": None,
        "new_text": "x",
    }
    result = ToolMessage("Created a.txt", tool_call_id="c1", artifact=artifact)
    replayed = list(replay([HumanMessage("please"), ai, result], backend))
    assert [type(e) for e in replayed] == [
        UserMessage,
        ThoughtChunk,
        MessageChunk,
        ToolStarted,
        ToolStarted,
        PlanUpdated,
        ToolFinished,
    ]
    finished = replayed[-1]
    assert finished.diff.path == str(tmp_path / "a.txt") and finished.diff.old_text is None

    live = LiveProjection(backend, window=None)
    announced = live.feed((), "updates", {"model": {"messages": [ai]}})
    assert announced == replayed[3:6]  # the same cards and plan
    finished_live = live.feed((), "updates", {"tools": {"messages": [result]}})
    assert finished_live == [finished]
    # LangGraph re-reports finished results when a run resumes: reported once only.
    assert live.feed((), "updates", {"tools": {"messages": [result]}}) == []
    assert live.feed(("tools:abc",), "updates", {"model": {"messages": [ai]}}) == []


def test_stop_reasons() -> None:
    assert (
        stop_reason(AIMessage("x", response_metadata={"finish_reason": "length"})) == "max_tokens"
    )
    assert (
        stop_reason(AIMessage("x", response_metadata={"stop_reason": "max_tokens"})) == "max_tokens"
    )
    assert stop_reason(AIMessage("x", response_metadata={"stop_reason": "refusal"})) == "refusal"
    assert stop_reason(AIMessage("x", response_metadata={"finish_reason": "stop"})) == "end_turn"
    assert stop_reason(None) == "end_turn"


async def test_proposed_diffs_are_whole_files_and_touch_nothing(tmp_path: Path) -> None:
    backend = FilesystemBackend(tmp_path)
    a = tmp_path / "a.py"
    a.write_text("x = 1\nx = 1\n")
    before = a.stat().st_mtime_ns

    async def diff(name: str, **args):
        found = await proposed_diff(name, args, backend)
        return None if found is None else (found.path, found.old_text, found.new_text)

    path = str(a)
    edit = {"file_path": "a.py", "old_string": "x = 1", "new_string": "x = 2"}
    assert await diff("edit_file", **edit, replace_all=True) == (
        path,
        "x = 1\nx = 1\n",
        "x = 2\nx = 2\n",
    )
    assert await diff("edit_file", **edit) is None  # ambiguous: the edit would fail
    assert await diff("edit_file", file_path="a.py", old_string="nope", new_string="y") is None
    assert await diff("edit_file", file_path="gone.py", old_string="a", new_string="b") is None
    assert await diff("write_file", file_path="a.py", content="new\n") == (
        path,
        "x = 1\nx = 1\n",
        "new\n",
    )
    assert await diff("write_file", file_path="n.txt", content="hi") == (
        str(tmp_path / "n.txt"),
        None,
        "hi",
    )
    assert await diff("delete", file_path="a.py") == (path, "x = 1\nx = 1\n", None)
    assert await diff("delete", file_path="gone.py") is None
    assert await diff("write_file", file_path="../out.txt", content="x") is None
    assert await diff("execute", command="rm a.py") is None
    assert a.read_text() == "x = 1\nx = 1\n" and a.stat().st_mtime_ns == before
    assert not (tmp_path / "n.txt").exists()


async def test_a_proposed_diff_shows_no_secret(tmp_path: Path, monkeypatch) -> None:
    monkeypatch.setenv("DEPLOY_TOKEN", "tok-canary-0123456789")
    (tmp_path / "deploy.env").write_text("TOKEN=tok-canary-0123456789\nDEBUG=1\n")
    args = {"file_path": "deploy.env", "old_string": "DEBUG=1", "new_string": "DEBUG=0"}
    found = await proposed_diff("edit_file", args, FilesystemBackend(tmp_path))
    assert found is not None
    assert found.old_text == "TOKEN=[redacted]\nDEBUG=1\n"
    assert found.new_text == "TOKEN=[redacted]\nDEBUG=0\n"


def test_cards_for_people_results_for_the_model() -> None:
    rejected = ToolMessage(
        "User rejected the tool call. Do not retry this tool call unless asked.",
        tool_call_id="w",
        status="error",
        additional_kwargs={
            "lc_source": "hitl_interrupt_decision",
            "lc_data": {"decision": "reject"},
        },
    )
    assert tool_finished(rejected, "write_file").text == "Rejected"
    assert tool_finished(rejected, "write_file").status == "failed"
    todos = ToolMessage("Updated todo list to [{'content': 'x'}]", tool_call_id="p")
    assert tool_finished(todos, "write_todos").text == "Updated the plan"
    failed = ToolMessage("Error: called twice", tool_call_id="p", status="error")
    assert tool_finished(failed, "write_todos").text == "Error: called twice"
    assert tool_finished(ToolMessage("3 files", tool_call_id="l"), "ls").text == "3 files"


def test_a_goal_check_has_a_card_a_plan_entry_and_a_verdict(tmp_path: Path) -> None:
    from deepacp.events import Notice, PlanEntry
    from deepacp.harness.contracts import GoalSignal

    live = LiveProjection(FilesystemBackend(tmp_path), None)
    checking = GoalSignal("goal-1", "checking", "tests pass", "Checking the goal", 1, 2)
    card, plan = live.feed((), "custom", checking)
    assert isinstance(card, ToolStarted) and card.kind == "think"
    assert plan == PlanUpdated(
        (PlanEntry("Goal: tests pass (checking, round 1 of 2)", "in_progress", "high"),)
    )
    assert live.feed((), "custom", checking) == []  # resumed after an approval: no repeat
    todos = {
        "id": "t",
        "name": "write_todos",
        "args": {"todos": [{"content": "a", "status": "pending"}]},
    }
    events = live.feed((), "updates", {"model": {"messages": [AIMessage("", tool_calls=[todos])]}})
    [new_plan] = [e for e in events if isinstance(e, PlanUpdated)]
    assert [e.content for e in new_plan.entries] == [
        "a",
        "Goal: tests pass (checking, round 1 of 2)",
    ]
    verdict = GoalSignal(
        "goal-1", "needs_revision", "tests pass", "Goal not met after 2 rounds", 2, 2
    )
    finished, plan, notice = live.feed((), "custom", verdict)
    assert finished == ToolFinished("goal-1", "completed", "Goal not met after 2 rounds")
    assert plan.entries[-1] == PlanEntry("Goal: tests pass (not met)", "pending", "high")
    assert notice == Notice("Goal not met after 2 rounds", title="Goal check")


def test_replay_shows_grader_feedback_as_a_verdict_not_as_the_user(tmp_path: Path) -> None:
    from deepacp.events import Notice
    from deepacp.harness.middleware.goal import feedback_message

    feedback = feedback_message("tests pass", "run them", 1, 3)
    events = list(
        replay([HumanMessage("go"), AIMessage("done"), feedback], FilesystemBackend(tmp_path))
    )
    assert events[0] == UserMessage("go")
    assert isinstance(events[-1], Notice) and "run them" in events[-1].text


def test_background_tasks_are_plan_entries_after_the_todos(tmp_path: Path) -> None:
    from langgraph.types import Command

    from deepacp.events import PlanEntry

    live = LiveProjection(FilesystemBackend(tmp_path), None, {"bg-2": "finished"}.get)
    todos = {"id": "c1", "name": "write_todos", "args": {"todos": [{"content": "a"}]}}
    live.feed((), "updates", {"model": {"messages": [AIMessage("", tool_calls=[todos])]}})
    brief = "Find every caller of parse() " + "and more " * 10
    started = {"bg-1": {"id": "bg-1", "description": brief, "status": "running"}}
    update = Command(update={"background_tasks": started, "messages": []})
    [plan] = live.feed((), "updates", {"tools": [update]})
    assert isinstance(plan, PlanUpdated)
    assert plan.entries[0] == PlanEntry("a", "pending")
    [entry] = plan.entries[1:]
    assert entry.status == "in_progress" and entry.content.endswith("… (running)")
    assert entry.content.startswith("Background: Find every caller of parse() and more")
    second = {"bg-2": {"id": "bg-2", "description": "two", "status": "running"}}
    [plan] = live.feed((), "updates", {"tools": {"background_tasks": second}})
    # The runner knows bg-2 finished before the agent checked it.
    assert plan.entries[2] == PlanEntry("Background: two (finished)", "completed")
    checked = {"bg-1": {"status": "failed", "delivered": True}}
    [plan] = live.feed((), "updates", {"tools": {"background_tasks": checked}})
    assert plan.entries[1].content.endswith("(failed)") and plan.entries[1].status == "pending"


def test_background_cards_say_what_they_do(tmp_path: Path) -> None:
    backend = FilesystemBackend(tmp_path)
    start = {"description": "Count the lines\nof every file", "subagent_type": "general-purpose"}
    assert describe_call("start_background_task", start, backend)[1] == (
        "Background: Count the lines of every file"
    )
    check = describe_call("check_background_task", {"task_id": "bg-1"}, backend)
    assert check[:2] == ("think", "Check background task bg-1")


def test_what_a_command_left_is_told_even_from_a_sub_agent(tmp_path: Path) -> None:
    live = LiveProjection(FilesystemBackend(tmp_path), None)
    signal = NoticeSignal("A command ran without asking and left .vscode")
    assert live.feed((), "custom", signal) == [Notice(signal.notice, "warning")]
    assert live.feed(("task:1",), "custom", signal) == [Notice(signal.notice, "warning")]
