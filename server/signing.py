"""The cluster's signing key: what the server publishes (replays, daily boards, exports)
is signed with Ed25519, so that anyone can tell its documents from forgeries
(docs/protocol.md, Signatures; keys and their rotation: docs/operations.md).

Every process of a cluster signs with the same key, kept in the database
(``signing_keys``): the first process to start makes it, and processes starting at once
all get the one stored first. ``gaps-server rotate-signing-key`` makes a new key
current; running processes take it up within ``REFRESH_S``. The old keys stay published,
retired, so that what they signed still verifies. An operator may give the key instead,
in a PEM file (``--signing-key-file``): its public half is published, its private half
never stored.

What a signature covers, and how it is written, is ``gaps.canonical``'s.
"""

from __future__ import annotations

import logging
from collections.abc import Mapping
from datetime import datetime
from pathlib import Path
from typing import Any, Final

from cryptography.exceptions import UnsupportedAlgorithm
from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey
from cryptography.hazmat.primitives.serialization import (
    Encoding,
    NoEncryption,
    PrivateFormat,
    PublicFormat,
    load_pem_private_key,
)

from gaps.canonical import ALGORITHM, SIGNATURE, key_id, signed_bytes, to_base64url
from gaps_protocol.times import format_time
from server.clock import Clock
from server.storage.signing_keys import KeyKnown, SigningKeys, StoredKey

#: How often a process looks for a key made current since (``rotate-signing-key``), s.
REFRESH_S: Final = 60.0

log = logging.getLogger("gaps.signing")


class SigningKeyError(Exception):
    """A key file that holds no usable key, or a current key this process cannot sign
    with: the message says which and what to do."""


def sign(document: Mapping[str, Any], private_key: Ed25519PrivateKey) -> dict[str, Any]:
    """``document`` with its ``signature`` member: Ed25519 over the canonical JSON of the
    document without that member (any one it had is replaced). Pure."""
    unsigned = {name: value for name, value in document.items() if name != SIGNATURE}
    return {
        **unsigned,
        SIGNATURE: {
            "alg": ALGORITHM,
            "key_id": key_id(raw_public_key(private_key)),
            "value": to_base64url(private_key.sign(signed_bytes(unsigned))),
        },
    }


def raw_public_key(private_key: Ed25519PrivateKey) -> bytes:
    return private_key.public_key().public_bytes(Encoding.Raw, PublicFormat.Raw)


def raw_private_key(private_key: Ed25519PrivateKey) -> bytes:
    return private_key.private_bytes(Encoding.Raw, PrivateFormat.Raw, NoEncryption())


def read_key_file(path: Path) -> Ed25519PrivateKey:
    """The Ed25519 private key in a PEM file (PKCS #8, unencrypted: what ``openssl genpkey
    -algorithm ed25519`` writes)."""
    try:
        data = path.read_bytes()
    except OSError as error:
        raise SigningKeyError(f"cannot read the signing key file {path}: {error}") from None
    try:
        key = load_pem_private_key(data, password=None)
    except (ValueError, TypeError, UnsupportedAlgorithm) as error:
        raise SigningKeyError(
            f"{path} holds no unencrypted PEM private key ({error}); make one with: "
            "openssl genpkey -algorithm ed25519 -out FILE"
        ) from None
    if not isinstance(key, Ed25519PrivateKey):
        raise SigningKeyError(f"{path} holds a {type(key).__name__}, not an Ed25519 key")
    return key


def published(key: StoredKey, *, retired_at: datetime | None) -> dict[str, Any]:
    """A key as ``/keys`` shows it: ``retired_at`` is when the next key replaced it."""
    return {
        "key_id": key.key_id,
        "alg": ALGORITHM,
        "public_key": to_base64url(key.public_key),
        "created_at": format_time(key.created_at),
        "status": "current" if retired_at is None else "retired",
        "retired_at": None if retired_at is None else format_time(retired_at),
    }


async def rotate(keys: SigningKeys, *, now: datetime, key_file: Path | None) -> StoredKey:
    """Make a new key current: the operator's (its public half only) or a new one."""
    if key_file is None:
        return await _store_new(keys, _new_key(), now=now, with_private=True)
    return await _store_new(keys, read_key_file(key_file), now=now, with_private=False)


