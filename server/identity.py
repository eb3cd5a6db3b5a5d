"""Player identity: secret tokens, stored only as their SHA-256."""

from __future__ import annotations

import hashlib
import secrets


def new_token() -> str:
    """A fresh secret token (32 bytes from the OS, URL-safe text)."""
    return secrets.token_urlsafe(32)


def token_hash(token: str) -> str:
    return hashlib.sha256(token.encode()).hexdigest()
