"""Rich tables of what the server ranks: leaderboards, ratings, tournaments, the daily board.

Pure functions from the server's replies (docs/protocol.md) to renderables: no I/O. Every
table marks "you" when it knows your name, colours the first three ranks, and gives each
figure its unit (times as ``m:ss.t``, ratings with one decimal). What the server sends is
shown as ``Text`` of ``printable`` characters: never read as Rich markup, never a control
sequence for the terminal, whoever chose it.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from datetime import UTC, date, datetime
from typing import Any, Final, Protocol

from msgspec import UNSET, UnsetType
from rich.console import Group, RenderableType
from rich.table import Table
from rich.text import Text

from client_cli.duration import format_duration, format_ms
from client_cli.par import gap_words, par_words
from client_cli.render import (
    append_bot_mark,
    bot_mark,
    printable,
    printable_text,
    result_words,
)
from gaps_protocol.messages.common import Par
from gaps_protocol.messages.events import ResultEntered, TournamentCancelled, TournamentEnded
from gaps_protocol.messages.replies import DailyBoard, Leaderboard, Rating
from gaps_protocol.messages.views import (
    EnteredResult,
    LeaderboardEntry,
    RankedProgress,
    RatingChange,
    RatingView,
    Replay,
    StandingsRow,
    TournamentView,
)
from gaps_protocol.times import BadTime, parse_time

YOU_STYLE: Final = "bold #8fd3ff"
GOOD: Final = "#4fb86b"
BAD: Final = "#ff6b6b"
WARN: Final = "#e0c040"
MEDALS: Final = {1: "bold #e0c040", 2: "bold #c0c0c0", 3: "bold #c08040"}
#: A rating's ordinal (mu - 3 sigma) before any game: openskill's 25 - 3 x 25/3.
START_ORDINAL: Final = 0.0

BOARD_TITLES: Final = {
    "score": "best score", "time": "fastest win", "wins": "most wins", "rating": "rating",
}


def cell(value: Any, style: str = "") -> Text:
    """A value from the server as a cell: its printable text, not markup."""
    return printable_text(value, style)


def rank_text(rank: Any) -> Text:
    try:
        style = MEDALS.get(int(rank), "")
    except (TypeError, ValueError):
        style = ""
    return cell(rank if rank is not None else "-", style)


class Entry(Protocol):
    """A row that names a player: a board's, a ranking's, a standings', a replay's."""

    @property
    def name(self) -> str: ...

    @property
    def player_id(self) -> int: ...

    @property
    def bot(self) -> bool: ...


def name_text(row: Entry, you: str | int | None, focus: str | None = None) -> Text:
    """The player's name; yours in bold blue with "(you)" (``you`` a name or a player id),
    the ``focus`` player's in bold with a pointer."""
    name = printable(row.name)
    mine = you is not None and you in (row.name, row.player_id)
    text = Text(name, style=YOU_STYLE if mine else "bold" if name == focus else "")
    append_bot_mark(text, row)
    if mine:
        text.append(" (you)", style="dim")
    elif name == focus:
        text.append(" ◂", style="bold")
    return text


def rating_number(value: object) -> str:
    return f"{float(value):.1f}" if isinstance(value, (int, float)) else "-"


def _table(title: str, columns: Sequence[tuple[str, str]], caption: str | None = None) -> Table:
    # As wide as its title at least, so that the title never wraps. The title holds
    # server text (a player's name), so it is Text, not markup.
    heading = cell(title)
    table = Table(title=heading, title_justify="left", title_style="bold", caption=caption,
                  caption_justify="left", header_style="bold #8fd3ff", min_width=len(heading))
    for column, justify in columns:
        table.add_column(column, justify=justify, no_wrap=justify == "right")  # type: ignore[arg-type]
    return table


# -- leaderboards --------------------------------------------------------------------------


