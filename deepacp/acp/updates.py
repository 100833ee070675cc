"""Events -> ACP wire objects, and ACP prompt blocks -> model input. Pure functions."""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import Any, Literal
from urllib.parse import unquote, urlparse

from acp import schema as S
from acp.exceptions import RequestError
from acp.helpers import (
    plan_entry,
    start_tool_call,
    text_block,
    tool_content,
    tool_diff_content,
    tool_terminal_ref,
    update_agent_message_text,
    update_agent_thought_text,
    update_available_commands,
    update_plan,
    update_tool_call,
    update_user_message_text,
)

from deepacp.acp.newer_schema import NamedToolCallStart
from deepacp.backends.sandbox import POLICIES, POLICY_DESCRIPTIONS, SandboxPolicy
from deepacp.effort import EffortChoice
from deepacp.events import (
    Command,
    Event,
    FileDiff,
    MessageChunk,
    Notice,
    PermissionKind,
    PermissionRequest,
    PlanUpdated,
    Question,
    ThoughtChunk,
    TitleChanged,
    ToolFinished,
    ToolOutput,
    ToolRunning,
    ToolStarted,
    UsageUpdated,
    UserMessage,
    new_message_id,
    notice_id,
)
from deepacp.session import MODES, now

EFFORT_OPTION = "effort"

SANDBOX_OPTION = "sandbox"
PROFILE_OPTION = "profile"
PROFILE_DESCRIPTIONS = {
    "auto": "Chosen from the model and its server",
    "default": "The full harness",
    "small-local": "For small contexts: short tool descriptions, fewer tools, a short prompt",
}
PERMISSION_LABELS: dict[PermissionKind, str] = {
    "allow_once": "Allow once",
    "allow_always": "Always allow",
    "reject_once": "Reject",
    "reject_always": "Always reject",
}


def _locations(
    event: ToolStarted | ToolFinished | PermissionRequest,
) -> list[S.ToolCallLocation] | None:
    return [S.ToolCallLocation(path=loc.path, line=loc.line) for loc in event.locations] or None


def _diff_content(diff: FileDiff | None) -> list[Any]:
    """A change as diff content; a deletion is a diff to empty text (ACP's newText is
    required)."""
    if diff is None or (diff.old_text is None and diff.new_text is None):
        return []
    return [tool_diff_content(diff.path, diff.new_text or "", diff.old_text)]


def terminal_update(tool_call_id: str, terminal_id: str) -> S.ToolCallProgress:
    """The card shows the editor's terminal, live."""
    return update_tool_call(tool_call_id, content=[tool_terminal_ref(terminal_id)])


def commands_update(commands: Sequence[Command]) -> S.AvailableCommandsUpdate:
    return update_available_commands(
        S.AvailableCommand(
            name=c.name,
            description=c.description,
            input=S.AvailableCommandInput(root=S.UnstructuredCommandInput(hint=c.hint))
            if c.hint
            else None,
        )
        for c in commands
    )


def answer_schema(question: Question) -> S.ElicitationSchema:
    """A one-field form for ask_user: free text, or one of the choices."""
    field = S.ElicitationStringPropertySchema(
        type="string", title="Answer", enum=list(question.choices) or None
    )
    return S.ElicitationSchema(type="object", properties={"answer": field}, required=["answer"])


def tool_output_update(tool_call_id: str, text: str) -> S.ToolCallProgress:
    """A running tool's output so far (ACP replaces a card's content on each update)."""
    return update_tool_call(tool_call_id, content=[tool_content(text_block(text))])


_CHUNKS: dict[type, Any] = {
    MessageChunk: update_agent_message_text,
    ThoughtChunk: update_agent_thought_text,
    UserMessage: update_user_message_text,
}


def _chunk(event: MessageChunk | ThoughtChunk | UserMessage) -> Any:
    """A message's chunk, under the message's id (the same live and replayed); text shown
    once in one piece and kept in no thread (a command's answer) gets an id of its own."""
    update = _CHUNKS[type(event)](event.text)
    update.message_id = event.message_id or new_message_id()
    return update


