"""``gaps``: the command line. Every subcommand, its arguments, and its errors.

Every failure ends as one line on stderr (``gaps: ...``) and an exit code, never a
traceback: 1 when something went wrong (the server refused, could not be reached, a
replay does not hold), 2 for a usage error (bad arguments, a file that cannot be read).
"""

from __future__ import annotations

import argparse
import asyncio
import json
import sys
from collections.abc import Awaitable, Callable, Mapping, Sequence
from dataclasses import dataclass
from importlib.metadata import PackageNotFoundError, version
from pathlib import Path
from typing import Any

from rich.console import Console
from rich.table import Table
from rich.text import Text
from textual.app import App

from client_cli import http
from client_cli.bot import BotOptions, run_bots
from client_cli.config import Account, Config, ConfigError
from client_cli.connection import ClientError, Connection, ServerRefused
from client_cli.duration import DurationError, format_duration, format_ms, parse_duration
from client_cli.match_state import Phase
from client_cli.practice import PracticeApp, PracticeSession
from client_cli.screen import MatchApp
from client_cli.verify import Report, verify
from gaps import RULESETS, NotationError, Seed

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
    frontend: Frontend
    _config: Config | None = None

    @property
    def config(self) -> Config:
        """The config file, read when a command first needs it (verify never does)."""
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
                    "register again with `gaps register NAME --force`"
                ) from None
            raise


# -- argument types -----------------------------------------------------------------------


def _duration(text: str) -> int:
    try:
        return parse_duration(text)
    except DurationError as error:
        raise argparse.ArgumentTypeError(str(error)) from None


def _countdown(text: str) -> int:
    return 0 if text.strip() in ("0", "0s") else _duration(text)


def _pace(text: str) -> float:
    cleaned = text.strip().lower().removesuffix("s")
    try:
        value = float(cleaned)
    except ValueError:
        raise argparse.ArgumentTypeError(
            f"{text!r} is not a pace: expected seconds per move, like 1.5 or 0"
        ) from None
    if not 0 <= value <= 600:
        raise argparse.ArgumentTypeError(f"{text!r} is not a pace: expected 0 to 600 seconds")
    return value


def _bounded(low: int, high: int, what: str) -> Callable[[str], int]:
    def parse(text: str) -> int:
        try:
            value = int(text)
        except ValueError:
            raise argparse.ArgumentTypeError(f"{text!r} is not a number of {what}") from None
        if not low <= value <= high:
            raise argparse.ArgumentTypeError(f"{value} {what} is not in {low}..{high}")
        return value

    return parse


def _seed(text: str) -> str:
    try:
        return str(Seed.parse(text))
    except NotationError as error:
        raise argparse.ArgumentTypeError(str(error)) from None


def _code(text: str) -> str:
    code = text.strip().upper()
    if not code or not code.isalnum():
        raise argparse.ArgumentTypeError(f"{text!r} is not a match code (like K7QX2M)")
    return code


# -- the parser --------------------------------------------------------------------------------


