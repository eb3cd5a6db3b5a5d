"""``gaps``: the command line. Every subcommand, its arguments, and its errors.

What only reads (the open matches, leaderboards, ratings, tournaments, the daily board)
goes over plain HTTP and needs no account; what plays goes over the WebSocket as the
user's account.

Every failure ends as one line on stderr (``gaps: ...``) and an exit code, never a
traceback: 1 when something went wrong (the server refused, could not be reached, a
replay does not hold), 2 for a usage error (bad arguments, a file that cannot be read).

What the server says (names, codes, messages) and what a replay file holds is printed as
``printable`` text and never read as Rich markup: a name like ``[link=...]x`` or one with
``ESC[2J`` in it shows as it is, it does not make a link or clear the screen.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import json
import sys
from collections.abc import Awaitable, Callable, Sequence
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from importlib.metadata import PackageNotFoundError, version
from pathlib import Path
from typing import Any, Final

from rich.console import Console
from rich.table import Table
from rich.text import Text
from textual.app import App

from client_cli import arguments, http
from client_cli.arguments import Parser, UsageError
from client_cli.boardapp import BoardApp
from client_cli.bot import BotOptions, run_bots, run_quick_bots, run_tournament_bots
from client_cli.config import Account, Config, ConfigError
from client_cli.connection import ClientError, Connection, ServerRefused, expect
from client_cli.deals import alarm, deals_report
from client_cli.dealsheet_pdf import PAPERS, fetch_and_write_sheet
from client_cli.duration import format_duration, format_ms
from client_cli.interrupt import check_interrupted, handled
from client_cli.match_state import MatchState, Phase
from client_cli.par import gap_words
from client_cli.practice import PracticeApp, PracticeSession
from client_cli.records import Records
from client_cli.refusals import refusal_words
from client_cli.render import bot_mark, printable, printable_text
from client_cli.screen import MatchApp, Rematch, rematch_options
from client_cli.signature import (
    BadKeys,
    SignatureCheck,
    Verdict,
    is_signed,
    keys_from_file,
    keys_from_listing,
    unchecked,
)
from client_cli.signature import check as check_signature
from client_cli.tables import (
    board_title,
    daily_par_note,
    daily_table,
    empty_board_text,
    empty_daily_note,
    entered_line,
    history_table,
    leaderboard_table,
    local_time,
    ranking_table,
    ratings_table,
    replay_table,
    standings_table,
    tournament_end,
    tournament_status,
    tournaments_table,
)
from client_cli.tournament import (
    announcement_text,
    deals_committed,
    follow,
    intro,
    print_final,
)
from client_cli.verify import FORMAT as REPLAY_FORMAT
from client_cli.verify import Report, verify
from gaps import RULESETS, Seed
from gaps_protocol import MatchSnapshot
from gaps_protocol.messages import ClientMessage
from gaps_protocol.messages.common import Player
from gaps_protocol.messages.replies import (
    DailyBoard,
    MatchCreated,
    Matched,
    RematchJoined,
    Standings,
)
from gaps_protocol.messages.requests import (
    Announce,
    CancelTournament,
    EnterTableResult,
    NameArbiter,
    PauseTournament,
    ReinstateEntrant,
    RemoveEntrant,
    ResumeTournament,
    SetTable,
)
from gaps_protocol.times import format_time

Frontend = Callable[[App[Any]], Awaitable[Any]]


async def run_app(app: App[Any]) -> Any:
    """Run a Textual app in the terminal (tests pass a frontend that drives it instead)."""
    return await app.run_async()


class CliError(Exception):
    """A failure to report in one line; ``code`` is the exit code."""

    def __init__(self, message: str, code: int = 1) -> None:
        super().__init__(message)
        self.code = code


@dataclass
class Context:
    options: argparse.Namespace
    out: Console
    #: What runs a screen (the terminal; a test's driver).
    runs: Frontend
    _config: Config | None = None

    async def frontend(self, app: App[Any]) -> Any:
        """Run a screen in the colours of the config, and keep them when the player
        switches them there."""
        if isinstance(app, BoardApp):
            app.use_colours(self.config.colours, remember=self._remember_colours)
        return await self.runs(app)

    def _remember_colours(self, name: str) -> None:
        self.config.colours = name
        with contextlib.suppress(ConfigError):  # a nicety: the screen goes on without it
            self.config.save()

    @property
    def config(self) -> Config:
        """The config file, read when a command first needs it (verify only to find the
        server whose keys it checks a signature with, when no --key is given)."""
        if self._config is None:
            self._config = Config.load()
        return self._config

    @property
    def server(self) -> str:
        return self.config.resolve_server(getattr(self.options, "server", None))

    def account(self) -> Account:
        server = self.server
        account = self.config.account(server)
        if account is None:
            raise CliError(f"no account on {server}: run `gaps register NAME` first")
        return account

    async def connect(self) -> Connection:
        """A connection authenticated as the user's account."""
        account = self.account()
        try:
            return await Connection.open(self.server, token=account.token)
        except ServerRefused as refusal:
            if refusal.code == "bad_token":
                raise CliError(
                    f"{self.server} does not know {account.name}'s token any more: "
                    f"`gaps register {account.name}` registers that name again"
                ) from None
            raise


# -- the parser --------------------------------------------------------------------------------


