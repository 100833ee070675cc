"""The output cap: how many tokens one model call may generate, for every provider.

Without a cap some servers generate until they are stopped (llama.cpp's and Ollama's
default is unlimited), so a model stuck in a loop runs for as long as nobody kills it. The
cap is `[providers.NAME] max_tokens` in config.toml, else `DEFAULT_MAX_TOKENS` for hosted
APIs and `LOCAL_MAX_TOKENS` for a server at a base URL the user set for `openai` (llama.cpp,
LM Studio, vLLM) and for Ollama, never above what the model's profile says it can produce.
On the wire it is Anthropic's `max_tokens`, OpenAI's `max_completion_tokens` and Ollama's
`num_predict`. A reply cut off by it ends with the provider's length stop reason
(see `deepacp.harness.middleware.truncation`).
"""

from __future__ import annotations

from typing import Any

DEFAULT_MAX_TOKENS = 32_000
LOCAL_MAX_TOKENS = 8_192
CAP_FIELDS = ("max_tokens", "num_predict")
"""The model fields that hold the cap, by provider client (Ollama's is `num_predict`)."""


def output_cap(configured: int | None, local: bool, model_limit: int | None) -> int:
    """The cap to send: the user's, else the default for the kind of server, kept within
    the model's own limit when it is known (a larger one is refused by some APIs)."""
    if configured:
        return configured
    cap = LOCAL_MAX_TOKENS if local else DEFAULT_MAX_TOKENS
    return min(cap, model_limit) if model_limit else cap


def _limit(model: Any) -> int | None:
    profile = getattr(model, "profile", None) or {}
    limit = profile.get("max_output_tokens") if isinstance(profile, dict) else None
    return limit if isinstance(limit, int) and limit > 0 else None


def with_output_cap(model: Any, configured: int | None, local: bool) -> Any:
    """`model` with its output cap set (a copy); a model without a cap field as it is."""
    fields = getattr(type(model), "model_fields", {})
    name = next((f for f in CAP_FIELDS if f in fields), None)
    if name is None:
        return model
    return model.model_copy(update={name: output_cap(configured, local, _limit(model))})