def period_label(reply: Leaderboard) -> str:
    """``all time``, ``2026-11`` (a month) or ``2026-11-29`` (a day)."""
    period, start = reply.period, reply.period_start
    if reply.board == "rating" or period == "all" or not start:
        return "all time"
    if period == "month":
        return f"month {printable(start)[:7]}"
    return f"day {printable(start)}"


def board_title(reply: Leaderboard) -> str:
    board = printable(reply.board)
    return (f"Leaderboard · {printable(reply.ruleset)} · "
            f"{BOARD_TITLES.get(board, board)} · {period_label(reply)}")


def _figure(value: object) -> object:
    """A board's figure, or None where its board has none."""
    return None if value is UNSET else value


def leaderboard_table(reply: Leaderboard, *, you: str | None = None,
                      focus: str | None = None) -> Table:
    """A ``leaderboard`` reply's entries, with the figures of its board; ``focus`` is the
    player whose rows around are shown."""
    board = reply.board
    entries = reply.entries
    caption = None
    if board == "score":
        columns = [("#", "right"), ("player", "left"), ("best score", "right"),
                   ("reached at", "right"), ("games", "right")]
    elif board == "time":
        columns = [("#", "right"), ("player", "left"), ("fastest win", "right"),
                   ("its score", "right"), ("wins", "right")]
    elif board == "wins":
        columns = [("#", "right"), ("player", "left"), ("wins", "right"), ("games", "right"),
                   ("won", "right")]
    else:
        columns = [("#", "right"), ("player", "left"), ("rating", "right"), ("mu", "right"),
                   ("sigma", "right"), ("games", "right")]
        if any(entry.provisional is True for entry in entries):
            caption = "~ provisional: fewer than 10 rated games in this ruleset"
    table = _table(board_title(reply), columns, caption)
    for entry in entries:
        cells: list[RenderableType] = [rank_text(entry.rank), name_text(entry, you, focus)]
        if board == "score":
            cells += [cell(_figure(entry.best_score), "bold"),
                      cell(format_ms(_count(entry.best_score_ms))),
                      cell(_figure(entry.games))]
        elif board == "time":
            cells += [cell(format_ms(_count(entry.fastest_win_ms)), "bold"),
                      cell(_figure(entry.fastest_win_score)), cell(_figure(entry.wins))]
        elif board == "wins":
            wins, games = _count(entry.wins) or 0, _count(entry.games) or 0
            share = f"{100 * wins / games:.0f}%" if games else "-"
            cells += [cell(wins, "bold"), cell(games), cell(share)]
        else:
            cells += [ordinal_text(entry), cell(rating_number(entry.mu)),
                      cell(f"±{rating_number(entry.sigma)}"), cell(_figure(entry.games))]
        table.add_row(*cells)
    return table


def _count(value: int | None | UnsetType) -> int | None:
    """A board's count (milliseconds, wins...), or None where its board has none."""
    return value if isinstance(value, int) else None


def ordinal_text(entry: LeaderboardEntry | RatingView) -> Text:
    """The rating (its ordinal) in bold, or dim with ``~`` while provisional."""
    value = rating_number(entry.ordinal)
    if entry.provisional is True:
        return Text(f"~{value}", style="dim")
    return Text(value, style="bold")


def empty_board_text(reply: Leaderboard) -> Text:
    if reply.board == "time":
        what = "nobody has won a rated game"
    elif reply.board == "wins":
        what = "nobody has won a rated game"
    elif reply.board == "rating":
        what = "nobody has a rating (rated matches of two or more players make one)"
    else:
        what = "nobody has finished a rated game"
    text = Text(f"{board_title(reply)}: ", style="bold")
    text.append(f"{what} yet. Play one: gaps play --rules {printable(reply.ruleset)}")
    return text


# -- ratings ---------------------------------------------------------------------------------