def build_parser() -> argparse.ArgumentParser:
    common = Parser(add_help=False)
    common.add_argument("--server", metavar="URL",
                        help="the server, like ws://HOST:8765 (default: $GAPS_SERVER, then the "
                             "server you registered on, then ws://127.0.0.1:8765)")
    parser = Parser(
        prog="gaps", description="Gaps Arena from the terminal: race people and bots at Gaps.",
        epilog="Start with `gaps register NAME`, then `gaps create` or `gaps practice`. "
               "See docs/client.md.",
    )
    parser.add_argument("--version", action="version", version=f"%(prog)s {_version()}")
    commands = parser.add_subparsers(dest="command", metavar="COMMAND", required=True)

    register = commands.add_parser("register", parents=[common], help="create your player",
                                   description="Create a player on the server and keep its "
                                               "token in your config.")
    register.add_argument("name", type=arguments.player_name, help="2-24 letters, digits, _ - or .")
    register.add_argument("--force", action="store_true",
                          help="replace the account you already have on this server")
    register.set_defaults(handler=cmd_register)

    whoami = commands.add_parser("whoami", parents=[common], help="who you are on the server")
    whoami.set_defaults(handler=cmd_whoami)

    create = commands.add_parser("create", parents=[common], help="create a match and play it",
                                 description="Create a match, print its join code and open "
                                             "the match screen.")
    create.add_argument("--rules", default="classic", choices=sorted(RULESETS),
                        help="the ruleset (default classic)")
    create.add_argument("--players", type=arguments.bounded(1, 16, "players"), default=2,
                        metavar="N", help="seats, 1-16 (default 2)")
    create.add_argument("--time", type=arguments.match_clock, default=600, metavar="DURATION",
                        help="the match clock, like 10m, 90s, 1h, at most 24h (default 10m)")
    create.add_argument("--win-by", choices=("time", "score"), default="time",
                        help="time: the fastest winner; score: the best score (default time)")
    create.add_argument("--public", action="store_true", help="list it in `gaps matches`")
    create.add_argument("--bots", action="store_true",
                        help="let declared bots sit (`gaps bot --join CODE`); they are "
                             "refused otherwise")
    create.add_argument("--seed", type=arguments.seed, metavar="CODE",
                        help="deal this share code (the match is then unrated)")
    create.add_argument("--countdown", type=arguments.countdown, metavar="DURATION",
                        help="countdown before the deal, at most 60s (default: the server's)")
    create.add_argument("--detach", action="store_true",
                        help="only create it and print the code; `gaps join CODE` takes "
                             "your seat back within the server's grace period (30 s by "
                             "default), after which the seat is given up")
    create.set_defaults(handler=cmd_create)

    join = commands.add_parser("join", parents=[common], help="join a match by its code")
    join.add_argument("code", type=arguments.match_code, help="the match's join code")
    join.set_defaults(handler=cmd_join)

    matches = commands.add_parser("matches", parents=[common], help="list open public matches")
    matches.set_defaults(handler=cmd_matches)

    watch = commands.add_parser("watch", parents=[common], help="watch a match as a spectator")
    watch.add_argument("code", type=arguments.match_code, help="the match's join code")
    watch.set_defaults(handler=cmd_watch)

    play = commands.add_parser("play", parents=[common], help="quick match: race whoever is "
                               "waiting", description="Wait in the quick-match queue; when the "
                               "server has found 1-3 opponents of a close rating, open the "
                               "match screen. Ctrl-C while waiting leaves the queue.")
    play.add_argument("--rules", default="classic", choices=sorted(RULESETS),
                      help="the ruleset (default classic)")
    play.add_argument("--bot-after", type=arguments.duration, metavar="DURATION",
                      help="if nobody comes within this long, race a bot instead (a new "
                           "2-seat match, rated, win by time)")
    play.set_defaults(handler=cmd_play)

    daily = commands.add_parser("daily", parents=[common], help="play today's daily challenge",
                                description="Play today's daily challenge (one deal a day per "
                                            "ruleset, the same for everyone, once), or show "
                                            "its board with --board.")
    daily.add_argument("--rules", default="classic", choices=sorted(RULESETS),
                       help="the ruleset (default classic)")
    daily.add_argument("--board", action="store_true", help="show the day's board instead")
    daily.add_argument("--day", type=arguments.day, metavar="YYYY-MM-DD",
                       help="with --board: that day's board (default today, UTC)")
    daily.set_defaults(handler=cmd_daily)

    board = commands.add_parser("leaderboard", parents=[common], help="show a leaderboard",
                                description="Show a leaderboard of rated games (read over "
                                            "HTTP; no account needed but for --around-me).")
    board.add_argument("--rules", default="classic", choices=sorted(RULESETS),
                       help="the ruleset (default classic)")
    board.add_argument("--by", choices=("score", "time", "wins", "rating"), default="score",
                       help="score: best game; time: fastest win; wins: most wins; rating "
                            "(default score)")
    board.add_argument("--period", choices=("all", "month", "day"), default="all",
                       help="all time, or the UTC month or day holding --day (default all)")
    board.add_argument("--day", type=arguments.day, metavar="YYYY-MM-DD",
                       help="picks the month or day (default today, UTC)")
    board.add_argument("--limit", type=arguments.bounded(1, 100, "rows"), default=20,
                       metavar="N", help="rows per page, 1-100 (default 20)")
    where = board.add_mutually_exclusive_group()
    where.add_argument("--around-me", action="store_true",
                       help="your rank and the rows around it (needs your account)")
    where.add_argument("--around", type=arguments.player_name, metavar="NAME",
                       help="that player's rank and the rows around it")
    where.add_argument("--cursor", metavar="C", help="the next page (printed under a page)")
    board.set_defaults(handler=cmd_leaderboard)

    rating = commands.add_parser("rating", parents=[common], help="a player's ratings",
                                 description="A player's rating in each ruleset, and its "
                                             "recent changes.")
    rating.add_argument("name", nargs="?", type=arguments.player_name,
                        help="the player (default: you)")
    rating.add_argument("--history", type=arguments.bounded(0, 200, "rows"), default=10,
                        metavar="N", help="how many recent changes to show (default 10)")
    rating.set_defaults(handler=cmd_rating)

    tournament = commands.add_parser("tournament", parents=[common], help="tournaments",
                                     description="Duplicate tournaments: every entrant plays "
                                                 "the same deals, round after round.")
    actions = tournament.add_subparsers(dest="tournament_command", metavar="ACTION",
                                        required=True)
    t_create = actions.add_parser("create", parents=[common], help="create a tournament",
                                  description="Create a tournament and print its code. You "
                                              "organise it; to play too, enter it with --join "
                                              "(or `gaps tournament join CODE`).")
    t_create.add_argument("--name", type=arguments.tournament_name, default="Tournament",
                          help="shown in lists, at most 64 characters")
    t_create.add_argument("--rules", default="classic", choices=sorted(RULESETS),
                          help="the ruleset (default classic)")
    t_create.add_argument("--rounds", type=arguments.bounded(1, 20, "rounds"), default=3,
                          metavar="N", help="deals to play, 1-20 (default 3)")
    t_create.add_argument("--players", type=arguments.bounded(1, 64, "players"), default=16,
                          metavar="N", help="entrants, 1-64 (default 16)")
    t_create.add_argument("--round-time", type=arguments.round_clock, default=600,
                          metavar="DURATION",
                          help="each round's clock, like 10m, at most 24h (default 10m)")
    when = t_create.add_mutually_exclusive_group()
    when.add_argument("--start-at", type=arguments.moment, metavar="TIME",
                      help="starts by itself then: ISO 8601, like 2026-11-29T18:00 (your local "
                           "time) or 2026-11-29T17:00Z")
    when.add_argument("--start-in", type=arguments.duration, metavar="DURATION",
                      help="starts by itself after this long, like 5m")
    t_create.add_argument("--if-empty", choices=("cancel", "wait"), default="cancel",
                          help="what a start time with nobody entered does: cancel the "
                               "tournament (default), or wait and start with the first entrant")
    t_create.add_argument("--bots", action="store_true",
                          help="let declared bots enter (`gaps bot --tournament CODE`)")
    t_create.add_argument("--winnable", action="store_true",
                          help="deal only deals the solver proves winnable without redeal "
                               "(drawn before entries open: a second or so each)")
    t_create.add_argument("--countdown", type=arguments.countdown, metavar="DURATION",
                          help="each round's countdown, 0 to 60s (default: the server's)")
    t_create.add_argument("--break", dest="break_s", type=arguments.break_time,
                          metavar="DURATION",
                          help="the break between rounds, 0 to 1h (default: the server's)")
    t_create.add_argument("--late-entry-until", type=arguments.bounded(1, 20, "round"),
                          metavar="N",
                          help="players may still enter once it runs, until round N is dealt; "
                               "a late entrant scores 0 for the rounds missed (default: no "
                               "late entry)")
    t_create.add_argument("--join", action="store_true",
                          help="enter it yourself and follow it, as `gaps tournament join`")
    t_create.set_defaults(handler=cmd_tournament_create)
    t_join = actions.add_parser("join", parents=[common], help="enter a tournament and play it",
                                description="Enter a tournament (or follow yours again) and "
                                            "play its rounds: each opens the match screen.")
    t_join.add_argument("code", type=arguments.tournament_code, help="the tournament's code")
    t_join.set_defaults(handler=cmd_tournament_join)
    t_list = actions.add_parser("list", parents=[common], help="open and running tournaments",
                                description="The open and running tournaments; with --ended "
                                            "the last 50 finished or cancelled, with --all both.")
    which = t_list.add_mutually_exclusive_group()
    which.add_argument("--ended", dest="status", action="store_const", const="ended",
                       default="active", help="the finished and cancelled ones, newest first")
    which.add_argument("--all", dest="status", action="store_const", const="all",
                       help="the open and running ones, then the ended")
    t_list.set_defaults(handler=cmd_tournament_list)
    t_export = actions.add_parser(
        "export", parents=[common], help="save a tournament's standings, rounds or calendar",
        description="Save a tournament's standings (or its rounds: every player's score, "
                    "placed cards, redeals, time, rank, the par, match code and seed once "
                    "revealed) as CSV or JSON, running or finished; or a scheduled "
                    "tournament's calendar file (--format ics).")
    t_export.add_argument("code", type=arguments.tournament_code, help="the tournament's code")
    t_export.add_argument("--format", choices=("csv", "json", "ics"), default="csv",
                          help="csv (default), json, or ics: the calendar file")
    rounds = t_export.add_mutually_exclusive_group()
    rounds.add_argument("--round", type=arguments.bounded(1, 20, "round"), metavar="N",
                        help="round N's results instead of the standings")
    rounds.add_argument("--rounds", action="store_true",
                        help="every round's results instead of the standings")
    t_export.add_argument("-o", "--output", metavar="FILE",
                          help="where to save it (default: CODE-standings.csv and the like "
                               "in this folder; - for stdout)")
    t_export.set_defaults(handler=cmd_tournament_export)
    t_standings = actions.add_parser("standings", parents=[common],
                                     help="a tournament's standings")
    t_standings.add_argument("code", type=arguments.tournament_code,
                             help="the tournament's code")
    t_standings.set_defaults(handler=cmd_tournament_standings)
    t_start = actions.add_parser("start", parents=[common], help="start your tournament now")
    t_start.add_argument("code", type=arguments.tournament_code, help="the tournament's code")
    t_start.set_defaults(handler=cmd_tournament_start)
    t_remove = actions.add_parser(
        "remove", parents=[common], help="remove an entrant from your tournament",
        description="Remove an entrant from a tournament you host, before it starts or "
                    "between rounds; every follower is told the reason.")
    t_remove.add_argument("code", type=arguments.tournament_code, help="the tournament's code")
    t_remove.add_argument("player", type=arguments.player_name, help="the entrant's name")
    t_remove.add_argument("--reason", type=arguments.reason, required=True,
                          help="why, shown to everyone (at most 200 characters)")
    t_remove.set_defaults(handler=cmd_tournament_remove)
    t_reinstate = actions.add_parser(
        "reinstate", parents=[common], help="take back an entrant you removed",
        description="Take back an entrant you removed from a tournament you host: they play "
                    "from the next round dealt (0 for the rounds they missed).")
    t_reinstate.add_argument("code", type=arguments.tournament_code,
                             help="the tournament's code")
    t_reinstate.add_argument("player", type=arguments.player_name, help="the entrant's name")
    t_reinstate.set_defaults(handler=cmd_tournament_steer, steer="reinstate")
    t_cancel = actions.add_parser(
        "cancel", parents=[common], help="cancel your tournament, before or during it",
        description="Cancel a tournament you host, before it starts or while it runs: a "
                    "round being played is abandoned and not counted; every follower is "
                    "told the reason, which its exports keep.")
    t_cancel.add_argument("code", type=arguments.tournament_code, help="the tournament's code")
    t_cancel.add_argument("--reason", type=arguments.reason, required=True,
                          help="why, shown to everyone (at most 200 characters)")
    t_cancel.set_defaults(handler=cmd_tournament_steer, steer="cancel")
    t_pause = actions.add_parser(
        "pause", parents=[common], help="hold your tournament's next round back",
        description="Pause a running tournament you host: the round being played goes on to "
                    "its end; the next one is not dealt until `gaps tournament resume`.")
    t_pause.add_argument("code", type=arguments.tournament_code, help="the tournament's code")
    t_pause.set_defaults(handler=cmd_tournament_steer, steer="pause")
    t_resume = actions.add_parser(
        "resume", parents=[common], help="let your paused tournament go on",
        description="Resume a paused tournament: its next round is dealt when its break "
                    "ends, or at once if the break is over.")
    t_resume.add_argument("code", type=arguments.tournament_code, help="the tournament's code")
    t_resume.set_defaults(handler=cmd_tournament_steer, steer="resume")
    t_announce = actions.add_parser(
        "announce", parents=[common], help="say something to everyone in your tournament",
        description="Announce a text to every entrant and follower of a tournament you host; "
                    "those who follow it later see the last ones too.")
    t_announce.add_argument("code", type=arguments.tournament_code, help="the tournament's code")
    t_announce.add_argument("text", type=arguments.announcement,
                            help="what to say (at most 280 characters)")
    t_announce.set_defaults(handler=cmd_tournament_steer, steer="announce")
    t_arbiter = actions.add_parser(
        "arbiter", parents=[common], help="name an arbiter of your tournament",
        description="Name a player an arbiter of a tournament you host: they may seat "
                    "entrants at tables, get the deal sheets and enter the tables' results "
                    "(not start or cancel it).")
    t_arbiter.add_argument("code", type=arguments.tournament_code, help="the tournament's code")
    t_arbiter.add_argument("player", type=arguments.player_name, help="the player's name")
    t_arbiter.set_defaults(handler=cmd_tournament_steer, steer="arbiter")
    t_table = actions.add_parser(
        "table", parents=[common], help="seat an entrant at a table in the room",
        description="Seat an entrant at a table in the room (docs/tables.md), from the next "
                    "round dealt: they play the round's deal with real cards, from its deal "
                    "sheet, and the host or an arbiter enters their result. --off: back "
                    "online. For the host and the arbiters.")
    t_table.add_argument("code", type=arguments.tournament_code, help="the tournament's code")
    t_table.add_argument("player", type=arguments.player_name, help="the entrant's name")
    t_table.add_argument("--off", action="store_true", help="play online again instead")
    t_table.set_defaults(handler=cmd_tournament_steer, steer="table")
    t_enter = actions.add_parser(
        "enter", parents=[common], help="enter a table's result in a round",
        description="Enter the result of an entrant who played round N at a table: the cards "
                    "placed, the redeals used and the time; --won if every card was placed. "
                    "The server checks it against the rules and the round's time limit and "
                    "scores it as the rules do; entered again, it replaces the first. For the "
                    "host and the arbiters, until the tournament ends.")
    t_enter.add_argument("code", type=arguments.tournament_code, help="the tournament's code")
    t_enter.add_argument("--round", type=arguments.bounded(1, 20, "round"), metavar="N",
                         required=True, help="the round's number")
    t_enter.add_argument("player", type=arguments.player_name, help="the entrant's name")
    t_enter.add_argument("--placed", type=arguments.bounded(0, 48, "cards placed"),
                         required=True, metavar="P", help="the cards placed (0 to 48)")
    t_enter.add_argument("--redeals", type=arguments.bounded(0, 9, "redeals"), required=True,
                         metavar="R", help="the redeals used")
    t_enter.add_argument("--time", type=arguments.clock_time, required=True, metavar="MM:SS",
                         help="how long the game took, from the round's start")
    t_enter.add_argument("--won", action="store_true", help="every card was placed")
    t_enter.set_defaults(handler=cmd_tournament_enter)
    t_sheet = actions.add_parser(
        "sheet", parents=[common], help="a round's deal sheet for a table in the room",
        description="Print round N's deal sheet of a tournament you host: the layout to lay "
                    "out at a table and how to lay it out from a sorted deck; or save it as a "
                    "one-page PDF. The server gives it once the round has started.")
    t_sheet.add_argument("code", type=arguments.tournament_code, help="the tournament's code")
    t_sheet.add_argument("--round", type=arguments.bounded(1, 20, "round"), metavar="N",
                         required=True, help="the round's number")
    t_sheet.add_argument("--pdf", type=Path, metavar="FILE",
                         help="save it as a PDF there instead of printing it")
    t_sheet.add_argument("--paper", choices=tuple(PAPERS), default="a4",
                         help="the PDF's paper: a4 (default) or letter")
    t_sheet.set_defaults(handler=cmd_tournament_sheet)

    bot = commands.add_parser("bot", parents=[common], help="send bots to a match or tournament",
                              description="Join a match (or enter a tournament) with bot "
                                          "players; they play through the real protocol at a "
                                          "human-like pace.")
    target = bot.add_mutually_exclusive_group(required=True)
    target.add_argument("--join", type=arguments.match_code, metavar="CODE", dest="code",
                        help="the match's join code")
    target.add_argument("--tournament", type=arguments.tournament_code, metavar="CODE",
                        help="a tournament's code: the bots enter it and play every round")
    target.add_argument("--quick", choices=sorted(RULESETS), metavar="RULES",
                        help="the bots wait in the quick-match queue of these rules and race "
                             "the bots they are grouped with (when the server lets bots in)")
    bot.add_argument("--level", type=int, choices=(1, 2, 3, 4), default=2,
                     help="1 random, 2 greedy, 3 search, 4 solver (default 2)")
    bot.add_argument("--count", type=arguments.bounded(1, 16, "bots"), default=1, metavar="N",
                     help="how many bots (default 1)")
    bot.add_argument("--pace", type=arguments.pace, default=1.2, metavar="SECONDS",
                     help="average seconds per move (default 1.2; 0: as fast as it can)")
    bot.add_argument("--seed", type=int, default=None, help=argparse.SUPPRESS)
    bot.set_defaults(handler=cmd_bot)

    practice = commands.add_parser("practice", parents=[common], help="play offline",
                                   description="Play offline, with hints and undo.")
    practice.add_argument("--rules", default="classic", choices=sorted(RULESETS),
                          help="the ruleset (default classic)")
    practice.add_argument("--seed", type=arguments.seed, metavar="CODE",
                          help="play this deal again")
    practice.set_defaults(handler=cmd_practice)

    replay = commands.add_parser("replay", parents=[common],
                                 help="download a finished match's replay")
    replay.add_argument("code", type=arguments.match_code, help="the match's code")
    replay.add_argument("-o", "--output", metavar="FILE",
                        help="where to write it (default gaps-replay-CODE.json; - for stdout)")
    replay.set_defaults(handler=cmd_replay)

    check = commands.add_parser("verify", parents=[common],
                                help="check a replay file: every score, and its signature",
                                description="Replay every action from the revealed seed "
                                            "with the rules engine and compare every "
                                            "recorded number; check the server's signature "
                                            "(of any document it signs: a replay, a daily "
                                            "board). Exit 0 if the result holds and is signed "
                                            "by the server, 1 if it does not hold or its "
                                            "signature does not, 3 if it holds but is "
                                            "unsigned or its signature could not be checked.")
    check.add_argument("file", help="a replay file (from `gaps replay`); - for stdin")
    check.add_argument("--key", metavar="FILE",
                       help="the public key(s) to check the signature with: a PEM public key "
                            "or the server's /keys saved (default: the keys the server "
                            "publishes at /keys)")
    check.add_argument("--key-id", metavar="ID",
                       help="accept only a signature by this key (its id, as /keys lists it)")
    check.set_defaults(handler=cmd_verify)
    return parser


