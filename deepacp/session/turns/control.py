"""How a turn ends early: the few exceptions the turn loop uses for control flow."""

from __future__ import annotations

from deepacp.events import Question


class TurnCancelled(Exception):
    """The user stopped the turn, or dismissed a question it asked."""


class AskInChat(Exception):
    """The face cannot ask the question now: the turn ends with it as the agent's message."""

    def __init__(self, question: Question) -> None:
        super().__init__(question.question)
        self.question = question