def ratings_table(reply: Rating) -> Table:
    """A ``rating`` reply's ratings, one row per ruleset."""
    player = reply.player
    table = _table(f"Ratings of {player.name}{bot_mark(player)}", [
        ("rules", "left"), ("rating", "right"), ("mu", "right"), ("sigma", "right"),
        ("games", "right"), ("status", "left"),
    ], caption="rating = mu - 3 sigma (openskill); provisional until 10 rated games")
    for rating in reply.ratings:
        status = (Text("provisional", style=WARN) if rating.provisional
                  else Text("established", style=GOOD))
        table.add_row(cell(rating.ruleset), ordinal_text(rating),
                      cell(rating_number(rating.mu)),
                      cell(f"±{rating_number(rating.sigma)}"), cell(rating.games), status)
    return table


def change_text(change: float | None) -> Text:
    if change is None:
        return Text("")
    if change > 0.05:
        return Text(f"▲ {change:+.1f}", style=GOOD)
    if change < -0.05:
        return Text(f"▼ {change:+.1f}", style=BAD)
    return Text("= 0.0", style="dim")


def history_table(history: Sequence[RatingChange], *, limit: int = 10) -> Table:
    """The newest rating updates, each with its change since the one before it in that
    ruleset (from the starting rating for the first)."""
    changes: list[float | None] = []
    for index, update in enumerate(history):
        older = next((h for h in history[index + 1:] if h.ruleset == update.ruleset), None)
        before = older.ordinal if older is not None else START_ORDINAL
        changes.append(update.ordinal - before)
    shown = min(limit, len(history))
    title = f"Recent rating changes ({shown} of {len(history)})" if len(history) > shown \
        else "Recent rating changes"
    table = _table(title, [("when (UTC)", "left"), ("rules", "left"), ("match", "right"),
                           ("rank", "right"), ("rating", "right"), ("change", "left")])
    for update, change in list(zip(history, changes, strict=True))[:limit]:
        table.add_row(cell(when(update.at)), cell(update.ruleset),
                      cell(update.match_code or "-"), cell(update.rank),
                      cell(rating_number(update.ordinal)), change_text(change))
    return table


def local_time(value: object) -> str:
    """A time from the server (``gaps_protocol.times``) in the user's local time,
    ``2026-11-29 19:00:00 (CET)``: every start time the client prints is in this one form;
    anything else is printed as it came."""
    try:
        moment = parse_time(str(value)).astimezone()
    except BadTime:
        return printable(value)
    return moment.strftime("%Y-%m-%d %H:%M:%S (%Z)")


def empty_daily_note(board: DailyBoard, rules: str, *, today: date | None = None) -> str:
    """What an empty daily board says: today's can still be played; a past day's cannot,
    nor a day to come."""
    day = board.day.isoformat()
    today_text = (today or datetime.now(UTC).date()).isoformat()
    option = "" if rules == "classic" else f" --rules {rules}"
    if day == today_text:
        return (f"Nobody has finished the {rules} daily challenge of {day} yet. "
                f"Play it: gaps daily{option}")
    if day > today_text:
        return f"The {rules} daily challenge of {day} has not come yet (days are UTC)."
    return f"Nobody finished the {rules} daily challenge of {day}."


def when(value: object) -> str:
    """A time from the server as ``2026-11-29 18:04`` (UTC), or as given if it is not one."""
    if not isinstance(value, str):
        return "-"
    try:
        moment = parse_time(value)
    except BadTime:
        return printable(value)
    return moment.strftime("%Y-%m-%d %H:%M")


# -- tournaments -------------------------------------------------------------------------------


def tournament_status(view: TournamentView) -> Text:
    status = view.status
    if status == "running":
        paused = ", paused" if view.paused else ""
        return cell(f"round {view.current_round}/{view.rounds}{paused}",
                    WARN if paused else GOOD)
    if status == "finished":
        return Text("finished", style="dim")
    if status == "cancelled":
        return Text(printable(f"cancelled: {view.cancel_reason or 'by the host'}"),
                    style="dim")
    if view.start_at:
        return Text(f"open, starts {when(view.start_at)}", style=WARN)
    return Text("open", style=WARN)