def build_parser() -> argparse.ArgumentParser:
    common = argparse.ArgumentParser(add_help=False)
    common.add_argument("--server", metavar="URL",
                        help="the server, like ws://HOST:8765 (default: $GAPS_SERVER, then the "
                             "server you registered on, then ws://127.0.0.1:8765)")
    parser = argparse.ArgumentParser(
        prog="gaps", description="Gaps Arena from the terminal: race people and bots at Gaps.",
        epilog="Start with `gaps register NAME`, then `gaps create` or `gaps practice`. "
               "See docs/client.md.",
    )
    parser.add_argument("--version", action="version", version=f"%(prog)s {_version()}")
    commands = parser.add_subparsers(dest="command", metavar="COMMAND", required=True)

    register = commands.add_parser("register", parents=[common], help="create your player",
                                   description="Create a player on the server and keep its "
                                               "token in your config.")
    register.add_argument("name", help="2-24 letters, digits, _ - or .")
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
    create.add_argument("--players", type=_bounded(1, 16, "players"), default=2, metavar="N",
                        help="seats, 1-16 (default 2)")
    create.add_argument("--time", type=_duration, default=600, metavar="DURATION",
                        help="the match clock, like 10m, 90s, 1h (default 10m)")
    create.add_argument("--win-by", choices=("time", "score"), default="time",
                        help="time: the fastest winner; score: the best score (default time)")
    create.add_argument("--public", action="store_true", help="list it in `gaps matches`")
    create.add_argument("--seed", type=_seed, metavar="CODE",
                        help="deal this share code (the match is then unrated)")
    create.add_argument("--countdown", type=_countdown, metavar="DURATION",
                        help="countdown before the deal (default: the server's)")
    create.add_argument("--detach", action="store_true",
                        help="only create it and print the code; `gaps join CODE` takes "
                             "your seat back")
    create.set_defaults(handler=cmd_create)

    join = commands.add_parser("join", parents=[common], help="join a match by its code")
    join.add_argument("code", type=_code, help="the match's join code")
    join.set_defaults(handler=cmd_join)

    matches = commands.add_parser("matches", parents=[common], help="list open public matches")
    matches.set_defaults(handler=cmd_matches)

    watch = commands.add_parser("watch", parents=[common], help="watch a match as a spectator")
    watch.add_argument("code", type=_code, help="the match's join code")
    watch.set_defaults(handler=cmd_watch)

    bot = commands.add_parser("bot", parents=[common], help="send bots to race in a match",
                              description="Join a match with bot players; they play through "
                                          "the real protocol at a human-like pace.")
    bot.add_argument("--join", type=_code, required=True, metavar="CODE", dest="code",
                     help="the match's join code")
    bot.add_argument("--level", type=int, choices=(1, 2, 3), default=2,
                     help="1 random, 2 greedy, 3 search (default 2)")
    bot.add_argument("--count", type=_bounded(1, 16, "bots"), default=1, metavar="N",
                     help="how many bots (default 1)")
    bot.add_argument("--pace", type=_pace, default=1.2, metavar="SECONDS",
                     help="average seconds per move (default 1.2; 0: as fast as it can)")
    bot.add_argument("--seed", type=int, default=None, help=argparse.SUPPRESS)
    bot.set_defaults(handler=cmd_bot)

    practice = commands.add_parser("practice", parents=[common], help="play offline",
                                   description="Play offline, with hints and undo.")
    practice.add_argument("--rules", default="classic", choices=sorted(RULESETS),
                          help="the ruleset (default classic)")
    practice.add_argument("--seed", type=_seed, metavar="CODE", help="play this deal again")
    practice.set_defaults(handler=cmd_practice)

    replay = commands.add_parser("replay", parents=[common],
                                 help="download a finished match's replay")
    replay.add_argument("code", type=_code, help="the match's code")
    replay.add_argument("-o", "--output", metavar="FILE",
                        help="where to write it (default gaps-replay-CODE.json; - for stdout)")
    replay.set_defaults(handler=cmd_replay)

    check = commands.add_parser("verify", parents=[common],
                                help="recompute every score of a replay file",
                                description="Replay every action from the revealed seed "
                                            "with the rules engine and compare every "
                                            "recorded number. Exit 0 if the result holds, 1 "
                                            "if not.")
    check.add_argument("file", help="a replay file (from `gaps replay`); - for stdin")
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
    except SystemExit as exit_:
        return exit_.code if isinstance(exit_.code, int) else 2
    out = out or Console(file=sys.stdout, highlight=False, soft_wrap=True)
    try:
        context = Context(options, out, frontend)
        handler: Callable[[Context], Awaitable[int]] = options.handler
        return await handler(context)
    except CliError as error:
        return _fail(str(error), error.code)
    except ServerRefused as refusal:
        return _fail(str(refusal))
    except (ClientError, ConfigError) as error:
        return _fail(str(error))
    except OSError as error:
        return _fail(error.strerror or str(error))
    except Exception as error:  # a bug: still one line, and a way to report it
        return _fail(f"unexpected error ({type(error).__name__}: {error}); please report it")


def _fail(message: str, code: int = 1) -> int:
    print(f"gaps: {message}", file=sys.stderr)
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
    if existing is not None and not context.options.force:
        raise CliError(
            f"you are already {existing.name} on {server}; `gaps register {name} --force` "
            f"replaces that account here (its token is then forgotten)"
        )
    connection = await Connection.open(server, reconnect=False)
    try:
        reply = await connection.register(name)
    finally:
        await connection.close()
    player = reply["player"]
    context.config.set_account(server, Account(player["name"], reply["token"], player["id"]))
    context.config.save()
    context.out.print(f"Registered {player['name']} (player #{player['id']}) on {server}.")
    context.out.print(f"Your token is saved in {context.config.path}; keep that file private.")
    return 0


async def cmd_whoami(context: Context) -> int:
    connection = await context.connect()
    try:
        player = connection.player or {}
    finally:
        await connection.close()
    context.out.print(f"{player.get('name')} (player #{player.get('id')}) on {context.server}")
    return 0


# -- matches -----------------------------------------------------------------------------------


async def cmd_create(context: Context) -> int:
    options = context.options
    request: dict[str, Any] = {
        "ruleset": options.rules, "max_players": options.players,
        "time_limit_s": options.time, "win_by": options.win_by, "public": options.public,
    }
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
    code = reply["match"]["code"]
    out = context.out
    out.print(Text.assemble(("Match ", ""), (code, "bold"), (
        f" created: {options.rules}, {options.players} player(s), "
        f"{format_duration(options.time)}, win by {options.win_by}"
        f"{', public' if options.public else ''}{', unrated' if options.seed else ''}.", "")))
    out.print(f"Others join with:   gaps join {code}")
    out.print(f"Race bots with:     gaps bot --join {code}")
    if options.detach:
        await connection.close()
        out.print(f"Take your seat with: gaps join {code}")
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
        raise
    except BaseException:
        await connection.close()
        raise
    return await _play(context, connection, reply)


