"""A model stuck in a loop: the reply is stopped mid-stream, the model is told once, and a
second loop ends the turn with a plain message (stop reason `max_tokens`) in bounded time."""

from __future__ import annotations

ENDLESS = {"content": "[list_task: ", "repeat": 10_000_000}  # hours of stream if not stopped


async def test_a_looping_reply_is_stopped_and_the_model_told_once(
    agent_factory, model_requests
) -> None:
    async with agent_factory([ENDLESS, {"content": "Sorry. There are no tasks."}]) as agent:
        session = await agent.new_session()
        response = await agent.prompt(session, "list the tasks")
        assert response.stop_reason == "end_turn"
        assert agent.client.text().endswith("Sorry. There are no tasks.")
        assert agent.client.text().count("[list_task:") < 100  # stopped soon
        told = model_requests()[1]["messages"]
        assert told[-1]["type"] == "human"
        assert 'kept repeating "[list_task: [list_task: [list_task"' in told[-1]["content"]
        assert told[-2]["type"] == "ai" and told[-2]["content"].endswith("[…]")
        assert len(told[-2]["content"]) < 1_000  # the loop is not kept in the thread


async def test_a_second_loop_ends_the_turn_with_a_plain_message(
    agent_factory, model_requests
) -> None:
    async with agent_factory([ENDLESS, ENDLESS, {"content": "fine"}]) as agent:
        session = await agent.new_session()
        response = await agent.prompt(session, "list the tasks")
        assert response.stop_reason == "max_tokens"
        assert agent.client.text().endswith(
            'Stopped: the model kept repeating "[list_task: [list_task: [list_task" after it '
            "was told once, so this turn ends here. Send a message to go on."
        )
        assert len(model_requests()) == 2
        again = await agent.prompt(session, "go on")  # the thread is valid for the next turn
        assert again.stop_reason == "end_turn" and agent.client.text().endswith("fine")
