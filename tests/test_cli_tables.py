"""client_cli.tables: the Rich tables of leaderboards, ratings, tournaments and the daily
board, from replies typed as docs/protocol.md says (no server needed)."""

from __future__ import annotations

import io
import unicodedata
from collections.abc import Callable
from datetime import date, datetime
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from msgspec.structs import replace
from rich.console import Console, RenderableType

from client_cli.render import REPLACEMENT, action_text, printable
from client_cli.tables import (
    MEDALS,
    YOU_STYLE,
    Outcome,
    daily_table,
    empty_board_text,
    empty_daily_note,
    history_table,
    leaderboard_table,
    local_time,
    name_text,
    podium_text,
    rank_text,
    ranking_table,
    ratings_table,
    replay_table,
    standings_line,
    standings_table,
    tournament_end,
    tournament_status,
    tournament_summary,
    tournaments_table,
    when,
)
from gaps_protocol.messages.common import Par
from gaps_protocol.messages.replies import DailyBoard, Leaderboard, Rating
from gaps_protocol.messages.views import (
    DailyEntry,
    LeaderboardEntry,
    RankedProgress,
    RatingChange,
    RatingView,
    Replay,
    ReplayPlayer,
    StandingsRow,
    TournamentView,
)
from tests.cli_support import ranked, typed


def text(renderable: RenderableType, width: int = 120) -> str:
    console = Console(file=io.StringIO(), width=width, record=True, color_system=None)
    console.print(renderable)
    return "\n".join(line.rstrip() for line in console.export_text().splitlines())


def board(by: str, entries: list[Any], period: str = "all",
          start: str | None = "2000-01-01") -> Leaderboard:
    return typed(Leaderboard, id=None, board=by, kind="people", ruleset="classic",
                 period=period, period_start=start, entries=entries, next_cursor=None)


def row(line: str, *cells: str) -> bool:
    """Whether ``line`` holds ``cells`` in this order."""
    position = 0
    for cell in cells:
        found = line.find(cell, position)
        if found < 0:
            return False
        position = found + len(cell)
    return True


def test_the_score_board_shows_scores_times_with_tenths_and_marks_you() -> None:
    reply = board("score", [
        {"rank": 1, "player_id": 4, "name": "cy", "best_score": 31, "best_score_ms": 161_400,
         "games": 3},
        {"rank": 2, "player_id": 1, "name": "ana", "best_score": 31, "best_score_ms": 200_000,
         "games": 1},
    ])
    shown = text(leaderboard_table(reply, you="ana"))
    lines = shown.splitlines()
    assert lines[0] == "Leaderboard · classic · best score · all time"
    assert any(row(line, "1", "cy", "31", "2:41.4", "3") for line in lines)
    assert any(row(line, "2", "ana (you)", "31", "3:20.0", "1") for line in lines)
    assert shown.index("cy") < shown.index("ana")  # the server's order, untouched


def test_the_time_wins_and_rating_boards_show_their_own_figures() -> None:
    fastest = board("time", [{"rank": 1, "player_id": 2, "name": "bob",
                              "fastest_win_ms": 95_250, "fastest_win_score": 48, "wins": 2}],
                    period="month", start="2026-11-01")
    shown = text(leaderboard_table(fastest))
    assert shown.startswith("Leaderboard · classic · fastest win · month 2026-11")
    assert any(row(line, "bob", "1:35.2", "48", "2") for line in shown.splitlines())

    wins = board("wins", [{"rank": 1, "player_id": 2, "name": "bob", "wins": 3, "games": 4}],
                 period="day", start="2026-11-29")
    shown = text(leaderboard_table(wins))
    assert shown.startswith("Leaderboard · classic · most wins · day 2026-11-29")
    assert any(row(line, "bob", "3", "4", "75%") for line in shown.splitlines())

    ratings = board("rating", [
        {"rank": 1, "player_id": 1, "name": "ana", "ordinal": 12.345, "mu": 30.1, "sigma": 5.9,
         "games": 14, "provisional": False},
        {"rank": 2, "player_id": 2, "name": "bob", "ordinal": -1.25, "mu": 22.0, "sigma": 7.75,
         "games": 3, "provisional": True},
    ], start=None)
    shown = text(leaderboard_table(ratings, focus="bob"))
    assert shown.startswith("Leaderboard · classic · rating · all time")
    assert any(row(line, "ana", "12.3", "30.1", "±5.9", "14") for line in shown.splitlines())
    assert any(row(line, "bob ◂", "~-1.2", "22.0", "±7.8", "3") for line in shown.splitlines())
    assert "~ provisional: fewer than 10 rated games" in shown
    assert "~12.3" not in shown


