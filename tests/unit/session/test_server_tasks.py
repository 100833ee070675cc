"""ServerTasks: a background task as a thread of the LangGraph server, read through the
SDK's client (a fake here; the real server is in tests/e2e/test_acp_background.py)."""

from __future__ import annotations

from typing import Any

import httpx
from langgraph_sdk.errors import NotFoundError

from deepacp.session.hosts.server_tasks import TASK_GRAPH_ID, ServerTasks


class FakeRuns:
    def __init__(self) -> None:
        self.created: list[tuple[str, str, Any, dict, str]] = []
        self.status: dict[str, str] = {}
        self.cancelled: list[tuple[str, str]] = []
        self.older: dict[str, list[dict]] = {}

    async def create(self, thread_id, graph, *, input, config, multitask_strategy, **_):
        self.created.append((thread_id, graph, input, config, multitask_strategy))
        self.status[thread_id] = "running"

    async def list(self, thread_id, limit):
        if thread_id not in self.status:
            request = httpx.Request("GET", f"http://api/threads/{thread_id}/runs")
            response = httpx.Response(404, request=request)
            raise NotFoundError("no such thread", response=response, body=None)
        return [{"run_id": "r1", "status": self.status[thread_id]}, *self.older.get(thread_id, [])]

    async def cancel(self, thread_id, run_id, wait):
        self.cancelled.append((thread_id, run_id))
        if run_id == "r1":
            self.status[thread_id] = "interrupted"


class FakeThreads:
    def __init__(self) -> None:
        self.metadata: dict[str, dict] = {}
        self.values: dict[str, dict] = {}

    async def create(self, thread_id, metadata, if_exists):
        self.metadata[thread_id] = metadata

    async def get_state(self, thread_id):
        return {"values": self.values[thread_id]}


class FakeClient:
    def __init__(self) -> None:
        self.runs, self.threads = FakeRuns(), FakeThreads()


async def test_a_task_is_a_thread_of_its_own_found_again_by_any_run() -> None:
    client = FakeClient()
    settings = {"workspace": "/srv/repo", "mode": "ask"}
    tasks = ServerTasks("parent-1", settings, client)
    await tasks.start("bg-1", None, {"messages": [{"type": "human", "content": "brief"}]})
    thread = tasks.thread_of("bg-1")
    assert ServerTasks("parent-1", {}, client).thread_of("bg-1") == thread  # a later run
    assert ServerTasks("parent-2", {}, client).thread_of("bg-1") != thread
    assert client.threads.metadata[thread] == {"deepacp_parent": "parent-1", "deepacp_task": "bg-1"}
    [(_, graph, _, config, _)] = client.runs.created
    assert graph == TASK_GRAPH_ID and config == {"configurable": settings}
    assert (await tasks.outcome("bg-1")).status == "running"

    assert await tasks.send("bg-1", "also check b.py")
    _, _, sent, _, strategy = client.runs.created[-1]
    assert strategy == "enqueue"
    assert sent["messages"][0]["content"].endswith("also check b.py")

    client.runs.status[thread] = "success"
    client.threads.values[thread] = {
        "messages": [
            {"type": "human", "content": "brief"},
            {
                "type": "ai",
                "content": "",
                "tool_calls": [{"id": "w", "name": "write_file", "args": {"file_path": "n.md"}}],
            },
            {"type": "tool", "content": "ok", "tool_call_id": "w"},
            {"type": "ai", "content": "Wrote n.md."},
        ]
    }
    later = ServerTasks("parent-1", settings, client)
    done = await later.outcome("bg-1")
    assert (done.status, done.report, done.changed) == ("finished", "Wrote n.md.", ("n.md",))
    assert later.status("bg-1") == "finished"
    assert not await later.send("bg-1", "too late") and not await later.cancel("bg-1")


async def test_cancel_and_an_unknown_task() -> None:
    client = FakeClient()
    tasks = ServerTasks("p", {}, client)
    assert (await tasks.outcome("bg-9")).status == "lost"
    assert tasks.status("bg-9") is None
    await tasks.start("bg-1", None, {"messages": []})
    thread = tasks.thread_of("bg-1")
    client.runs.status[thread] = "pending"  # an update queued behind the running run
    client.runs.older[thread] = [{"run_id": "r0", "status": "running"}]
    assert await tasks.cancel("bg-1")
    assert client.runs.cancelled == [(thread, "r1"), (thread, "r0")]  # the queued one first
    assert (await tasks.outcome("bg-1")).status == "cancelled"
    client.runs.status[tasks.thread_of("bg-1")] = "error"
    failed = await tasks.outcome("bg-1")
    assert failed.status == "failed" and "error" in failed.report
