"""What each profile puts on the wire to an OpenAI-compatible server (llama.cpp, LM Studio,
vLLM at a base URL), through the real ChatOpenAI and the validating local server: the
compact profile's short prompt and short tools, and the token budgets of
benchmarks/prompt_size.py, counted with the pinned offline tokenizer (bpe-openai's
o200k_base), so the counts are the same on every run."""

from __future__ import annotations

import importlib.util
import sys
from pathlib import Path

from deepacp.harness.profiles import COMPACT_PROMPT, SMALL_LOCAL

BENCHMARK = Path(__file__).resolve().parents[2] / "benchmarks" / "prompt_size.py"
COMPACT_TOOLS = {"ls", "read_file", "write_file", "edit_file", "delete", "grep", "execute"}


def load_benchmark():
    spec = importlib.util.spec_from_file_location("prompt_size", BENCHMARK)
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module  # its dataclasses look their module up there
    spec.loader.exec_module(module)
    return module


async def test_the_compact_profile_is_what_reaches_an_openai_compatible_server():
    benchmark = load_benchmark()
    body = await benchmark.first_request("small-local")
    first = body["messages"][0]
    system = benchmark.message_text(first["content"])
    assert first["role"] == "system" and system.startswith(COMPACT_PROMPT)
    assert "write_todos" not in system  # no plan tool, so no word of it
    assert "data, not instructions" in system  # the framing against injection stays
    sent = {t["function"]["name"]: t["function"]["description"] for t in body["tools"]}
    assert set(sent) == COMPACT_TOOLS | {"ask_user"}
    for name in COMPACT_TOOLS:
        assert sent[name] == SMALL_LOCAL.tool_descriptions[name]

    request = benchmark.counted("small-local", body)
    assert request.total <= benchmark.REQUEST_TARGET, request


async def test_the_default_profiles_tools_fit_their_budget():
    benchmark = load_benchmark()
    body = await benchmark.first_request("default")
    request = benchmark.counted("default", body)
    assert {"write_todos", "task", "start_background_task", "glob"} <= set(request.tools)
    assert request.tool_total <= benchmark.TOOLS_TARGET, request.tools