def test_empty_boards_say_why_and_what_to_do() -> None:
    assert empty_board_text(board("score", [])).plain == (
        "Leaderboard · classic · best score · all time: nobody has finished a rated game yet. "
        "Play one: gaps play --rules classic")
    assert "nobody has won a rated game" in empty_board_text(board("time", [])).plain
    assert "nobody has won a rated game" in empty_board_text(board("wins", [])).plain
    assert "rated matches of two or more players" in empty_board_text(board("rating", [])).plain


def test_ranks_one_to_three_have_medal_colours_and_you_stand_out() -> None:
    assert [rank_text(n).style for n in (1, 2, 3, 4)] == [MEDALS[1], MEDALS[2], MEDALS[3], ""]
    assert rank_text(None).plain == "-"
    mine = name_text(ranked(1, 7, "ana"), 7)
    assert mine.plain == "ana (you)" and mine.style == YOU_STYLE
    assert name_text(ranked(1, 8, "bob"), 7).plain == "bob"


def test_ratings_and_the_history_with_each_change() -> None:
    reply = typed(Rating, id=None, player={"id": 1, "name": "ana", "bot": False}, ratings=[
        {"player_id": 1, "ruleset": "classic", "mu": 27.5, "sigma": 7.1, "ordinal": 6.2,
         "games": 2, "provisional": True},
        {"player_id": 1, "ruleset": "spaces", "mu": 31.0, "sigma": 4.0, "ordinal": 19.0,
         "games": 12, "provisional": False},
    ], history=[])
    shown = text(ratings_table(reply))
    assert shown.startswith("Ratings of ana")
    assert any(row(line, "classic", "~6.2", "27.5", "±7.1", "2", "provisional")
               for line in shown.splitlines())
    assert any(row(line, "spaces", "19.0", "31.0", "±4.0", "12", "established")
               for line in shown.splitlines())

    history = [typed(RatingChange, **change) for change in (  # newest first
        {"ruleset": "classic", "match_id": 9, "match_code": "K7QX2M", "rank": 2,
         "mu": 25.0, "sigma": 7.0,
         "ordinal": 4.0, "at": "2026-11-29T18:04:05.123Z"},
        {"ruleset": "spaces", "match_id": 8, "match_code": "P3RT5W", "rank": 1,
         "mu": 30.0, "sigma": 6.0,
         "ordinal": 12.0, "at": "2026-11-29T17:00:00.000Z"},
        {"ruleset": "classic", "match_id": 7, "match_code": "H8NB2Q", "rank": 1, "mu": 26.0,
         "sigma": 7.0, "ordinal": 5.0, "at": "2026-11-28T09:30:00.000Z"},
    )]
    lines = text(history_table(history)).splitlines()
    assert lines[0] == "Recent rating changes"
    assert any(row(line, "2026-11-29 18:04", "classic", "K7QX2M", "2", "4.0", "▼ -1.0")
               for line in lines)
    assert any(row(line, "spaces", "P3RT5W", "1", "12.0", "▲ +12.0") for line in lines)
    # The match's code, which `gaps replay` takes; never the internal id.
    assert any(row(line, "2026-11-28 09:30", "classic", "H8NB2Q", "1", "5.0", "▲ +5.0")
               for line in lines)
    assert "#7" not in "\n".join(lines)
    assert text(history_table(history, limit=1)).startswith("Recent rating changes (1 of 3)")
    assert when("not a time") == "not a time" and when(None) == "-"


