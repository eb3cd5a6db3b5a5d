"""server.storage.players: registration and lookups, on real databases (each backend)."""

from __future__ import annotations

from datetime import UTC, datetime

import pytest
from sqlalchemy.ext.asyncio import AsyncEngine

from server.storage.database import Database
from server.storage.players import NameTaken, Players, bots_among

#: The storage is what these tests check: on PostgreSQL and on SQLite.
pytestmark = pytest.mark.both_backends

NOW = datetime(2026, 3, 1, 12, 0, tzinfo=UTC)


@pytest.fixture
def players(migrated_engine: AsyncEngine) -> Players:
    return Players(Database.of(migrated_engine))


async def test_a_name_another_player_has_in_another_case_is_refused(players: Players) -> None:
    ana = await players.register("Ana", "a" * 64, NOW)
    with pytest.raises(NameTaken, match="aNA"):
        await players.register("aNA", "b" * 64, NOW)
    assert await players.named("Ana") == ana
    assert ana.name == "Ana"


async def test_a_player_is_found_by_name_in_any_case(players: Players) -> None:
    ana = await players.register("Ana_b", "a" * 64, NOW)
    for name in ("Ana_b", "ana_b", "ANA_B"):
        assert await players.named(name) == ana
    assert await players.named("ana_") is None


@pytest.mark.parametrize("name", ["", "a" * 25, "an\x00a", "an\ud800a", "ana%", "an a", "ána"])
async def test_nobody_is_found_by_a_name_no_player_can_have(players: Players, name: str) -> None:
    # Without asking the database: PostgreSQL refuses NUL in text, and UTF-8 a surrogate.
    assert await players.named(name) is None


async def test_a_player_is_found_by_their_token_hash_only(players: Players) -> None:
    ana = await players.register("ana", "a" * 64, NOW)
    assert await players.by_token_hash("a" * 64) == ana
    assert await players.by_token_hash("b" * 64) is None


async def test_a_bot_is_registered_as_one_and_found_as_one(
    players: Players, migrated_engine: AsyncEngine
) -> None:
    beep = await players.register("beep", "b" * 64, NOW, bot=True)
    ana = await players.register("ana", "a" * 64, NOW)
    assert (beep.bot, ana.bot) == (True, False)
    assert await players.by_token_hash("b" * 64) == beep
    assert await players.named("BEEP") == beep
    assert await players.named("ana") == ana
    async with Database.of(migrated_engine).read() as connection:
        assert await bots_among(connection, [ana.id, beep.id]) == {beep.id}
        assert await bots_among(connection, []) == set()