async def _store_new(
    keys: SigningKeys, private_key: Ed25519PrivateKey, *, now: datetime, with_private: bool
) -> StoredKey:
    public = raw_public_key(private_key)
    try:
        return await keys.add(
            key_id=key_id(public),
            public_key=public,
            private_key=raw_private_key(private_key) if with_private else None,
            created_at=now,
        )
    except KeyKnown:
        raise SigningKeyError(
            f"the key {key_id(public)} is one the server has had already: a rotation needs "
            "a new key (openssl genpkey -algorithm ed25519 -out FILE)"
        ) from None


def _new_key() -> Ed25519PrivateKey:
    return Ed25519PrivateKey.generate()


class Signer:
    """Signs with this process's key: the operator's file's, or the cluster's current.

    :param keys: the ``signing_keys`` repository.
    :param key_file: the operator's key (``--signing-key-file``), or None.
    """

    def __init__(self, keys: SigningKeys, *, clock: Clock, key_file: Path | None = None) -> None:
        self._keys = keys
        self._clock = clock
        self._key_file = key_file
        self._private: Ed25519PrivateKey | None = None
        self._key_id = ""
        self._checked_at = 0.0
        #: Current keys this process cannot sign with, said once each.
        self._unusable: set[str] = set()

    @property
    def key_id(self) -> str:
        """The id of the key this process signs with now."""
        return self._key_id

    async def start(self) -> None:
        """Take up the key: the operator's (published now if it is new), else the
        cluster's current one (made now at the first start)."""
        if self._key_file is not None:
            await self._take_file_key(self._key_file)
            return
        current = await self._keys.current()
        if current is None:
            private_key = _new_key()
            public = raw_public_key(private_key)
            current = await self._keys.first(
                key_id=key_id(public),
                public_key=public,
                private_key=raw_private_key(private_key),
                created_at=self._clock.now(),
            )
        if current.private_key is None:
            raise SigningKeyError(
                f"the current signing key {current.key_id} was given by the operator in a "
                "file: start with --signing-key-file (GAPS_SIGNING_KEY_FILE) naming it, or "
                "make a key the servers keep with: gaps-server rotate-signing-key"
            )
        self._take(current)

    async def sign(self, document: Mapping[str, Any]) -> dict[str, Any]:
        """``document`` signed with this process's key (see :func:`sign`)."""
        if self._key_file is None and self._clock.monotonic() - self._checked_at >= REFRESH_S:
            await self._refresh()
        assert self._private is not None, "the signer is not started"
        return sign(document, self._private)

    async def published(self) -> dict[str, Any]:
        """Every key the server has signed with, newest first (the ``/keys`` body)."""
        stored = await self._keys.all()
        replaced_at: list[datetime | None] = [key.created_at for key in stored[1:]] + [None]
        return {
            "keys": [
                published(key, retired_at=retired_at)
                for key, retired_at in reversed(list(zip(stored, replaced_at, strict=True)))
            ]
        }

    async def _take_file_key(self, path: Path) -> None:
        private_key = read_key_file(path)
        public = raw_public_key(private_key)
        if await self._keys.by_id(key_id(public)) is None:
            try:
                await self._keys.add(
                    key_id=key_id(public),
                    public_key=public,
                    private_key=None,
                    created_at=self._clock.now(),
                )
            except KeyKnown:
                pass  # another process of the cluster published it meanwhile
        self._private = private_key
        self._key_id = key_id(public)
        current = await self._keys.current()
        if current is not None and current.key_id != self._key_id:
            log.warning(
                "signing with a retired key: the key file's is not the current one",
                extra={"key_id": self._key_id, "current": current.key_id, "file": str(path)},
            )

    async def _refresh(self) -> None:
        self._checked_at = self._clock.monotonic()
        current = await self._keys.current()
        if current is None or current.key_id == self._key_id:
            return
        if current.private_key is None:
            if current.key_id not in self._unusable:
                self._unusable.add(current.key_id)
                log.warning(
                    "the current signing key is the operator's: this process keeps signing "
                    "with its own until it is started with --signing-key-file",
                    extra={"key_id": self._key_id, "current": current.key_id},
                )
            return
        log.info(
            "signing with the rotated key", extra={"key_id": current.key_id, "was": self._key_id}
        )
        self._take(current)

    def _take(self, stored: StoredKey) -> None:
        assert stored.private_key is not None
        self._private = Ed25519PrivateKey.from_private_bytes(stored.private_key)
        self._key_id = stored.key_id
        self._checked_at = self._clock.monotonic()
