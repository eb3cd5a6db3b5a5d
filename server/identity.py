"""Player identity: secret tokens, stored only as their SHA-256."""

from __future__ import annotations

import hashlib
import re
import secrets
from typing import Final

#: What a token is made of (URL-safe base64), and the longest a client may send.
TOKEN_PATTERN: Final = re.compile(r"[A-Za-z0-9_\-]+")
MAX_TOKEN_LENGTH: Final = 128


def new_token() -> str:
    """A fresh secret token (32 bytes from the OS, URL-safe text)."""
    return secrets.token_urlsafe(32)


def token_hash(token: str) -> str:
    return hashlib.sha256(token.encode()).hexdigest()


def is_token_text(text: str) -> bool:
    """Whether ``text`` could be a token, exactly: no space, nothing but URL-safe text."""
    return len(text) <= MAX_TOKEN_LENGTH and TOKEN_PATTERN.fullmatch(text) is not None