def tournament_summary(view: TournamentView) -> str:
    """``classic, 3 rounds of 10:00, 2/16 entrants``."""
    rounds = view.rounds
    return printable(f"{view.ruleset}, {rounds} round{'s' if rounds != 1 else ''} of "
                     f"{format_duration(view.round_time_limit_s)}, "
                     f"{view.entrant_count}/{view.max_players} entrants")


def tournaments_table(views: Iterable[TournamentView], *, title: str) -> Table:
    table = _table(title, [("code", "left"), ("name", "left"), ("rules", "left"),
                           ("rounds", "right"), ("round time", "right"),
                           ("entrants", "right"), ("status", "left")])
    for view in views:
        table.add_row(cell(view.code, "bold"), cell(view.name), cell(view.ruleset),
                      cell(view.rounds), cell(format_duration(view.round_time_limit_s)),
                      cell(f"{view.entrant_count}/{view.max_players}"),
                      tournament_status(view))
    return table


def standings_table(rows: Iterable[StandingsRow], *, title: str,
                    you: str | int | None = None) -> Table:
    """Tournament standings: total score (higher first), then total time (less first)."""
    table = _table(title, [("#", "right"), ("player", "left"), ("total score", "right"),
                           ("total time", "right"), ("rounds", "right")])
    for row in rows:
        name = name_text(row, you)
        if row.removed:  # the host removed them (tournament_remove): listed last
            name.append(printable(f" (removed: {row.removed_reason or 'no reason'})"),
                        style="dim")
        if row.entered:  # counts a table's result, entered, not played online
            rounds = ", ".join(str(n) for n in row.entered_rounds)
            name.append(f" {ENTERED_MARK} entered: round {rounds}" if rounds
                        else f" {ENTERED_MARK} entered", style="italic #e0c040")
        table.add_row(rank_text(row.rank), name, cell(row.total_score, "bold"),
                      cell(format_ms(row.total_time_ms)), cell(row.rounds_played))
    return table


#: What marks a result entered for a table in the room (not validated by the server).
ENTERED_MARK: Final = "✎"


def entered_line(row: EnteredResult | ResultEntered) -> Text:
    """``✎ cat, round 1 (entered): 25 pts · 30 placed, 1 redeal · 6:40.0``."""
    redeals = row.redeals
    won = ", won" if row.won else ""
    return Text.assemble(
        (f"{ENTERED_MARK} ", "#e0c040"), (printable(row.name), "bold"),
        printable(f", round {row.round} (entered at a table): {row.score} pts · "
                  f"{row.placed} placed, {redeals} redeal{'s' if redeals != 1 else ''}"
                  f"{won} · {format_ms(row.finish_ms)}"))


@dataclass(frozen=True)
class Outcome:
    """How a tournament ended: its final standings and podium, or, when it was
    cancelled, why (``reason``: None when none was given)."""

    standings: Sequence[StandingsRow] = ()
    podium: Sequence[StandingsRow] = ()
    cancelled: bool = False
    reason: str | None = None

    @staticmethod
    def of(event: TournamentEnded | TournamentCancelled) -> Outcome:
        """The outcome an event says."""
        if isinstance(event, TournamentCancelled):
            return Outcome(cancelled=True, reason=event.reason)
        return Outcome(list(event.standings), list(event.podium))


def tournament_end(standings: Iterable[StandingsRow]) -> Outcome:
    """The end of a tournament from its final standings: the rows ranked 1-3 are the
    podium (as the server's ``tournament_ended`` has it)."""
    rows = list(standings)
    return Outcome(rows, [row for row in rows if row.rank <= 3])


