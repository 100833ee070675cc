"""deepacp's harness as a LangGraph server graph: `langgraph dev` (or any LangGraph /
Agent Protocol server) loads `make_graph` from the repository's `langgraph.json` and calls
it for every run, with the run's config.

The run's `configurable` says where and how the graph works (`RunSettings`); the server
keeps the threads (its checkpointer), and approvals are the harness's own interrupts, which
the client answers by resuming the run. The model comes from the run's config, else from
the server's `DEEPACP_MODEL` (or config.toml): API keys stay on the server.
"""

from __future__ import annotations

import os
import tempfile
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from deepacp.backends.sandbox import SandboxSetting
from deepacp.config import deepacp_home, load_config, sandbox_policy
from deepacp.errors import ConfigError
from deepacp.models import configured_spec, resolve_model
from deepacp.session.approvals import ApprovalPolicy, runs_code_later
from deepacp.session.modes import DEFAULT_MODE, Mode, parse_mode
from deepacp.session.workspace import session_backend

_models: dict[str, Any] = {}
"""Models by spec, kept across runs (the factory runs per run; a scripted model's place in
its script must survive the approval that pauses a run)."""


@dataclass(frozen=True)
class RunSettings:
    """What a run's `configurable` carries for deepacp (see `as_configurable`)."""

    workspace: str
    model: str | None = None
    mode: Mode = DEFAULT_MODE
    always_allow: tuple[tuple[str, str], ...] = ()
    always_reject: tuple[tuple[str, str], ...] = ()
    asked: tuple[str, ...] = field(default=())
    """Tool calls already put to the user: they stay gated when the run resumes."""

    def as_configurable(self) -> dict[str, Any]:
        return {
            "workspace": self.workspace,
            "model": self.model or "",
            "mode": self.mode,
            "always_allow": [list(key) for key in self.always_allow],
            "always_reject": [list(key) for key in self.always_reject],
            "asked": list(self.asked),
        }

    @classmethod
    def from_configurable(cls, values: dict[str, Any]) -> RunSettings:
        """The settings in a run's config (a `ConfigError` for a bad workspace or mode).
        Without a workspace (the server reading a thread's state) a scratch folder stands in."""
        workspace = values.get("workspace") or tempfile.gettempdir()
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
        return cls(workspace, model, mode, keys("always_allow"), keys("always_reject"), asked)


def _model(spec: str) -> Any:
    if spec not in _models:
        _models[spec] = resolve_model(spec)
    return _models[spec]


def make_graph(config: dict[str, Any]) -> Any:
    """The session harness for the run whose config is `config`."""
    from deepacp.harness.middleware.summarization import SummarizationMiddleware
    from deepacp.harness.profiles import profile_for
    from deepacp.session.agent import build_session_agent
    from deepacp.session.ask import ask_user_tool

    settings = RunSettings.from_configurable(config.get("configurable") or {})
    spec = configured_spec(settings.model or os.environ.get("DEEPACP_MODEL"))
    home = deepacp_home()
    scratch = home / "server-scratch" / str((config.get("configurable") or {}).get("thread_id"))
    scratch.mkdir(parents=True, exist_ok=True)
    sandbox = SandboxSetting(sandbox_policy(None), unasked=settings.mode == "accept-edits")
    backend = session_backend(settings.workspace, scratch, home, sandbox=sandbox)
    policy = ApprovalPolicy(
        mode=settings.mode,
        always_allow=set(settings.always_allow),
        always_reject=set(settings.always_reject),
        asked=set(settings.asked),
    )
    policy.runs_code_later = lambda path: runs_code_later(backend, path)
    policy.sandbox = lambda: sandbox.effective
    return build_session_agent(
        _model(spec),
        backend,
        policy,
        None,  # the server brings its own checkpointer
        tools=[ask_user_tool()],
        summarizer=SummarizationMiddleware(backend),
        planning=True,
        profile=profile_for(spec),
        retry=load_config().retry,
    )
