"""Errors a backend raises for faults the model can act on."""


class BackendError(Exception):
    """A fault the model can act on; the message is shown to it as the tool result."""


class PathError(BackendError):
    """A path that is malformed or reaches outside the workspace root."""


class NotFoundError(BackendError):
    """The file or directory does not exist."""
