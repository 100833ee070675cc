"""What a paused run is waiting for, answered: approvals for gated tool calls (from the
mode, an earlier "always", or the user) and answers to the agent's questions."""

from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING, Any

from deepacp.backends.protocol import Backend
from deepacp.events import ASK_IN_CHAT, PermissionKind, PermissionRequest, Question, ToolStarted
from deepacp.harness import ApprovalInterrupt, QuestionInterrupt, parse_interrupt
from deepacp.session.handler import SessionHandler
from deepacp.session.turns import cards
from deepacp.session.turns.approvals import (
    APPROVAL_DECISIONS,
    ESCAPE_OPTIONS,
    ApprovalPolicy,
    permission_options,
)
from deepacp.session.turns.control import AskInChat, TurnCancelled

if TYPE_CHECKING:
    from deepacp.session.hooks import SessionHooks

APPROVE = {"type": "approve"}
REJECT = {"type": "reject"}
PLAN_REFUSAL = {"type": "reject", "message": "Plan mode is read-only; nothing was changed."}


class InterruptResolver:
    """Answers a turn's interrupts, asking the user through the face where it must."""

    def __init__(
        self,
        policy: ApprovalPolicy,
        handler: SessionHandler,
        backend: Backend,
        hooks: SessionHooks | None = None,
    ) -> None:
        self.policy = policy
        self.handler = handler
        self.backend = backend
        self.hooks = hooks

    async def resolve(
        self, interrupts: list[Any], shown: Mapping[str, ToolStarted]
    ) -> dict[str, Any]:
        """The resume value for LangGraph: a decision or answer per interrupt id. `shown`
        are the tool cards the user has seen, whose kind and diff the questions repeat; the
        user is asked in the order the cards were shown, however the calls reached the gate."""
        pending = {i.id: parse_interrupt(i.value) for i in interrupts}  # repeats: sub-agents
        shown_at = {call_id: n for n, call_id in enumerate(shown)}
        ordered = sorted(
            pending.items(), key=lambda item: shown_at.get(item[1].tool_call_id, len(shown_at))
        )
        answers: dict[str, Any] = {}
        for interrupt_id, asked in ordered:
            if isinstance(asked, QuestionInterrupt):
                answers[interrupt_id] = await self._answer(asked)
            else:
                answers[interrupt_id] = await self._decide(asked, shown)
        return answers

    async def _answer(self, asked: QuestionInterrupt) -> str:
        question = Question(asked.tool_call_id, asked.question, asked.choices)
        self._input_required("question", asked.tool_call_id, question=asked.question)
        answer = await self.handler.ask(question)
        if answer is None:
            raise TurnCancelled("the user dismissed the question")
        if answer == ASK_IN_CHAT:
            raise AskInChat(question)
        return answer

    async def _decide(
        self, call: ApprovalInterrupt, shown: Mapping[str, ToolStarted]
    ) -> dict[str, Any]:
        policy = self.policy
        if policy.mode == "plan":  # a sub-agent trying to change things in plan mode
            return PLAN_REFUSAL
        answer = policy.preset_answer(call.name, call.args)
        if answer is None and self.hooks is not None:
            decided = await self._hooks_decide(call)
            if decided is not None:
                return decided
        if answer is None:
            request = await self._request(call, shown)
            self._input_required("permission", call.tool_call_id, title=request.title)
            answer = await self.handler.ask_permission(request)
        if answer is None:
            raise TurnCancelled("the client cancelled the permission question")
        policy.remember(call.name, call.args, answer)
        if policy.mode == "plan":  # switched to plan while the question was open
            return PLAN_REFUSAL
        return APPROVE if allows(answer) else REJECT

    def _input_required(self, kind: str, tool_call_id: str, **shown: str) -> None:
        """Tell the `input_required` hooks (if any) that the user is asked something now."""
        if self.hooks is not None:
            fields = {"kind": kind, "tool_call_id": tool_call_id, **shown}
            self.hooks.fire("input_required", fields)

    async def _hooks_decide(self, call: ApprovalInterrupt) -> dict[str, Any] | None:
        """The `permission_request` hooks' answer (None: they leave it to the user)."""
        assert self.hooks is not None
        fields = {"tool_name": call.name, "tool_call_id": call.tool_call_id, "tool_args": call.args}
        found = await self.hooks.decide("permission_request", fields)
        if found.decision == "allow" and not self.policy.escapes_sandbox(call.name, call.args):
            return APPROVE  # running outside the sandbox is the user's to approve, alone
        if found.decision == "deny":
            return {
                "type": "reject",
                "message": f"Refused by a hook: {found.reason or 'no reason given'}",
            }
        return None

    async def _request(
        self, call: ApprovalInterrupt, shown: Mapping[str, ToolStarted]
    ) -> PermissionRequest:
        """The question for a gated call, with the kind and proposed diff its card shows."""
        card = shown.get(call.tool_call_id)
        if card is None or card.args != call.args:  # a sub-agent's call, or a hook's rewrite
            started = cards.tool_started(
                {"id": call.tool_call_id, "name": call.name, "args": call.args}, self.backend
            )
            card = await cards.with_proposed_diff(started, self.backend)
        title, shown_on = card.title, call.tool_call_id
        if (task := self.policy.task_of.get(call.tool_call_id)) is not None:
            title, shown_on = f"Sub-agent: {title}", task  # the parent's card, which the user sees
        options = permission_options(APPROVAL_DECISIONS)
        escape = self.policy.escapes_sandbox(call.name, call.args)
        if escape:
            title, options = f"Run outside the sandbox: {title}", ESCAPE_OPTIONS
        return PermissionRequest(
            shown_on, title, options, card.kind, card.diff, card.locations, escape
        )


def allows(answer: PermissionKind) -> bool:
    return answer in ("allow_once", "allow_always")
