"""The canonical JSON of a signed document, and what its signature covers.

A document the server signs (a replay, a daily board, an export) carries one member
``signature``: ``{"alg": "Ed25519", "key_id": ..., "value": ...}``. The signature is over
the canonical JSON of the document without that member (docs/protocol.md, Signatures).

The canonical form is RFC 8785, the JSON Canonicalization Scheme, on documents that
hold integers only: members sorted by their names' UTF-16 code units, no whitespace,
strings escaped as JSON requires and nothing more (``ensure_ascii`` off), UTF-8. A
number with a fraction or an exponent, or an integer beyond 2^53 - 1 (past which
JavaScript's numbers, and so RFC 8785, lose digits), is refused: no signed document
holds one, and refusing them keeps the form the same in every language.

Pure: no I/O, no cryptography. The server signs (``server.signing``); the terminal
client checks (``client_cli.signature``); both use this module for what is signed.
"""

from __future__ import annotations

import base64
import hashlib
import json
import re
from collections.abc import Mapping, Sequence
from typing import Final

#: The member that holds a document's signature: left out of what is signed.
SIGNATURE: Final = "signature"
#: The one signature algorithm.
ALGORITHM: Final = "Ed25519"
#: The largest integer a signed document holds, either sign (JavaScript's safe integers).
MAX_INTEGER: Final = 2**53 - 1
#: Hex digits of SHA-256 over the raw public key that name a key.
KEY_ID_DIGITS: Final = 16

#: Base64url without padding: the URL-safe alphabet, never 4n + 1 characters.
_BASE64URL: Final = re.compile(r"(?:[A-Za-z0-9_-]{4})*(?:[A-Za-z0-9_-]{2,3})?")


class NotCanonical(ValueError):
    """The value has no canonical JSON: it names the place and what is there."""


def canonical_json(value: object) -> bytes:
    """``value``'s canonical JSON, as UTF-8 bytes; :class:`NotCanonical` if it has none."""
    parts: list[str] = []
    try:
        _write(value, "$", parts)
    except RecursionError:
        raise NotCanonical("the document is nested too deep") from None
    return "".join(parts).encode("utf-8")


def signed_bytes(document: Mapping[str, object]) -> bytes:
    """What a document's signature signs: the canonical JSON of the document without
    its ``signature`` member."""
    if not isinstance(document, Mapping):
        raise NotCanonical("the document is not a JSON object")
    return canonical_json({key: value for key, value in document.items() if key != SIGNATURE})


def key_id(public_key: bytes) -> str:
    """A public key's name: the first 16 hex digits of SHA-256 over its 32 raw bytes."""
    return hashlib.sha256(public_key).hexdigest()[:KEY_ID_DIGITS]


def to_base64url(data: bytes) -> str:
    """Base64url (RFC 4648, section 5) without padding."""
    return base64.urlsafe_b64encode(data).rstrip(b"=").decode("ascii")


def from_base64url(text: str) -> bytes:
    """The bytes of base64url text without padding; ``ValueError`` if it is none."""
    if not isinstance(text, str) or _BASE64URL.fullmatch(text) is None:
        raise ValueError(f"{text!r} is not base64url")
    return base64.urlsafe_b64decode(text + "=" * (-len(text) % 4))


def _write(value: object, where: str, parts: list[str]) -> None:
    if value is None:
        parts.append("null")
    elif value is True:
        parts.append("true")
    elif value is False:
        parts.append("false")
    elif isinstance(value, int):
        if abs(value) > MAX_INTEGER:
            raise NotCanonical(f"{where} is {value}, beyond the integers a signed document holds")
        parts.append(str(int(value)))
    elif isinstance(value, float):
        raise NotCanonical(f"{where} is {value!r}: a signed document holds integers only")
    elif isinstance(value, str):
        parts.append(_string(value, where))
    elif isinstance(value, Mapping):
        for key in value:
            if not isinstance(key, str):
                raise NotCanonical(f"{where} has the member name {key!r}, which is no string")
        parts.append("{")
        for number, key in enumerate(sorted(value, key=_utf16)):
            if number:
                parts.append(",")
            parts.append(_string(key, where))
            parts.append(":")
            _write(value[key], f"{where}.{key}", parts)
        parts.append("}")
    elif isinstance(value, Sequence) and not isinstance(value, bytes | bytearray):
        parts.append("[")
        for index, item in enumerate(value):
            if index:
                parts.append(",")
            _write(item, f"{where}[{index}]", parts)
        parts.append("]")
    else:
        raise NotCanonical(f"{where} is a {type(value).__name__}, which JSON does not hold")


def _string(text: str, where: str) -> str:
    try:
        text.encode("utf-8")
    except UnicodeEncodeError:
        raise NotCanonical(f"{where} holds a lone surrogate, which is no Unicode text") from None
    # Python escapes exactly what RFC 8785 escapes: '"', '\\' and the control characters
    # (\b \t \n \f \r short, the others as lower-case \u00xx).
    return json.dumps(text, ensure_ascii=False)


def _utf16(name: str) -> bytes:
    """The sort key of a member name: its UTF-16 code units (big-endian bytes compare
    as the units do), as RFC 8785 sorts."""
    return name.encode("utf-16-be", "surrogatepass")