def to_update(event: Event, terminal_id: str | None = None) -> Any:
    """The `session/update` payload for an event. A finished card that ran in an editor
    terminal (`terminal_id`) keeps showing it."""
    if isinstance(event, MessageChunk | ThoughtChunk | UserMessage):
        return _chunk(event)
    if isinstance(event, ToolStarted):
        start = start_tool_call(
            event.tool_call_id,
            event.title,
            kind=event.kind,
            status="pending",
            raw_input=event.args,
            content=_diff_content(event.diff) or None,
            locations=_locations(event),
        )
        return NamedToolCallStart(**dict(start), name=event.name)
    if isinstance(event, ToolRunning):
        return update_tool_call(event.tool_call_id, status="in_progress")
    if isinstance(event, ToolOutput):
        return tool_output_update(event.tool_call_id, event.text)
    if isinstance(event, ToolFinished):
        content: list[Any] = []
        if terminal_id is not None:
            content.append(tool_terminal_ref(terminal_id))
        content += _diff_content(event.diff)
        if event.text:
            content.append(tool_content(text_block(event.text)))
        return update_tool_call(
            event.tool_call_id,
            status=event.status,
            content=content or None,
            locations=_locations(event),
        )
    if isinstance(event, Notice):
        return _chunk(MessageChunk(f"{event.text}\n", notice_id(event.text)))
    if isinstance(event, UsageUpdated):
        cost = None
        if event.cost is not None:
            cost = S.Cost(amount=event.cost.amount, currency=event.cost.currency)
        return S.UsageUpdate(
            session_update="usage_update", used=event.used, size=event.size, cost=cost
        )
    if isinstance(event, TitleChanged):
        return S.SessionInfoUpdate(
            session_update="session_info_update", title=event.title, updated_at=now()
        )
    if isinstance(event, PlanUpdated):
        return update_plan(
            plan_entry(e.content, status=e.status, priority=e.priority) for e in event.entries
        )
    raise TypeError(f"no ACP update for {type(event).__name__}")


def permission_tool_call(request: PermissionRequest) -> S.ToolCallUpdate:
    """The call a permission request is about, with the kind and proposed diff its card
    shows (clients draw the prompt from what the request carries)."""
    return S.ToolCallUpdate(
        tool_call_id=request.tool_call_id,
        title=request.title,
        kind=request.kind,
        content=_diff_content(request.diff) or None,
        locations=_locations(request),
    )


def permission_options(request: PermissionRequest) -> list[S.PermissionOption]:
    return [
        S.PermissionOption(option_id=kind, name=PERMISSION_LABELS[kind], kind=kind)
        for kind in request.options
    ]


def permission_answer(
    response: S.RequestPermissionResponse, request: PermissionRequest
) -> PermissionKind | None:
    """The option the user picked, or None when the client cancelled the question."""
    outcome = response.outcome
    if isinstance(outcome, S.AllowedOutcome) and outcome.option_id in request.options:
        return outcome.option_id
    return None


def mode_state(current: str) -> S.SessionModeState:
    return S.SessionModeState(
        current_mode_id=current,
        available_modes=[
            S.SessionMode(id=m.id, name=m.name, description=m.description) for m in MODES
        ],
    )


def _select(
    option_id: str,
    name: str,
    current: str,
    choices: list[tuple[str, str, str | None]],
    *,
    category: Literal["mode", "model", "thought_level"] | None = None,
    description: str | None = None,
) -> S.SessionConfigOptionSelect:
    """A picker among `choices` (value, name, description); what is None is not sent."""
    return S.SessionConfigOptionSelect(
        type="select",
        id=option_id,
        name=name,
        category=category,
        description=description,
        current_value=current,
        options=[
            S.SessionConfigSelectOption(value=value, name=label, description=about)
            for value, label, about in choices
        ],
    )


