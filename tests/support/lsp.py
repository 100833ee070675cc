"""LSP wire helpers for tests that speak to `deepacp lsp` byte by byte."""


def lsp_frame(body: bytes) -> bytes:
    """`body` framed as the base protocol frames a message (Content-Length header)."""
    return b"Content-Length: %d\r\n\r\n" % len(body) + body
