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
from typing import Any

from deepacp.backends.sandbox import SandboxSetting
from deepacp.config import deepacp_home, load_config, sandbox_policy
from deepacp.models import configured_spec, resolve_model
from deepacp.private import private_dir
from deepacp.session.hosts.threads import RunSettings
from deepacp.session.turns.approvals import ApprovalPolicy, runs_code_later
from deepacp.session.workspace import session_backend

_models: dict[str, Any] = {}
"""Models by spec, kept across runs (the factory runs per run; a scripted model's place in
its script must survive the approval that pauses a run)."""


def _model(spec: str) -> Any:
    if spec not in _models:
        _models[spec] = resolve_model(spec)
    return _models[spec]


def _run_setup(config: dict[str, Any]) -> tuple[RunSettings, str, Any, ApprovalPolicy]:
    """The run's settings, model spec, workspace backend and approval policy."""
    configurable = config.get("configurable") or {}
    settings = RunSettings.from_configurable(configurable, tempfile.gettempdir())
    spec = configured_spec(settings.model or os.environ.get("DEEPACP_MODEL"))
    home = deepacp_home()
    scratch = home / "server-scratch" / str(configurable.get("thread_id"))
    private_dir(scratch)
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
    policy.breach = sandbox.breach
    return settings, spec, backend, policy


def make_graph(config: dict[str, Any]) -> Any:
    """The session harness for the run whose config is `config`, assembled as a session in
    a deepacp process assembles it (`deepacp.session.assembly`), with the run's goal; its
    background tasks are threads of this server running `make_task_graph`. Hooks do not
    run here (the client says so)."""
    from deepacp.harness.profiles import profile_for
    from deepacp.session.assembly import Contributions, assemble
    from deepacp.session.hosts.server_tasks import ServerTasks

    settings, spec, backend, policy = _run_setup(config)
    thread_id = str((config.get("configurable") or {}).get("thread_id"))
    parts = Contributions(background=ServerTasks(thread_id, settings.as_configurable()))
    if settings.goal:
        parts.goal, parts.goal_rounds = (lambda: settings.goal), load_config().goal_rounds
    return assemble(
        _model(spec),
        backend,
        policy,
        None,  # the server brings its own checkpointer
        parts,
        planning=True,
        profile=profile_for(spec),
        retry=load_config().retry,
    )


def make_task_graph(config: dict[str, Any]) -> Any:
    """A background task's harness (the general-purpose sub-agent) for the run whose
    config is `config`: the parent's workspace, model and mode, refusing what would ask."""
    from deepacp.harness.profiles import profile_for
    from deepacp.session.assembly import assemble_task

    _, spec, backend, policy = _run_setup(config)
    return assemble_task(
        _model(spec), backend, policy, profile=profile_for(spec), retry=load_config().retry
    )
