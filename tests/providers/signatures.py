"""Signatures for the thinking the Anthropic wire server emits, so it can tell when a client
sends a thinking block back changed (the API rejects a modified or foreign thinking block)."""

from __future__ import annotations

import base64
import hashlib
import hmac
import secrets


class Signer:
    """HMAC-SHA256 under a per-server secret, base64-encoded like the API's opaque strings."""

    def __init__(self) -> None:
        self._key = secrets.token_bytes(32)

    def sign(self, text: str) -> str:
        mac = hmac.new(self._key, text.encode(), hashlib.sha256).digest()
        return base64.b64encode(mac).decode()

    def verify(self, text: str, signature: object) -> bool:
        return isinstance(signature, str) and hmac.compare_digest(self.sign(text), signature)

    def redacted(self, secret_text: str) -> str:
        """An opaque `data` for a redacted_thinking block: the text plus its MAC."""
        payload = secret_text.encode()
        mac = hmac.new(self._key, payload, hashlib.sha256).digest()
        return base64.b64encode(mac + payload).decode()

    def verify_redacted(self, data: object) -> bool:
        try:
            raw = base64.b64decode(str(data), validate=True)
        except ValueError:
            return False
        mac, payload = raw[:32], raw[32:]
        expected = hmac.new(self._key, payload, hashlib.sha256).digest()
        return len(raw) > 32 and hmac.compare_digest(mac, expected)
