"""ScriptedChatModel: a real chat model that replays a script offline (tests and the demo).
Over 350 lines because its script format, public and stable, is documented whole here.

Script file format (public and stable)::

    {"record": "/optional/path/requests.jsonl",
     "context_window": 200000,
     "turns": [
       {"reasoning": "optional thought text", "content": "text to stream",
        "tool_calls": [{"id": "call_1", "name": "edit_file", "args": {...}}],
        "delay_ms": 0, "finish_reason": "stop", "when": "optional substring",
        "repeat": 1}
     ]}

Each model call consumes the next turn; when turns run out the model answers
`(script exhausted)`. Sub-agents and the goal grader call the same model, so their calls
take the next turns in the order they happen: a sub-agent's right after the parent's `task`
call, the grader's right after the turn the agent would end on (a grader turn ends with its
verdict, `{"verdict": "needs_revision", "feedback": "..."}`; its recorded requests have a
system prompt that starts "You are the grader"). `delay_ms` sleeps between streamed
chunks. With `record`, every request is appended to that file as one JSON line: system
prompt, messages (a tool result with its `tool_call_id` and `status`, "success" or
"error"), tool names.
A turn with `when` is taken only by a request whose first human message contains that
text (the first such turn not yet taken); every other request takes the next turn without
`when`. That keeps a script deterministic when a background sub-agent calls the model
while its parent does too: tag the child's turns with a phrase from its brief.
`repeat` streams `content` that many times over (a model caught in a loop).
`message_id` is the provider's id of the reply, on its first streamed chunk only (as
Anthropic sends it; without it a reply has LangChain's run id).
`finish_reason` ("stop", "length", "refusal") and `error` (raise a provider error with
that message; `error_type` "api", "rate_limit" (both retried by the harness), "auth" or
"context_overflow") are optional. With
`context_window`, a request larger than the window raises a context-overflow error, as a
provider would, without consuming a turn.
"""

from __future__ import annotations

import asyncio
import json
import os
import time
from collections.abc import AsyncIterator, Callable, Iterator, Sequence
from pathlib import Path
from typing import Any, Literal

from langchain_core.callbacks import AsyncCallbackManagerForLLMRun, CallbackManagerForLLMRun
from langchain_core.exceptions import (
    ContextOverflowError,
    ModelAPIError,
    ModelAuthenticationError,
    ModelRateLimitError,
)
from langchain_core.language_models import BaseChatModel, ModelProfile
from langchain_core.messages import (
    AIMessage,
    AIMessageChunk,
    BaseMessage,
    HumanMessage,
    SystemMessage,
    ToolMessage,
)
from langchain_core.messages.utils import count_tokens_approximately
from langchain_core.outputs import ChatGeneration, ChatGenerationChunk, ChatResult
from langchain_core.utils.function_calling import convert_to_openai_tool
from pydantic import BaseModel, ConfigDict, Field, PrivateAttr, ValidationError

from deepacp.errors import ScriptError
from deepacp.harness.messages import text_of

EXHAUSTED = "(script exhausted)"
CHUNK_CHARS = 8


class ScriptedToolCall(BaseModel):
    model_config = ConfigDict(extra="forbid")
    id: str | None = None
    name: str
    args: dict[str, Any] = Field(default_factory=dict)


class ScriptTurn(BaseModel):
    model_config = ConfigDict(extra="forbid")
    reasoning: str | None = None
    content: str = ""
    repeat: int = Field(default=1, ge=1)
    """`content` streams this many times over."""
    tool_calls: list[ScriptedToolCall] = Field(default_factory=list)
    delay_ms: int = Field(default=0, ge=0)
    finish_reason: Literal["stop", "length", "refusal"] | None = None
    error: str | None = None
    error_type: Literal["api", "rate_limit", "auth", "context_overflow"] = "api"
    when: str | None = None
    """Taken only by a request whose first human message contains this (see above)."""
    message_id: str | None = None


class Script(BaseModel):
    model_config = ConfigDict(extra="forbid")
    record: str | None = None
    context_window: int | None = Field(default=None, gt=0)
    turns: list[ScriptTurn] = Field(default_factory=list)


PROVIDER_ERRORS = {
    "api": ModelAPIError,
    "rate_limit": ModelRateLimitError,
    "auth": ModelAuthenticationError,
    "context_overflow": ContextOverflowError,
}


TurnSource = ScriptTurn | Callable[[list[BaseMessage]], ScriptTurn | dict[str, Any]]


