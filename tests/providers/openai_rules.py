"""Request validation of the OpenAI Chat Completions and Responses APIs.

Each check raises `InvalidRequest` with the message, `param` and `code` the real API returns
(quoted from real 400 bodies where known). Sources, cited per rule: the API reference for
`POST /v1/chat/completions` and `POST /v1/responses`, and the function-calling guide
(developers.openai.com/api/docs/guides/function-calling).
"""

from __future__ import annotations

import re
from collections.abc import Collection
from typing import Any

from jsonschema import Draft202012Validator
from jsonschema.exceptions import SchemaError

from tests.providers.wire import InvalidRequest

FUNCTION_NAME = re.compile(r"^[a-zA-Z0-9_-]+$")
MAX_NAME = 64
ROLES = ("system", "developer", "user", "assistant", "tool", "function")


def check_auth(headers: dict[str, str], keys: Collection[str] | None = None) -> None:
    """API reference, authentication: a bearer API key is required (one of `keys`, when
    given; a wrong one is shown masked, as the API does)."""
    if not headers.get("authorization", "").startswith("Bearer "):
        raise InvalidRequest(
            "You didn't provide an API key. You need to provide your API key in an "
            "Authorization header using Bearer auth (i.e. Authorization: Bearer YOUR_KEY).",
            status=401,
        )
    key = headers["authorization"].removeprefix("Bearer ")
    if keys is not None and key not in keys:
        raise InvalidRequest(
            f"Incorrect API key provided: {key[:3]}***{key[-4:]}. You can find your API key "
            "at https://platform.openai.com/account/api-keys.",
            status=401,
            code="invalid_api_key",
        )


def _check_common(body: Any) -> None:
    if not isinstance(body, dict):
        raise InvalidRequest("We could not parse the JSON body of your request.")
    if not body.get("model"):
        raise InvalidRequest("you must provide a model parameter")


def validate_chat(body: Any) -> None:
    """Check a Chat Completions request."""
    _check_common(body)
    # API reference: `max_completion_tokens` (`max_tokens`, deprecated) is an integer >= 1.
    for field in ("max_completion_tokens", "max_tokens"):
        cap = body.get(field)
        if cap is not None and (isinstance(cap, bool) or not isinstance(cap, int) or cap < 1):
            raise InvalidRequest(
                f"Invalid '{field}': integer below minimum value. Expected a value >= 1, "
                f"but got {cap} instead.",
                param=field,
                code="integer_below_min_value",
            )
    for i, tool in enumerate(body.get("tools") or []):
        if tool.get("type") == "function":
            _check_function(i, tool.get("function") or {})
    messages = body.get("messages")
    # API reference: `messages` is required and has at least one item.
    if not isinstance(messages, list) or not messages:
        raise InvalidRequest(
            "Invalid 'messages': empty array. Expected an array with minimum length 1, "
            "but got an empty array instead.",
            param="messages",
            code="empty_array",
        )
    pending: dict[str, int] = {}
    for i, message in enumerate(messages):
        role = message.get("role")
        if role not in ROLES:
            raise InvalidRequest(
                f"Invalid value: '{role}'. Supported values are: "
                f"{', '.join(repr(r) for r in ROLES)}.",
                param=f"messages.[{i}].role",
                code="invalid_value",
            )
        if role == "tool":
            _check_tool_message(i, message, pending)
            continue
        # Function-calling guide: every tool call is answered before the conversation goes on.
        _check_answered(pending)
        if message.get("content") is None and not (
            role == "assistant" and message.get("tool_calls")
        ):
            raise InvalidRequest(
                "Invalid value for 'content': expected a string, got null.",
                param=f"messages.[{i}].content",
            )
        for call in message.get("tool_calls") or [] if role == "assistant" else []:
            _check_tool_call(i, call)
            pending[call["id"]] = i
    _check_answered(pending)


def _check_answered(pending: dict[str, int]) -> None:
    """No tool call is left unanswered (`pending`: call id -> its message's index)."""
    if pending:
        first = min(pending.values())
        raise InvalidRequest(
            "An assistant message with 'tool_calls' must be followed by tool messages "
            "responding to each 'tool_call_id'. The following tool_call_ids did not have "
            f"response messages: {', '.join(pending)}",
            param=f"messages.[{first}].role",
        )


