"""The few named exceptions deepacp's control flow uses.

Every message is one line a user can act on: what went wrong and what to do.
"""


class DeepacpError(Exception):
    """Base class: an error whose message is shown to the user as is."""


class ConfigError(DeepacpError):
    """The configuration (flags, environment, config file) cannot be used."""


class ModelConfigError(ConfigError):
    """No usable model: nothing configured, a missing provider package, or a missing key."""


class ScriptError(ConfigError):
    """A scripted-model script file cannot be loaded."""


class TurnError(DeepacpError):
    """A turn failed (the model provider, say); the thread stays usable."""


class ProviderUnavailable(TurnError):
    """The model provider kept failing (overloaded, rate limited, unreachable) after retries."""


class ProviderError(DeepacpError):
    """The model provider refused or could not serve a call for a cause the user can fix
    (a wrong key or model, a server not reachable or not answering, a context too small)."""


class SessionBusy(DeepacpError):
    """A prompt arrived while the session was still running the previous one."""


class SessionNotFound(DeepacpError):
    """No stored session has this id."""


class WrongWorkspace(DeepacpError):
    """The session belongs to another workspace than the one the client named."""


class SessionInUse(DeepacpError):
    """The session is open in another deepacp process (another editor window, say)."""


class StoreError(DeepacpError):
    """The session store under `$DEEPACP_HOME` cannot be used (a corrupt database, say)."""


class RemoteUnavailable(DeepacpError):
    """A remote workspace that cannot be used: a bad URL, a host that cannot be reached or
    refuses the login, a path that is not there."""


class ServerUnavailable(DeepacpError):
    """The LangGraph server a session runs on (`--server`) cannot be reached."""


class QueueFull(DeepacpError):
    """A session already holds as many waiting prompts (or steered messages) as it keeps."""
