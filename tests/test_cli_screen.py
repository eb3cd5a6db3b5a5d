"""The match screen, driven by Textual's Pilot against a real server.

Two players race on their own screens: moves typed, picked with the keyboard and
clicked with the mouse, a refusal shown with the server's reason, a stop, a win, and
the final ranking with the revealed seed on both screens. A spectator watches live. What a
hostile server says (names, codes, refusals) is drawn as typed, never as markup.
"""

from __future__ import annotations

import asyncio
import os
import random
from pathlib import Path
from typing import Any

import pytest
from textual.pilot import Pilot

from client_cli import screen
from client_cli.board import LABEL_WIDTH
from client_cli.connection import Connection, ConnectionLost, ConnectionNotice
from client_cli.help import HelpScreen
from client_cli.match_state import Phase
from client_cli.render import card_label
from client_cli.screen import MatchApp, RankingScreen
from client_cli.widgets import BoardView, MessageLine
from gaps import Card, Move, Slot
from gaps_protocol.messages.common import Par
from gaps_protocol.messages.replies import ActionOk
from tests.cli_support import (
    HOSTILE,
    ME,
    SHOWN,
    Hostile,
    assert_inert,
    lobby,
    message,
    screen_text,
    seated,
    typed,
    until,
    winning_line,
)

SIZE = (134, 24)


async def account(url: str, name: str) -> Connection:
    connection = await Connection.open(url)
    await connection.register(f"{name}-{random.randrange(10**6)}")
    return connection


async def play(app: MatchApp, pilot: Pilot[Any], line: tuple[str, ...], start: int,
               stop: int) -> None:
    """Submit ``line[start:stop]`` as fast as one can type: the screen sends them in order,
    each once the previous one is acknowledged."""
    for number in range(start, stop):
        app.submit(line[number])
    await until(pilot, lambda: app.state.own is not None and app.state.own.last_seq == stop)


