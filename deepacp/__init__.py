"""deepacp: a deep coding agent that lives in your editor."""

from typing import TYPE_CHECKING, Any

from deepacp._version import __version__

if TYPE_CHECKING:
    from deepacp.harness import (
        CommandRule,
        CompiledSubAgent,
        PermissionRule,
        SubAgent,
        create_deep_agent,
    )

__all__ = [
    "CommandRule",
    "CompiledSubAgent",
    "PermissionRule",
    "SubAgent",
    "__version__",
    "create_deep_agent",
]


def __getattr__(name: str) -> Any:
    # Imported on first use: `deepacp --stdio` must answer `initialize` before the
    # harness (LangChain, LangGraph) is loaded.
    if name in __all__:
        import deepacp.harness

        return getattr(deepacp.harness, name)
    raise AttributeError(f"module 'deepacp' has no attribute {name!r}")