def view(**changes: Any) -> TournamentView:
    base = {"id": 1, "code": "Q4M2ZK", "name": "Cup", "host_id": 1, "ruleset": "classic",
            "rounds": 3, "max_players": 16, "round_time_limit_s": 600, "start_at": None,
            "status": "open", "current_round": 0, "round_match": None, "entrant_count": 2,
            "entrants": [{"player_id": 1, "name": "ana"}, {"player_id": 2, "name": "bob"}]}
    return typed(TournamentView, **{**base, **changes})


def standing(rank: int, player_id: int, name: str, **fields: Any) -> StandingsRow:
    return typed(StandingsRow, rank=rank, player_id=player_id, name=name, **fields)


def test_tournaments_their_status_and_summary() -> None:
    assert tournament_summary(view()) == "classic, 3 rounds of 10:00, 2/16 entrants"
    assert tournament_summary(view(rounds=1)).startswith("classic, 1 round of")
    assert tournament_status(view()).plain == "open"
    assert tournament_status(view(start_at="2026-11-29T18:00:00.000Z")).plain == \
        "open, starts 2026-11-29 18:00"
    assert tournament_status(view(status="running", current_round=2)).plain == "round 2/3"
    assert tournament_status(view(status="finished")).plain == "finished"
    shown = text(tournaments_table([view(), view(code="ZZZZZZ", status="running",
                                                 current_round=1)], title="Tournaments"))
    assert any(row(line, "Q4M2ZK", "Cup", "classic", "3", "10:00", "2/16", "open")
               for line in shown.splitlines())
    assert any(row(line, "ZZZZZZ", "round 1/3") for line in shown.splitlines())


def test_standings_and_the_podium() -> None:
    rows = [
        standing(1, 2, "bob", total_score=40, total_time_ms=300_000, rounds_played=2),
        standing(2, 1, "ana", total_score=35, total_time_ms=250_500, rounds_played=2),
        standing(2, 3, "cy", total_score=35, total_time_ms=250_500, rounds_played=2),
        standing(4, 4, "dee", total_score=1, total_time_ms=0, rounds_played=1),
    ]
    shown = text(standings_table(rows, title="Standings after round 2/3", you=1))
    assert shown.startswith("Standings after round 2/3")
    assert any(row(line, "1", "bob", "40", "5:00.0", "2") for line in shown.splitlines())
    assert any(row(line, "2", "ana (you)", "35", "4:10.5", "2") for line in shown.splitlines())
    podium = text(podium_text(rows[:3], you=1)).splitlines()
    assert podium == ["Podium", "  1st  bob  40 pts · 5:00.0", "  2nd  ana (you)  35 pts · 4:10.5",
                      "  2nd  cy  35 pts · 4:10.5"]
    assert standings_line(rows, limit=2) == "1. bob 40 · 2. ana 35 · …"


def test_a_tournament_end_rebuilt_from_final_standings_puts_ranks_one_to_three_on_the_podium(
) -> None:
    rows = [standing(rank, number, name)
            for number, (rank, name) in enumerate(((1, "a"), (2, "b"), (2, "c"), (4, "d")))]
    end = tournament_end(iter(rows))
    assert (list(end.standings), list(end.podium), end.cancelled) == (rows, rows[:3], False)
    assert tournament_end([]) == Outcome([], [])


def test_the_daily_board_and_a_match_ranking() -> None:
    daily = typed(DailyBoard, id=None, ruleset="classic", day="2026-11-29", par=None, entries=[
        {"rank": 1, "player_id": 1, "name": "ana", "score": 30, "finish_ms": 412_300}])
    shown = text(daily_table(daily, you="ana"))
    assert shown.startswith("Daily challenge · classic · 2026-11-29")
    assert any(row(line, "1", "ana (you)", "30", "-", "6:52.3") for line in shown.splitlines())
    assert "par not solved yet" in shown
    exact = text(daily_table(replace(daily, par=Par(score=38, exact=True)), you="ana"))
    assert "par 38" in exact
    assert any(row(line, "1", "ana (you)", "30", "8 below par", "6:52.3")
               for line in exact.splitlines())
    bound = " ".join(text(daily_table(replace(daily, par=Par(score=31, exact=False)))).split())
    assert "par at least 31 (a lower bound: the solver ran out of budget)" in bound
    assert "at least 1 below par" in bound

    ranking = [ranked(1, 1, "ana", score=48, placed=48, moves_made=60, end_reason="won",
                      finish_ms=100_000)]
    shown = text(ranking_table(ranking, 1, title="Match K7QX2M"))
    assert shown.startswith("Match K7QX2M: final ranking")
    assert any(row(line, "1", "ana (you)", "48", "48", "0", "60", "won", "1:40.0")
               for line in shown.splitlines())
    assert "to par" not in shown  # not known: no column
    solved = text(ranking_table(ranking, 1, title="Match K7QX2M",
                                par=Par(score=58, exact=True)))
    assert any(row(line, "1", "ana (you)", "48", "10 below par", "48", "0", "60", "won",
                   "1:40.0") for line in solved.splitlines())
    assert "par 58" in solved