def load_script(path: str | Path) -> Script:
    """Read and validate a script file; any problem is a `ScriptError` naming the file."""
    path = Path(path)
    try:
        raw = path.read_text(encoding="utf-8")
    except OSError as exc:
        raise ScriptError(f"cannot read script {path}: {exc.strerror}") from None
    try:
        data = json.loads(raw)
    except json.JSONDecodeError as exc:
        raise ScriptError(
            f"script {path} is not valid JSON: {exc.msg} at line {exc.lineno}"
        ) from None
    try:
        return Script.model_validate(data)
    except ValidationError as exc:
        first = exc.errors()[0]
        where = ".".join(str(p) for p in first["loc"]) or "(top level)"
        raise ScriptError(f"script {path}: {where}: {first['msg']}") from None


def _when(turn: Any) -> str | None:
    """A turn's `when` (a turn given as a callable has none)."""
    if isinstance(turn, ScriptTurn):
        return turn.when
    return turn.get("when") if isinstance(turn, dict) else None


def _first_human(messages: list[BaseMessage]) -> str:
    first = next((m for m in messages if isinstance(m, HumanMessage)), None)
    return text_of(first.content) if first is not None else ""


def _estimate_tokens(text: str) -> int:
    return max(1, len(text) // 4)


class ScriptedChatModel(BaseChatModel):
    """Replays scripted turns: streams text and thoughts in small chunks, tool calls as
    chunks with split arguments, and reports usage. Accepts `bind_tools`."""

    turns: list[Any] = Field(default_factory=list)
    record: str | None = None
    chunk_chars: int = CHUNK_CHARS
    _position: int = PrivateAttr(default=0)
    _taken: set[int] = PrivateAttr(default_factory=set)
    _plain: int = PrivateAttr(default=0)
    """No turn without `when` before this index is left to take."""
    _tagged: tuple[int, list[int]] = PrivateAttr(default=(-1, []))
    """The indices of the turns with `when` (and how many turns there were then)."""

    @classmethod
    def from_file(cls, path: str | Path) -> ScriptedChatModel:
        script = load_script(path)
        profile = (
            ModelProfile(max_input_tokens=script.context_window) if script.context_window else None
        )
        return cls(turns=list(script.turns), record=script.record, profile=profile)

    @property
    def _llm_type(self) -> str:
        return "scripted"

    @property
    def calls(self) -> int:
        """How many model calls this model has answered."""
        return self._position

    def bind_tools(self, tools: Sequence[Any], *, tool_choice: str | None = None, **kwargs: Any):
        formatted = [t if isinstance(t, dict) else convert_to_openai_tool(t) for t in tools]
        return self.bind(tools=formatted, tool_choice=tool_choice, **kwargs)

    def _next_turn(self, messages: list[BaseMessage], kwargs: dict[str, Any]) -> ScriptTurn:
        window = (self.profile or {}).get("max_input_tokens")
        if window and (size := count_tokens_approximately(messages)) > window:
            raise ContextOverflowError(f"the request has {size} tokens; the window is {window}")
        if self.record:
            self._record(self.record, messages, kwargs.get("tools") or [])
        self._position += 1
        index = self._take(_first_human(messages))
        if index is None:
            return ScriptTurn(content=EXHAUSTED)
        source: TurnSource = self.turns[index]
        turn = source(messages) if callable(source) else source
        turn = turn if isinstance(turn, ScriptTurn) else ScriptTurn.model_validate(turn)
        if turn.error is not None:
            raise PROVIDER_ERRORS[turn.error_type](turn.error)
        return turn

    def _take(self, request: str) -> int | None:
        """The index of the turn this request takes (see `when`), or None: none is left."""
        if self._tagged[0] != len(self.turns):
            tagged = [i for i, t in enumerate(self.turns) if _when(t) is not None]
            self._tagged = (len(self.turns), tagged)
        index = next(
            (
                i
                for i in self._tagged[1]
                if i not in self._taken and str(_when(self.turns[i])) in request
            ),
            None,
        )
        if index is None:
            while self._plain < len(self.turns) and (
                self._plain in self._taken or _when(self.turns[self._plain]) is not None
            ):
                self._plain += 1
            if self._plain >= len(self.turns):
                return None
            index = self._plain
        self._taken.add(index)
        return index

    def _record(self, record: str, messages: list[BaseMessage], tools: list[Any]) -> None:
        system = "\n".join(text_of(m.content) for m in messages if isinstance(m, SystemMessage))
        entries = []
        for m in messages:
            if isinstance(m, SystemMessage):
                continue
            entry: dict[str, Any] = {"type": m.type, "content": text_of(m.content)}
            if isinstance(m, AIMessage) and m.tool_calls:
                entry["tool_calls"] = [
                    {"id": c["id"], "name": c["name"], "args": c["args"]} for c in m.tool_calls
                ]
            if isinstance(m, ToolMessage):
                entry["tool_call_id"] = m.tool_call_id
                entry["status"] = m.status
            entries.append(entry)
        names = [t.get("function", t).get("name") for t in tools if isinstance(t, dict)]
        line = json.dumps({"system": system, "messages": entries, "tools": names}) + "\n"
        with Path(record).open("a+b") as handle:
            if handle.tell():  # a line a killed process left unfinished gets its own line
                handle.seek(-1, os.SEEK_END)
                if handle.read(1) != b"\n":
                    line = "\n" + line
            handle.write(line.encode())

    def _tool_calls(self, turn: ScriptTurn) -> list[dict[str, Any]]:
        return [
            {"id": c.id or f"call_{self._position}_{i}", "name": c.name, "args": c.args}
            for i, c in enumerate(turn.tool_calls)
        ]

    def _metadata(self, turn: ScriptTurn, messages: list[BaseMessage]) -> dict[str, Any]:
        prompt = sum(_estimate_tokens(text_of(m.content)) for m in messages)
        output = _estimate_tokens(turn.content * turn.repeat + (turn.reasoning or ""))
        return {
            "usage_metadata": {
                "input_tokens": prompt,
                "output_tokens": output,
                "total_tokens": prompt + output,
            },
            "response_metadata": {"finish_reason": turn.finish_reason or "stop"},
        }

    def _message(self, turn: ScriptTurn, messages: list[BaseMessage]) -> AIMessage:
        meta = self._metadata(turn, messages)
        extra = {"reasoning_content": turn.reasoning} if turn.reasoning else {}
        return AIMessage(
            content=turn.content * turn.repeat,
            tool_calls=self._tool_calls(turn),
            additional_kwargs=extra,
            id=turn.message_id,
            **meta,
        )

    def _chunks(self, turn: ScriptTurn, messages: list[BaseMessage]) -> Iterator[AIMessageChunk]:
        step = max(1, self.chunk_chars)
        if turn.message_id is not None:
            yield AIMessageChunk(content="", id=turn.message_id)
        for i in range(0, len(turn.reasoning or ""), step):
            piece = turn.reasoning[i : i + step]  # type: ignore[index]
            yield AIMessageChunk(content="", additional_kwargs={"reasoning_content": piece})
        for _ in range(turn.repeat):
            for i in range(0, len(turn.content), step):
                yield AIMessageChunk(content=turn.content[i : i + step])
        for index, call in enumerate(self._tool_calls(turn)):
            args = json.dumps(call["args"])
            cut = max(1, len(args) // 2)
            yield AIMessageChunk(
                content="",
                tool_call_chunks=[
                    {"id": call["id"], "name": call["name"], "args": args[:cut], "index": index}
                ],
            )
            yield AIMessageChunk(
                content="",
                tool_call_chunks=[{"id": None, "name": None, "args": args[cut:], "index": index}],
            )
        yield AIMessageChunk(content="", chunk_position="last", **self._metadata(turn, messages))

    def _generate(
        self,
        messages: list[BaseMessage],
        stop: list[str] | None = None,
        run_manager: CallbackManagerForLLMRun | None = None,
        **kwargs: Any,
    ) -> ChatResult:
        turn = self._next_turn(messages, kwargs)
        return ChatResult(generations=[ChatGeneration(message=self._message(turn, messages))])

    async def _agenerate(
        self,
        messages: list[BaseMessage],
        stop: list[str] | None = None,
        run_manager: AsyncCallbackManagerForLLMRun | None = None,
        **kwargs: Any,
    ) -> ChatResult:
        turn = self._next_turn(messages, kwargs)
        return ChatResult(generations=[ChatGeneration(message=self._message(turn, messages))])

    def _stream(
        self,
        messages: list[BaseMessage],
        stop: list[str] | None = None,
        run_manager: CallbackManagerForLLMRun | None = None,
        **kwargs: Any,
    ) -> Iterator[ChatGenerationChunk]:
        turn = self._next_turn(messages, kwargs)
        for chunk in self._chunks(turn, messages):
            if turn.delay_ms:
                time.sleep(turn.delay_ms / 1000)
            generation = ChatGenerationChunk(message=chunk)
            if run_manager:
                run_manager.on_llm_new_token(text_of(chunk.content), chunk=generation)
            yield generation

    async def _astream(
        self,
        messages: list[BaseMessage],
        stop: list[str] | None = None,
        run_manager: AsyncCallbackManagerForLLMRun | None = None,
        **kwargs: Any,
    ) -> AsyncIterator[ChatGenerationChunk]:
        turn = self._next_turn(messages, kwargs)
        for chunk in self._chunks(turn, messages):
            if turn.delay_ms:
                await asyncio.sleep(turn.delay_ms / 1000)
            generation = ChatGenerationChunk(message=chunk)
            if run_manager:
                await run_manager.on_llm_new_token(text_of(chunk.content), chunk=generation)
            yield generation
