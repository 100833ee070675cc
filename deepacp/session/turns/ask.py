"""ask_user: a tool for when the agent needs a decision only the user can make."""

from __future__ import annotations

from langchain.tools import ToolRuntime
from langchain_core.tools import BaseTool, StructuredTool
from langgraph.types import interrupt

from deepacp.harness import ASK_USER, QuestionInterrupt

ASKED_IN_CHAT = (
    "The question was shown to the user; their answer will arrive as their next message. "
    "Stop here and wait for it."
)


async def ask_user(question: str, runtime: ToolRuntime, choices: list[str] | None = None) -> str:
    """Ask the user and wait for the answer: for decisions only they can make, not for
    permission to run tools (that is asked for automatically).

    Args:
        question: The question, complete in itself.
        choices: A fixed set of answers to pick from, if any.
    """
    asked = QuestionInterrupt(runtime.tool_call_id or "", question, tuple(choices or ()))
    return str(interrupt(asked.as_value()))


def ask_user_tool() -> BaseTool:
    return StructuredTool.from_function(coroutine=ask_user, name=ASK_USER, parse_docstring=True)