# --- bots ----------------------------------------------------------------------------------


def test_a_bots_entry_is_marked_bot_wherever_players_are_listed_and_a_persons_is_not() -> None:
    """Issue 13: entries with ``bot: true`` (seats, standings, board rows, rankings, the
    player page) show ``[bot]`` beside the name; ``bot: false``, a person."""
    bot = {"rank": 1, "player_id": 2, "name": "robo", "bot": True, "score": 40,
           "total_score": 40, "total_time_ms": 1000, "rounds_played": 1, "placed": 48,
           "redeals_used": 0, "moves_made": 50, "end_reason": "won", "finish_ms": 1000}
    person = {**bot, "rank": 2, "player_id": 1, "name": "ana", "bot": False}
    other = {**person, "player_id": 3, "name": "cy"}
    rows = [bot, person, other]

    def as_(kind: type[Any]) -> list[Any]:
        fields = set(kind.__struct_fields__)
        return [typed(kind, **{k: v for k, v in r.items() if k in fields}) for r in rows]

    standings = as_(StandingsRow)
    shown = [
        text(standings_table(standings, title="Standings", you=1)),
        text(podium_text(standings)),
        text(leaderboard_table(board("score", as_(LeaderboardEntry)))),
        text(daily_table(typed(DailyBoard, id=None, ruleset="classic", day="2026-11-29",
                               par=None, entries=as_(DailyEntry)))),
        text(ranking_table(as_(RankedProgress), 1, title="Match K7QX2M")),
    ]
    for table in shown:
        assert "robo [bot]" in table, table
        assert "ana (you)" in table or "ana " in table
        assert table.count("[bot]") == 1, table
    assert standings_line(standings) == "1. robo [bot] 40 · 2. ana 40 · 2. cy 40"

    def rating(name: str, bot: bool) -> Rating:
        return typed(Rating, id=None, player={"id": 1, "name": name, "bot": bot}, ratings=[],
                     history=[])

    assert text(ratings_table(rating("robo", True))).startswith("Ratings of robo [bot]")
    assert "[bot]" not in text(ratings_table(rating("ana", False)))
    assert name_text(standings[0], you=2).plain == "robo [bot] (you)"  # a bot run by you


# --- what a hostile server sends ----------------------------------------------------------

#: Text a terminal would act on: clear the screen, retitle the window, link, reverse the
#: line, hide characters; and Rich markup, which must show as typed.
HOSTILE = ["\x1b[2J\x1b[H", "\x1b]0;owned\x07", "\u202eevil", "a\u200bb", "\x9b31m",
           "line\nbreak\r", "\x00\x7f", "\u2028\u2029", "\ud800", "\ue000",
           "[link=https://evil.example]click[/link]", "[bold red]x[/]"]
UNPRINTABLE = {"Cc", "Cf", "Cs", "Co", "Cn", "Zl", "Zp"}


def unprintable_in(shown: str) -> list[str]:
    """The characters of ``shown`` that a terminal would act on (lines aside)."""
    return [char for char in shown if char != "\n" and unicodedata.category(char) in UNPRINTABLE]


