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


def test_an_openai_compatible_server_on_this_machine_needs_no_key(
    isolated_home, monkeypatch
) -> None:
    """llama.cpp, LM Studio and vLLM on localhost want no key; the client is given a dummy."""
    monkeypatch.delenv("OPENAI_API_KEY", raising=False)
    monkeypatch.setenv("OPENAI_BASE_URL", "http://127.0.0.1:8080/v1")
    model = resolve_model("openai:qwen2.5-coder")
    assert model.openai_api_key.get_secret_value() == "none"
    monkeypatch.setenv("OPENAI_BASE_URL", "https://gateway.example.com/v1")
    with pytest.raises(ModelConfigError, match="set OPENAI_API_KEY"):
        resolve_model("openai:qwen2.5-coder")


def test_the_endpoint_says_where_its_url_came_from(isolated_home, monkeypatch) -> None:
    from deepacp.models import endpoint

    monkeypatch.delenv("OPENAI_BASE_URL", raising=False)
    monkeypatch.delenv("DEEPACP_FIRST_TOKEN_TIMEOUT", raising=False)
    where = endpoint("openai")
    assert (where.url, where.source) == ("https://api.openai.com/v1", "the default")
    assert where.first_token_timeout == 300
    (isolated_home / "config.toml").write_text(
        '[providers.openai]\nbase_url = "http://localhost:8080/v1"\n'
    )
    where = endpoint("openai")
    assert where.source == "from [providers.openai] base_url in config.toml"
    assert where.first_token_timeout == 900  # a server on this machine may read for minutes
    monkeypatch.setenv("OPENAI_BASE_URL", "http://127.0.0.1:9/v1")
    monkeypatch.setenv("DEEPACP_FIRST_TOKEN_TIMEOUT", "7")
    where = endpoint("openai")
    assert (where.url, where.source) == ("http://127.0.0.1:9/v1", "from OPENAI_BASE_URL")
    assert (where.first_token_timeout, where.timeout_source) == (7, "DEEPACP_FIRST_TOKEN_TIMEOUT")


def test_the_first_token_timeout_reaches_each_client(isolated_home, monkeypatch) -> None:
    from deepacp.models import resolve_model

    monkeypatch.setenv("DEEPACP_FIRST_TOKEN_TIMEOUT", "12")
    monkeypatch.setenv("OPENAI_API_KEY", "k")
    monkeypatch.setenv("ANTHROPIC_API_KEY", "k")
    openai = resolve_model("openai:gpt-4.1")
    assert openai.stream_chunk_timeout == 12 and openai.request_timeout.read == 12
    assert resolve_model("anthropic:claude-sonnet-4-5").default_request_timeout == 12
    assert resolve_model("ollama:qwen3").client_kwargs["timeout"].read == 12


def test_a_bad_first_token_timeout_variable_is_one_line(isolated_home, monkeypatch) -> None:
    from deepacp.errors import ConfigError
    from deepacp.models import endpoint

    monkeypatch.setenv("DEEPACP_FIRST_TOKEN_TIMEOUT", "soon")
    with pytest.raises(ConfigError, match="DEEPACP_FIRST_TOKEN_TIMEOUT must be a number"):
        endpoint("openai")
