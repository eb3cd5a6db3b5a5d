"""The daily deals repository on PostgreSQL and SQLite: a day's deal is chosen once, and
every process gets the one chosen first."""

from __future__ import annotations

import asyncio
from datetime import date

import pytest
from sqlalchemy.ext.asyncio import AsyncEngine

from server.storage.daily_deals import ChosenDeal
from server.storage.store import Store

pytestmark = pytest.mark.both_backends

DAY = date(2026, 12, 3)


async def test_a_days_deal_is_chosen_once_and_the_first_choice_stays(
    migrated_engine: AsyncEngine,
) -> None:
    deals = Store(migrated_engine).daily_deals
    assert await deals.chosen(ruleset="classic", day=DAY) is None
    first, second = ChosenDeal(b"a" * 10, 0), ChosenDeal(b"b" * 10, 3)
    kept = await asyncio.gather(
        deals.choose(ruleset="classic", day=DAY, deal=first),
        deals.choose(ruleset="classic", day=DAY, deal=second),
    )
    assert kept[0] == kept[1] in (first, second)  # whoever came first, both deal it
    assert await deals.chosen(ruleset="classic", day=DAY) == kept[0]
    later = await deals.choose(ruleset="classic", day=DAY, deal=ChosenDeal(b"c" * 10, 1))
    assert later == kept[0]
    other = ChosenDeal(b"d" * 10, 2)  # another ruleset, another day: their own
    assert await deals.choose(ruleset="montana", day=DAY, deal=other) == other
    assert await deals.chosen(ruleset="classic", day=date(2026, 12, 4)) is None
