"""The deep-agent harness: ordered middleware on LangChain's create_agent."""

from deepacp.harness.graph import create_deep_agent

__all__ = ["create_deep_agent"]