def every_table(bad: str) -> list[str]:
    """Every table, line and label of this module as printed (the strings as they are),
    with ``bad`` in each text the server sends. Only texts can carry it: the client reads
    a number, a time or one of the protocol's words that is not one as a broken message
    (``test_cli_connection``), never as a row to print."""
    person = {"rank": 1, "player_id": 1, "name": bad, "best_score": 2, "best_score_ms": 1,
              "games": 2, "fastest_win_ms": 2, "fastest_win_score": 3, "wins": 1,
              "ordinal": 1.5, "mu": 1.5, "sigma": 0.5, "provisional": True, "total_score": 4,
              "total_time_ms": 3, "rounds_played": 1, "score": 5, "finish_ms": 4,
              "placed": 6, "redeals_used": 0, "moves_made": 7, "end_reason": "won"}

    def as_(kind: type[Any]) -> Any:
        return typed(kind, **{k: v for k, v in person.items() if k in kind.__struct_fields__})

    tournament = view(code=bad, name=bad, cancel_reason=bad, status="cancelled")
    standings = as_(StandingsRow)
    shown: list[RenderableType | str] = [
        leaderboard_table(board(by, [as_(LeaderboardEntry)], period="day"), you=bad, focus=bad)
        for by in ("score", "time", "wins", "rating")
    ]
    shown += [
        ratings_table(typed(Rating, id=None, player={"id": 1, "name": bad, "bot": True},
                            ratings=[as_(RatingView)], history=[])),
        history_table([typed(RatingChange, ruleset="classic", match_id=1, match_code=bad,
                             rank=1, ordinal=1.0, at="2026-11-29T18:04:05.123Z")]),
        tournaments_table([tournament, view(name=bad, status="running", current_round=1,
                                            rounds=2)], title=bad),
        tournament_status(tournament),
        standings_table([standings], title=bad, you=bad), podium_text([standings]),
        standings_line([standings]),
        daily_table(typed(DailyBoard, id=None, ruleset="classic", day="2026-11-29", par=None,
                          entries=[as_(DailyEntry)])),
        ranking_table([as_(RankedProgress)], 1, title=bad), name_text(standings, None),
        rank_text(bad), when(bad), action_text(bad), action_text(f"8C>{bad}"),
        replay_table(typed(Replay, match={"code": bad, "ruleset": "classic"},
                           players=[as_(ReplayPlayer)])),
    ]
    return [item if isinstance(item, str) else text(item, width=400) for item in shown]


@pytest.mark.parametrize("bad", HOSTILE)
def test_no_text_from_the_server_reaches_the_terminal_as_control_characters_or_markup(
    bad: str,
) -> None:
    for shown in every_table(bad):
        assert not unprintable_in(shown), (bad, shown)
        if bad.startswith("["):
            assert bad in shown  # markup shown as typed, not applied


@settings(max_examples=150, deadline=None)
@given(st.text(max_size=12))
def test_any_text_from_the_server_is_printed_as_printable_characters(bad: str) -> None:
    for shown in every_table(bad):
        assert not unprintable_in(shown)


def test_a_tournament_name_with_an_escape_sequence_is_listed_with_it_defused() -> None:
    shown = text(tournaments_table([view(name="\x1b[2JCup\u202e")], title="Tournaments"))
    assert f"{REPLACEMENT}[2JCup{REPLACEMENT}" in shown
    assert "\x1b" not in shown and "\u202e" not in shown


@pytest.mark.parametrize(
    ("value", "expected"),
    [("ana", "ana"), ("zoë 8♣ 東京 🏆", "zoë 8♣ 東京 🏆"), ("a\u00a0b", "a\u00a0b"),
     ("\x1b[2J", f"{REPLACEMENT}[2J"), ("a\u202eb\u200bc", f"a{REPLACEMENT}b{REPLACEMENT}c"),
     ("a\nb\tc", f"a{REPLACEMENT}b{REPLACEMENT}c"), ("\ud800", REPLACEMENT), (None, "None"),
     (42, "42")],
)
def test_printable_replaces_each_character_a_terminal_would_act_on(
    value: object, expected: str
) -> None:
    assert printable(value) == expected


def test_printable_keeps_the_length_so_columns_stay_put() -> None:
    bad: Callable[[int], str] = lambda n: "\x1b\u202e\u200b"[n % 3]  # noqa: E731
    value = "".join(bad(n) for n in range(30))
    assert len(printable(value)) == len(value) == printable(value).count(REPLACEMENT)


