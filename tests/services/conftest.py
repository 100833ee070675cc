"""Tests that start a real service: PostgreSQL, sshd, dockerd, `langgraph dev` or a
bubblewrap sandbox. Every test here is marked `services`; those that also need the binary in
a process of its own are marked `e2e` too. The tests of one daemon share one xdist worker
(tests/support/tiers.py)."""

from tests.support.fixtures import *  # noqa: F403
from tests.support.langgraph import langgraph_server  # noqa: F401 (fixture)
from tests.support.llama import llama_server, llama_small_server  # noqa: F401 (fixtures)
