"""The daily challenge ranks only accounts registered before its day began: a throwaway
account made to look at the day's deal first plays it unranked, is told why, and its
result stays off the board (server.daily)."""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from datetime import UTC, date, datetime, timedelta

from client_cli.signature import Verdict, check, keys_from_listing
from gaps_protocol.times import format_time
from server.app import Server
from server.daily import day_began, unranked_reason
from tests.client import Client, http_get
from tests.fake_clock import DAY_S, FakeClock
from tests.test_daily import play_daily

Connect = Callable[[], Awaitable[Client]]

DAY = date(2026, 11, 29)


def test_a_day_begins_at_midnight_utc() -> None:
    assert day_began(DAY) == datetime(2026, 11, 29, tzinfo=UTC)


def test_an_account_is_ranked_from_the_first_day_that_began_after_it_registered() -> None:
    began = day_began(DAY)
    assert unranked_reason(began - timedelta(microseconds=1), DAY) is None
    assert unranked_reason(began - timedelta(days=400), DAY) is None
    for registered in (began, began + timedelta(hours=14, minutes=2, seconds=59)):
        reason = unranked_reason(registered, DAY)
        assert reason is not None and reason.startswith(
            f"your account was registered at {format_time(registered)}, after the "
            "2026-11-29 challenge began (00:00 UTC): you may play it, but your result stays "
            "off its board."
        )
        assert unranked_reason(registered, DAY + timedelta(days=1)) is None


def test_the_reason_gives_the_registration_time_in_utc() -> None:
    east = datetime(2026, 11, 29, 15, 30, tzinfo=UTC).astimezone()  # any zone: same instant
    reason = unranked_reason(east, DAY)
    assert reason is not None and "registered at 2026-11-29T15:30:00.000Z" in reason


async def test_a_throwaway_accounts_daily_result_is_kept_off_the_board(
    server: Server, connect: Connect, clock: FakeClock
) -> None:
    ana = await connect()
    await ana.register("ana")
    clock.advance(DAY_S)  # a day later, someone makes an account to look at the deal first
    today = clock.today()
    peek = await connect()
    await peek.register("peek")

    started = await peek.ok("daily", ruleset="classic")
    assert started["daily"]["day"] == today.isoformat()
    assert started["daily"]["ranked"] is False
    assert f"after the {today} challenge began (00:00 UTC)" in started["daily"]["reason"]
    assert started["match"]["rated"] is False  # on no board at all
    await peek.event("started", match=started["match"]["code"])
    await peek.act(started["match"]["code"], "stop")
    await peek.event("match_ended", match=started["match"]["code"])

    await play_daily(ana, "classic", moves=0)  # the same play: only the account differs
    board = await ana.ok("daily_board", ruleset="classic")
    assert [entry["name"] for entry in board["entries"]] == ["ana"]
    assert board["registered_before"] == f"{today}T00:00:00.000Z"
    _, listing = await http_get(server.port, "/keys")
    document = {k: v for k, v in board.items() if k not in ("type", "id")}
    assert check(document, keys_from_listing(listing)).verdict is Verdict.HOLDS

    people = await ana.ok("leaderboard", ruleset="classic", by="score", period="day")
    assert [entry["name"] for entry in people["entries"]] == ["ana"]

    # The next day peek's account is a day old: ranked, while yesterday's board still
    # leaves its attempt out.
    clock.advance(DAY_S)
    again = await peek.ok("daily", ruleset="classic")
    assert again["daily"] == {"day": clock.today().isoformat(), "ranked": True, "reason": None}
    assert again["match"]["rated"] is True
    await peek.event("started", match=again["match"]["code"])
    await peek.act(again["match"]["code"], "stop")
    await peek.event("match_ended", match=again["match"]["code"])
    status, new_day = await http_get(server.port, "/daily/classic")
    assert status == 200 and [entry["name"] for entry in new_day["entries"]] == ["peek"]
    status, old_day = await http_get(server.port, f"/daily/classic?day={today}")
    assert status == 200 and [entry["name"] for entry in old_day["entries"]] == ["ana"]


async def test_an_account_registered_before_the_day_is_told_it_is_ranked(
    connect: Connect, clock: FakeClock
) -> None:
    ana = await connect()
    await ana.register("ana")
    clock.advance(DAY_S)
    started = await ana.ok("daily", ruleset="classic")
    assert started["daily"] == {"day": clock.today().isoformat(), "ranked": True, "reason": None}
    assert started["match"]["rated"] is True