def _version() -> str:
    try:
        return version("gaps-arena")
    except PackageNotFoundError:
        return "dev"


# -- running -------------------------------------------------------------------------------


async def run_async(
    argv: Sequence[str] | None = None, *, frontend: Frontend = run_app,
    out: Console | None = None,
) -> int:
    """Run one ``gaps`` command; returns its exit code. Never raises (but for cancel)."""
    parser = build_parser()
    try:
        options = parser.parse_args(argv)
    except UsageError as error:
        return _fail(str(error), 2)
    except SystemExit as exit_:  # --help, --version
        return exit_.code if isinstance(exit_.code, int) else 2
    out = out or Console(file=sys.stdout, highlight=False, soft_wrap=True)
    try:
        context = Context(options, out, frontend)
        handler: Callable[[Context], Awaitable[int]] = options.handler
        return await handler(context)
    except CliError as error:
        return _fail(str(error), error.code)
    except ServerRefused as refusal:
        return _fail(refusal_words(refusal))
    except (ClientError, ConfigError) as error:
        return _fail(str(error))
    except OSError as error:
        return _fail(error.strerror or str(error))
    except Exception as error:  # a bug: still one line, and a way to report it
        return _fail(f"unexpected error ({type(error).__name__}: {error}); please report it")


def _fail(message: str, code: int = 1) -> int:
    print(f"gaps: {printable(message)}", file=sys.stderr)
    return code


