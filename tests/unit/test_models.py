import importlib.util
import sys

import pytest

from deepacp.errors import ModelConfigError
from deepacp.models import configured_spec, resolve_model
from deepacp.testing import ScriptedChatModel


def test_precedence_flag_env_config(isolated_home, monkeypatch) -> None:
    with pytest.raises(ModelConfigError, match="DEEPACP_MODEL"):
        configured_spec()
    (isolated_home / "config.toml").write_text('model = "openai:from-config"\n')
    assert configured_spec() == "openai:from-config"
    monkeypatch.setenv("DEEPACP_MODEL", "anthropic:from-env")
    assert configured_spec() == "anthropic:from-env"
    assert configured_spec("ollama:from-flag") == "ollama:from-flag"


def test_broken_config_file_is_a_clear_error(isolated_home) -> None:
    (isolated_home / "config.toml").write_text("model = [\n")
    with pytest.raises(Exception, match=r"config\.toml"):
        configured_spec()


def test_scripted_spec(tmp_path) -> None:
    script = tmp_path / "s.json"
    script.write_text('{"turns": [{"content": "hi"}]}')
    assert isinstance(resolve_model(f"scripted:{script}"), ScriptedChatModel)


@pytest.mark.parametrize("spec", ["nocolon", ":model", "openai:"])
def test_malformed_spec(spec: str) -> None:
    with pytest.raises(ModelConfigError, match="PROVIDER:MODEL"):
        resolve_model(spec)


def test_missing_provider_package_names_the_extra(monkeypatch) -> None:
    monkeypatch.setitem(sys.modules, "langchain_anthropic", None)  # as if the extra were absent
    with pytest.raises(ModelConfigError, match=r"pip install 'deepacp\[anthropic\]'"):
        resolve_model("anthropic:claude-sonnet-4-5")


def test_missing_api_key_names_the_variable(monkeypatch) -> None:
    monkeypatch.delenv("OPENAI_API_KEY", raising=False)
    monkeypatch.setattr(importlib.util, "find_spec", lambda name: object())
    with pytest.raises(ModelConfigError, match="set OPENAI_API_KEY"):
        resolve_model("openai:gpt-5.1")
