"""ReadableErrorsMiddleware: a model call that failed for a cause the user can fix (a
refused key, an unknown model, a server that cannot be reached or does not answer, a prompt
larger than the model's context) ends the run with `ProviderError`, one line naming the
cause and the fix; the provider's own error, which may echo the key, goes to the log only.

It is the outermost model-call wrapper, so it sees what is left after retries and after
summarizing; errors it cannot explain pass through unchanged.
"""

from __future__ import annotations

import logging
from collections.abc import Awaitable, Callable

from langchain.agents.middleware import AgentMiddleware, ModelRequest, ModelResponse

from deepacp.errors import ProviderError
from deepacp.harness.provider_errors import explain
from deepacp.secrets import redact

log = logging.getLogger(__name__)


def readable(exc: Exception, model: object) -> ProviderError | None:
    """`exc` from a call to `model` as one line the user can act on (None: not ours to say)."""
    from deepacp.errors import ConfigError
    from deepacp.models import endpoint

    try:
        params = model._get_ls_params()  # type: ignore[attr-defined]
    except Exception:
        return None  # not a provider's chat model (the scripted one, say)
    provider, name = params.get("ls_provider"), params.get("ls_model_name")
    try:
        where = endpoint(provider) if isinstance(provider, str) else None
    except ConfigError:  # a broken config.toml is reported where the model is read
        return None
    line = explain(exc, where, str(name or "")) if where else None
    if line is None:
        return None
    log.info("the model call failed: %s", line, exc_info=exc)  # the details, in the log
    return ProviderError(redact(line))


class ReadableErrorsMiddleware(AgentMiddleware):
    """Turns a provider failure the user can fix into `ProviderError` (module docstring)."""

    def wrap_model_call(
        self, request: ModelRequest, handler: Callable[[ModelRequest], ModelResponse]
    ) -> ModelResponse:
        try:
            return handler(request)
        except Exception as exc:
            if error := readable(exc, request.model):
                raise error from exc
            raise

    async def awrap_model_call(
        self, request: ModelRequest, handler: Callable[[ModelRequest], Awaitable[ModelResponse]]
    ) -> ModelResponse:
        try:
            return await handler(request)
        except Exception as exc:
            if error := readable(exc, request.model):
                raise error from exc
            raise