def run(argv: Sequence[str] | None = None) -> int:
    try:
        return asyncio.run(run_async(argv))
    except KeyboardInterrupt:
        return _fail("interrupted", 130)


def main(argv: Sequence[str] | None = None) -> None:
    sys.exit(run(argv))


# -- account -----------------------------------------------------------------------------------


async def cmd_register(context: Context) -> int:
    server, name = context.server, context.options.name
    existing = context.config.account(server)
    again = existing is not None and existing.name.casefold() == name.casefold()
    if existing is not None and again:
        player = await _known(server, existing)
        if player is not None:  # the name is already this account's: nothing to do
            context.out.print(printable_text(
                f"You are already {player.name} (player #{player.id}) on "
                f"{server}."))
            return 0
    elif existing is not None and not context.options.force:
        raise CliError(
            f"you are already {existing.name} on {server}; `gaps register {name} --force` "
            f"replaces that account here ({existing.name}'s token is then forgotten)"
        )
    connection = await Connection.open(server, reconnect=False)
    try:
        reply = await connection.register(name)
    except ServerRefused as refusal:
        if again and refusal.code == "name_taken":
            raise CliError(
                f"{server} no longer knows this config's token for {name}, and that name "
                "is registered there: choose another one with "
                "`gaps register NAME --force`") from None
        raise
    finally:
        await connection.close()
    player = reply.player
    context.config.set_account(server, Account(player.name, reply.token, player.id))
    context.config.save()
    context.out.print(printable_text(
        f"Registered {player.name} (player #{player.id}) on {server}."))
    context.out.print(Text(f"Your token is saved in {context.config.path}; keep that file "
                           "private."))
    return 0


async def _known(server: str, account: Account) -> Player | None:
    """The player ``account``'s token authenticates as on ``server``, or None if the
    server no longer knows the token (its database was reset, say)."""
    try:
        connection = await Connection.open(server, token=account.token, reconnect=False)
    except ServerRefused as refusal:
        if refusal.code == "bad_token":
            return None
        raise
    try:
        return connection.player
    finally:
        await connection.close()


async def cmd_whoami(context: Context) -> int:
    connection = await context.connect()
    try:
        player = connection.player
    finally:
        await connection.close()
    context.out.print(printable_text(
        f"{player.name if player else None} (player #{player.id if player else None}) on "
        f"{context.server}"))
    return 0


# -- matches -----------------------------------------------------------------------------------


async def cmd_create(context: Context) -> int:
    options = context.options
    request: dict[str, Any] = {
        "ruleset": options.rules, "max_players": options.players,
        "time_limit_s": options.time, "win_by": options.win_by, "public": options.public,
    }
    if options.bots:
        request["bots"] = True
    if options.countdown is not None:
        request["countdown_s"] = options.countdown
    if options.seed is not None:
        request["seed"] = options.seed
    connection = await context.connect()
    try:
        reply = await connection.create_match(**request)
    except BaseException:
        await connection.close()
        raise
    code = printable(reply.match.code)
    out = context.out
    out.print(Text.assemble(("Match ", ""), (code, "bold"), (
        f" created: {options.rules}, {options.players} player(s), "
        f"{format_duration(options.time)}, win by {options.win_by}"
        f"{', public' if options.public else ''}{', unrated' if options.seed else ''}.", "")))
    out.print(Text(f"Others join with:   gaps join {code}"))
    if options.bots:
        out.print(Text(f"Race bots with:     gaps bot --join {code}"))
    if options.detach:
        await connection.close()
        out.print(Text(f"Take your seat with: gaps join {code}  (within the server's grace "
                       "period, 30 s by default, or the seat is given up)"))
        return 0
    return await _play(context, connection, reply)


async def cmd_join(context: Context) -> int:
    code = context.options.code
    connection = await context.connect()
    try:
        reply = await connection.join_match(code)
    except ServerRefused as refusal:
        await connection.close()
        if refusal.code in ("already_started", "match_full"):
            raise CliError(f"{refusal}: you can still watch it with `gaps watch {code}`") from None
        return await _over(context, code, refusal)
    except BaseException:
        await connection.close()
        raise
    return await _play(context, connection, reply)


async def cmd_watch(context: Context) -> int:
    code = context.options.code
    connection = await context.connect()
    try:
        reply = await connection.join_match(code, role="spectator")
    except ServerRefused as refusal:
        await connection.close()
        return await _over(context, code, refusal)
    except BaseException:
        await connection.close()
        raise
    # A player who watches the match they sit in watches as a spectator (the server
    # says so); their seat is `gaps join CODE`.
    return await _play(context, connection, reply)


async def _over(context: Context, code: str, refusal: ServerRefused) -> int:
    """A match over is joined by nobody: print its result, read from its replay (a
    daily challenge's is published once its day is over); any other refusal is said."""
    if refusal.code != "match_finished" or refusal.reply.status != "finished":
        raise CliError(str(refusal)) from None
    try:
        document = await http.replay(context.server, code)
    except (http.NotFound, http.Conflict):
        raise CliError(f"match {code.upper()} is over; its replay is not published yet "
                       "(a daily challenge's opens once its day is over)") from None
    context.out.print(replay_table(http.read_replay(document), you=_my_name(context)))
    context.out.print(printable_text(f"Match {code.upper()} is over. Its replay: "
                                     f"gaps replay {code.upper()}"))
    return 0


async def _open_screen(
    context: Context, connection: Connection, snapshot: MatchSnapshot, *,
    heading: str | None = None,
) -> MatchState:
    """Open the match screen on ``snapshot``; close the connection once it closes. A match
    gone from the server (or a connection that gave up) before its end is a failure."""
    state, _ = await _screen(context, connection, snapshot, heading=heading)
    return state


