"""The in-process ACP tier: the real `DeepacpAgent` and the ACP SDK's client in one process
(`tests/support/inprocess.py`), with the same wire validation as tests/e2e/. A test here
needs no process of its own; what does (signals, kill -9, stdio framing, start-up) is in
tests/e2e/."""

from tests.support.fixtures import *  # noqa: F403
