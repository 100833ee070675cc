"""The Agent Client Protocol face: `deepacp --stdio`.

Importing this package is cheap; the ACP SDK is imported only after `initialize` has
been answered (see `server.py`).
"""
