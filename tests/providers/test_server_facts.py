"""What a local model server says about itself (`deepacp.server_facts`), in the shapes of
llama.cpp's server, vLLM, LM Studio and Ollama, from stub servers that answer as they do; a
server that answers none of those questions has no facts, and asking costs no error. The
real llama.cpp server's answer is tested in tests/services/test_llama_server.py."""

from __future__ import annotations

import pytest

from deepacp import server_facts
from deepacp.server_facts import ServerFacts, facts_for, probe
from tests.providers.canned import PathServer, SilentServer, closed_port
from tests.providers.ollama_server import OllamaServer

LLAMA_CPP_PROPS = {
    "default_generation_settings": {"n_ctx": 2048, "params": {}},
    "model_path": "/models/SmolLM2-135M-Instruct.Q4_1.gguf",
    "chat_template_caps": {"supports_tools": False, "supports_tool_calls": False},
}


@pytest.fixture(autouse=True)
def forget() -> None:
    server_facts._known.clear()


def test_llama_cpp_says_its_context_and_that_its_template_drops_tools():
    with PathServer({"/props": LLAMA_CPP_PROPS}) as server:
        facts = probe(f"{server.base_url}/v1", "smollm2")
    assert facts == ServerFacts(
        f"{server.base_url}/v1", 2048, False, "/models/SmolLM2-135M-Instruct.Q4_1.gguf"
    )


def test_an_older_llama_cpp_is_read_from_its_template():
    props = {"default_generation_settings": {"n_ctx": 4096}, "chat_template": "{% if tools %}"}
    with PathServer({"/props": props}) as server:
        facts = probe(server.base_url, "m")
    assert (facts.context_length, facts.tools_supported) == (4096, True)


def test_vllm_says_its_max_model_len():
    listing = {
        "object": "list",
        "data": [
            {"id": "other", "max_model_len": 8192},
            {"id": "Qwen/Qwen3-8B", "object": "model", "max_model_len": 32768},
        ],
    }
    with PathServer({"/v1/models": listing}) as server:
        facts = probe(f"{server.base_url}/v1", "Qwen/Qwen3-8B")
    assert facts == ServerFacts(f"{server.base_url}/v1", 32768, None, "Qwen/Qwen3-8B")


def test_lm_studio_says_the_context_the_model_is_loaded_with():
    listing = {
        "data": [
            {
                "id": "qwen2.5-7b-instruct",
                "state": "loaded",
                "max_context_length": 32768,
                "loaded_context_length": 4096,
            }
        ]
    }
    with PathServer({"/v1/models": {"data": [{"id": "qwen2.5-7b-instruct"}]}}) as server:
        server.answers["/api/v0/models"] = listing
        facts = probe(f"{server.base_url}/v1", "qwen2.5-7b-instruct")
    assert (facts.context_length, facts.model_name) == (4096, "qwen2.5-7b-instruct")


def test_ollama_says_its_context_and_capabilities():
    with OllamaServer(models={"smollm2:135m": ("completion",)}) as server:
        facts = probe(f"{server.base_url}/v1", "smollm2:135m")
    assert facts == ServerFacts(f"{server.base_url}/v1", 131072, False, "smollm2:135m")


def test_a_server_without_such_endpoints_has_no_facts_and_no_error():
    with PathServer({}) as server:
        assert probe(f"{server.base_url}/v1", "gpt-4.1") is None
        asked = list(server.asked)
    assert asked == ["/props", "/api/show", "/v1/models", "/api/v0/models"]
    assert probe(closed_port(), "gpt-4.1") is None


def test_an_answer_nested_past_the_json_decoders_stack_is_no_fact():
    with PathServer({"/props": b"[" * 100_000}) as server:  # any local port may answer
        assert probe(f"{server.base_url}/v1", "gpt-4.1") is None


def test_a_server_that_lets_one_question_time_out_is_asked_no_more(monkeypatch):
    monkeypatch.setattr(server_facts, "TIMEOUT", 0.2)
    with SilentServer() as server:
        assert probe(f"{server.base_url}/v1", "gpt-4.1") is None
        assert server.connections == 1  # the other three would each wait as long


def test_a_server_is_asked_once_per_process(monkeypatch):
    with PathServer({"/props": LLAMA_CPP_PROPS}) as server:
        monkeypatch.setenv("OPENAI_BASE_URL", f"{server.base_url}/v1")
        monkeypatch.setenv("OPENAI_API_KEY", "local")
        first, second = facts_for("openai:smollm2"), facts_for("openai:smollm2")
        assert server.asked == ["/props"]
    assert first == second and first is not None and first.context_length == 2048


def test_a_hosted_api_is_not_asked(monkeypatch):
    monkeypatch.setenv("OPENAI_API_KEY", "sk-test")
    monkeypatch.setenv("ANTHROPIC_API_KEY", "sk-test")
    assert facts_for("openai:gpt-4.1") is None  # no base URL set: api.openai.com
    assert facts_for("anthropic:claude-sonnet-4-5") is None
    assert facts_for("scripted:/tmp/x.json") is None


class ServerError(Exception):
    """An HTTP error as the provider clients raise it: a status and the JSON body."""

    def __init__(self, status_code: int, body: object) -> None:
        super().__init__(str(body))
        self.status_code, self.body = status_code, body


def test_an_overflow_without_sizes_names_the_context_the_server_told(monkeypatch):
    from deepacp.harness.provider_errors import explain
    from deepacp.models import endpoint

    with PathServer({"/props": LLAMA_CPP_PROPS}) as server:
        monkeypatch.setenv("OPENAI_BASE_URL", f"{server.base_url}/v1")
        monkeypatch.setenv("OPENAI_API_KEY", "local")
        facts_for("openai:smollm2")
    overflow = ServerError(400, {"error": "the input length exceeds the context length"})
    assert explain(overflow, endpoint("openai"), "smollm2") == (
        "the model's context (2,048 tokens) is smaller than the request: raise the server's "
        "context size or use the compact profile"
    )


async def test_a_session_on_a_small_local_server_gets_the_compact_profile(tmp_path, monkeypatch):
    """No facts passed in: a session asks its model's server by default, and llama.cpp's
    2,048-token context chooses the compact profile (no plan tool is sent)."""
    import json

    from deepacp.session.lifecycle import SessionManager, Workspace
    from deepacp.session.storage.sqlite import SessionStore
    from deepacp.testing import ScriptedChatModel
    from tests.unit.session.test_manager import Recorder

    workspace, record = tmp_path / "workspace", tmp_path / "requests.jsonl"
    workspace.mkdir()
    script = tmp_path / "script.json"
    script.write_text(json.dumps({"turns": [{"content": "ok"}], "record": str(record)}))
    monkeypatch.setenv("DEEPACP_HOME", str(tmp_path / "home"))

    def the_model(spec: str, effort=None):  # the server's model, as the script plays it
        return ScriptedChatModel.from_file(str(script))

    with PathServer({"/props": LLAMA_CPP_PROPS}) as server:
        monkeypatch.setenv("OPENAI_BASE_URL", f"{server.base_url}/v1")
        manager = SessionManager(SessionStore(tmp_path / "home"), the_model)
        try:
            made = manager.new_record(str(workspace), "ask", "openai:smollm2")
            session = manager.open(made, Workspace(str(workspace)), Recorder())
            await session.prompt("hi")
        finally:
            await manager.shutdown()
    (request,) = [json.loads(line) for line in record.read_text().splitlines()]
    assert "/props" in server.asked and "write_todos" not in request["tools"]
