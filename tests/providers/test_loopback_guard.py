"""The provider tests cannot reach a real provider: the guard refuses any non-loopback host."""

from __future__ import annotations

import pytest


def test_a_client_without_a_base_url_cannot_leave_the_machine(loopback_only):
    import anthropic  # imported where used: an SDK is a second of every collection
    import openai
    from langchain_anthropic import ChatAnthropic
    from langchain_openai import ChatOpenAI

    with pytest.raises(anthropic.APIConnectionError):
        ChatAnthropic(model="claude-sonnet-4-5", api_key="test", max_retries=0).invoke("hi")
    with pytest.raises(openai.APIConnectionError):
        ChatOpenAI(model="gpt-4.1", api_key="test", max_retries=0).invoke("hi")
    assert set(loopback_only) == {"api.anthropic.com", "api.openai.com"}
    loopback_only.clear()
