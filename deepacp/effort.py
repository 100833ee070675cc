"""Reasoning effort: which levels a model offers, and what each level asks of its provider.

One scale for every provider — off, low, medium, high — mapped per provider:

- Anthropic (Claude 3.7 and later): `off` sends no thinking; low / medium / high turn
  extended thinking on with a budget of 2,048 / 8,192 / 24,576 tokens (and room for the
  answer above it in `max_tokens`). Thinking streams to the editor as the agent's thought.
- OpenAI reasoning models (o1, o3, o4, gpt-5 family): `reasoning_effort` low / medium /
  high; `off` is `minimal` on gpt-5 and `none` on gpt-5.1 and later (o-series models
  always reason, so they offer no `off`).
- Ollama thinking models (qwen3, deepseek-r1, magistral...): thinking off or on; gpt-oss
  takes low / medium / high.
- Other models offer no levels, and no option is shown.

Unset, a session uses `effort` from config.toml, else the provider's usual behaviour
(`DEFAULTS`).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from deepacp.config import EFFORTS, Effort

THINKING_BUDGETS = {"low": 2_048, "medium": 8_192, "high": 24_576}
ANSWER_ROOM = 8_192
"""Tokens `max_tokens` keeps for the answer above the thinking budget."""
NO_THINKING_CLAUDES = (
    "claude-2",
    "claude-instant",
    "claude-3-haiku",
    "claude-3-opus",
    "claude-3-sonnet",
    "claude-3-5",
)
OPENAI_REASONERS = ("o1", "o3", "o4", "gpt-5")
OLLAMA_THINKERS = ("qwen3", "deepseek-r1", "magistral", "gpt-oss")
DEFAULTS: dict[str, Effort] = {"anthropic": "off", "openai": "medium", "ollama": "high"}


@dataclass(frozen=True)
class EffortChoice:
    """The levels a model offers, the one in effect, and what each is called."""

    levels: tuple[Effort, ...]
    current: Effort

    def label(self, level: Effort) -> str:
        binary = self.levels == ("off", "high")
        return "On" if binary and level == "high" else level.capitalize()


def _family(name: str) -> str:
    return name.lower().split("/")[-1]


def effort_levels(provider: str, name: str) -> tuple[Effort, ...]:
    """The effort levels model `name` of `provider` offers (none: it does not reason)."""
    family = _family(name)
    if provider == "anthropic":
        return () if family.startswith(NO_THINKING_CLAUDES) else EFFORTS
    if provider == "openai":
        if not family.startswith(OPENAI_REASONERS) or "chat" in family:
            return ()
        return EFFORTS if family.startswith("gpt-5") else EFFORTS[1:]
    if provider == "ollama" and family.startswith(OLLAMA_THINKERS):
        return EFFORTS[1:] if family.startswith("gpt-oss") else ("off", "high")
    return ()


def effort_choice(provider: str, name: str, wanted: Effort | None) -> EffortChoice | None:
    """The levels on offer and the level in effect for `wanted` (None: the default; a
    level the model lacks falls back to the default too); None when there are no levels."""
    levels = effort_levels(provider, name)
    if not levels:
        return None
    default = DEFAULTS.get(provider, levels[0])
    default = default if default in levels else levels[-1]
    return EffortChoice(levels, wanted if wanted in levels else default)


def effort_options(provider: str, name: str, effort: Effort | None) -> dict[str, Any]:
    """The model constructor options for `effort` (empty for models without levels)."""
    choice = effort_choice(provider, name, effort)
    if choice is None:
        return {}
    level, family = choice.current, _family(name)
    if provider == "anthropic":
        if level == "off":
            return {}
        return {"thinking": {"type": "enabled", "budget_tokens": THINKING_BUDGETS[level]}}
    if provider == "openai":
        if level == "off":
            return {"reasoning_effort": "none" if family.startswith("gpt-5.") else "minimal"}
        return {"reasoning_effort": level}
    if family.startswith("gpt-oss"):
        return {"reasoning": level}
    return {"reasoning": level != "off"}


def with_answer_room(model: Any) -> Any:
    """`model` with `max_tokens` above its thinking budget, as Anthropic requires (a copy,
    when its default leaves no room). Models without a thinking budget come back as they are."""
    thinking = getattr(model, "thinking", None)
    budget = thinking.get("budget_tokens") if isinstance(thinking, dict) else None
    max_tokens = getattr(model, "max_tokens", None)
    if isinstance(budget, int) and isinstance(max_tokens, int) and max_tokens <= budget:
        return model.model_copy(update={"max_tokens": budget + ANSWER_ROOM})
    return model
