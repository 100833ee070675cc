"""Prompt caching: ask the provider to reuse the prompt prefix the previous call sent.

- Anthropic: LangChain's `AnthropicPromptCachingMiddleware` (langchain-anthropic) puts a
  breakpoint on the last tool, on the last block of the system message as it stands at
  its place in the stack, and one on the latest turn (top-level `cache_control`). The
  stack puts it after everything stable that writes the system prompt and before
  `MemoryMiddleware`, so memory (which may change between calls) sits after the cached
  prefix; `append_to_system` keeps the tagged block intact.
- OpenAI: prefix caching is automatic; `PromptCacheKeyMiddleware` sends a stable
  `prompt_cache_key` per thread so the thread's calls are routed to the same cache.

Other models get nothing. The provider packages are never imported here: a model can only
be one of their classes once its module is loaded.
"""

from __future__ import annotations

import sys
from typing import Any

from langchain.agents.middleware import AgentMiddleware, ModelRequest

from deepacp.harness.middleware.model_view import ModelViewMiddleware

CACHE_KEY_PREFIX = "deepacp-"


def _is_instance(model: Any, module: str, name: str) -> bool:
    loaded = sys.modules.get(module)
    cls = getattr(loaded, name, None) if loaded is not None else None
    return cls is not None and isinstance(model, cls)


def thread_key(request: ModelRequest) -> str | None:
    """The prompt cache key of the request's thread (None outside a checkpointed thread)."""
    info = getattr(request.runtime, "execution_info", None)
    thread_id = getattr(info, "thread_id", None)
    return f"{CACHE_KEY_PREFIX}{thread_id}" if thread_id else None


class PromptCacheKeyMiddleware(ModelViewMiddleware):
    """Adds `prompt_cache_key` (one per thread) to every OpenAI request."""

    def _view(self, request: ModelRequest) -> ModelRequest:
        key = thread_key(request)
        if key is None or "prompt_cache_key" in request.model_settings:
            return request
        return request.override(model_settings={**request.model_settings, "prompt_cache_key": key})


def caching_middleware(model: Any) -> list[AgentMiddleware]:
    """The caching middleware `model`'s provider needs (none for other providers)."""
    if _is_instance(model, "langchain_anthropic.chat_models", "ChatAnthropic"):
        from langchain_anthropic.middleware import AnthropicPromptCachingMiddleware

        return [AnthropicPromptCachingMiddleware(ttl="5m", unsupported_model_behavior="ignore")]
    if _is_instance(model, "langchain_openai.chat_models.base", "BaseChatOpenAI"):
        return [PromptCacheKeyMiddleware()]
    return []