async def _screen(
    context: Context, connection: Connection, snapshot: MatchSnapshot, *,
    heading: str | None = None,
) -> tuple[MatchState, Rematch | None]:
    """``_open_screen``, and the rematch the player asked for on the ranking, if any."""
    app = MatchApp(connection, snapshot, heading=heading)
    try:
        await context.frontend(app)
    finally:
        await connection.close()
    if app.state.gone is not None and app.state.phase is not Phase.FINISHED:
        raise CliError(app.state.gone)
    return app.state, app.rematch


async def _play(
    context: Context, connection: Connection, snapshot: MatchSnapshot, *,
    heading: str | None = None,
) -> int:
    """Open the match screen; once it closes, leave the result in the terminal (and start
    the rematch asked for on the ranking screen, if any)."""
    state, rematch = await _screen(context, connection, snapshot, heading=heading)
    if state.phase is Phase.FINISHED and state.ranking is not None:
        context.out.print(ranking_table(state.ranking, state.you_id, title=f"Match {state.code}",
                                        par=state.par))
        if state.seed is None:
            context.out.print(printable_text(
                f"The seed stays secret for now. Replay: gaps replay {state.code}"))
        else:
            context.out.print(printable_text(
                f"Seed {state.seed}. Replay: gaps replay {state.code}"))
    else:
        _left(context, state)
    if rematch is not None:
        return await _rematch(context, state, rematch)
    return 0


#: Refusals of ``rematch`` after which the client creates the rematch itself: the server
#: no longer keeps the finished match, or does not know the request (an older server).
REMATCH_BY_HAND = frozenset({"no_such_match", "unknown_type"})


async def _rematch(context: Context, state: MatchState, rematch: Rematch) -> int:
    """Take a seat in the rematch of ``state``'s match and open it: the one offered, or a
    new one that the server offers to the others (``rematch``). If the server no longer
    has the finished match, a match with the same options is created (``create_match``),
    which the others join by its code."""
    same_seed = rematch is Rematch.SAME_DEAL
    what = "the same deal, unrated" if same_seed else "a new deal"
    connection = await context.connect()
    reply: RematchJoined | MatchCreated
    try:
        try:
            reply = await connection.rematch(state.code, same_seed=same_seed)
        except ServerRefused as refusal:
            if refusal.code not in REMATCH_BY_HAND:
                raise
            options = rematch_options(state, rematch)
            what = "the same deal, unrated" if "seed" in options else "a new deal"
            reply = await connection.create_match(**options)
            told = "Others join with:   gaps join"
        else:
            told = "The others were told; they may also join with:   gaps join"
    except BaseException:
        await connection.close()
        raise
    code = printable(reply.match.code)
    context.out.print(printable_text(f"Rematch of {state.code} ({what}): match {code}. "
                                     f"{told} {code}"))
    return await _play(context, connection, reply)


def _left(context: Context, state: MatchState) -> None:
    own, me = state.own, state.me
    if state.role == "player" and state.phase is Phase.RUNNING and (
            (own is not None and own.over) or (me is not None and me.finished)):
        reason = ((own.end_reason if own is not None else None)
                  or (me.end_reason if me is not None else None)
                  or (own.status if own is not None else "over"))
        score = own.score if own is not None else me.score if me is not None else None
        context.out.print(printable_text(
            f"Your game in match {state.code} is over ({reason}, score {score}); the others "
            f"still play. `gaps watch {state.code}` follows them; once it is over, "
            f"`gaps replay {state.code}` has the ranking."))
        return
    if state.role == "player" and state.phase in (Phase.LOBBY, Phase.COUNTDOWN, Phase.RUNNING):
        context.out.print(printable_text(
            f"You left match {state.code}; `gaps join {state.code}` takes your seat back (a "
            "running game ends if you stay away too long)."))


async def cmd_matches(context: Context) -> int:
    matches = await http.open_matches(context.server)
    out = context.out
    if not matches:
        out.print("No open public match right now. Start one: gaps create --public")
        return 0
    table = Table(title=printable_text(f"Open public matches on {context.server}"),
                  title_justify="left")
    for column in ("code", "rules", "players", "time", "win by", "rated"):
        table.add_column(column)
    for match in matches:  # every cell is the server's text: Text, never markup
        table.add_row(
            printable_text(match.code), printable_text(match.ruleset),
            printable_text(f"{match.players}/{match.max_players}"),
            Text(format_duration(match.time_limit_s)),
            printable_text(match.win_by), Text("yes" if match.rated else "no"),
        )
    out.print(table)
    out.print("Join one: gaps join CODE")
    return 0


# -- bots ----------------------------------------------------------------------------------------


async def cmd_bot(context: Context) -> int:
    options = context.options
    out = context.out

    def report(line: str) -> None:  # lines with the server's names and words
        out.print(printable_text(line))

    bot_options = BotOptions(level=options.level, count=options.count, pace_s=options.pace,
                             seed=options.seed)
    if options.tournament is not None:
        view, final = await run_tournament_bots(context.server, options.tournament,
                                                bot_options, context.config, report)
        print_final(out, final, view, None)
        return 0
    if options.quick is not None:
        state = await run_quick_bots(context.server, options.quick, bot_options,
                                     context.config, report)
    else:
        state = await run_bots(
            context.server, options.code, bot_options, context.config, report,
        )
    if state.phase is Phase.ABANDONED:
        raise CliError(f"match {state.code} was abandoned before it started")
    if state.ranking is not None:
        out.print(ranking_table(state.ranking, None, title=f"Match {state.code}"))
    return 0


# -- quick match and the daily challenge ------------------------------------------------------


async def cmd_play(context: Context) -> int:
    rules = context.options.rules
    out = context.out
    connection = await context.connect()
    matched = connection.quick_matched()
    try:
        queued = await connection.quick_match(rules)
        check_interrupted()
        waiting = queued.waiting
        out.print(f"Looking for opponents in {rules} ({waiting} player{'s' if waiting != 1 else ''}"
                  " waiting). Ctrl-C stops looking.")
        came = await _wait_matched(context, matched, rules,
                                   bot_after_s=context.options.bot_after)
        if came is None:  # nobody came in time: leave the queue, race a bot
            with contextlib.suppress(ClientError):
                await connection.quick_cancel()
            if not matched.done():
                matched.cancel()
                return await _race_a_bot(context, connection, rules)
            came = matched.result()  # matched as we gave up: play that match
        snapshot = came
    except asyncio.CancelledError:  # Ctrl-C: leave the queue and say so
        handled()
        with contextlib.suppress(ClientError):
            await connection.quick_cancel()
        await connection.close()
        if matched.done() and not matched.cancelled() and matched.exception() is None:
            code = matched.result().match.code
            out.print(printable_text(f"You were matched just before (match {code}): "
                                     f"`gaps join {code}` takes your seat."))
        else:
            out.print("Stopped looking for a match.")
        return 0
    except BaseException:
        await connection.close()
        raise
    finally:
        matched.cancel()  # no longer listening (a no-op once matched)
    you_id = connection.player.id if connection.player else None
    others = [f"{p.name}{bot_mark(p)}" for p in snapshot.players if p.player_id != you_id]
    out.print(Text.assemble(("Matched", "bold #4fb86b"), printable(
        f" with {', '.join(others) or 'nobody'} in match {snapshot.match.code}.")))
    return await _play(context, connection, snapshot, heading="quick match")


#: After this long in the queue, the waiting line offers a bot.
OFFER_BOT_AFTER_S = 30


async def _wait_matched(
    context: Context, matched: asyncio.Future[Matched], rules: str, *,
    bot_after_s: int | None = None,
) -> Matched | None:
    """Wait for the ``matched`` snapshot with a spinner that counts the seconds; None
    once ``bot_after_s`` have passed without it."""
    started = asyncio.get_running_loop().time()
    with context.out.status(f"Looking for opponents in {rules}…", spinner="dots") as status:
        while True:
            check_interrupted()
            try:
                return await asyncio.wait_for(asyncio.shield(matched), 1.0)
            except TimeoutError:
                waited = asyncio.get_running_loop().time() - started
                if bot_after_s is not None and waited >= bot_after_s:
                    return None
                line = f"Looking for opponents in {rules}… {format_duration(waited)}"
                if bot_after_s is not None:
                    line += f" (a bot at {format_duration(bot_after_s)})"
                elif waited >= OFFER_BOT_AFTER_S:
                    line += (f" · nobody yet: Ctrl-C, then `gaps play{_rules_option(rules)}"
                             " --bot-after 30s` races a bot if nobody comes")
                status.update(line)


