"""What a conversation's tokens come to: totals by kind for `/cost`, and money only at the
prices the user put in config.toml (deepacp keeps no price list of its own)."""

from __future__ import annotations

from pathlib import Path

from deepacp.config import ModelPrices, load_config
from deepacp.errors import ConfigError
from deepacp.events import Cost
from deepacp.harness import TokenUsage

__all__ = ["TokenUsage", "cost_of", "cost_report", "prices_of"]

PER = 1_000_000


def prices_of(home: Path, spec: str | None) -> ModelPrices | None:
    """The model's prices in config.toml (None: not configured, or unreadable)."""
    try:
        return load_config(home).prices.get(spec or "")
    except ConfigError:
        return None


def cost_of(usage: TokenUsage, prices: ModelPrices) -> Cost:
    """`usage` at `prices` (per million tokens; reasoning is billed as the output it is part of)."""
    amount = (
        usage.uncached * prices.input
        + usage.cache_read * prices.cache_read
        + usage.cache_write * prices.cache_write
        + usage.output * prices.output
    ) / PER
    return Cost(amount, prices.currency)


def cost_report(usage: TokenUsage, spec: str, prices: ModelPrices | None) -> str:
    """The `/cost` answer: the conversation's tokens by kind, and their cost where priced."""
    if not usage.calls:
        return "No model calls in this conversation yet."
    calls = "call" if usage.calls == 1 else "calls"
    lines = [
        f"Tokens in this conversation ({usage.calls} model {calls}):",
        f"- input: {usage.input:,} (uncached {usage.uncached:,}, cache write "
        f"{usage.cache_write:,}, cache read {usage.cache_read:,})",
        f"- output: {usage.output:,} (reasoning {usage.reasoning:,})",
    ]
    if prices is None:
        lines.append(
            f'Cost: no prices for {spec} in config.toml (add a [prices."{spec}"] table '
            "with input and output per million tokens to see it)."
        )
    else:
        cost = cost_of(usage, prices)
        lines.append(f"Cost: {cost.amount:.4f} {cost.currency} at the prices in config.toml.")
    return "\n".join(lines)
