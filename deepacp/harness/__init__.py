"""The deep-agent harness: ordered middleware on LangChain's create_agent."""

from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from deepacp.harness.graph import create_deep_agent

__all__ = ["create_deep_agent"]


def __getattr__(name: str) -> Any:
    # Lazy, so that `deepacp.harness.names` can be imported without LangChain.
    if name == "create_deep_agent":
        from deepacp.harness.graph import create_deep_agent

        return create_deep_agent
    raise AttributeError(f"module 'deepacp.harness' has no attribute {name!r}")
