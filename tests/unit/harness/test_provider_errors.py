"""`explain`: the one line a user reads for a provider failure they can fix."""

from __future__ import annotations

import httpx

from deepacp.harness.provider_errors import explain
from deepacp.models import Endpoint


class StatusError(Exception):
    def __init__(self, status: int, message: str) -> None:
        super().__init__(f"Error code: {status} - {message}")
        self.status_code = status
        self.body = {"error": {"message": message}}


def where(provider: str = "openai", url: str = "http://127.0.0.1:8080/v1") -> Endpoint:
    key = {"openai": "OPENAI_API_KEY", "ollama": None}[provider]
    return Endpoint(
        provider, url, "from OPENAI_BASE_URL", key, 900.0, "DEEPACP_FIRST_TOKEN_TIMEOUT"
    )


def test_a_404_without_a_model_in_it_points_at_the_base_url():
    line = explain(StatusError(404, "File Not Found"), where(), "gpt-4.1")
    assert line == (
        "nothing answers at http://127.0.0.1:8080/v1 (HTTP 404, from OPENAI_BASE_URL): "
        "check the base URL"
    )
    line = explain(StatusError(404, 'model "qwen3" not found, try pulling it'), where(), "qwen3")
    assert line == "no model 'qwen3' at openai: check --model"


def test_a_server_without_a_key_variable_says_the_server_refused():
    line = explain(StatusError(401, "no"), where("ollama", "http://127.0.0.1:11434"), "qwen3")
    assert line == (
        "http://127.0.0.1:11434 refused the request (HTTP 401, from OPENAI_BASE_URL): "
        "check the server's key"
    )


def test_a_url_is_shown_without_its_password():
    error = httpx.ConnectError("boom")
    error.__cause__ = ConnectionRefusedError(111, "Connection refused")
    line = explain(error, where(url="http://me:hunter2@127.0.0.1:9/v1"), "m")
    assert line == "cannot reach http://127.0.0.1:9/v1 (from OPENAI_BASE_URL): connection refused"


def test_what_a_user_cannot_fix_is_left_alone():
    assert explain(StatusError(500, "oops"), where(), "m") is None
    assert explain(ValueError("a bug"), where(), "m") is None
