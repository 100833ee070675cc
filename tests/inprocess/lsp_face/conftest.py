"""`deepacp lsp` in the test's process, for pytest-lsp's client (`tests/support/lsp_inprocess.py`):
pytest-lsp's hooks surface what the server reported outside a test's own code."""

from pytest_lsp import pytest_runtest_call, pytest_runtest_makereport  # noqa: F401 (its hooks)
