"""server.storage.signing_keys: the keys results are signed with, on real databases."""

from __future__ import annotations

import asyncio
from datetime import UTC, datetime, timedelta

import pytest
from sqlalchemy.ext.asyncio import AsyncConnection, AsyncEngine

from server.storage.database import Database
from server.storage.signing_keys import KeyKnown, SigningKeys, StoredKey

#: The storage is what these tests check: on PostgreSQL and on SQLite.
pytestmark = pytest.mark.both_backends

NOW = datetime(2026, 3, 1, 12, 0, 0, 123456, tzinfo=UTC)


@pytest.fixture
def keys(migrated_engine: AsyncEngine) -> SigningKeys:
    return SigningKeys(Database.of(migrated_engine))


# Keys numbered 1, 2, ...: not real keys (storage keeps bytes), made on day 1, 2, ...


async def first(keys: SigningKeys, number: int) -> StoredKey:
    return await keys.first(
        key_id=f"{number:016x}",
        public_key=bytes([number]) * 32,
        private_key=bytes([100 + number]) * 32,
        created_at=NOW + timedelta(days=number),
    )


async def added(
    keys: SigningKeys, number: int, *, private: bool = True, at: datetime | None = None
) -> StoredKey:
    return await keys.add(
        key_id=f"{number:016x}",
        public_key=bytes([number]) * 32,
        private_key=bytes([100 + number]) * 32 if private else None,
        created_at=at or NOW + timedelta(days=number),
    )


async def test_the_first_key_is_stored_once_and_kept(keys: SigningKeys) -> None:
    assert await keys.current() is None and await keys.all() == []
    one = await first(keys, 1)
    assert one == StoredKey(1, f"{1:016x}", b"\x01" * 32, b"\x65" * 32, NOW + timedelta(1))
    assert await first(keys, 2) == one
    assert await keys.current() == one and await keys.all() == [one]


async def test_processes_starting_at_once_all_get_the_key_stored_first(
    keys: SigningKeys,
) -> None:
    others = [SigningKeys(keys._database) for _ in range(4)]
    got = await asyncio.gather(*(first(other, n) for n, other in enumerate(others, 1)))
    assert len({key.key_id for key in got}) == 1
    assert await keys.all() == [got[0]]


async def test_a_first_key_another_process_stored_meanwhile_is_the_one_used(
    keys: SigningKeys,
) -> None:
    theirs = await first(SigningKeys(keys._database), 1)
    reads: list[int] = []
    read = keys._current

    async def missed_first(connection: AsyncConnection) -> StoredKey | None:
        reads.append(1)  # the first read ran before the other process's commit
        return None if len(reads) == 1 else await read(connection)

    keys._current = missed_first  # type: ignore[assignment]
    assert await first(keys, 2) == theirs
    assert len(reads) == 2


async def test_a_key_added_is_current_and_the_ones_before_stay(keys: SigningKeys) -> None:
    one = await first(keys, 1)
    second = await added(keys, 2, private=False)
    assert second.generation == 2 and second.private_key is None
    assert await keys.current() == second
    assert await keys.all() == [one, second]
    assert await keys.by_id(one.key_id) == one and await keys.by_id("0" * 16) is None


async def test_a_key_stored_already_is_refused_current_or_retired(keys: SigningKeys) -> None:
    await first(keys, 1)
    await added(keys, 2)
    for number in (1, 2):
        with pytest.raises(KeyKnown, match=f"{number:016x}"):
            await added(keys, number, at=NOW)
    assert [key.generation for key in await keys.all()] == [1, 2]


async def test_rotations_at_once_each_get_a_generation_of_their_own(keys: SigningKeys) -> None:
    await first(keys, 1)
    rotated = await asyncio.gather(*(added(SigningKeys(keys._database), n) for n in range(2, 5)))
    assert sorted(key.generation for key in rotated) == [2, 3, 4]
    assert [key.generation for key in await keys.all()] == [1, 2, 3, 4]


async def test_times_come_back_in_utc_to_the_microsecond(keys: SigningKeys) -> None:
    await first(keys, 0)
    stored = await keys.current()
    assert stored is not None and stored.created_at == NOW + timedelta(days=0)
    assert stored.created_at.utcoffset() == timedelta(0)
