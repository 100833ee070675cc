"""Where a session's conversation lives when the harness runs on a LangGraph server
(`deepacp --server URL`): the server's threads (`ServerThreads`), and the settings each run
carries in its config (`RunSettings`), from which the server's graph factory
(`deepacp.langgraph_app.make_graph`) builds the run's harness. Light to import."""

from __future__ import annotations

import os
import uuid
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from deepacp.errors import ConfigError, ServerUnavailable
from deepacp.session.modes import DEFAULT_MODE, Mode, parse_mode
from deepacp.session.turns.approvals import ApprovalPolicy

CONNECT_RETRIES = 2
"""A refused connection to the server is tried again after 0 s and 0.5 s (httpx's backoff):
a server restarting is waited for that long, one that is down is reported at once."""
TOKEN_VARIABLE = "DEEPACP_SERVER_TOKEN"
"""The server's token (`deepacp/langgraph_auth.py`): where it starts, and where deepacp connects."""


def token_headers() -> dict[str, str] | None:
    """What proves us to the server: its token from our environment, if set."""
    token = os.environ.get(TOKEN_VARIABLE)
    return {"Authorization": f"Bearer {token}"} if token else None


def server_errors() -> tuple[type[Exception], ...]:
    """What a call to the server raises when it cannot be used: unreachable, or refused."""
    import httpx
    from langgraph_sdk.errors import AuthenticationError, PermissionDeniedError

    return (httpx.TransportError, AuthenticationError, PermissionDeniedError)


@dataclass(frozen=True)
class RunSettings:
    """What a run's `configurable` carries for deepacp's server graph."""

    workspace: str
    model: str | None = None
    mode: Mode = DEFAULT_MODE
    always_allow: tuple[tuple[str, str], ...] = ()
    always_reject: tuple[tuple[str, str], ...] = ()
    asked: tuple[str, ...] = field(default=())
    """Tool calls already put to the user: they stay gated when the run resumes."""
    goal: str | None = None
    """What done looks like (`/goal`): the server's graph grades the work against it."""

    def as_configurable(self) -> dict[str, Any]:
        return {
            "workspace": self.workspace,
            "model": self.model or "",
            "mode": self.mode,
            "always_allow": [list(key) for key in self.always_allow],
            "always_reject": [list(key) for key in self.always_reject],
            "asked": list(self.asked),
            "goal": self.goal or "",
        }

    @classmethod
    def of(
        cls, workspace: str, model: str | None, policy: ApprovalPolicy, goal: str | None = None
    ) -> RunSettings:
        return cls(
            workspace,
            model,
            policy.mode,
            tuple(sorted(policy.always_allow)),
            tuple(sorted(policy.always_reject)),
            tuple(sorted(policy.asked)),
            goal,
        )

    @classmethod
    def from_configurable(cls, values: dict[str, Any], fallback: str) -> RunSettings:
        """The settings in a run's config (a `ConfigError` for a bad workspace or mode).
        Without a workspace (the server reading a thread's state) `fallback` stands in."""
        workspace = values.get("workspace") or fallback
        if not Path(workspace).is_absolute() or not Path(workspace).is_dir():
            raise ConfigError(f"workspace {workspace!r} is not a folder on the server")
        try:
            mode = parse_mode(values.get("mode") or DEFAULT_MODE)
        except ValueError as exc:
            raise ConfigError(str(exc)) from None

        def keys(name: str) -> tuple[tuple[str, str], ...]:
            return tuple((str(k[0]), str(k[1])) for k in values.get(name) or () if len(k) == 2)

        asked = tuple(str(i) for i in values.get("asked") or ())
        model = values.get("model") or None
        goal = str(values.get("goal") or "") or None
        allow, reject = keys("always_allow"), keys("always_reject")
        return cls(workspace, model, mode, allow, reject, asked, goal)


def server_thread_id(thread_id: str) -> str:
    """A session's thread id as the server keys it (a UUID, dashed: the server keeps
    state under this spelling whatever spelling made the thread)."""
    return str(uuid.UUID(thread_id))


class ServerThreads:
    """The threads of the LangGraph server at `url`: where sessions' conversations live."""

    def __init__(self, url: str) -> None:
        self.url = url
        self._client: Any = None

    @property
    def client(self) -> Any:
        """langgraph-sdk's client (imported on first use: not on the way to `initialize`),
        trying a refused connection `CONNECT_RETRIES` times rather than the SDK's five
        (7.5 s of waiting on every call to a server that is down)."""
        if self._client is None:
            import httpx
            from langgraph_sdk import get_client
            from langgraph_sdk.client import LangGraphClient

            made = get_client(url=self.url, timeout=30, headers=token_headers()).http.client
            self._client = LangGraphClient(
                httpx.AsyncClient(
                    base_url=made.base_url,
                    transport=httpx.AsyncHTTPTransport(retries=CONNECT_RETRIES),
                    timeout=made.timeout,
                    headers=made.headers,  # the SDK's: its API key from the environment, if set
                )
            )
        return self._client

    def unavailable(self, exc: Exception) -> ServerUnavailable:
        """One of `server_errors()` as the line the user sees."""
        status = getattr(getattr(exc, "response", None), "status_code", None)
        if status in (401, 403):
            return ServerUnavailable(
                f"the LangGraph server at {self.url} refused deepacp ({status}): set "
                f"{TOKEN_VARIABLE} here to the token the server was started with"
            )
        return ServerUnavailable(
            f"the LangGraph server at {self.url} is not reachable ({type(exc).__name__}); "
            "start it with `langgraph dev` in the deepacp checkout, or check --server"
        )

    async def create(self, thread_id: str, metadata: dict[str, Any]) -> None:
        """Make a session's thread on the server (an existing one is kept)."""
        try:
            await self.client.threads.create(
                thread_id=server_thread_id(thread_id), metadata=metadata, if_exists="do_nothing"
            )
        except server_errors() as exc:
            raise self.unavailable(exc) from None

    async def delete(self, thread_id: str) -> None:
        """Delete a session's thread; one the server does not have is no error."""
        from langgraph_sdk.errors import NotFoundError

        try:
            await self.client.threads.delete(server_thread_id(thread_id))
        except NotFoundError:
            pass
        except server_errors() as exc:
            raise self.unavailable(exc) from None
