"""The output cap: the user's, else a default by kind of server, within the model's limit."""

from deepacp.models import resolve_model
from deepacp.output_cap import DEFAULT_MAX_TOKENS, LOCAL_MAX_TOKENS, output_cap


def test_the_configured_cap_wins_and_the_default_stays_within_the_model():
    assert output_cap(500, local=False, model_limit=100) == 500
    assert output_cap(None, local=True, model_limit=None) == LOCAL_MAX_TOKENS
    assert output_cap(None, local=False, model_limit=None) == DEFAULT_MAX_TOKENS
    assert output_cap(None, local=False, model_limit=16_384) == 16_384


def test_a_hosted_model_with_a_smaller_limit_is_not_asked_for_more(monkeypatch):
    monkeypatch.setenv("OPENAI_API_KEY", "k")
    monkeypatch.delenv("OPENAI_BASE_URL", raising=False)
    assert resolve_model("openai:gpt-4o").max_tokens == 16_384  # its profile's limit
    assert resolve_model("openai:gpt-5.1").max_tokens == DEFAULT_MAX_TOKENS
