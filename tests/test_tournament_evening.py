"""The organiser's hand on the evening, end to end through the protocol (and a restart
in process), on both backends: what the host does is stored and read back, so the
storage is a subject here. Announcements, a cancel during a round, a pause between
rounds, late entry and reinstating; every clock is a fake one."""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable

import pytest

from gaps import Ruleset
from server import tournamentcommands as commands
from server.app import Server
from server.storage.store import Store
from tests.client import Client, http_get
from tests.fake_clock import FakeClock
from tests.lobbies import new_player
from tests.test_tournament import (  # noqa: F401 (fixtures)
    Process,
    broker,
    entrants,
    journal,
    processes,
    store,
    until,
)

pytestmark = pytest.mark.both_backends

Connect = Callable[[], Awaitable[Client]]


async def stopped(client: Client, code: str) -> None:
    """Take one's seat in round match ``code`` and stop one's game at once."""
    joined = await client.ok("join_match", code=code)
    if "game" not in joined["you"]:
        await client.event("started", match=code)
    reply = await client.act(code, "stop")
    assert reply["type"] == "action_ok", reply


async def test_an_announcement_reaches_every_follower_and_a_later_one_sees_it(
    connect: Connect,
) -> None:
    host, ana, cat = await entrants(connect, ["host", "ana", "cat"])
    code = (await host.ok("tournament_create", rounds=1))["tournament"]["code"]
    await ana.ok("tournament_join", code=code)
    # Taken as sent or refused (docs/protocol.md, Text): spaces are never trimmed.
    for text in ("   ", "bell\x07", "x" * 281, "  Coffee first", "Coffee   first",
                 "Coffee\u00a0first"):
        refused = await host.request("tournament_announce", code=code, text=text)
        assert (refused["code"], refused["field"]) == ("bad_message", "text"), text
    assert (await ana.request("tournament_announce", code=code, text="hi"))["code"] == "not_host"

    reply = await host.ok("tournament_announce", code=code, text="Coffee first")

    assert [a["text"] for a in reply["tournament"]["announcements"]] == ["Coffee first"]
    said = await ana.event("tournament_announcement")
    assert said["text"] == "Coffee first" and said["at"]
    later = await cat.ok("tournament_resync", code=code, since=10_000)  # a snapshot
    assert [a["text"] for a in later["tournament"]["announcements"]] == ["Coffee first"]


async def test_the_host_cancels_during_a_round_which_is_abandoned_and_the_reason_exported(
    connect: Connect, server: Server
) -> None:
    host, ana, bob = await entrants(connect, ["host", "ana", "bob"])
    code = (await host.ok("tournament_create", rounds=2))["tournament"]["code"]
    for client in (ana, bob):
        await client.ok("tournament_join", code=code)
    await host.ok("tournament_start", code=code)
    match = (await ana.event("round_starting", round=1))["match"]
    await ana.ok("join_match", code=match)
    blank = await host.request("tournament_cancel", code=code, reason=" ")
    assert (blank["code"], blank["field"]) == ("bad_message", "reason")
    assert (await ana.request("tournament_cancel", code=code, reason="x"))["code"] == "not_host"

    reply = await host.ok("tournament_cancel", code=code, reason="the hall closes")

    view = reply["tournament"]
    assert (view["status"], view["cancel_reason"]) == ("cancelled", "the hall closes")
    cancelled = await bob.event("tournament_cancelled")
    assert (cancelled["reason"], cancelled["by_host"], cancelled["abandoned_round"]) == (
        "the hall closes", True, 1
    )
    await ana.event("match_abandoned")
    status, exported = await http_get(server.port, f"/tournaments/{code}/standings.json")
    assert status == 200 and exported["tournament"]["cancel_reason"] == "the hall closes"
    assert [row["total_score"] for row in exported["rows"]] == [0, 0]
    again = await host.request("tournament_cancel", code=code, reason="again")
    assert (again["code"], again["status"]) == ("tournament_finished", "cancelled")


@pytest.mark.tournament_break_s(30)
async def test_a_pause_during_a_round_holds_the_next_one_until_the_host_resumes(
    connect: Connect, clock: FakeClock
) -> None:
    host, ana = await entrants(connect, ["host", "ana"])
    created = await host.ok("tournament_create", rounds=2, break_s=5, countdown_s=0)
    code = created["tournament"]["code"]
    assert (created["tournament"]["break_s"], created["tournament"]["countdown_s"]) == (5, 0)
    assert (await host.request("tournament_pause", code=code))["code"] == "not_running"
    await ana.ok("tournament_join", code=code)
    await host.ok("tournament_start", code=code)
    match = (await ana.event("round_starting", round=1))["match"]

    paused = await host.ok("tournament_pause", code=code)

    assert paused["tournament"]["paused"] is True
    assert (await ana.event("tournament_paused"))["round_in_play"] is True
    assert (await host.request("tournament_pause", code=code))["code"] == "already_paused"
    await stopped(ana, match)
    ended = await ana.event("round_ended", round=1)
    assert (ended["paused"], ended["next_round_at"]) == (True, None)
    clock.advance(60)  # far past the break: nothing is dealt
    await asyncio.sleep(0.05)
    view = (await ana.ok("tournament_standings", code=code))["tournament"]
    assert (view["current_round"], view["paused"]) == (1, True)
    assert not [e for e in ana.events if e["event"] == "round_starting" and e["round"] == 2]

    await host.ok("tournament_resume", code=code)

    assert (await ana.event("tournament_resumed"))["next_round_at"] is not None
    assert (await ana.event("round_starting", round=2))["match"] != match
    assert (await host.request("tournament_resume", code=code))["code"] == "not_paused"