async def cmd_watch(context: Context) -> int:
    connection = await context.connect()
    try:
        reply = await connection.join_match(context.options.code, role="spectator")
    except BaseException:
        await connection.close()
        raise
    return await _play(context, connection, reply)


async def _play(context: Context, connection: Connection, snapshot: Mapping[str, Any]) -> int:
    """Open the match screen; once it closes, leave the result in the terminal."""
    app = MatchApp(connection, snapshot)
    try:
        await context.frontend(app)
    finally:
        await connection.close()
    state = app.state
    if state.phase is Phase.FINISHED and state.ranking is not None:
        context.out.print(ranking_table(state.ranking, state.you_id, title=f"Match {state.code}"))
        context.out.print(f"Seed {state.seed}. Replay: gaps replay {state.code}")
    elif state.role == "player" and state.phase in (Phase.LOBBY, Phase.COUNTDOWN, Phase.RUNNING):
        context.out.print(f"You left match {state.code}; `gaps join {state.code}` takes your "
                          "seat back (a running game ends if you stay away too long).")
    return 0


def ranking_table(rows: Sequence[Mapping[str, Any]], you_id: int | None, *, title: str) -> Table:
    table = Table(title=f"{title}: final ranking", title_justify="left")
    for column in ("#", "player", "score", "placed", "redeals", "moves", "result", "time"):
        table.add_column(column, justify="left" if column in ("player", "result") else "right")
    for row in rows:
        name = str(row.get("name")) + (" (you)" if row.get("player_id") == you_id else "")
        table.add_row(str(row.get("rank")), name, str(row.get("score")), str(row.get("placed")),
                      str(row.get("redeals_used")), str(row.get("moves_made")),
                      str(row.get("end_reason")), format_ms(row.get("finish_ms")))
    return table


async def cmd_matches(context: Context) -> int:
    matches = await http.open_matches(context.server)
    out = context.out
    if not matches:
        out.print("No open public match right now. Start one: gaps create --public")
        return 0
    table = Table(title=f"Open public matches on {context.server}", title_justify="left")
    for column in ("code", "rules", "players", "time", "win by", "rated"):
        table.add_column(column)
    for match in matches:
        table.add_row(
            str(match.get("code")), str(match.get("ruleset")),
            f"{match.get('players')}/{match.get('max_players')}",
            format_duration(int(match.get("time_limit_s", 0))), str(match.get("win_by")),
            "yes" if match.get("rated") else "no",
        )
    out.print(table)
    out.print("Join one: gaps join CODE")
    return 0


# -- bots ----------------------------------------------------------------------------------------


async def cmd_bot(context: Context) -> int:
    options = context.options
    out = context.out

    def report(line: str) -> None:
        out.print(line, markup=False)

    state = await run_bots(
        context.server, options.code,
        BotOptions(level=options.level, count=options.count, pace_s=options.pace,
                   seed=options.seed),
        context.config, report,
    )
    if state.phase is Phase.ABANDONED:
        raise CliError(f"match {options.code} was abandoned before it started")
    if state.ranking is not None:
        out.print(ranking_table(state.ranking, None, title=f"Match {options.code}"))
    return 0


# -- practice ------------------------------------------------------------------------------------


async def cmd_practice(context: Context) -> int:
    options = context.options
    seed = Seed.parse(options.seed) if options.seed else None
    session = PracticeSession(seed, options.rules)
    app = PracticeApp(session)
    await context.frontend(app)
    final = app.session
    game = final.game
    context.out.print(f"Practice deal {final.share_code} ({game.ruleset.name}): {game.result()}, "
                      f"score {game.score}, placed {game.placed}/48, {game.moves_made} moves.")
    context.out.print(f"Play it again: gaps practice --rules {game.ruleset.name} "
                      f"--seed {final.share_code}")
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
    players = document.get("players", [])
    actions = sum(len(player.get("actions", [])) for player in players)
    context.out.print(f"Saved the replay of match {code} ({len(players)} player(s), {actions} "
                      f"actions) to {target}.")
    context.out.print(f"Check every score: gaps verify {target}")
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
    report = verify(document)
    print_report(context.out, report)
    return 0 if report.holds else 1


def print_report(out: Console, report: Report) -> None:
    out.print(Text.assemble(("Match ", ""), (report.code, "bold"),
                            f" · {report.ruleset} · seed {report.seed}"))
    for check in report.players:
        out.print(f"  {check.rank if check.rank is not None else '?':>2}. {check.name}: "
                  f"{check.actions} actions replayed → score {check.score}, placed "
                  f"{check.placed}/48, {check.redeals} redeal(s), {check.moves} moves"
                  f"{', won' if check.won else ''}", markup=False)
    if report.holds:
        out.print(Text("✓ The recorded result holds: the seed matches its commitment and "
                       "every score, total and rank replays exactly.", style="bold green"))
        return
    count = len(report.discrepancies)
    out.print(Text(f"✗ The recorded result does NOT hold ({count} discrepanc"
                   f"{'y' if count == 1 else 'ies'}):", style="bold red"))
    for line in report.discrepancies:
        out.print(f"  - {line}", markup=False)