def test_an_empty_daily_board_invites_to_play_only_today() -> None:
    """Bug 9 of issue 13: a past or future day's empty board said "Play it: gaps daily"."""
    today = date(2026, 11, 30)

    def on(day: str) -> DailyBoard:
        return typed(DailyBoard, id=None, day=day, par=None, entries=[])

    assert empty_daily_note(on("2026-11-30"), "spaces", today=today) == (
        "Nobody has finished the spaces daily challenge of 2026-11-30 yet. "
        "Play it: gaps daily --rules spaces")
    assert empty_daily_note(on("2026-11-29"), "classic", today=today) == \
        "Nobody finished the classic daily challenge of 2026-11-29."
    assert empty_daily_note(on("2026-12-01"), "classic", today=today) == \
        "The classic daily challenge of 2026-12-01 has not come yet (days are UTC)."


def test_every_start_time_is_in_one_local_form() -> None:
    """Bug 9 of issue 13: the tournament's two start-time messages used two forms."""
    moment = datetime.fromisoformat("2026-11-29T17:00:00.000Z").astimezone()
    assert local_time("2026-11-29T17:00:00.000Z") == moment.strftime("%Y-%m-%d %H:%M:%S (%Z)")
    assert local_time("soon\x1b[2J") == "soon\ufffd[2J"
    # Another form than the protocol's is not guessed at: printed as it came.
    assert local_time("2026-11-29T17:00:00+00:00") == "2026-11-29T17:00:00+00:00"


def test_a_result_under_review_or_voided_says_so_beside_its_end_and_a_plain_one_does_not() -> None:
    """Issue 16: ``review`` on a ranking entry (docs/fair-play.md)."""
    plain = {"score": 9, "placed": 9, "moves_made": 9, "end_reason": "stopped",
             "finish_ms": 1000}
    rows = [ranked(1, 1, "ana", **plain), ranked(2, 2, "bob", **plain, review="held"),
            ranked(3, 3, "cy", **plain, review="voided"),
            ranked(4, 4, "di", **plain, review="cleared")]
    shown = text(ranking_table(rows, 1, title="Match K7QX2M")).splitlines()
    line = {name: next(row for row in shown if f" {name} " in row) for name in
            ("ana", "bob", "cy", "di")}
    assert "under review" in line["bob"] and "voided" in line["cy"]
    assert "·" not in line["ana"] and "·" not in line["di"]


def test_an_entrant_the_host_removed_is_marked_with_the_reason_in_the_standings() -> None:
    """Issue 16: ``removed`` and ``removed_reason`` on a standings row."""
    standings = [
        standing(1, 9, "cy", total_score=9, total_time_ms=1000, rounds_played=1),
        standing(2, 8, "robo", total_score=20, total_time_ms=900, rounds_played=1,
                 removed=True, removed_reason="left the table"),
    ]
    shown = " ".join(text(standings_table(standings, title="Standings")).split())
    assert "robo (removed: left the table)" in shown and "cy (removed" not in shown


def test_a_replays_summary_gives_each_score_its_gap_to_par() -> None:
    document = typed(Replay, match={
        "code": "K7QX2M", "ruleset": "classic", "seed": "AAAA-BBBB-CCCC-DDDD",
        "par": {"score": 38, "exact": True}}, players=[
        {"rank": 2, "player_id": 2, "name": "bob", "score": 20, "end_reason": "stopped",
         "finish_ms": 240_800, "review": None},
        {"rank": 1, "player_id": 1, "name": "ana", "score": 38, "end_reason": "won",
         "finish_ms": 200_000, "review": None}])
    lines = text(replay_table(document, you="ana")).splitlines()
    assert lines[0].startswith("Match K7QX2M · classic · seed AAAA-BBBB-CCCC-DDDD")
    rows = [line for line in lines if "ana" in line or "bob" in line]
    assert row(rows[0], "1", "ana (you)", "38", "at par", "won", "3:20.0")
    assert row(rows[1], "2", "bob", "20", "18 below par", "stopped", "4:00.8")
    assert "par 38" in " ".join(lines)
    bound = text(replay_table(replace(document, match=replace(
        document.match, par=Par(score=38, exact=False)))))
    assert "at least 18 below par" in bound and "a lower bound" in " ".join(bound.split())