def effort_option(choice: EffortChoice) -> S.SessionConfigOptionSelect:
    """The reasoning-effort picker (ACP category `thought_level`)."""
    return _select(
        EFFORT_OPTION,
        "Thinking",
        choice.current,
        [(level, choice.label(level), None) for level in choice.levels],
        category="thought_level",
        description="How much the model reasons before it answers",
    )


def config_options(
    mode: str, model: str, models: list[str], effort: EffortChoice | None = None
) -> list[S.SessionConfigOptionSelect]:
    """The session's pickers: mode, model, and thinking effort when the model has levels."""
    thinking = [effort_option(effort)] if effort is not None else []
    return [
        _select(
            "mode", "Mode", mode, [(m.id, m.name, m.description) for m in MODES], category="mode"
        ),
        _select("model", "Model", model, [(spec, spec, None) for spec in models], category="model"),
        *thinking,
    ]


def sandbox_option(current: SandboxPolicy, problem: str | None) -> S.SessionConfigOptionSelect:
    """The `sandbox` option: the policy commands run under. Where no sandbox can work it
    offers `off` alone, saying why, so the picker never claims a sandbox there is not."""
    choices: tuple[SandboxPolicy, ...] = ("off",) if problem else POLICIES
    return _select(
        SANDBOX_OPTION,
        "Sandbox",
        "off" if problem else current,
        [(p, p, POLICY_DESCRIPTIONS[p]) for p in choices],
        description=f"No sandbox: {problem}" if problem else "How shell commands are confined",
    )


def profile_option(current: str) -> S.SessionConfigOptionSelect:
    """The `profile` option: how much of the harness the model is shown."""
    return _select(
        PROFILE_OPTION,
        "Profile",
        current,
        [(name, name, about) for name, about in PROFILE_DESCRIPTIONS.items()],
        description="The harness profile: tools and prompt the model is sent",
    )


def _file_path(uri: str) -> str | None:
    parsed = urlparse(uri)
    if parsed.scheme != "file":
        return None
    return unquote(parsed.path)


def _workspace_hint(uri: str, cwd: str) -> str:
    path = _file_path(uri)
    if path is None:
        return ""
    try:
        return f' path="{Path(path).relative_to(cwd).as_posix()}"'
    except ValueError:
        return f' path="{path}"'


def prompt_content(blocks: list[Any], cwd: str) -> list[dict]:
    """ACP prompt blocks as LangChain content blocks, losing nothing: links keep their URI
    (and the workspace path of a file), embedded resources their URI and text."""
    content: list[dict] = []
    for block in blocks:
        if isinstance(block, S.TextContentBlock):
            content.append({"type": "text", "text": block.text})
        elif isinstance(block, S.ResourceContentBlock):
            hint = _workspace_hint(block.uri, cwd)
            text = f'<resource_link uri="{block.uri}" name="{block.name}"{hint} />'
            content.append({"type": "text", "text": text})
        elif isinstance(block, S.EmbeddedResourceContentBlock):
            resource = block.resource
            if isinstance(resource, S.TextResourceContents):
                hint = _workspace_hint(resource.uri, cwd)
                text = f'<resource uri="{resource.uri}"{hint}>\n{resource.text}\n</resource>'
                content.append({"type": "text", "text": text})
            elif (resource.mime_type or "").startswith("image/"):
                content.append(
                    {"type": "image", "base64": resource.blob, "mime_type": resource.mime_type}
                )
            else:
                kind = resource.mime_type or "unknown type"
                details = f"binary resource {resource.uri} ({kind}) is not supported"
                raise RequestError.invalid_params({"details": details})
        elif isinstance(block, S.ImageContentBlock):
            content.append({"type": "image", "base64": block.data, "mime_type": block.mime_type})
        else:
            kind = getattr(block, "type", type(block).__name__)
            raise RequestError.invalid_params(
                {"details": f"prompt blocks of type {kind!r} are not supported"}
            )
    return content
