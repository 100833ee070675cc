"""`deepacp setup` sets keys in config.toml and keeps the rest of the user's file."""

from __future__ import annotations

import tomllib

import pytest

from deepacp.config_write import set_config
from deepacp.errors import ConfigError


def test_a_key_is_replaced_in_its_table_and_the_rest_is_kept(isolated_home) -> None:
    path = isolated_home / "config.toml"
    path.write_text(
        '# mine\nmodel = "anthropic:old"\neffort = "low"\n\n'
        "[providers.openai]  # the box under my desk\n"
        'base_url = "http://old:1/v1"\nmax_tokens = 4096\n'
    )
    set_config("model", "openai:qwen")
    set_config("base_url", "http://127.0.0.1:8080/v1", "providers.openai")
    set_config("base_url", "http://127.0.0.1:11434", "providers.ollama")
    text = path.read_text()
    assert tomllib.loads(text) == {
        "model": "openai:qwen",
        "effort": "low",
        "providers": {
            "openai": {"base_url": "http://127.0.0.1:8080/v1", "max_tokens": 4096},
            "ollama": {"base_url": "http://127.0.0.1:11434"},
        },
    }
    assert "# mine" in text and "# the box under my desk" in text


def test_a_file_it_cannot_edit_safely_is_left_alone(isolated_home) -> None:
    path = isolated_home / "config.toml"
    path.write_text('model = "a:b"\n[providers]\nopenai = { base_url = "http://x/v1" }\n')
    with pytest.raises(
        ConfigError, match=r'add `base_url = "http://y/v1"` under \[providers.openai\]'
    ):
        set_config("base_url", "http://y/v1", "providers.openai")
    assert path.read_text() == 'model = "a:b"\n[providers]\nopenai = { base_url = "http://x/v1" }\n'