async def _race_a_bot(context: Context, connection: Connection, rules: str) -> int:
    """Create a 2-seat match that lets a bot sit and send a level-2 bot into it (in this
    process); the match screen opens as for any race (press r to start)."""
    try:
        reply = await connection.create_match(ruleset=rules, max_players=2, win_by="time",
                                              time_limit_s=600, public=False, bots=True)
    except BaseException:
        await connection.close()
        raise
    code = reply.match.code
    context.out.print(printable_text(
        f"Nobody came: racing a bot in match {code} (press r when you are ready)."))
    said: list[str] = []  # the bot's lines would scribble over the screen: kept, not shown
    bot = asyncio.create_task(run_bots(context.server, code, BotOptions(level=2),
                                       context.config, said.append))
    try:
        return await _play(context, connection, reply)
    finally:
        bot.cancel()
        # The bot leaves with the player; how its run ended is of no concern to them.
        with contextlib.suppress(asyncio.CancelledError, Exception):
            await bot


async def cmd_daily(context: Context) -> int:
    options = context.options
    if options.board:
        return await _daily_board(context, options.rules, options.day)
    if options.day is not None:
        raise CliError("--day goes with --board: only today's challenge can be played", 2)
    connection = await context.connect()
    try:
        snapshot = await connection.daily(options.rules)
    except ServerRefused as refusal:
        await connection.close()
        if refusal.code == "daily_already_played":
            raise CliError(f"{refusal}: one attempt a day. See the board: gaps daily --board"
                           f"{_rules_option(options.rules)}") from None
        raise
    except BaseException:
        await connection.close()
        raise
    # The server's day, and whether this attempt is ranked.
    attempt = snapshot.daily
    day = attempt.day.isoformat()
    unranked = not attempt.ranked
    state = await _open_screen(context, connection, snapshot,
                               heading=f"daily challenge {day}{' (unranked)' if unranked else ''}")
    out = context.out
    me = state.me
    if state.phase is Phase.FINISHED:
        out.print(Text.assemble(
            (f"Daily challenge ({options.rules}, {day})", "bold"),
            printable(f": score {me.score if me else None}, "
                      f"placed {me.placed if me else None}/48, "
                      f"{me.end_reason if me else None} at "
                      f"{format_ms(me.finish_ms if me else None)}.")))
        board: DailyBoard | None
        try:
            board = await http.daily_board(context.server, options.rules, day)
        except ClientError:  # the board is a bonus: the game is over and stored
            board = None
        entries = board.entries if board is not None else []
        mine = [e for e in entries if e.player_id == state.you_id]
        if unranked:
            out.print(Text.assemble(("Unranked", "bold yellow"), printable(
                f": {attempt.reason or 'your result is not on the board'}.")))
        elif mine:
            out.print(printable_text(
                f"You are #{mine[0].rank} of {len(entries)} on today's "
                f"board: gaps daily --board{_rules_option(options.rules)}"))
        if board is not None:
            gap = gap_words(me.score if me else None, board.par)
            out.print(printable_text(f"Today's deal: {daily_par_note(board)}"
                                     f"{f'; your score is {gap}' if gap else ''}."))
        out.print(printable_text(f"The deal stays secret until the day is over (UTC); then: "
                                 f"gaps replay {state.code}"))
    else:
        _left(context, state)
    return 0


def _rules_option(rules: str) -> str:
    return "" if rules == "classic" else f" --rules {rules}"


async def _daily_board(context: Context, rules: str, day: str | None) -> int:
    board = await http.daily_board(context.server, rules, day)
    if not board.entries:
        context.out.print(printable_text(empty_daily_note(board, rules)))
        return 0
    context.out.print(daily_table(board, you=_my_name(context)))
    return 0


def _my_name(context: Context) -> str | None:
    """The user's name on this server, from the config (no request), if registered."""
    account = context.config.account(context.server)
    return account.name if account is not None else None


# -- leaderboards and ratings ----------------------------------------------------------------


async def cmd_leaderboard(context: Context) -> int:
    options = context.options
    if options.by == "rating" and (options.period != "all" or options.day is not None):
        # The server keeps one rating per player, not one per period: it would answer
        # with today's ratings, as if the period were all time.
        raise CliError("leaderboard: a rating has no period: --by rating shows today's "
                       "ratings; --period and --day go with --by score, time or wins", 2)
    around = options.around
    if options.around_me:
        around = context.account().name
    try:
        reply = await http.leaderboard(
            context.server, options.rules, by=options.by, period=options.period,
            day=options.day, limit=options.limit, cursor=options.cursor, player=around)
    except http.NotFound as missing:
        raise CliError(str(missing)) from None
    except http.BadRequest as refusal:
        raise CliError(f"the server refused this page: {refusal}") from None
    out = context.out
    you = _my_name(context)
    if around is not None and not isinstance(reply.rank, int):
        who = "you have" if options.around_me else f"{around} has"
        out.print(Text.assemble((f"{board_title(reply)}: ", "bold"),
                                f"{who} no row on this board yet (rated games make one)."))
        return 0
    if not reply.entries:
        out.print(empty_board_text(reply) if not options.cursor
                  else Text("No more rows: that was the last page."))
        return 0
    out.print(leaderboard_table(reply, you=you, focus=around))
    if around is not None:
        who = "You are" if options.around_me else f"{around} is"
        out.print(printable_text(f"{who} #{reply.rank} on this board."))
    elif isinstance(reply.next_cursor, str) and reply.next_cursor:
        out.print(printable_text(
            "Next page: " + " ".join(_board_argv(options, reply.next_cursor))))
    return 0


def _board_argv(options: argparse.Namespace, cursor: str) -> list[str]:
    argv = ["gaps", "leaderboard"]
    if options.rules != "classic":
        argv += ["--rules", options.rules]
    if options.by != "score":
        argv += ["--by", options.by]
    if options.period != "all":
        argv += ["--period", options.period]
    if options.day is not None:
        argv += ["--day", options.day]
    if options.limit != 20:
        argv += ["--limit", str(options.limit)]
    if options.server is not None:
        argv += ["--server", options.server]
    return [*argv, "--cursor", cursor]


async def cmd_rating(context: Context) -> int:
    name = context.options.name or context.account().name
    try:
        reply = await http.rating(context.server, name)
    except http.NotFound as missing:
        raise CliError(str(missing)) from None
    out = context.out
    if not reply.ratings:
        out.print(Text.assemble((printable(reply.player.name), "bold"),
                                " has no rating yet: ratings come from rated matches of two or "
                                "more players (gaps play)."))
        return 0
    out.print(ratings_table(reply))
    history = reply.history
    if history and context.options.history:
        out.print(history_table(history, limit=context.options.history))
    return 0


# -- tournaments ----------------------------------------------------------------------------------


async def cmd_tournament_create(context: Context) -> int:
    options = context.options
    request: dict[str, Any] = {
        "name": options.name, "ruleset": options.rules, "rounds": options.rounds,
        "max_players": options.players, "round_time_limit_s": options.round_time,
    }
    if options.bots:
        request["bots"] = True
    if options.winnable:
        request["deals"] = "winnable"
    if options.countdown is not None:
        request["countdown_s"] = options.countdown
    if options.break_s is not None:
        request["break_s"] = options.break_s
    if options.late_entry_until is not None:
        if options.late_entry_until > options.rounds:
            raise CliError(f"tournament create: --late-entry-until {options.late_entry_until} "
                           f"is past its {options.rounds} round(s)", 2)
        request["late_entry_until_round"] = options.late_entry_until
    start_at: datetime | None = options.start_at
    now = datetime.now(UTC)
    if start_at is not None and start_at <= now:
        raise CliError(f"tournament create: --start-at {local_time(format_time(start_at))} has "
                       "passed: a tournament starts by itself at a time to come", 2)
    if options.start_in is not None:
        start_at = now + timedelta(seconds=options.start_in)
    if start_at is not None:
        request["start_at"] = format_time(start_at)
        request["if_empty"] = options.if_empty
    elif options.if_empty != "cancel":
        raise CliError("tournament create: --if-empty says what a start time does: give "
                       "--start-at or --start-in too", 2)
    connection = await context.connect()
    try:
        view = (await connection.tournament_create(**request)).tournament
        code = view.code
        shown = printable(code)
        out = context.out
        out.print(Text.assemble("Tournament ", (printable(view.name), "bold"), " (",
                                (shown, "bold"), printable(
                                    f") created: {view.ruleset}, {view.rounds} round(s) "
                                    f"of {format_duration(view.round_time_limit_s)}, up to "
                                    f"{view.max_players} entrants.")))
        if not view.deals_ready:
            with out.status(f"Drawing {view.rounds} winnable deal(s): the solver proves "
                            "each one…", spinner="dots"):
                view = await deals_committed(connection, view)
        out.print(deals_report(view).line)
        if view.start_at:
            out.print(printable_text(f"It starts by itself at {local_time(view.start_at)}."))
        else:
            out.print(Text(f"Start it when everyone is in:  gaps tournament start {shown}"))
        out.print(Text(f"Players enter with:             gaps tournament join {shown}"))
        if options.bots:
            out.print(Text(f"Bots enter with:                gaps bot --tournament {shown}"))
        if not options.join:
            return 0
        reply = await connection.tournament_join(code)
        out.print(intro(reply.tournament))
        return await follow(connection, reply.tournament, frontend=context.frontend, out=out)
    finally:
        await connection.close()