def cell_offset(board: BoardView, slot: Slot) -> tuple[int, int]:
    """Where a slot's mark is drawn inside the board widget (1 border + 1 padding on the
    left, 1 border and the column numbers above)."""
    geometry = board.geometry
    return (2 + LABEL_WIDTH + (slot.column - 1) * geometry.cell + geometry.cell // 2,
            2 + (slot.row - 1) * (geometry.tile + geometry.spacing) + geometry.tile // 2)


async def test_two_players_race_on_their_screens_and_both_see_the_ranking(
    ws_url: str, tmp_path: Path
) -> None:
    seed, line = winning_line()
    ana, bob = await account(ws_url, "ana"), await account(ws_url, "bob")
    created = await ana.create_match(max_players=2, countdown_s=0, seed=seed, win_by="time")
    code = created.match.code
    joined = await bob.join_match(code)
    ana_app, bob_app = MatchApp(ana, created), MatchApp(bob, joined)
    try:
        async with ana_app.run_test(size=SIZE) as ana_pilot, \
                bob_app.run_test(size=SIZE) as bob_pilot:
            await ana_pilot.pause()
            assert ana_app.state.phase is Phase.LOBBY
            assert f"gaps join {code}" in screen_text(ana_app)
            await ana_pilot.press("r")
            assert ana.player is not None and bob.player is not None
            await until(bob_pilot, lambda: bob_app.state.players[ana.player.id].ready)
            await bob_pilot.press("r")
            await until(ana_pilot, lambda: ana_app.state.playing)
            await until(bob_pilot, lambda: bob_app.state.playing)
            await ana_pilot.pause()
            assert "clock" in screen_text(ana_app)

            # bob types a move the rules refuse: the server's reason shows, nothing crashes
            game = bob_app.state.own.game()
            stuck = next(card for card in map(Card.from_code, range(52))
                         if card.rank > 2 and not game.is_legal(Move(card)))
            await bob_pilot.press(*str(stuck).lower(), "enter")
            await until(bob_pilot, lambda: "[not_a_gap]" in message(bob_app))
            assert f"{card_label(stuck).strip()}: the slot right of" in message(bob_app)

            # bob moves by keyboard: the cursor to the card, Enter, Enter on its gap
            first = Move.parse(line[0])
            here = game.slot_of(first.card)
            board = bob_app.query_one(BoardView)
            board.focus()
            board.cursor = (here.index - 13) % 52 if here.column == 13 else here.index + 1
            await bob_pilot.press("down" if here.column == 13 else "left")
            assert board.cursor == here.index
            await bob_pilot.press("enter")
            assert board.selected == here.index and len(board.targets) >= 1
            await bob_pilot.press("enter")
            await until(bob_pilot, lambda: bob_app.state.own.moves_made == 1)

            # then with the mouse: a card, then its highlighted gap
            game = bob_app.state.own.game()
            second = Move.parse(line[1])
            board = bob_app.query_one(BoardView)
            await bob_pilot.click(BoardView, offset=cell_offset(board, game.slot_of(second.card)))
            [target] = board.targets
            await bob_pilot.click(BoardView, offset=cell_offset(board, Slot.from_index(target)))
            await until(bob_pilot, lambda: bob_app.state.own.moves_made == 2)

            # ana types her first move, then plays most of the winning line
            await ana_pilot.press(*line[0].lower(), "enter")
            await until(ana_pilot, lambda: ana_app.state.own.last_seq == 1)
            middle = len(line) * 2 // 3
            await play(ana_app, ana_pilot, line, 1, middle)
            await until(ana_pilot, lambda: ana_app.state.players[bob.player.id].placed
                        == bob_app.state.own.placed)
            board = ana_app.query_one(BoardView)
            next_card = Move.parse(line[middle]).card
            board.focus()
            ana_app.refresh_view()  # draw now what the last acks brought
            board.point_at(ana_app.state.own.game().slot_of(next_card).index)
            await ana_pilot.pause()
            assert board.targets  # its destination is highlighted
            ana_app.query_one(MessageLine).say(f"{next_card} selected: Enter or a click on ▼")
            await ana_pilot.resize_terminal(134, 17)
            await ana_pilot.pause()
            screenshot = ana_app.export_screenshot(title=f"gaps join {code}")
            assert screenshot.startswith("<svg")
            if os.environ.get("GAPS_SCREENSHOT"):  # regenerates docs/match-screen.svg
                Path(os.environ["GAPS_SCREENSHOT"]).write_text(screenshot)
            await ana_pilot.press("escape")

            # bob stops (s twice); ana sees it live in her players panel
            await bob_pilot.press("s")
            assert message(bob_app).startswith("Press s again to stop")
            await bob_pilot.press("s")
            await until(ana_pilot, lambda: ana_app.state.players[bob.player.id].finished)
            await ana_pilot.pause()
            assert "stopped" in screen_text(ana_app)

            await play(ana_app, ana_pilot, line, middle, len(line))
            assert ana_app.state.own.status == "won"

            for app, pilot in ((ana_app, ana_pilot), (bob_app, bob_pilot)):
                await until(pilot, lambda a=app: isinstance(a.screen, RankingScreen))
                await pilot.pause()
                text = screen_text(app)
                assert f"Match {code}: " in text and seed in text
                won = "You win!" if app is ana_app else f"{ana.player.name} wins"
                assert won in text
                assert f"gaps replay {code}" in text and "commitment" in text
                ranking = app.state.ranking or []
                assert [row.name for row in ranking] == [ana.player.name, bob.player.name]
                assert ranking[0].end_reason == "won" and ranking[0].rank == 1
            ana_app.save_screenshot("ranking.svg", path=str(tmp_path))
            assert (tmp_path / "ranking.svg").read_text().startswith("<svg")
            await ana_pilot.press("q")
    finally:
        await ana.close()
        await bob.close()


@pytest.mark.par(par_workers=1, par_max_nodes=200_000, par_time_budget_s=30)
async def test_the_ranking_shows_the_deals_par_once_the_server_has_solved_it(
    ws_url: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(screen, "PAR_RETRIES_S", (0.05,) * 1200)
    ana = await account(ws_url, "ana")
    # Deal 25 without redeal: the server's solver wins it at once, par 58 exact.
    created = await ana.create_match(max_players=1, countdown_s=0, seed="AAAA-AAAA-AAAA-AAAZ",
                                     ruleset="no-redeal")
    app = MatchApp(ana, created)
    try:
        async with app.run_test(size=SIZE) as pilot:
            await pilot.press("r")
            await until(pilot, lambda: app.state.playing)
            await pilot.press("s", "s")
            await until(pilot, lambda: isinstance(app.screen, RankingScreen))
            ranking = app.screen
            assert isinstance(ranking, RankingScreen)
            await until(pilot, lambda: ranking.par is not None, timeout=60)
            await pilot.pause()
            assert ranking.par == Par(score=58, exact=True)
            [row] = [line for line in screen_text(app).splitlines() if "(you)" in line]
            after_name = row.split("(you)")[1].split()
            assert after_name[:4] == ["0", "58", "below", "par"]  # the score, its gap to par
            assert "Par 58: the best score this deal allowed" in screen_text(app)
            await pilot.press("q")
    finally:
        await ana.close()


async def test_a_spectator_watches_live_and_the_host_starts_the_match(ws_url: str) -> None:
    ana, bob, eve = [await account(ws_url, name) for name in ("ana", "bob", "eve")]
    created = await ana.create_match(max_players=3, countdown_s=0)
    code = created.match.code
    await bob.join_match(code)
    watching = await eve.join_match(code, role="spectator")
    host_app, eve_app = MatchApp(ana, created), MatchApp(eve, watching)
    try:
        async with host_app.run_test(size=SIZE) as host, eve_app.run_test(size=SIZE) as watcher:
            await until(host, lambda: len(host_app.state.players) == 2)
            await host.press("question_mark")
            assert isinstance(host_app.screen, HelpScreen)
            await host.press("escape")
            assert not isinstance(host_app.screen, HelpScreen)
            await host.press("g")  # the host starts with whoever is there, ready or not
            await until(host, lambda: host_app.state.playing)
            await until(watcher, lambda: eve_app.state.phase is Phase.RUNNING)
            assert eve_app.state.own is None and eve_app.state.role == "spectator"
            eve_app.submit("stop")
            assert "Spectators watch" in message(eve_app)

            # the spectator's connection drops; it comes back by itself and catches up
            assert eve._socket is not None
            eve._socket.transport.abort()
            await until(watcher, lambda: "reconnecting" in message(eve_app))
            assert host_app.state.own is not None  # the host has not moved: bob's deal too
            move = host_app.state.own.game().legal_moves()[0]
            await bob.act(code, str(move))
            assert bob.player is not None
            await until(watcher, lambda: eve_app.state.players[bob.player.id].moves_made == 1)
            await until(watcher, lambda: "reconnected" in message(eve_app))

            await bob.act(code, "stop")
            await host.press("s", "s")
            await until(watcher, lambda: isinstance(eve_app.screen, RankingScreen))
            await watcher.pause()
            assert f"Match {code}: " in screen_text(eve_app)
    finally:
        for connection in (ana, bob, eve):
            await connection.close()



async def test_what_a_hostile_server_says_is_drawn_as_typed() -> None:
    """Names, codes, scores, reasons, a refusal, the seed and the heading (a tournament's
    name): each on the screen with its control and bidi characters replaced and its
    markup as typed. Short ones where a column would cut a long one short."""
    code, name, later = "\x1b[2J[b]K7", "\u202e[b]bo\x1b[2J", "\x1b]0;[i]cy"
    shown_code, shown_name, shown_later = "\ufffd[2J[b]K7", "\ufffd[b]bo\ufffd[2J", "\ufffd]0;[i]cy"
    ended = {"type": "event", "match": code, "seq": 2, "event": "match_ended", "t_ms": 1000,
             "seed": "AAAA-BBBB-CCCC-DDDD", "commitment": "c0ffee" * 10 + "c0ff", "ranking": [
                 {**seated(8, name, score=9), "rank": 1, "moves_made": 3,
                  "end_reason": "left", "finish_ms": 1000},
                 {**seated(ME["id"], "me"), "rank": 2, "moves_made": 0, "end_reason": "stopped",
                  "finish_ms": 1000}]}
    async with Hostile({
        "join_match": [lobby(code, seated(8, name, score=9), win_by="score")],
        "ready": [{"type": "error", "code": "bad_message", "message": HOSTILE}],
    }) as hostile:
        connection = await Connection.open(hostile.url, token="t")
        try:
            app = MatchApp(connection, await connection.join_match("K7QX2M"),
                           heading=f"{HOSTILE} · round 1/3")
            async with app.run_test(size=SIZE) as pilot:
                await pilot.pause()
                assert_inert(screen_text(app), f"Gaps Arena {shown_code}  {SHOWN} · round 1/3",
                             "win by score", f"  {shown_name}", " 9 ",
                             f"Lobby: others join with  gaps join {shown_code}")
                await pilot.press("r")  # refused, in the server's words
                await until(pilot, lambda: message(app) == SHOWN)
                await hostile.push({"type": "event", "match": code, "seq": 1,
                                    "event": "player_joined", "player": seated(9, later)})
                await until(pilot, lambda: 9 in app.state.players)
                assert_inert(screen_text(app), SHOWN, f"{shown_later} joined",
                             f"  {shown_later}")
                await hostile.push(ended)
                await until(pilot, lambda: isinstance(app.screen, RankingScreen))
                await pilot.pause()
                assert_inert(screen_text(app), f"Match {shown_code}: {shown_name} wins", shown_name,
                             f"gaps replay {shown_code}")
        finally:
            await connection.close()


@pytest.mark.parametrize(("joined", "row", "ended", "path"), [
    ({"win_by": "[b]x\x1b[2J"}, {}, {}, "in a 'joined' message, Invalid enum value "
                                        "'[b]x\\x1b[2J' - at `$.match.win_by`"),
    ({}, {"score": "[i]9"}, None, "in a 'joined' message, Expected `int`, got `str` - at "
                                  "`$.players[1].score`"),
    ({}, {"moves_made": "[u]3"}, {}, "Expected `int`, got `str` - at `$.ranking[0].moves_made`"),
    ({}, {"end_reason": "\u202e[b]gone"}, {}, "Invalid enum value '\\u202e[b]gone' - at "
                                              "`$.ranking[0].end_reason`"),
    ({}, {}, {"seed": HOSTILE}, "at `$.seed`"),
    ({}, {}, {"commitment": "[b]c\u202e"}, "at `$.commitment`"),
])
async def test_hostile_text_where_the_protocol_has_no_text_fails_the_connection_naming_it(
    joined: dict[str, Any], row: dict[str, Any], ended: dict[str, Any] | None, path: str,
) -> None:
    """Text in a member that is a number, one of a few words, a share code or a hash is no
    message of the protocol: the connection stops for good, naming the member, and the
    reason quotes the frame with its control and bidi characters escaped."""
    code = "K7QX2M"
    player = seated(8, "bob", **row if ended is None else {})
    over = {"type": "event", "match": code, "seq": 1, "event": "match_ended", "t_ms": 1000,
            "seed": None, "commitment": "0" * 64, "ranking": [
                {**seated(8, "bob"), "rank": 1, "moves_made": 3,
                 "end_reason": "stopped", "finish_ms": 1000, **row}], **(ended or {})}
    async with Hostile({"join_match": [lobby(code, player, **joined)]}) as hostile:
        connection = await Connection.open(hostile.url, token="t")
        try:
            if ended is None or joined:
                with pytest.raises(ConnectionLost):
                    await connection.join_match(code)
            else:
                await connection.join_match(code)
                failed = asyncio.Event()
                connection.add_listener(
                    lambda message: failed.set() if isinstance(message, ConnectionNotice)
                    and message.state == "failed" else None)
                await hostile.push(over)
                await asyncio.wait_for(failed.wait(), 10)
            failure = connection.failure
            assert failure is not None and failure.startswith("the server broke the protocol: ")
            assert path in failure, failure
            assert_inert(failure)
        finally:
            await connection.close()


async def test_a_bot_is_marked_bot_in_the_players_table_the_log_and_the_ranking() -> None:
    """Issue 13: a seat with ``bot: true`` shows ``[bot]`` beside its name; a person's
    (the field absent or false) does not."""
    code = "K7QX2M"
    ended = {"type": "event", "match": code, "seq": 2, "event": "match_ended", "t_ms": 1000,
             "seed": None, "commitment": "0" * 64, "ranking": [
                 {**seated(8, "robo", bot=True), "rank": 1, "moves_made": 3,
                  "end_reason": "stopped", "finish_ms": 1000},
                 {**seated(ME["id"], "me"), "rank": 2, "moves_made": 0, "end_reason": "stopped",
                  "finish_ms": 1000},
                 {**seated(9, "cy", bot=False), "rank": 3, "moves_made": 0,
                  "end_reason": "stopped", "finish_ms": 1000}]}
    async with Hostile({"join_match": [lobby(code, seated(8, "robo", bot=True))]}) as hostile:
        connection = await Connection.open(hostile.url, token="t")
        try:
            app = MatchApp(connection, await connection.join_match(code))
            async with app.run_test(size=SIZE) as pilot:
                await pilot.pause()
                assert "robo [bot]" in screen_text(app)
                await hostile.push({"type": "event", "match": code, "seq": 1,
                                    "event": "player_joined", "player": seated(9, "cy", bot=False)})
                await until(pilot, lambda: 9 in app.state.players)
                await pilot.pause(0.2)  # the redraw, and the table's new height laid out
                shown = screen_text(app)
                assert "cy joined" in shown and shown.count("[bot]") == 1
                await hostile.push(ended)
                await until(pilot, lambda: isinstance(app.screen, RankingScreen))
                await pilot.pause()
                shown = screen_text(app)
                assert "robo [bot]" in shown and shown.count("[bot]") == 1
        finally:
            await connection.close()


async def test_a_result_held_for_review_is_marked_and_its_player_told_why() -> None:
    """Issue 16: the player sees that a flagged result is under review."""
    code = "K7QX2M"
    ended = {"type": "event", "match": code, "seq": 1, "event": "match_ended", "t_ms": 1000,
             "seed": None, "commitment": "0" * 64, "ranking": [
                 {**seated(ME["id"], "me"), "rank": 1, "moves_made": 40,
                  "end_reason": "stopped", "finish_ms": 1000, "review": "held"},
                 {**seated(9, "cy"), "rank": 2, "moves_made": 0, "end_reason": "stopped",
                  "finish_ms": 1000, "review": None}]}
    async with Hostile({"join_match": [lobby(code)]}) as hostile:
        connection = await Connection.open(hostile.url, token="t")
        try:
            app = MatchApp(connection, await connection.join_match(code))
            async with app.run_test(size=(120, 40)) as pilot:
                await pilot.pause()
                await hostile.push(ended)
                await until(pilot, lambda: isinstance(app.screen, RankingScreen))
                await pilot.pause()
                shown = screen_text(app)
                assert "stopped · under review" in shown
                assert "Your result is under review" in shown
                assert shown.count("under review") == 2  # cy's plain result says nothing
        finally:
            await connection.close()


async def test_the_screen_says_the_server_restarted_and_closes_when_its_match_is_gone() -> None:
    code = "K7QX2M"
    async with Hostile({"join_match": [lobby(code)], "resync": [
            {"type": "events", "match": code, "events": []}]}) as hostile:
        connection = await Connection.open(hostile.url, token="t", reconnect_for_s=10)
        try:
            app = MatchApp(connection, await connection.join_match(code))
            async with app.run_test(size=SIZE) as pilot:
                await pilot.pause()
                await hostile.drop(1001)
                await until(pilot, lambda: message(app) == f"reconnected to {hostile.url}")
                await until(pilot, lambda: "back in the match" in screen_text(app))
                assert_inert(screen_text(app),
                             "connection lost: the server is restarting; reconnecting",
                             "connection restored: back in the match")
                hostile.answers["join_match"] = [{
                    "type": "error", "code": "no_such_match",
                    "message": f"no live match has code '{code}'"}]
                await hostile.drop(1001)
                await until(pilot, lambda: not app.is_running)
            assert app.state.gone == (f"match {code} is gone: cannot rejoin match {code}: "
                                      f"no live match has code '{code}'")
        finally:
            await connection.close()


async def test_a_match_that_ended_while_the_server_was_down_shows_its_ranking() -> None:
    """The restarted server ended the match at restore (its time limit passed): the
    rejoin's snapshot says it is over, and its ranking is fetched from its last event."""
    code = "K7QX2M"
    ended = {"type": "event", "match": code, "seq": 5, "event": "match_ended", "t_ms": 600_000,
             "seed": "AAAA-BBBB-CCCC-DDDD", "commitment": "c" * 64, "ranking": [
                 {**seated(ME["id"], "me"), "rank": 1, "moves_made": 0, "end_reason": "time",
                  "finish_ms": 600_000}]}
    over = lobby(code, status="finished", started_at="2026-01-01T00:00:00.000Z",
                 t_ms=600_000) | {"seq": 5}
    async with Hostile({"join_match": [lobby(code) | {"seq": 9}]}, once={"resync": [
            {"type": "events", "match": code, "events": []}]}) as hostile:
        connection = await Connection.open(hostile.url, token="t", reconnect_for_s=10)
        try:
            app = MatchApp(connection, await connection.join_match(code))
            async with app.run_test(size=SIZE) as pilot:
                await pilot.pause()
                hostile.answers["join_match"] = [over]
                hostile.answers["resync"] = [{"type": "events", "match": code,
                                              "events": [ended]}]
                await hostile.drop(1001)
                await until(pilot, lambda: isinstance(app.screen, RankingScreen))
                assert app.state.ranking is not None
                assert app.state.ranking[0].end_reason == "time"
                assert [r["since"] for r in hostile.sent("resync")] == [5, 4]
        finally:
            await connection.close()


def test_an_undo_says_which_card_it_took_back_in_the_boards_notation() -> None:
    line = screen.result_line(typed(ActionOk, **{
        "kind": "undo", "action": "u", "card": "TS", "from": "r1c6", "to": "r2c3", "seq": 4,
        "score": 3, "placed": 3, "status": "playing"}))
    assert line.plain == "Took back 10♠ · score 3 · placed 3/48"
