"""deepacp: a deep coding agent that lives in your editor."""

from typing import TYPE_CHECKING

from deepacp._version import __version__
from deepacp.lazy import lazy_names

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


# Imported on first use: `deepacp --stdio` must answer `initialize` before the harness
# (LangChain, LangGraph) is loaded.
__getattr__ = lazy_names(__name__, dict.fromkeys(set(__all__) - {"__version__"}, "deepacp.harness"))
