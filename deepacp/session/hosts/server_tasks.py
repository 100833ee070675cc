"""Background tasks on the LangGraph server the harness runs on: each task is a thread of
its own running the `deepacp-task` graph (`deepacp.langgraph_app:make_task_graph`), started
through langgraph-sdk's in-process client (`get_client()` with no url, inside the server).
The server keeps the task's runs and state, so a task goes on while deepacp's ACP process
is gone, and is found again from the parent thread's records."""

from __future__ import annotations

import uuid
from collections.abc import Sequence
from typing import Any

from langchain_core.messages import BaseMessage

from deepacp.harness import (
    Outcome,
    TaskStatus,
    outcome_of,
    update_text,
)
from deepacp.session.hosts.server_graph import message_from_json, to_json

TASK_GRAPH_ID = "deepacp-task"
"""The background task's graph in langgraph.json."""
_RUN_STATUS: dict[str, TaskStatus] = {
    "pending": "running",
    "running": "running",
    "success": "finished",
    "error": "failed",
    "timeout": "failed",
    "interrupted": "cancelled",
}


class ServerTasks:
    """The background tasks of one parent thread, as threads on this server; each run
    gets `configurable` (the parent run's `RunSettings`: workspace, model, mode)."""

    def __init__(self, parent_thread: str, configurable: dict[str, Any], client: Any = None):
        self.parent_thread = parent_thread
        self.configurable = configurable
        self._client = client
        self._known: dict[str, TaskStatus] = {}

    @property
    def client(self) -> Any:
        if self._client is None:  # made in the run's own event loop
            from langgraph_sdk import get_client

            self._client = get_client()
        return self._client

    def thread_of(self, task_id: str) -> str:
        """The task's thread on the server (the same for every run of the parent)."""
        return str(uuid.uuid5(uuid.NAMESPACE_URL, f"deepacp:{self.parent_thread}/{task_id}"))

    async def _run(self, task_id: str, payload: Any) -> None:
        await self.client.runs.create(
            self.thread_of(task_id),
            TASK_GRAPH_ID,
            input=to_json(payload),
            config={"configurable": self.configurable},
            multitask_strategy="enqueue",  # an update waits for the step in flight
            if_not_exists="create",
        )
        self._known[task_id] = "running"

    async def start(
        self, task_id: str, agent: Any, payload: dict[str, Any], call_id: str | None = None
    ) -> None:
        metadata = {"deepacp_parent": self.parent_thread, "deepacp_task": task_id}
        await self.client.threads.create(
            thread_id=self.thread_of(task_id), metadata=metadata, if_exists="do_nothing"
        )
        await self._run(task_id, payload)

    async def _runs(self, task_id: str) -> list[dict[str, Any]]:
        """The runs of the task's thread, newest first (none: the server has no such task)."""
        from langgraph_sdk.errors import NotFoundError

        try:
            return list(await self.client.runs.list(self.thread_of(task_id), limit=20))
        except NotFoundError:
            return []

    def _note(self, task_id: str, run: dict[str, Any]) -> TaskStatus:
        """The task's status from its latest run, remembered for `status`."""
        status = _RUN_STATUS.get(str(run.get("status")), "failed")
        self._known[task_id] = status
        return status

    async def _latest_run(self, task_id: str) -> dict[str, Any] | None:
        runs = await self._runs(task_id)
        return runs[0] if runs else None

    async def outcome(self, task_id: str) -> Outcome:
        run = await self._latest_run(task_id)
        if run is None:
            return Outcome("lost")
        status = self._note(task_id, run)
        if status != "finished":
            failed = "its run on the server ended with an error" if status == "failed" else ""
            return Outcome(status, failed)
        state = await self.client.threads.get_state(self.thread_of(task_id))
        values = dict(state.get("values") or {})
        values["messages"] = [message_from_json(m) for m in values.get("messages") or []]
        return outcome_of(values)

    async def send(self, task_id: str, message: str) -> bool:
        run = await self._latest_run(task_id)
        if run is None or self._note(task_id, run) != "running":
            return False
        await self._run(task_id, {"messages": [{"role": "user", "content": update_text(message)}]})
        return True

    async def cancel(self, task_id: str) -> bool:
        runs = await self._runs(task_id)
        if runs:
            self._note(task_id, runs[0])
        active = [r for r in runs if _RUN_STATUS.get(str(r.get("status"))) == "running"]
        if not active:
            return False
        # The queued runs first (so none starts when the running one stops), then that one.
        for run in sorted(active, key=lambda r: r.get("status") != "pending"):
            running = run.get("status") == "running"
            await self.client.runs.cancel(self.thread_of(task_id), run["run_id"], wait=running)
        self._known[task_id] = "cancelled"
        return True

    def status(self, task_id: str) -> TaskStatus | None:
        return self._known.get(task_id)

    async def inbox(self) -> Sequence[BaseMessage]:
        return []  # what the agent sends a task arrives as a run of its own