async def cmd_tournament_join(context: Context) -> int:
    code = context.options.code
    connection = await context.connect()
    try:
        try:
            reply = await connection.tournament_join(code)
        except ServerRefused as refusal:
            if refusal.code == "already_started":
                raise CliError(f"{refusal}: only its entrants play it; see how it goes with "
                               f"`gaps tournament standings {code}`") from None
            if refusal.code == "tournament_finished":
                raise CliError(f"{refusal}; its final standings: "
                               f"`gaps tournament standings {code}`") from None
            if refusal.code == "removed":
                raise CliError(f"the host removed you from tournament {code.upper()}: "
                               f"{refusal.reason}") from None
            raise
        view = reply.tournament
        out = context.out
        out.print(intro(view))
        if view.status == "open":
            out.print("You are in. Each round opens the match screen by itself; Ctrl-C "
                      "stops following (you stay entered).")
        return await follow(connection, view, frontend=context.frontend, out=out)
    finally:
        await connection.close()


async def cmd_tournament_list(context: Context) -> int:
    status = context.options.status
    views = await http.tournaments(context.server, status)
    out = context.out
    if not views:
        out.print({"active": "No open or running tournament right now. Create one: gaps "
                             "tournament create",
                   "ended": "No tournament has ended yet.",
                   "all": "No tournament yet. Create one: gaps tournament create"}[status])
        return 0
    title = {"active": "Tournaments", "ended": "Ended tournaments", "all": "All tournaments"}
    out.print(tournaments_table(views, title=f"{title[status]} on {context.server}"))
    if status != "ended":
        out.print("Enter an open one: gaps tournament join CODE")
    if status == "active":
        out.print("The finished and cancelled ones: gaps tournament list --ended")
    else:
        out.print("Save one's results: gaps tournament export CODE")
    return 0


async def cmd_tournament_export(context: Context) -> int:
    options = context.options
    code = options.code
    if options.format == "ics":
        if options.round or options.rounds:
            raise CliError("tournament export: --format ics is the calendar file: it has no "
                           "rounds", 2)
        name, saved = ".ics", f"{code}.ics"
    elif options.round:
        name = f"rounds/{options.round}.{options.format}"
        saved = f"{code}-round-{options.round}.{options.format}"
    else:
        part = "rounds" if options.rounds else "standings"
        name, saved = f"{part}.{options.format}", f"{code}-{part}.{options.format}"
    try:
        data = await http.tournament_file(context.server, code, name)
    except http.NotFound as missing:
        raise CliError(str(missing)) from None
    target = options.output or saved
    if target == "-":
        sys.stdout.buffer.write(data)
        sys.stdout.flush()
        return 0
    try:
        Path(target).write_bytes(data)
    except OSError as error:
        raise CliError(f"cannot write {target}: {error.strerror or error}", 2) from None
    what = "calendar" if options.format == "ics" else (
        f"round {options.round}" if options.round else
        "rounds" if options.rounds else "standings")
    context.out.print(printable_text(f"Saved tournament {code}'s {what} to {target} "
                                     f"({len(data)} bytes)."))
    return 0


async def cmd_tournament_standings(context: Context) -> int:
    code = context.options.code
    try:
        reply = await http.standings(context.server, code)
    except http.NotFound as missing:
        raise CliError(str(missing)) from None
    view = reply.tournament
    rows = reply.standings
    out = context.out
    out.print(Text.assemble(intro(view), "  ", tournament_status(view)))
    for announcement in view.announcements:
        out.print(announcement_text(announcement))
    deals = deals_report(view)
    out.print(deals.line)
    if deals.mismatches:
        out.print(alarm(deals.mismatches))
    exit_code = 1 if deals.mismatches else 0
    if not rows:
        out.print(f"Nobody has entered yet: gaps tournament join {code}")
        return exit_code
    you = _my_name(context)
    if view.status == "finished":
        print_final(out, tournament_end(rows), view, you)
        return exit_code
    if view.status == "open":
        still_in = [row for row in rows if not row.removed]
        names = ", ".join(f"{row.name}{bot_mark(row)}" for row in still_in) or "nobody"
        out.print(printable_text(
            f"Entrants ({len(still_in)}/{view.max_players}): {names}"))
        for row in rows:
            if row.removed:
                out.print(printable_text(
                    f"Removed by the host: {row.name} ({row.removed_reason})"))
        if not view.start_at:
            out.print(f"The host starts it with: gaps tournament start {code}")
        return exit_code
    played = max((row.rounds_played for row in rows), default=0)
    out.print(standings_table(rows, you=you, title=f"Standings after {played} of "
                                                   f"{view.rounds} round(s)"))
    return exit_code


async def cmd_tournament_start(context: Context) -> int:
    code = context.options.code
    connection = await context.connect()
    try:
        try:
            view = (await connection.tournament_start(code)).tournament
        except ServerRefused as refusal:
            if refusal.code == "bad_message":  # no entrants
                raise CliError(f"{refusal}: players enter with `gaps tournament join {code}`"
                               ) from None
            raise
    finally:
        await connection.close()
    entrants = len(view.entrants)
    context.out.print(Text.assemble(
        "Tournament ", (printable(view.name), "bold"),
        printable(f" ({code}) started: {view.rounds} round(s), {entrants} "
                  f"entrant{'s' if entrants != 1 else ''}. The rounds follow by themselves.")))
    return 0


async def cmd_tournament_remove(context: Context) -> int:
    options = context.options
    connection = await context.connect()
    try:
        await connection.request(RemoveEntrant(code=options.code.upper(),
                                               player=options.player, reason=options.reason))
    finally:
        await connection.close()
    context.out.print(printable_text(
        f"{options.player} was removed from tournament {options.code.upper()}: "
        f"{options.reason}"))
    return 0


#: What the host's commands send and say once done.
STEERS: Final[dict[str, tuple[Callable[[argparse.Namespace], ClientMessage],
                              Callable[[argparse.Namespace], str]]]] = {
    "reinstate": (lambda o: ReinstateEntrant(code=o.code, player=o.player),
                  lambda o: f"{o.player} is back in tournament {o.code}: they play from the "
                            "next round dealt."),
    "cancel": (lambda o: CancelTournament(code=o.code, reason=o.reason),
               lambda o: f"Tournament {o.code} was cancelled: {o.reason}"),
    "pause": (lambda o: PauseTournament(code=o.code),
              lambda o: f"Tournament {o.code} is paused: no round is dealt until "
                        f"`gaps tournament resume {o.code}`."),
    "resume": (lambda o: ResumeTournament(code=o.code),
               lambda o: f"Tournament {o.code} goes on: its next round is dealt after the "
                         "break."),
    "announce": (lambda o: Announce(code=o.code, text=o.text),
                 lambda o: f"Announced to tournament {o.code}: {o.text}"),
    "arbiter": (lambda o: NameArbiter(code=o.code, player=o.player),
                lambda o: f"{o.player} is an arbiter of tournament {o.code}: they seat "
                          "entrants at tables, get the deal sheets and enter results."),
    "table": (lambda o: SetTable(code=o.code, player=o.player, at_table=not o.off),
              lambda o: f"{o.player} plays {'online' if o.off else 'at a table'} from the "
                        f"next round of tournament {o.code}."),
}


