"""Fixtures for the provider-wire tests: one server per test, and no way off this machine."""

from __future__ import annotations

import ipaddress
import socket
from collections.abc import Callable, Iterator
from typing import Any

import pytest

from tests.providers.anthropic_server import AnthropicServer
from tests.providers.ollama_server import OllamaServer
from tests.providers.openai_server import OpenAIServer

LOCAL_NAMES = {"localhost", "127.0.0.1", "::1"}


def _is_local(host: Any) -> bool:
    if host in LOCAL_NAMES:
        return True
    try:
        return ipaddress.ip_address(host).is_loopback
    except ValueError:
        return False


@pytest.fixture(autouse=True)
def loopback_only(monkeypatch: pytest.MonkeyPatch) -> Iterator[list[str]]:
    """Refuse to resolve or reach any non-loopback host (e.g. api.anthropic.com), as a
    connection failure the clients see, and fail the test that tried."""
    attempts: list[str] = []
    real_connect, real_getaddrinfo = socket.socket.connect, socket.getaddrinfo

    def connect(sock: socket.socket, address: Any) -> Any:
        if sock.family in (socket.AF_INET, socket.AF_INET6) and not _is_local(address[0]):
            attempts.append(str(address[0]))
            raise ConnectionRefusedError(f"the provider tests stay on loopback: {address[0]}")
        return real_connect(sock, address)

    def getaddrinfo(host: Any, *args: Any, **kwargs: Any) -> Any:
        if host is not None and not _is_local(host):
            attempts.append(str(host))
            raise socket.gaierror(socket.EAI_NONAME, f"the provider tests stay on loopback: {host}")
        return real_getaddrinfo(host, *args, **kwargs)

    monkeypatch.setattr(socket.socket, "connect", connect)
    monkeypatch.setattr(socket, "getaddrinfo", getaddrinfo)
    for name in ("ANTHROPIC_BASE_URL", "ANTHROPIC_API_KEY", "OPENAI_BASE_URL", "OPENAI_API_KEY"):
        monkeypatch.delenv(name, raising=False)
    yield attempts
    assert not attempts, f"a test tried to leave the machine: {attempts}"


@pytest.fixture
def anthropic_server() -> Iterator[AnthropicServer]:
    with AnthropicServer() as server:
        yield server


@pytest.fixture
def openai_server() -> Iterator[OpenAIServer]:
    with OpenAIServer() as server:
        yield server


@pytest.fixture
def ollama_server() -> Iterator[OllamaServer]:
    with OllamaServer() as server:
        yield server


def with_defaults(client: Callable[..., Any], **defaults: Any) -> Callable[..., Any]:
    """`client(**kwargs)` made with `defaults` under `kwargs` and a test API key."""
    return lambda **kwargs: client(api_key="test", **{**defaults, **kwargs})


@pytest.fixture
def claude(anthropic_server: AnthropicServer) -> Callable[..., Any]:
    """Make a real ChatAnthropic pointed at the test server, with the SDK's retries off."""
    from langchain_anthropic import ChatAnthropic

    url = anthropic_server.base_url
    return with_defaults(ChatAnthropic, base_url=url, model="claude-sonnet-4-5", max_retries=0)


@pytest.fixture
def gpt(openai_server: OpenAIServer) -> Callable[..., Any]:
    """Make a real ChatOpenAI pointed at the test server, with the SDK's retries off."""
    from langchain_openai import ChatOpenAI

    url = f"{openai_server.base_url}/v1"
    return with_defaults(ChatOpenAI, base_url=url, model="gpt-4.1", max_retries=0)


@pytest.fixture
def llama(ollama_server: OllamaServer) -> Callable[..., Any]:
    """Make a real ChatOllama pointed at the test server."""
    from langchain_ollama import ChatOllama

    def make(**kwargs: Any) -> ChatOllama:
        kwargs.setdefault("model", "llama3.2")
        return ChatOllama(base_url=ollama_server.base_url, **kwargs)

    return make
