"""What a model server says when a request does not fit the model's context: whether an
error is such an overflow (`context_overflow`), the sizes it gives (`context_sizes`), and
the line a user reads (`overflow_line`).

Recognised in the words of Anthropic and OpenAI, llama.cpp's server
(`exceed_context_size_error`), vLLM, LM Studio and Ollama — the OpenAI-compatible servers
share the `{"error": {"message": ...}}` shape, or a bare string, or vLLM's flat body.
"""

from __future__ import annotations

import re
from typing import Any

from langchain_core.exceptions import ContextOverflowError

OVERFLOW_CODES = frozenset({"context_length_exceeded", "exceed_context_size_error"})
OVERFLOW_PHRASES = (
    "prompt is too long",
    "maximum context length",
    "exceeds the context window",
    "exceeds the available context size",  # llama.cpp's server
    "exceeds the context length",  # Ollama
    "context length of only",  # LM Studio
    "greater than the context length",  # LM Studio
    "cannot truncate prompt with n_keep",  # LM Studio, older llama.cpp
)
CONTEXT_SIZES = (  # (the model's context, the prompt) as servers say them
    # llama.cpp: "request (3654 tokens) exceeds the available context size (2048 tokens)"
    re.compile(
        r"request \((?P<prompt>\d+) tokens\) exceeds the available context size \((?P<context>\d+)"
    ),
    # vLLM, OpenAI: "maximum context length is 2048 tokens. However, you requested 3754
    # tokens (3654 in the messages, 100 in the completion)" / "your request has 3654 input
    # tokens" / "your messages resulted in 3654 tokens"
    re.compile(
        r"maximum context length is (?P<context>\d+) tokens.*?(?:\((?P<prompt>\d+) in the "
        r"messages|(?P<input>\d+) input tokens|resulted in (?P<total>\d+) tokens)",
        re.DOTALL,
    ),
    # LM Studio: "Trying to keep the first 3654 tokens when context the overflows. However,
    # the model is loaded with context length of only 2048 tokens"
    re.compile(
        r"keep the first (?P<prompt>\d+) tokens.*?context length of only (?P<context>\d+)",
        re.DOTALL,
    ),
    # LM Studio, older llama.cpp: "Cannot truncate prompt with n_keep (3654) >= n_ctx (2048)"
    re.compile(r"n_keep \((?P<prompt>\d+)\) >= n_ctx \((?P<context>\d+)\)"),
)


def context_overflow(exc: BaseException) -> bool:
    """Whether `exc` says the request does not fit the model's context window.

    LangChain's clients classify most of these as `ContextOverflowError`, but not all: with
    the current OpenAI SDK, Chat Completions' `context_length_exceeded` arrives as a plain
    invalid request (the code is in the error body, not in the text LangChain looks at).
    """
    if isinstance(exc, ContextOverflowError):
        return True
    if getattr(exc, "status_code", None) not in (400, 413, None):
        return False
    inner = error_body(exc)
    if inner.get("code") in OVERFLOW_CODES or inner.get("type") in OVERFLOW_CODES:
        return True
    text = server_words(exc).lower()
    return any(phrase in text for phrase in OVERFLOW_PHRASES)


def error_body(exc: BaseException) -> dict[str, Any]:
    """The error object of `exc`'s JSON body (`{"error": {...}}` or the body itself)."""
    body = getattr(exc, "body", None)
    inner = body.get("error", body) if isinstance(body, dict) else None
    return inner if isinstance(inner, dict) else {}


def server_words(exc: BaseException) -> str:
    """The server's own words: the error body's message (LM Studio's error is a bare
    string), else the exception's text."""
    body = getattr(exc, "body", None)
    if isinstance(body, dict) and isinstance(body.get("error"), str):
        body = body["error"]
    message = body if isinstance(body, str) else error_body(exc).get("message")
    return message if isinstance(message, str) else str(exc)


def context_sizes(exc: BaseException) -> tuple[int, int] | None:
    """(the model's context, the prompt's size) in tokens, as the server reported them."""
    inner = error_body(exc)
    context, prompt = inner.get("n_ctx"), inner.get("n_prompt_tokens")  # llama.cpp
    if isinstance(context, int) and isinstance(prompt, int):
        return context, prompt
    text = server_words(exc)
    for pattern in CONTEXT_SIZES:
        if found := pattern.search(text):
            sizes = {k: int(v) for k, v in found.groupdict().items() if v is not None}
            size = sizes.get("prompt") or sizes.get("input") or sizes.get("total")
            if size:
                return sizes["context"], size
    return None


def overflow_line(
    exc: BaseException, estimate: int | None = None, context: int | None = None
) -> str:
    """What a context overflow means for the user: the sizes (the server's, else our
    `estimate` of the prompt's and the `context` length the server told us of before),
    and the fix."""
    sizes = context_sizes(exc)
    if sizes is None:
        request = f"deepacp's prompt (about {estimate:,} tokens)" if estimate else "the request"
        window = f"the model's context ({context:,} tokens)" if context else "the model's context"
        return (
            f"{window} is smaller than {request}: raise the server's context size "
            "or use the compact profile"
        )
    context, prompt = sizes
    if prompt < context:  # the prompt fits; the room asked for the answer does not
        return (
            f"the model's context ({context:,} tokens) cannot hold deepacp's prompt "
            f"({prompt:,} tokens) and the answer: raise the server's context size or use the "
            "compact profile"
        )
    return (
        f"the model's context ({context:,} tokens) is smaller than deepacp's prompt "
        f"({prompt:,} tokens): raise the server's context size or use the compact profile"
    )
