"""The parts of `deepacp run` beside its loop (`deepacp/headless.py`): the prompt it reads,
the output formats it prints in, its exit codes."""