def podium_text(podium: Iterable[StandingsRow], *, you: str | int | None = None) -> Group:
    """The podium, one line a place: ``1st  ana  34 pts · 12:31.4``."""
    lines: list[RenderableType] = [Text("Podium", style="bold")]
    for row in podium:
        rank = row.rank
        place = {1: "1st", 2: "2nd", 3: "3rd"}.get(rank, f"{rank}th")
        line = Text(f"  {place}  ", style=MEDALS.get(rank, ""))
        line.append_text(name_text(row, you))
        line.append(printable(f"  {row.total_score} pts · {format_ms(row.total_time_ms)}"))
        lines.append(line)
    return Group(*lines)


def standings_line(rows: Iterable[StandingsRow], *, limit: int = 5) -> str:
    """The standings in one line (for a notification): ``1. ana 34 · 2. bob 20``."""
    listed = list(rows)
    text = " · ".join(printable(f"{row.rank}. {row.name}{bot_mark(row)} {row.total_score}")
                      for row in listed[:limit])
    return text + (" · …" if len(listed) > limit else "")


# -- the daily challenge -----------------------------------------------------------------------


def daily_table(reply: DailyBoard, *, you: str | None = None) -> Table:
    """A day's board, each score with its gap to the deal's par (``3 below par``)."""
    par = reply.par
    table = _table(f"Daily challenge · {reply.ruleset} · {reply.day}",
                   [("#", "right"), ("player", "left"), ("score", "right"),
                    ("to par", "left"), ("finished at", "right")],
                   caption=daily_par_note(reply))
    for entry in reply.entries:
        table.add_row(rank_text(entry.rank), name_text(entry, you),
                      cell(entry.score, "bold"), cell(gap_words(entry.score, par) or "-"),
                      cell(format_ms(entry.finish_ms)))
    return table


def daily_par_note(reply: DailyBoard) -> str:
    """What the board says of the deal's par (the best score it allows): ``par 38``, or
    that 31 is only a lower bound, or that it is not solved yet."""
    return par_words(reply.par)


# -- one match -------------------------------------------------------------------------------


def ranking_table(rows: Iterable[RankedProgress], you_id: int | None, *, title: str,
                  par: Par | None = None) -> Table:
    """A match's final ranking (``match_ended``'s ``ranking``), as left in the terminal;
    with the deal's par when known, each score's gap to it."""
    listed = list(rows)
    gaps = [gap_words(row.score, par) for row in listed]
    columns = [("#", "right"), ("player", "left"), ("score", "right")]
    if any(gaps):
        columns.append(("to par", "left"))
    columns += [("placed", "right"), ("redeals", "right"), ("moves", "right"),
                ("result", "left"), ("time", "right")]
    table = _table(f"{title}: final ranking", columns,
                   caption=par_words(par) if any(gaps) else None)
    for row, gap in zip(listed, gaps, strict=True):
        cells = [rank_text(row.rank), name_text(row, you_id), cell(row.score, "bold")]
        if any(gaps):
            cells.append(cell(gap or "-"))
        cells += [cell(row.placed), cell(row.redeals_used), cell(row.moves_made),
                  cell(result_words(row), GOOD if row.end_reason == "won" else ""),
                  cell(format_ms(row.finish_ms))]
        table.add_row(*cells)
    return table


def replay_table(document: Replay, *, you: str | None = None) -> Table:
    """What a replay document says of each player: rank, score and its gap to the deal's
    par, how the game ended and when (``gaps replay``)."""
    match = document.match
    par = match.par
    players = sorted(document.players, key=lambda p: p.rank if p.rank is not None else 99)
    table = _table(f"Match {match.code} · {match.ruleset} · seed {match.seed}",
                   [("#", "right"), ("player", "left"), ("score", "right"),
                    ("to par", "left"), ("result", "left"), ("time", "right")],
                   caption=par_words(par))
    for player in players:
        table.add_row(rank_text(player.rank), name_text(player, you),
                      cell(player.score, "bold"), cell(gap_words(player.score, par) or "-"),
                      cell(result_words(player)), cell(format_ms(player.finish_ms)))
    return table
