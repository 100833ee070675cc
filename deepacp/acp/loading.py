"""What `deepacp --stdio` loads once `initialize` is answered: the ACP SDK, then the
harness (LangChain, LangGraph, the configured provider) in a background thread, ready for
the first turn."""

from __future__ import annotations

import logging
import threading
from concurrent.futures import Future

log = logging.getLogger("deepacp")

HARNESS_START_SECONDS = 0.5
"""How long the harness import waits for the first request to be answered, at most."""


class HarnessImport(Future):
    """Done once the harness can be used; its import begins at `start()` (any thread, any
    number of times)."""

    def __init__(self) -> None:
        super().__init__()
        self.begin = threading.Event()

    def start(self) -> None:
        self.begin.set()


def load_harness(model_spec: str | None) -> HarnessImport:
    """Import the harness (LangChain, LangGraph), then the configured provider's package, in
    a background thread, once started."""
    loaded = HarnessImport()

    def work() -> None:
        loaded.begin.wait()
        try:
            from deepacp.session import import_harness

            import_harness()
        except BaseException as exc:
            loaded.set_exception(exc)
            return
        loaded.set_result(None)
        try:
            from deepacp.models import PROVIDERS, configured_spec, split_spec

            provider = PROVIDERS.get(split_spec(configured_spec(model_spec))[0])
            if provider is not None:
                __import__(provider.package)
        except Exception:  # a broken setup is reported when a session needs it
            log.debug("warm-up import failed", exc_info=True)

    threading.Thread(target=work, name="deepacp-harness-import", daemon=True).start()
    return loaded


def import_sdk() -> None:
    """Import the ACP SDK (its schema the cheap way, see `lean.py`) and the agent, before
    any other thread defines pydantic models. Run in a thread: it takes a second or two
    under load, and a signal meanwhile must end the process at once (`lifetime.py`)."""
    from deepacp.acp.lean import import_acp_schema

    import_acp_schema()
    import deepacp.acp.connection  # noqa: F401
