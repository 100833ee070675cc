"""The deep-agent harness: ordered middleware on LangChain's create_agent."""

from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from deepacp.backends.permissions import CommandRule, PermissionRule
    from deepacp.harness.graph import create_deep_agent
    from deepacp.harness.middleware.subagents import CompiledSubAgent, SubAgent

__all__ = ["CommandRule", "CompiledSubAgent", "PermissionRule", "SubAgent", "create_deep_agent"]

_HOMES = {
    "create_deep_agent": "deepacp.harness.graph",
    "SubAgent": "deepacp.harness.middleware.subagents",
    "CompiledSubAgent": "deepacp.harness.middleware.subagents",
    "PermissionRule": "deepacp.backends.permissions",
    "CommandRule": "deepacp.backends.permissions",
}


def __getattr__(name: str) -> Any:
    # Lazy, so that `deepacp.harness.names` can be imported without LangChain.
    if name in _HOMES:
        import importlib

        return getattr(importlib.import_module(_HOMES[name]), name)
    raise AttributeError(f"module 'deepacp.harness' has no attribute {name!r}")
