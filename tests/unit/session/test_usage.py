"""Prices come only from config.toml, and a bad price table is one clear line."""

from __future__ import annotations

import pytest

from deepacp.config import ModelPrices, load_config
from deepacp.errors import ConfigError
from deepacp.harness.usage import TokenUsage
from deepacp.session.turns.usage import cost_of


def test_prices_are_read_per_model_and_cache_prices_default_to_input(tmp_path):
    (tmp_path / "config.toml").write_text(
        '[prices."openai:gpt-5.1"]\ninput = 1.25\noutput = 10\ncache_read = 0.125\n'
    )
    prices = load_config(tmp_path).prices
    assert prices == {"openai:gpt-5.1": ModelPrices(1.25, 10.0, 0.125, 1.25, "USD")}
    assert load_config(tmp_path / "nowhere").prices == {}


@pytest.mark.parametrize(
    ("table", "message"),
    [
        ("input = 1\n", "needs both input and output"),
        ("input = -1\noutput = 2\n", "input must be a number >= 0"),
        ('input = "cheap"\noutput = 2\n', "input must be a number >= 0"),
        ("input = 1\noutput = 2\ncache_reads = 1\n", "unknown key 'cache_reads'"),
    ],
)
def test_a_bad_price_table_is_one_line_naming_it(tmp_path, table, message):
    (tmp_path / "config.toml").write_text(f'[prices."openai:gpt-5.1"]\n{table}')
    with pytest.raises(ConfigError) as raised:
        load_config(tmp_path)
    assert '[prices."openai:gpt-5.1"]' in str(raised.value) and message in str(raised.value)
    assert "\n" not in str(raised.value)


def test_cost_bills_each_kind_at_its_price():
    usage = TokenUsage(input=1_000_000, cache_read=600_000, cache_write=300_000, output=200_000)
    cost = cost_of(usage, ModelPrices(3.0, 15.0, 0.3, 3.75, "EUR"))
    assert cost.currency == "EUR"
    assert cost.amount == pytest.approx(0.1 * 3.0 + 0.6 * 0.3 + 0.3 * 3.75 + 0.2 * 15.0)
