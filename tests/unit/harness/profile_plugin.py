"""A third-party package's profiles, as `deepacp.profiles` entry points name them."""

from deepacp.harness.profiles import HarnessProfile

GPT4 = HarnessProfile(
    "acme-gpt-4.1", keys=("openai:gpt-4.1",), prompt_suffix="- Answer in one line."
)
CLAUDE = HarnessProfile("acme-claude", keys=("anthropic",))
PROFILES = [GPT4, CLAUDE]
NOT_A_PROFILE = "oops"