def _check_tool_message(i: int, message: dict[str, Any], pending: dict[str, int]) -> None:
    # Function-calling guide: a tool message answers a call of the preceding assistant message.
    if not pending:
        raise InvalidRequest(
            "Invalid parameter: messages with role 'tool' must be a response to a preceeding "
            "message with 'tool_calls'.",
            param=f"messages.[{i}].role",
        )
    call_id = message.get("tool_call_id")
    if call_id not in pending:
        raise InvalidRequest(
            f"Invalid parameter: 'tool_call_id' of '{call_id}' not found in 'tool_calls' of "
            "previous message.",
            param=f"messages.[{i}].tool_call_id",
        )
    del pending[call_id]


def _check_tool_call(i: int, call: dict[str, Any]) -> None:
    # API reference, assistant message `tool_calls`: id, type "function", name, string args.
    function = call.get("function") or {}
    if not call.get("id") or call.get("type") != "function" or not function.get("name"):
        raise InvalidRequest(
            f"Missing required parameter: 'messages[{i}].tool_calls[0].id'.",
            param=f"messages.[{i}].tool_calls",
            code="missing_required_parameter",
        )
    if not isinstance(function.get("arguments"), str):
        raise InvalidRequest(
            f"Invalid type for 'messages[{i}].tool_calls[0].function.arguments': expected a "
            "string, but got an object instead.",
            param=f"messages.[{i}].tool_calls",
            code="invalid_type",
        )


def _check_function(i: int, tool: dict[str, Any]) -> None:
    """Function-calling guide: a function name matches ^[a-zA-Z0-9_-]{1,64}$ and its
    parameters are a JSON Schema object."""
    name = tool.get("name")
    where = f"tools[{i}].function.name"
    if not isinstance(name, str) or not FUNCTION_NAME.match(name):
        raise InvalidRequest(
            f"Invalid '{where}': string does not match pattern. Expected a string that "
            "matches the pattern '^[a-zA-Z0-9_-]+$'.",
            param=where,
            code="invalid_value",
        )
    if len(name) > MAX_NAME:
        raise InvalidRequest(
            f"Invalid '{where}': string too long. Expected a string with maximum length "
            f"{MAX_NAME}, but got a string with length {len(name)} instead.",
            param=where,
            code="string_above_max_length",
        )
    parameters = tool.get("parameters")
    if parameters is None:
        return
    problem = None
    if not isinstance(parameters, dict) or parameters.get("type") != "object":
        problem = "schema must be a JSON Schema of 'type: \"object\"', got 'type: \"None\"'."
    else:
        try:
            Draft202012Validator.check_schema(parameters)
        except SchemaError as exc:
            problem = exc.message
    if problem:
        raise InvalidRequest(
            f"Invalid schema for function '{name}': {problem}",
            param=f"tools[{i}].function.parameters",
            code="invalid_function_parameters",
        )


def validate_responses(body: Any) -> list[dict[str, Any]]:
    """Check a Responses request; return its input as a list of items."""
    _check_common(body)
    for i, tool in enumerate(body.get("tools") or []):
        if tool.get("type") == "function":
            _check_function(i, tool)
    items = body.get("input")
    if isinstance(items, str):
        return [{"role": "user", "content": items}]
    if not isinstance(items, list):
        raise InvalidRequest(
            "Missing required parameter: 'input'.", param="input", code="missing_required_parameter"
        )
    # Function-calling guide (Responses): each function_call_output answers an earlier
    # function_call with the same call_id, and every function_call gets its output.
    calls: dict[str, bool] = {}
    for item in items:
        kind = item.get("type", "message")
        if kind == "function_call":
            calls[item.get("call_id")] = False
            if not isinstance(item.get("arguments"), str):
                raise InvalidRequest(
                    "Invalid type for 'input.arguments': expected a string.", param="input"
                )
        elif kind == "function_call_output":
            if item.get("call_id") not in calls:
                raise InvalidRequest(
                    "No tool call found for function call output with call_id "
                    f"{item.get('call_id')}.",
                    param="input",
                )
            calls[item["call_id"]] = True
    unanswered = [call_id for call_id, done in calls.items() if not done]
    if unanswered:
        raise InvalidRequest(
            f"No tool output found for function call {unanswered[0]}.", param="input"
        )
    return items