async def test_a_late_entrant_plays_from_the_next_round_and_scores_0_for_the_missed(
    connect: Connect,
) -> None:
    host, ana, cat, dan = await entrants(connect, ["host", "ana", "cat", "dan"])
    too_late = await host.request("tournament_create", rounds=2, late_entry_until_round=3)
    assert (too_late["code"], too_late["field"]) == ("bad_message", "late_entry_until_round")
    code = (await host.ok("tournament_create", rounds=2, late_entry_until_round=2))[
        "tournament"]["code"]
    await ana.ok("tournament_join", code=code)
    await host.ok("tournament_start", code=code)
    first = (await ana.event("round_starting", round=1))["match"]

    await cat.ok("tournament_join", code=code)

    joined = await ana.event("entrant_joined", player_id=cat.player_id)
    assert (joined["late"], joined["from_round"]) == (True, 2)
    await stopped(ana, first)
    ended = await ana.event("round_ended", round=1)
    cat_row = next(row for row in ended["standings"] if row["name"] == "cat")
    assert (cat_row["total_score"], cat_row["rounds_played"]) == (0, 0)
    assert cat_row["total_time_ms"] == 600_000  # the round's whole time limit
    second = (await cat.event("round_starting", round=2))["match"]
    seated = await cat.ok("join_match", code=second)
    assert sorted(p["name"] for p in seated["players"]) == ["ana", "cat"]
    refused = await dan.request("tournament_join", code=code)
    assert (refused["code"], refused["late_entry_until_round"]) == ("late_entry_closed", 2)


async def test_a_reinstated_entrant_is_seated_again(connect: Connect) -> None:
    host, ana, bob = await entrants(connect, ["host", "ana", "bob"])
    code = (await host.ok("tournament_create", rounds=1))["tournament"]["code"]
    for client in (ana, bob):
        await client.ok("tournament_join", code=code)
    not_removed = await host.request("tournament_reinstate", code=code, player="bob")
    assert (not_removed["code"], not_removed["player"]) == ("not_removed", "bob")
    await host.ok("tournament_remove", code=code, player="bob", reason="late")

    reply = await host.ok("tournament_reinstate", code=code, player="BOB")

    bob_view = next(e for e in reply["tournament"]["entrants"] if e["name"] == "bob")
    assert (bob_view["removed"], bob_view["removed_reason"]) == (False, None)
    assert (await ana.event("entrant_reinstated"))["name"] == "bob"
    await host.ok("tournament_start", code=code)
    match = (await bob.event("round_starting", round=1))["match"]
    joined = await bob.ok("join_match", code=match)
    assert sorted(p["name"] for p in joined["players"]) == ["ana", "bob"]


async def test_a_pause_announcements_late_entry_and_a_reinstatement_survive_a_restart(
    processes: Callable[[], Awaitable[Process]], store: Store, clock: FakeClock,  # noqa: F811
) -> None:
    first = await processes()
    host, ana, bob = [await new_player(store, name) for name in ("host", "ana", "bob")]
    created = await first.tournaments.create(
        host.id, name="Cup", ruleset=Ruleset.named("classic"), rounds=3, max_players=4,
        round_time_limit_s=600, start_at_ms=None, countdown_s=7, break_s=40,
        late_entry_until_round=2,
    )
    code = created.tournament.code
    for player in (ana, bob):
        await first.tournaments.join(code, player.id, player.name, bot=False)
    steer = first.tournaments.steer
    await steer(code, commands.Remove(host.id, "bob", "phone"))
    await steer(code, commands.Reinstate(host.id, "bob"))
    await steer(code, commands.Announce(host.id, "Welcome"))
    await first.tournaments.start_by(code, host.id)
    await steer(code, commands.Pause(host.id))
    await until(lambda: first.live(code).state.round_code is not None)
    await first.crash()

    second = await processes()
    view = (await second.tournaments.standings(code)).tournament
    assert view.paused is True
    assert [a.text for a in view.announcements] == ["Welcome"]
    assert (view.countdown_s, view.break_s, view.late_entry_until_round) == (7, 40, 2)
    assert [(e.name, e.removed) for e in view.entrants] == [
        ("ana", False), ("bob", False)
    ]
