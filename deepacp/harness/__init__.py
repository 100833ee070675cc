"""The deep-agent harness: ordered middleware on LangChain's create_agent.

Its public names, the only ones the session layer and the faces import (`from
deepacp.harness import X`, `tests/unit/test_layers.py`). Lazy: importing this package
loads nothing; a name loads its home module on first use, so `deepacp --stdio` answers
`initialize` before LangChain is loaded."""

from typing import TYPE_CHECKING

from deepacp.lazy import homes_of, lazy_names

if TYPE_CHECKING:
    from deepacp.backends.permissions import CommandRule, PermissionRule
    from deepacp.harness import names
    from deepacp.harness.background import (
        BACKGROUND_KEY,
        InProcessTasks,
        Outcome,
        TaskRecord,
        TaskStatus,
        merge_tasks,
        outcome_of,
        shown_status,
        update_text,
    )
    from deepacp.harness.contracts import (
        ALLOW,
        ASK_USER,
        ApprovalInterrupt,
        EditArtifact,
        GoalSignal,
        HookDecision,
        ModelRetrySignal,
        NoticeSignal,
        QuestionInterrupt,
        SubagentStepSignal,
        parse_interrupt,
        signal_from_json,
    )
    from deepacp.harness.delegation import current_task_call
    from deepacp.harness.graph import create_background_agent, create_deep_agent
    from deepacp.harness.messages import card_text_of, text_of
    from deepacp.harness.middleware.goal import is_feedback
    from deepacp.harness.middleware.inbox import InboxMiddleware, is_note, review_message
    from deepacp.harness.middleware.mode import ModeMiddleware
    from deepacp.harness.middleware.patch_tool_calls import answer_for, dangling_tool_calls
    from deepacp.harness.middleware.subagents import CompiledSubAgent, SubAgent
    from deepacp.harness.middleware.summarization import SummarizationMiddleware
    from deepacp.harness.middleware.truncation import LIMIT_STOPS, stop_of
    from deepacp.harness.middleware.turn_limit import MAX_MODEL_CALLS, TurnLimitMiddleware
    from deepacp.harness.names import (
        EDIT_FILE,
        EXECUTE,
        HISTORY_DIR,
        LARGE_RESULTS_DIR,
        MEMORY_FILE,
        MUTATING_FILE_TOOLS,
        OUTSIDE_SANDBOX_ARG,
        WRITE_FILE,
    )
    from deepacp.harness.profiles import HarnessProfile, ServerFacts, choose_profile, profile_for
    from deepacp.harness.skills import (
        SKILL_FILE,
        Skill,
        SkillIndex,
        discover_skills,
        validate_skill,
    )
    from deepacp.harness.state import MESSAGES, MESSAGES_CHANNEL, read_messages, read_value
    from deepacp.harness.usage import USAGE_KEY, TokenUsage

_EXPORTS = {
    "deepacp.backends.permissions": ("CommandRule", "PermissionRule"),
    "deepacp.harness.background": (
        "BACKGROUND_KEY",
        "InProcessTasks",
        "Outcome",
        "TaskRecord",
        "TaskStatus",
        "merge_tasks",
        "outcome_of",
        "shown_status",
        "update_text",
    ),
    "deepacp.harness.contracts": (
        "ALLOW",
        "ASK_USER",
        "ApprovalInterrupt",
        "EditArtifact",
        "GoalSignal",
        "HookDecision",
        "ModelRetrySignal",
        "NoticeSignal",
        "QuestionInterrupt",
        "SubagentStepSignal",
        "parse_interrupt",
        "signal_from_json",
    ),
    "deepacp.harness.delegation": ("current_task_call",),
    "deepacp.harness.graph": ("create_background_agent", "create_deep_agent"),
    "deepacp.harness.messages": ("card_text_of", "text_of"),
    "deepacp.harness.middleware.goal": ("is_feedback",),
    "deepacp.harness.middleware.inbox": ("InboxMiddleware", "is_note", "review_message"),
    "deepacp.harness.middleware.mode": ("ModeMiddleware",),
    "deepacp.harness.middleware.patch_tool_calls": ("answer_for", "dangling_tool_calls"),
    "deepacp.harness.middleware.subagents": ("CompiledSubAgent", "SubAgent"),
    "deepacp.harness.middleware.summarization": ("SummarizationMiddleware",),
    "deepacp.harness.middleware.truncation": ("LIMIT_STOPS", "stop_of"),
    "deepacp.harness.middleware.turn_limit": ("MAX_MODEL_CALLS", "TurnLimitMiddleware"),
    "deepacp.harness.names": (
        "EDIT_FILE",
        "EXECUTE",
        "HISTORY_DIR",
        "LARGE_RESULTS_DIR",
        "MEMORY_FILE",
        "MUTATING_FILE_TOOLS",
        "OUTSIDE_SANDBOX_ARG",
        "WRITE_FILE",
    ),
    "deepacp.harness.profiles": ("HarnessProfile", "ServerFacts", "choose_profile", "profile_for"),
    "deepacp.harness.skills": (
        "SKILL_FILE",
        "Skill",
        "SkillIndex",
        "discover_skills",
        "validate_skill",
    ),
    "deepacp.harness.state": ("MESSAGES", "MESSAGES_CHANNEL", "read_messages", "read_value"),
    "deepacp.harness.usage": ("USAGE_KEY", "TokenUsage"),
}
_NAMESPACES = ("names",)
"""Modules public as a whole: `names` holds the tool and file names the model sees."""

__all__ = [
    "ALLOW",
    "ASK_USER",
    "BACKGROUND_KEY",
    "EDIT_FILE",
    "EXECUTE",
    "HISTORY_DIR",
    "LARGE_RESULTS_DIR",
    "LIMIT_STOPS",
    "MAX_MODEL_CALLS",
    "MEMORY_FILE",
    "MESSAGES",
    "MESSAGES_CHANNEL",
    "MUTATING_FILE_TOOLS",
    "OUTSIDE_SANDBOX_ARG",
    "SKILL_FILE",
    "USAGE_KEY",
    "WRITE_FILE",
    "ApprovalInterrupt",
    "CommandRule",
    "CompiledSubAgent",
    "EditArtifact",
    "GoalSignal",
    "HarnessProfile",
    "HookDecision",
    "InProcessTasks",
    "InboxMiddleware",
    "ModeMiddleware",
    "ModelRetrySignal",
    "NoticeSignal",
    "Outcome",
    "PermissionRule",
    "QuestionInterrupt",
    "ServerFacts",
    "Skill",
    "SkillIndex",
    "SubAgent",
    "SubagentStepSignal",
    "SummarizationMiddleware",
    "TaskRecord",
    "TaskStatus",
    "TokenUsage",
    "TurnLimitMiddleware",
    "answer_for",
    "card_text_of",
    "choose_profile",
    "create_background_agent",
    "create_deep_agent",
    "current_task_call",
    "dangling_tool_calls",
    "discover_skills",
    "is_feedback",
    "is_note",
    "merge_tasks",
    "names",
    "outcome_of",
    "parse_interrupt",
    "profile_for",
    "read_messages",
    "read_value",
    "review_message",
    "shown_status",
    "signal_from_json",
    "stop_of",
    "text_of",
    "update_text",
    "validate_skill",
]


__getattr__ = lazy_names(__name__, homes_of(_EXPORTS), _NAMESPACES)
