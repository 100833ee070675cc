"""ServerHost: the thread on a LangGraph server (`deepacp --server URL`), its graph the
server's `deepacp` graph (`deepacp/langgraph_app.py`, built by the same assembly), driven
through langgraph-sdk (`remote.ServerGraph`). The model and its key are the server's; the
run carries the session's settings, its goal included."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from deepacp.errors import ConfigError, DeepacpError
from deepacp.session.hosts.threads import RunSettings, ServerThreads

if TYPE_CHECKING:
    from deepacp.session.assembly import Contributions
    from deepacp.session.hosts import HostedSession
    from deepacp.session.storage.records import SessionRecord


class ServerHost:
    window: int | None = None

    def __init__(self, threads: ServerThreads) -> None:
        self.threads = threads
        self._graph: Any = None

    async def make_thread(self, record: SessionRecord) -> None:
        metadata = {"deepacp_session": record.id, "cwd": record.cwd}
        await self.threads.create(record.thread_id, metadata)

    async def ready(self) -> None:
        """Nothing to wait for: the graph runs on the server."""

    async def graph(self, ctx: HostedSession, parts: Contributions) -> Any:
        if self._graph is None:
            from deepacp.session.hosts.server_graph import ServerGraph

            def settings() -> RunSettings:
                record = ctx.record
                goal = parts.goal() if parts.goal is not None else None
                return RunSettings.of(record.cwd, record.model, ctx.policy, goal)

            self._graph = ServerGraph(self.threads, ctx.policy, settings)
        return self._graph

    def forget_model(self) -> None:
        return None  # the server's

    def check_model(self, spec: str) -> None:
        return None  # the model (and its key) is the server's

    async def _values(self, config: dict[str, Any]) -> dict[str, Any]:
        from deepacp.session.hosts.server_graph import server_state
        from deepacp.session.hosts.threads import server_thread_id

        thread_id = server_thread_id(str(config["configurable"]["thread_id"]))
        return (await server_state(self.threads, thread_id)).values

    async def messages(self, config: dict[str, Any]) -> list[Any]:
        return list((await self._values(config))["messages"])

    async def value(self, config: dict[str, Any], key: str) -> Any:
        return (await self._values(config)).get(key)

    async def delete_thread(self, thread_id: str) -> None:
        await self.threads.delete(thread_id)

    async def compact(self, graph: Any, config: dict[str, Any], report: Any) -> bool:
        raise ConfigError("/compact runs in-process only, not on a LangGraph server")

    def here(self, done: str) -> None:
        raise DeepacpError(f"a session on a LangGraph server cannot be {done} yet")

    async def close(self) -> None:
        self._graph = None
