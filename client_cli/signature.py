"""Check the signature of a document the server signed (a replay, a daily board, an
export): docs/protocol.md, Signatures.

Pure: ``check(document, keys)`` takes the document and the public keys to trust (read
from a file with ``keys_from_file``, or the server's ``/keys`` read with
``keys_from_listing``) and returns a ``SignatureCheck``. It never raises on a JSON value.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from dataclasses import dataclass
from enum import Enum
from typing import Any

from cryptography.exceptions import InvalidSignature, UnsupportedAlgorithm
from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PublicKey
from cryptography.hazmat.primitives.serialization import (
    Encoding,
    PublicFormat,
    load_pem_public_key,
)

from gaps.canonical import (
    ALGORITHM,
    SIGNATURE,
    NotCanonical,
    from_base64url,
    key_id,
    signed_bytes,
)

#: The length of an Ed25519 public key and of a signature, in bytes.
PUBLIC_KEY_BYTES = 32
SIGNATURE_BYTES = 64


class BadKeys(ValueError):
    """Keys that cannot be read: the message says what is wrong and where."""


@dataclass(frozen=True)
class PublicKey:
    """A key the server signs with, as it publishes it (``/keys``) or as given."""

    key_id: str
    raw: bytes
    #: "current" or "retired" as the server publishes it; None for a key from a PEM file.
    status: str | None = None
    retired_at: str | None = None


class Verdict(Enum):
    """What a signature check found."""

    #: Signed by a trusted key, and the document is what that key signed.
    HOLDS = "holds"
    #: Signed, but not over this content (changed after signing, or forged).
    BROKEN = "broken"
    #: Signed by a key that is not among the trusted ones.
    UNKNOWN_KEY = "unknown key"
    #: A ``signature`` member that is no signature this client can read.
    UNREADABLE = "unreadable"
    #: No ``signature``: the document proves only its own consistency.
    UNSIGNED = "unsigned"
    #: Signed, but no key was at hand to check it with.
    UNCHECKED = "unchecked"


@dataclass(frozen=True)
class SignatureCheck:
    verdict: Verdict
    #: The key the document names as its signer, when it names one.
    key_id: str | None = None
    #: The trusted key it was checked with, when one was found.
    key: PublicKey | None = None
    #: Why, in words, when the verdict is not ``HOLDS``.
    detail: str = ""

    @property
    def refused(self) -> bool:
        """The document must be refused: its signature is there and does not hold."""
        return self.verdict in (Verdict.BROKEN, Verdict.UNKNOWN_KEY, Verdict.UNREADABLE)


def signer(document: object) -> str | None:
    """The key id the document says signed it, if it says one."""
    if isinstance(document, Mapping):
        signature = document.get(SIGNATURE)
        if isinstance(signature, Mapping) and isinstance(signature.get("key_id"), str):
            return str(signature["key_id"])
    return None


def is_signed(document: object) -> bool:
    return isinstance(document, Mapping) and SIGNATURE in document


def check(
    document: object, keys: Mapping[str, PublicKey], *, only: str | None = None
) -> SignatureCheck:
    """Whether ``document``'s signature holds under one of ``keys`` (by id); ``only``:
    the one key id to accept."""
    if not is_signed(document):
        return SignatureCheck(
            Verdict.UNSIGNED, detail="the document has no signature: it proves only its own "
            "consistency, and anyone can write a consistent document"
        )
    assert isinstance(document, Mapping)
    signature = document[SIGNATURE]
    if not isinstance(signature, Mapping):
        return SignatureCheck(Verdict.UNREADABLE, detail="signature is not an object")
    algorithm, named, value = (signature.get(k) for k in ("alg", "key_id", "value"))
    if algorithm != ALGORITHM:
        return SignatureCheck(
            Verdict.UNREADABLE, detail=f"signature.alg is {algorithm!r}, not {ALGORITHM!r}"
        )
    if not isinstance(named, str):
        return SignatureCheck(Verdict.UNREADABLE, detail="signature.key_id is not text")
    try:
        raw_signature = from_base64url(value) if isinstance(value, str) else b""
    except ValueError:
        raw_signature = b""
    if len(raw_signature) != SIGNATURE_BYTES:
        return SignatureCheck(
            Verdict.UNREADABLE, named,
            detail=f"signature.value is not {SIGNATURE_BYTES} bytes in base64url",
        )
    if only is not None and named != only:
        return SignatureCheck(
            Verdict.UNKNOWN_KEY, named, detail=f"it was signed by key {named}, not by {only}"
        )
    key = keys.get(named)
    if key is None:
        known = ", ".join(sorted(keys)) or "none"
        return SignatureCheck(
            Verdict.UNKNOWN_KEY, named,
            detail=f"key {named} is not one of the keys trusted here ({known})",
        )
    try:
        content = signed_bytes(document)
    except NotCanonical as error:
        return SignatureCheck(Verdict.BROKEN, named, key, detail=f"no canonical form: {error}")
    try:
        Ed25519PublicKey.from_public_bytes(key.raw).verify(raw_signature, content)
    except InvalidSignature:
        return SignatureCheck(
            Verdict.BROKEN, named, key,
            detail=f"the document is not what key {named} signed: it was changed after "
            "signing, or the signature was made up",
        )
    return SignatureCheck(Verdict.HOLDS, named, key)


def unchecked(document: object, why: str) -> SignatureCheck:
    """The check of a signed document when no key could be had (``why``)."""
    return SignatureCheck(Verdict.UNCHECKED, signer(document), detail=why)


def keys_from_listing(listing: object) -> dict[str, PublicKey]:
    """The keys of a ``/keys`` body, by id. A key whose id is not its public key's is
    refused: an id names one key only."""
    if not isinstance(listing, Mapping) or not isinstance(listing.get("keys"), list):
        raise BadKeys('not a list of keys: expected {"keys": [...]}, as /keys serves')
    found: dict[str, PublicKey] = {}
    for number, entry in enumerate(listing["keys"], start=1):
        where = f"key #{number}"
        if not isinstance(entry, Mapping) or entry.get("alg") != ALGORITHM:
            raise BadKeys(f"{where} is no {ALGORITHM} key")
        try:
            raw = from_base64url(entry.get("public_key"))  # type: ignore[arg-type]
        except ValueError:
            raw = b""
        if len(raw) != PUBLIC_KEY_BYTES:
            raise BadKeys(f"{where}: public_key is not {PUBLIC_KEY_BYTES} bytes in base64url")
        if entry.get("key_id") != key_id(raw):
            raise BadKeys(
                f"{where}: key_id {entry.get('key_id')!r} is not its key's, {key_id(raw)}"
            )
        retired_at = entry.get("retired_at")
        found[key_id(raw)] = PublicKey(
            key_id(raw), raw, status=str(entry.get("status")),
            retired_at=retired_at if isinstance(retired_at, str) else None,
        )
    return found


def keys_from_file(data: bytes) -> dict[str, PublicKey]:
    """The keys of a file: a PEM public key (``openssl pkey -pubout``) or a saved ``/keys``."""
    if data.lstrip().startswith(b"-----BEGIN"):
        try:
            key = load_pem_public_key(data)
        except (ValueError, UnsupportedAlgorithm) as error:
            raise BadKeys(f"no PEM public key: {error}") from None
        if not isinstance(key, Ed25519PublicKey):
            raise BadKeys(f"the PEM key is a {type(key).__name__}, not an {ALGORITHM} key")
        raw = key.public_bytes(Encoding.Raw, PublicFormat.Raw)
        return {key_id(raw): PublicKey(key_id(raw), raw)}
    try:
        listing: Any = json.loads(data.decode("utf-8"))
    except (ValueError, UnicodeDecodeError, RecursionError):
        raise BadKeys("neither a PEM public key nor JSON") from None
    return keys_from_listing(listing)
