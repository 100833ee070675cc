"""deepacp: a deep coding agent that lives in your editor."""

from typing import TYPE_CHECKING

from deepacp._version import __version__
from deepacp.deferred_inits import install
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


# Two packages LangChain and LangGraph import for a few names load the rest when used
# (deferred_inits.py): a third of the harness import's CPU.
install()

# Imported on first use: `deepacp --stdio` must answer `initialize` before the harness
# (LangChain, LangGraph) is loaded.
__getattr__ = lazy_names(__name__, dict.fromkeys(set(__all__) - {"__version__"}, "deepacp.harness"))
