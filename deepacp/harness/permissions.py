"""Permission rules at the tool layer: `interrupt` rules become approvals (with the path or
command in the description), merged with the caller's own `interrupt_on`."""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any

from langchain.agents.middleware.human_in_the_loop import DecisionType, InterruptOnConfig

from deepacp.backends.errors import BackendError
from deepacp.backends.permissions import Operation, PermissionBackend, command_decision
from deepacp.harness.names import DELETE, EDIT_FILE, EXECUTE, GLOB, GREP, LS, READ_FILE, WRITE_FILE

ALL_DECISIONS: list[DecisionType] = ["approve", "edit", "reject", "respond"]
ASK: list[DecisionType] = ["approve", "reject"]

# Which operation each file tool performs, and the argument naming its path.
FILE_TOOL_ACCESS: dict[str, tuple[Operation, str]] = {
    READ_FILE: ("read", "file_path"),
    LS: ("read", "path"),
    GLOB: ("read", "path"),
    GREP: ("read", "path"),
    WRITE_FILE: ("write", "file_path"),
    EDIT_FILE: ("write", "file_path"),
    DELETE: ("write", "file_path"),
}


def approval_gates(backend: PermissionBackend) -> dict[str, InterruptOnConfig]:
    """interrupt_on entries that ask whenever an `interrupt` rule covers a call."""
    gates: dict[str, InterruptOnConfig] = {}
    for tool, (operation, arg) in FILE_TOOL_ACCESS.items():
        gates[tool] = _file_gate(backend, operation, arg)
    if backend.shell is not None:

        def run_when(request: Any) -> bool:
            command = str(request.tool_call["args"].get("command", ""))
            decision = command_decision(
                backend.command_rules, command, path_rules_present=bool(backend.path_rules)
            )
            return decision == "interrupt"

        gates[EXECUTE] = {
            "allowed_decisions": ASK,
            "when": run_when,
            "description": lambda tool_call, state, runtime: (
                f"The shell policy asks before running: {tool_call['args'].get('command')}"
            ),
        }
    return gates


def _file_gate(backend: PermissionBackend, operation: Operation, arg: str) -> InterruptOnConfig:
    """Ask when an `interrupt` rule covers the path in the call's `arg`."""

    def when(request: Any) -> bool:
        try:
            decision = backend.decision(operation, str(request.tool_call["args"].get(arg, "")))
        except BackendError:
            return False  # the tool reports the bad path itself
        return decision == "interrupt"

    def describe(tool_call: Any, state: Any, runtime: Any) -> str:
        path = tool_call["args"].get(arg)
        return f"A permission rule asks before {operation} access to {path}"

    return {"allowed_decisions": ASK, "when": when, "description": describe}


def _config(value: bool | InterruptOnConfig) -> InterruptOnConfig | None:
    if value is True:
        return {"allowed_decisions": ALL_DECISIONS}
    return value or None


def merge_gates(
    base: Mapping[str, bool | InterruptOnConfig], extra: Mapping[str, InterruptOnConfig]
) -> dict[str, bool | InterruptOnConfig]:
    """Ask when either the caller's config or a permission rule says so."""
    merged: dict[str, Any] = {name: cfg for name, value in base.items() if (cfg := _config(value))}
    for name, gate in extra.items():
        current = merged.get(name)
        if current is None:
            merged[name] = gate
            continue
        if "when" not in current:
            continue  # the caller already asks every time
        first: Callable = current["when"]
        second: Callable = gate["when"]
        merged[name] = {**current, "when": lambda r, a=first, b=second: a(r) or b(r)}
    return merged
