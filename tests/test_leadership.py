"""The cluster's leader: one process of two runs the tournaments and the quick-match
queue, both processes' players reach them, and the lead moves when the leader goes."""

from __future__ import annotations

import asyncio

import pytest
from sqlalchemy import text

from server.app import Server
from server.leadership import Leadership
from server.remote import RemoteMatch
from server.storage.database import Database
from tests.client import Client
from tests.fake_clock import FakeClock

on_postgres = pytest.mark.parametrize("database_url", ["postgres"], indirect=True)


async def client_of(server: Server, name: str) -> Client:
    client = await Client.connect(f"ws://127.0.0.1:{server.port}")
    await client.register(name)
    return client


async def test_one_process_alone_on_sqlite_leads_from_its_start() -> None:
    leadership = Leadership(lock=None, relay=None, clock=FakeClock(), renew_s=1.0)
    started: list[str] = []

    async def elected() -> None:
        started.append("elected")

    async def deposed() -> None:
        started.append("deposed")

    leadership.on_change(elected=elected, deposed=deposed)
    await leadership.start()
    assert leadership.leading and started == ["elected"]
    await leadership.close()
    assert not leadership.leading and started == ["elected", "deposed"]


@on_postgres
async def test_of_two_processes_the_first_leads_and_both_know_it(
    pair: tuple[Server, Server],
) -> None:
    first, second = pair
    assert first.leadership.leading and not second.leadership.leading
    assert second.leader_lock is not None and first.relay is not None
    assert await second.leader_lock.holder() == first.relay.node
    await second.leadership.campaign()  # the lock is taken: nothing changes
    assert first.leadership.leading and not second.leadership.leading


@on_postgres
async def test_a_tournament_created_through_the_follower_runs_on_the_leader_for_all(
    pair: tuple[Server, Server],
) -> None:
    leader, follower = pair
    ana, bob = await client_of(follower, "ana"), await client_of(leader, "bob")
    created = await ana.ok("tournament_create", name="Cup", rounds=1, max_players=2)
    code = created["tournament"]["code"]
    assert code in leader.tournaments.live and not follower.tournaments.live
    for client in (ana, bob):
        await client.ok("tournament_join", code=code)
    for client in (ana, bob):
        listed = (await client.ok("tournament_list"))["tournaments"]
        assert [t["code"] for t in listed] == [code]
        assert len((await client.ok("tournament_standings", code=code))["standings"]) == 2
    refused = await bob.request("tournament_start", code=code)
    assert refused["code"] == "not_host"
    await ana.ok("tournament_start", code=code)
    starting = await ana.event("round_starting", round=1)
    round_code = starting["match"]
    assert round_code in leader.lobby.matches
    for client in (ana, bob):
        joined = await client.ok("join_match", code=round_code)
        if joined["match"]["status"] != "running":
            await client.event("started", match=round_code)
        assert (await client.act(round_code, "stop"))["type"] == "action_ok"
    ended = await ana.event("tournament_ended", timeout=15)
    assert {row["name"] for row in ended["standings"]} == {"ana", "bob"}
    for client in (ana, bob):
        await client.close()


@on_postgres
async def test_players_queued_on_two_processes_are_matched_together(
    pair: tuple[Server, Server],
) -> None:
    leader, follower = pair
    ana, bob = await client_of(follower, "ana"), await client_of(leader, "bob")
    for client in (ana, bob):
        assert (await client.ok("quick_match", ruleset="classic"))["type"] == "queued"
    matched = [await client.event("matched", timeout=15) for client in (ana, bob)]
    code = matched[0]["match"]["code"]
    assert matched[1]["match"]["code"] == code and code in leader.lobby.matches
    assert isinstance(await follower.routes.find(code), RemoteMatch)
    for client in (ana, bob):
        await client.event("started", match=code)
    for client in (ana, bob):
        await client.close()


@on_postgres
async def test_a_player_who_cancels_on_the_follower_is_not_matched(
    pair: tuple[Server, Server],
) -> None:
    leader, follower = pair
    ana = await client_of(follower, "ana")
    await ana.ok("quick_match", ruleset="classic")
    assert leader.matchmaker is not None
    queue = leader.matchmaker.state
    assert [w.player_id for w in queue.waiting("classic")] == [ana.player_id]
    assert (await ana.ok("quick_cancel"))["cancelled"] is True
    assert leader.matchmaker.state.waiting("classic") == ()
    await ana.close()


@on_postgres
async def test_when_the_leader_steps_down_the_other_leads_and_runs_its_tournaments(
    pair: tuple[Server, Server],
) -> None:
    leader, follower = pair
    ana = await client_of(follower, "ana")
    code = (await ana.ok("tournament_create", name="Cup", rounds=1))["tournament"]["code"]
    await leader.leadership.close()  # as at a shutdown: the lock is let go
    assert not leader.tournaments.live
    await follower.leadership.campaign()
    assert follower.leadership.leading and code in follower.tournaments.live
    # Asked through the old leader now, answered by the new one.
    bob = await client_of(leader, "bob")
    assert (await bob.ok("tournament_join", code=code))["tournament"]["code"] == code
    for client in (ana, bob):
        await client.close()


@on_postgres
async def test_an_entrant_removed_through_the_follower_stays_out_under_the_next_leader(
    pair: tuple[Server, Server],
) -> None:
    leader, follower = pair
    ana, bob = await client_of(follower, "ana"), await client_of(leader, "bob")
    code = (await ana.ok("tournament_create", name="Cup", rounds=1))["tournament"]["code"]
    for client in (ana, bob):
        await client.ok("tournament_join", code=code)
    await ana.ok("tournament_remove", code=code, player="bob", reason="asked to leave")
    event = await bob.event("entrant_removed")  # told on the leader's process too
    assert (event["name"], event["reason"]) == ("bob", "asked to leave")
    await leader.leadership.close()  # as at a shutdown: the lock is let go
    await follower.leadership.campaign()
    resumed = follower.tournaments.live[code].state
    assert [(e.name, e.removed_reason) for e in resumed.entrants] == [
        ("ana", None), ("bob", "asked to leave")
    ]
    assert [e.name for e in resumed.seated()] == ["ana"]
    again = await ana.request("tournament_remove", code=code, player="bob", reason="twice")
    assert again["code"] == "not_an_entrant"
    for client in (ana, bob):
        await client.close()


@on_postgres
async def test_a_leader_whose_lock_connection_dies_steps_down_for_the_other(
    pair: tuple[Server, Server],
) -> None:
    leader, follower = pair
    assert leader.relay is not None
    database = Database(leader.url)
    async with database.write() as connection:
        await connection.execute(
            text("SELECT pg_terminate_backend(pid) FROM pg_stat_activity"
                 " WHERE application_name = :name"),
            {"name": leader.relay.node},
        )
    await database.dispose()
    await leader.leadership.campaign()
    assert not leader.leadership.leading
    for _ in range(50):  # PostgreSQL frees the lock as it ends the backend
        await follower.leadership.campaign()
        if follower.leadership.leading:
            break
        await asyncio.sleep(0.1)
    assert follower.leadership.leading
