"""`--max-turns` counts the model's answers since the user's last message: deepacp's notes
and the goal grader's feedback, which are user-role messages too, do not start a new count."""

from langchain_core.messages import AIMessage, HumanMessage, ToolMessage

from deepacp.harness.contracts import GRADER_SOURCE
from deepacp.harness.middleware.inbox import review_message
from deepacp.harness.middleware.turn_limit import calls_since_the_user


def test_notes_and_feedback_do_not_reset_the_count() -> None:
    feedback = HumanMessage("not yet", additional_kwargs={"lc_source": GRADER_SOURCE})
    messages = [
        HumanMessage("earlier"),
        AIMessage("old answer"),
        HumanMessage("fix it"),
        AIMessage("", tool_calls=[{"id": "a", "name": "ls", "args": {}}]),
        ToolMessage("listing", tool_call_id="a"),
        review_message("the user rejected a hunk"),
        AIMessage("done"),
        feedback,
        AIMessage("done now"),
    ]
    assert calls_since_the_user(messages) == 3
    assert calls_since_the_user([HumanMessage("new")]) == 0
