"""The signing keys repository: every key results were signed with (server.signing).

The key of the highest generation is the current one; a new one (``add``) retires the
one before it. Keys are never deleted: the documents they signed still verify.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import UTC, datetime
from typing import Final

from sqlalchemy import func, insert, select
from sqlalchemy.exc import IntegrityError
from sqlalchemy.ext.asyncio import AsyncConnection

from server.storage.database import Database
from server.storage.models import SigningKey

#: How often ``add`` tries again when another process took the next generation first.
_ADD_ATTEMPTS: Final = 5


class KeyKnown(Exception):
    """A key with this id is stored already."""


@dataclass(frozen=True)
class StoredKey:
    generation: int
    key_id: str
    public_key: bytes
    #: None for a key the operator gives in a file: its private half stays there.
    private_key: bytes | None
    created_at: datetime


class SigningKeys:
    """The ``signing_keys`` table."""

    def __init__(self, database: Database) -> None:
        self._database = database

    async def all(self) -> list[StoredKey]:
        """Every key, oldest first: the last is the current one."""
        async with self._database.read() as connection:
            rows = (
                await connection.execute(select(*_COLUMNS).order_by(SigningKey.generation))
            ).all()
        return [_stored(*row) for row in rows]

    async def current(self) -> StoredKey | None:
        async with self._database.read() as connection:
            return await self._current(connection)

    async def by_id(self, key_id: str) -> StoredKey | None:
        async with self._database.read() as connection:
            row = (
                await connection.execute(select(*_COLUMNS).where(SigningKey.key_id == key_id))
            ).first()
        return None if row is None else _stored(*row)

    async def first(
        self, *, key_id: str, public_key: bytes, private_key: bytes, created_at: datetime
    ) -> StoredKey:
        """The current key; when there is none yet, this one, stored now as the first
        (when processes start at once, every one gets the key stored first)."""
        found = await self.current()
        if found is not None:
            return found
        key = StoredKey(1, key_id, public_key, private_key, created_at)
        try:
            async with self._database.write() as connection:
                await connection.execute(insert(SigningKey).values(**_values(key)))
            return key
        except IntegrityError:  # another process stored the first key: use theirs
            found = await self.current()
            assert found is not None  # keys are never deleted
            return found

    async def add(
        self,
        *,
        key_id: str,
        public_key: bytes,
        private_key: bytes | None,
        created_at: datetime,
    ) -> StoredKey:
        """Store a key as the current one, retiring the one before; :class:`KeyKnown`
        if a key with this id is stored already (current or retired)."""
        for _ in range(_ADD_ATTEMPTS):
            try:
                async with self._database.write() as connection:
                    last = (
                        await connection.execute(select(func.max(SigningKey.generation)))
                    ).scalar_one()
                    key = StoredKey(
                        (last or 0) + 1, key_id, public_key, private_key, created_at
                    )
                    await connection.execute(insert(SigningKey).values(**_values(key)))
                return key
            except IntegrityError:
                if await self.by_id(key_id) is not None:
                    raise KeyKnown(f"the signing key {key_id} is stored already") from None
                # another process added a key at this generation meanwhile: after it
        raise RuntimeError(f"no free generation for the signing key {key_id}: too many at once")

    @staticmethod
    async def _current(connection: AsyncConnection) -> StoredKey | None:
        row = (
            await connection.execute(
                select(*_COLUMNS).order_by(SigningKey.generation.desc()).limit(1)
            )
        ).first()
        return None if row is None else _stored(*row)


_COLUMNS: Final = (
    SigningKey.generation,
    SigningKey.key_id,
    SigningKey.public_key,
    SigningKey.private_key,
    SigningKey.created_at,
)


def _values(key: StoredKey) -> dict[str, object]:
    return {
        "generation": key.generation,
        "key_id": key.key_id,
        "public_key": key.public_key,
        "private_key": key.private_key,
        "created_at": key.created_at,
    }


def _stored(
    generation: int,
    key_id: str,
    public_key: bytes,
    private_key: bytes | None,
    created_at: datetime,
) -> StoredKey:
    """A row of ``_COLUMNS`` (bytes may come as memoryviews, times without their zone)."""
    if created_at.tzinfo is None:  # SQLite keeps no zone; every time is stored in UTC
        created_at = created_at.replace(tzinfo=UTC)
    return StoredKey(
        generation=generation,
        key_id=key_id,
        public_key=bytes(public_key),
        private_key=None if private_key is None else bytes(private_key),
        created_at=created_at,
    )