async def cmd_tournament_enter(context: Context) -> int:
    """A table's result, entered; what the server scored it, and the standings if its
    round is counted."""
    options = context.options
    connection = await context.connect()
    try:
        reply = expect(await connection.request(EnterTableResult(
            code=options.code, round=options.round, player=options.player,
            placed=options.placed, redeals=options.redeals, finish_ms=options.time,
            won=options.won)), Standings, "tournament_enter_result")
    finally:
        await connection.close()
    out = context.out
    results = reply.entered_results if isinstance(reply.entered_results, list) else []
    entered = [row for row in results
               if row.round == options.round and row.name.lower() == options.player.lower()]
    if entered:
        out.print(entered_line(entered[0]))
    rows = reply.standings
    if rows and any(row.rounds_played for row in rows):
        out.print(standings_table(rows, you=_my_name(context),
                                  title=f"Standings of {reply.tournament.code}"))
    return 0


async def cmd_tournament_sheet(context: Context) -> int:
    options = context.options
    connection = await context.connect()
    try:
        await fetch_and_write_sheet(connection, options.code, options.round, out=context.out,
                                    pdf=options.pdf, paper=options.paper)
    finally:
        await connection.close()
    return 0


async def cmd_tournament_steer(context: Context) -> int:
    """One of the host's commands: reinstate, cancel, pause, resume, announce; and the
    host's or an arbiter's: arbiter, table."""
    options = context.options
    steer, said = STEERS[options.steer]
    connection = await context.connect()
    try:
        await connection.request(steer(options))
    finally:
        await connection.close()
    context.out.print(printable_text(said(options)))
    return 0


# -- practice ------------------------------------------------------------------------------------


async def cmd_practice(context: Context) -> int:
    options = context.options
    seed = Seed.parse(options.seed) if options.seed else None
    session = PracticeSession(seed, options.rules)
    records = Records.load()
    app = PracticeApp(session, records=records)
    await context.frontend(app)
    final = app.session
    game = final.game
    context.out.print(f"Practice deal {final.share_code} ({game.ruleset.name}): {game.result()}, "
                      f"score {game.score}, placed {game.placed}/48, {game.moves_made} moves.")
    context.out.print(f"Play it again: gaps practice --rules {game.ruleset.name} "
                      f"--seed {final.share_code}")
    context.out.print(f"Your {game.ruleset.name} practice record: "
                      f"{records.of(game.ruleset.name)} (kept in {records.path})")
    return 0


# -- replays ---------------------------------------------------------------------------------------


async def cmd_replay(context: Context) -> int:
    code = context.options.code
    try:
        document = await http.replay(context.server, code)
    except http.NotFound:
        raise CliError(f"no match has code {code} on {context.server}") from None
    except http.Conflict as refusal:  # the server says why: not over, or a daily's seed
        raise CliError(str(refusal)) from None
    text = json.dumps(document, indent=2, ensure_ascii=False) + "\n"
    target = context.options.output or f"gaps-replay-{code}.json"
    if target == "-":
        sys.stdout.write(text)
        return 0
    Path(target).write_text(text, encoding="utf-8")
    replay = http.read_replay(document)
    players = replay.players
    actions = sum(len(player.actions) for player in players)
    context.out.print(replay_table(replay, you=_my_name(context)))
    context.out.print(printable_text(f"Saved the replay of match {code} ({len(players)} "
                                     f"player(s), {actions} actions) to {target}."))
    context.out.print(printable_text(f"Check every score: gaps verify {target}"))
    return 0


async def cmd_verify(context: Context) -> int:
    name = context.options.file
    try:
        raw = sys.stdin.read() if name == "-" else Path(name).read_text(encoding="utf-8")
    except OSError as error:
        raise CliError(f"cannot read {name}: {error.strerror or error}", 2) from None
    except UnicodeDecodeError:
        raise CliError(f"{name} is not text: expected a JSON replay", 2) from None
    try:
        document = json.loads(raw)
    except ValueError as error:
        raise CliError(f"{name} is not JSON: {error}", 2) from None
    except RecursionError:  # json.loads recurses once per nested array or object
        raise CliError(f"{name} is not JSON: nested too deep", 2) from None
    signature, source = await _check_signature(context, document, name)
    replay = not is_signed(document) or (
        isinstance(document, dict) and document.get("format") == REPLAY_FORMAT)
    holds = True
    if replay:
        report = verify(document)
        print_report(context.out, report)
        holds = report.holds
    else:  # another signed document: a daily board, an export
        kind = document.get("format")
        kind = kind[:40] if isinstance(kind, str) else "signed"
        context.out.print(printable_text(
            f"A {kind} document: its signature is checked; only replays have their content "
            "replayed."))
    print_signature(context.out, signature, source)
    if not holds or signature.refused:
        return 1
    return 0 if signature.verdict is Verdict.HOLDS else 3


async def _check_signature(
    context: Context, document: Any, name: str
) -> tuple[SignatureCheck, str]:
    """The document's signature checked with the keys of --key, else the server's; and
    where the keys came from."""
    options = context.options
    if not is_signed(document):
        return check_signature(document, {}), ""
    if options.key:
        try:
            keys = keys_from_file(Path(options.key).read_bytes())
        except OSError as error:
            raise CliError(f"cannot read {options.key}: {error.strerror or error}", 2) from None
        except BadKeys as error:
            raise CliError(f"{options.key} holds no key to check {name} with: {error}", 2) from None
        return check_signature(document, keys, only=options.key_id), f"from {options.key}"
    server = context.server
    try:
        keys = keys_from_listing(await http.signing_keys(server))
    except (ClientError, BadKeys) as error:
        return unchecked(document, f"the keys of {server} could not be read: {error}"), ""
    return check_signature(document, keys, only=options.key_id), f"published by {server}"


def print_report(out: Console, report: Report) -> None:
    out.print(Text.assemble(("Match ", ""), (printable(report.code), "bold"),
                            printable(f" · {report.ruleset} · seed {report.seed}")))
    for check in report.players:  # names from the file: whoever wrote it chose them
        out.print(printable_text(
            f"  {check.rank if check.rank is not None else '?':>2}. {check.name}"
            f"{bot_mark(check)}: "
            f"{check.actions} actions replayed → score {check.score}, placed "
            f"{check.placed}/48, {check.redeals} redeal(s), {check.moves} moves"
            f"{', won' if check.won else ''}"))
    if report.holds:
        out.print(Text("✓ The recorded result holds: the seed matches its commitment and "
                       "every score, total and rank replays exactly.", style="bold green"))
        return
    count = len(report.discrepancies)
    out.print(Text(f"✗ The recorded result does NOT hold ({count} discrepanc"
                   f"{'y' if count == 1 else 'ies'}):", style="bold red"))
    for line in report.discrepancies:
        out.print(printable_text(f"  - {line}"))


def print_signature(out: Console, check: SignatureCheck, source: str) -> None:
    """Whether the server signed the document as it is, and with which key."""
    key = printable(check.key_id or "?")
    if check.verdict is Verdict.HOLDS:
        assert check.key is not None
        retired = (f", retired since {check.key.retired_at}: what it signed before still holds"
                   if check.key.status == "retired" else "")
        out.print(Text.assemble(
            ("✓ The signature holds: ", "bold green"),
            printable(f"signed by key {key}{retired}, {source}; the document is exactly as "
                      "the server signed it.")))
    elif check.verdict is Verdict.UNSIGNED:
        out.print(Text.assemble(
            ("! Unsigned: ", "bold yellow"),
            "this document proves only its own consistency, not that the server published "
            "it: anyone can write a consistent one (its times scaled, its ranks swapped). "
            "A signed copy: gaps replay CODE."))
    elif check.verdict is Verdict.UNCHECKED:
        out.print(Text.assemble(
            ("! Not checked: ", "bold yellow"),
            printable(f"signed by key {key}, but {check.detail}. Give the key: --key FILE (a "
                      "PEM public key, or the server's /keys saved)."),
            " Until then it proves only its own consistency."))
    else:
        out.print(Text.assemble(("✗ The signature does NOT hold: ", "bold red"),
                                printable(f"{check.detail}.")))
