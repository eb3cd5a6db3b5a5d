"""Bot players that race through the real protocol, at a human-like pace.

Each bot is a player of its own (named ``bot-XXXX``); its token is kept in the config
so the same bots come back next time. A bot joins the match, says it is ready, and once
the cards are dealt plays the moves ``gaps.bots`` chooses, pausing between them like a
person would (``pace_s`` seconds on average, 0 for no pause).

A bot follows a server restart as its connection does (``client_cli.connection``): it
rejoins and goes on from the acknowledged state of its game. A refusal for now (the
database is down) is retried by the connection; one that outlasts its retries fails the
bot with a ``ClientError`` and leaves its game to the server's grace period. A match the
server no longer has fails the bot with ``MatchGone``; in a tournament, the bot then waits
for the next round.
"""

from __future__ import annotations

import asyncio
import random
import secrets
from collections.abc import Callable, Coroutine, Iterable
from dataclasses import dataclass
from typing import Any, TypeAlias, TypeVar

from client_cli.config import Account, Config
from client_cli.connection import (
    ClientError,
    Connection,
    ConnectionNotice,
    Listened,
    ServerRefused,
    expect,
    match_of,
)
from client_cli.duration import format_ms
from client_cli.match_state import MatchState, Phase
from client_cli.tables import Outcome, tournament_end
from gaps import Action, Move
from gaps.bots import Bot, bot_for_level
from gaps_protocol.messages import TournamentEvent
from gaps_protocol.messages.events import (
    MatchEnded,
    RoundEnded,
    RoundStarting,
    TournamentEnded,
    TournamentStarted,
)
from gaps_protocol.messages.replies import Events, Matched, Registered, Tournament
from gaps_protocol.messages.requests import Register, Resync
from gaps_protocol.messages.views import TournamentView

Report = Callable[[str], None]
T = TypeVar("T")
#: Refusals after which a bot has nothing left to do in the match.
ENDED_CODES = frozenset({"game_over", "match_finished"})
#: Refusals of an action that mean the server no longer has the match (or the bot's seat).
GONE_CODES = frozenset({"no_such_match", "not_in_match"})


class MatchGone(ClientError):
    """The bot's match is gone from the server (its rejoin after a reconnect was refused):
    the message names the bot, the match and the server's reason."""


@dataclass(frozen=True)
class BotOptions:
    level: int = 2
    count: int = 1
    pace_s: float = 1.2
    seed: int | None = None


def think_time(action: Action, pace_s: float, rng: random.Random) -> float:
    """How long a person would take: about ``pace_s``, longer before a redeal or a stop."""
    if pace_s <= 0:
        return 0.0
    factor = 1.0 if isinstance(action, Move) else 2.5
    return pace_s * factor * rng.uniform(0.5, 1.5)


async def connect_bot(
    server: str, config: Config, taken: set[str], report: Report
) -> tuple[Connection, Account]:
    """A connection for a bot not in ``taken``: a saved one if its token still works,
    else a newly registered ``bot-XXXX``, a declared bot (saved for next time)."""
    for account in config.bot_accounts(server):
        if account.name in taken:
            continue
        taken.add(account.name)
        try:
            connection = await Connection.open(server, token=account.token)
        except ServerRefused as refusal:
            if refusal.code != "bad_token":
                raise
            report(f"{account.name}: the server no longer knows this bot; making a new one")
            config.drop_bot(server, account.name)
            config.save()
            continue
        if connection.player is not None and connection.player.bot:
            return connection, account
        # Saved before bots were declared: the server counts it as a person, and no
        # message changes that. A declared bot replaces it.
        await connection.close()
        report(f"{account.name}: registered as a person, not a bot; making a declared bot")
        config.drop_bot(server, account.name)
        config.save()
    for _ in range(50):
        name = f"bot-{secrets.token_hex(2)}"
        if name in taken:
            continue
        connection = await Connection.open(server)
        try:
            # Registered as a declared bot (docs/fair-play.md): the server shows it as
            # one everywhere and keeps it off people's boards and ratings.
            reply = expect(await connection.request(Register(name=name, bot=True)),
                           Registered, "register")
            connection.token = reply.token
            connection.player = reply.player
        except ServerRefused as refusal:
            await connection.close()
            if refusal.code == "name_taken":
                continue
            raise
        account = Account(name, reply.token, reply.player.id)
        config.add_bot(server, account)
        config.save()
        taken.add(name)
        report(f"{name}: registered a new bot player")
        return connection, account
    raise ClientError("could not find a free bot name")


class BotPlayer:
    """One bot in one match."""

    def __init__(
        self, connection: Connection, account: Account, code: str, bot: Bot, *,
        pace_s: float, rng: random.Random, report: Report, level: int,
    ) -> None:
        self.connection = connection
        self.name = account.name
        self.code = code.upper()
        self.bot = bot
        self.pace_s = pace_s
        self.rng = rng
        self.report = report
        self.level = level
        you_id = connection.player.id if connection.player else account.player_id
        self.state = MatchState(self.code, you_id=you_id)
        self._changed = asyncio.Event()
        connection.add_listener(self._on_server)

    def _on_server(self, message: Listened) -> None:
        if isinstance(message, ConnectionNotice) or match_of(message) == self.code:
            self.state.apply(message)
        self._changed.set()

    async def join(self, *, ready: bool = True) -> None:
        """Take a seat (and say it is ready, unless the match starts by itself)."""
        await self.connection.join_match(self.code)
        if ready and self.state.phase is Phase.LOBBY:
            await self.connection.ready(self.code, True)
            self.report(f"{self.name} (level {self.level}) joined {self.code} and is ready")
        else:
            self.report(f"{self.name} (level {self.level}) joined {self.code}")

    def detach(self) -> None:
        """Stop listening to the connection (which goes on to the next match)."""
        self.connection.remove_listener(self._on_server)

    async def play(self) -> MatchState:
        """Play until the match ends; returns the final state.

        Raises ``MatchGone`` when the server no longer has the match, and ``ClientError``
        when the connection gave up reconnecting or the server kept refusing an action
        for now (its database down) longer than the connection retries."""
        state = self.state
        while state.phase not in (Phase.FINISHED, Phase.ABANDONED):
            self._check_gone()
            if self.connection.failure is not None:  # gave up reconnecting
                raise ClientError(f"{self.name}: {self.connection.failure}")
            if not state.playing or state.own is None:
                self._changed.clear()
                await self._changed.wait()
                continue
            game = state.own.game()
            action = await asyncio.to_thread(self.bot.choose, game)
            delay = think_time(action, self.pace_s, self.rng)
            if delay:
                await asyncio.sleep(delay)
            if not state.playing:
                continue
            try:
                reply = await self.connection.act(self.code, str(action))
            except ServerRefused as refusal:
                self._check_gone()
                if refusal.code in ENDED_CODES:
                    state.own.end_reason = state.own.end_reason or refusal.code
                    continue
                if refusal.code in GONE_CODES:
                    raise MatchGone(f"{self.name}: match {self.code} is gone: the server "
                                    f"refused {action}: {refusal}") from None
                if refusal.transient:  # the connection retried for reconnect_for_s
                    raise ClientError(
                        f"{self.name}: the server could not take {action} in match "
                        f"{self.code} for {self.connection.reconnect_for_s:g} s ({refusal}); "
                        "the game ends after the server's grace period") from None
                if refusal.code != "illegal_action":
                    raise ClientError(f"{self.name}: the server refused {action} in match "
                                      f"{self.code}: {refusal}") from None
                # The rules engine here and the server's disagree: no move can be trusted.
                self.report(f"{self.name}: the server refused {action}: {refusal}; stopping")
                state.own.end_reason = "refused"
                await self._stop_quietly()
                continue
            except ClientError:
                self._check_gone()  # the match was dropped while the action waited
                raise
            state.apply_ack(reply)
            if state.own.over:
                self.report(f"{self.name} finished: {reply.status}, score {reply.score} "
                            f"(placed {reply.placed}/48, {reply.redeals_used} redeal(s), "
                            f"{reply.moves_made} moves) at {format_ms(reply.t_ms)}")
        if state.phase is Phase.FINISHED and state.ranking is None:
            await self._fetch_ranking()
        return state

    def _check_gone(self) -> None:
        if self.state.gone is not None and self.state.phase is not Phase.FINISHED:
            raise MatchGone(f"{self.name}: {self.state.gone}")

    async def _fetch_ranking(self) -> None:
        """A match that ended unseen (while the server was down, say) came back as a
        finished snapshot: its ranking is in its last event."""
        try:
            reply = expect(await self.connection.request(
                Resync(code=self.code, since=max(0, self.state.last_seq - 1)), retry=True),
                Events, "resync")
        except ClientError as error:  # the ranking is a bonus: the match is over
            self.report(f"{self.name}: match {self.code} is over; no ranking ({error})")
            return
        for event in reply.events:
            if isinstance(event, MatchEnded):
                self.state.apply(event)

    async def _stop_quietly(self) -> None:
        try:
            await self.connection.act(self.code, "stop")
        except ClientError:
            pass


async def run_bots(
    server: str, code: str, options: BotOptions, config: Config, report: Report
) -> MatchState:
    """Join ``options.count`` bots to match ``code`` and play it to the end.

    Returns the final state of the match as the first bot saw it (with the ranking).
    """
    rng = random.Random(options.seed)
    taken: set[str] = set()
    players: list[BotPlayer] = []
    try:
        for _ in range(options.count):
            connection, account = await connect_bot(server, config, taken, report)
            player = BotPlayer(
                connection, account, code,
                bot_for_level(options.level, seed=rng.randrange(2**32)),
                pace_s=options.pace_s, rng=random.Random(rng.randrange(2**32)),
                report=report, level=options.level,
            )
            try:
                await player.join()
            except ServerRefused as refusal:
                await connection.close()
                if not players:
                    raise
                report(f"{account.name} could not join {code}: {refusal}")
                break
            except BaseException:
                await connection.close()
                raise
            players.append(player)
        states = await together(player.play() for player in players)
    finally:
        for player in players:
            await player.connection.close()
    return states[0]


async def run_quick_bots(
    server: str, ruleset: str, options: BotOptions, config: Config, report: Report
) -> MatchState:
    """Put ``options.count`` bots in the quick-match queue of ``ruleset`` (a server that
    lets declared bots in, with ``--quick-match-bots``, groups them with bots only); each
    plays the match it is dealt as soon as it is dealt one, to its end. The first bot's
    final state. A bot nobody is grouped with waits until the command is stopped, as
    `gaps play` does."""
    rng = random.Random(options.seed)
    taken: set[str] = set()
    connections: list[Connection] = []

    async def queue_and_play(connection: Connection, account: Account, seed: int,
                             matched: asyncio.Future[Matched]) -> MatchState:
        code = (await matched).match.code
        player = BotPlayer(
            connection, account, code, bot_for_level(options.level, seed=seed),
            pace_s=options.pace_s, rng=random.Random(rng.randrange(2**32)),
            report=report, level=options.level,
        )  # fmt: skip
        await player.join()
        return await player.play()

    try:
        playing = []
        for _ in range(options.count):
            connection, account = await connect_bot(server, config, taken, report)
            connections.append(connection)
            matched = connection.quick_matched()
            await connection.quick_match(ruleset)
            report(f"{account.name} (level {options.level}) waits for a {ruleset} quick match")
            playing.append(queue_and_play(connection, account, rng.randrange(2**32), matched))
        states = await together(playing)
    finally:
        for connection in connections:
            await connection.close()
    return states[0]


async def run_tournament_bots(
    server: str, code: str, options: BotOptions, config: Config, report: Report
) -> tuple[TournamentView, Outcome]:
    """Enter ``options.count`` bots in tournament ``code`` and play every round.

    Returns the tournament's view (as the first bot entered it) and how it ended
    (standings and podium) as the first bot heard it.
    """
    rng = random.Random(options.seed)
    taken: set[str] = set()
    entered: list[tuple[Connection, Account, asyncio.Queue[News]]] = []
    views: list[TournamentView] = []
    try:
        for _ in range(options.count):
            connection, account = await connect_bot(server, config, taken, report)
            queue: asyncio.Queue[News] = asyncio.Queue()
            connection.add_listener(tournament_news(code.upper(), queue))
            try:
                reply = await connection.tournament_join(code)
            except ServerRefused as refusal:
                await connection.close()
                if not entered:
                    raise
                report(f"{account.name} could not enter tournament {code}: {refusal}")
                break
            except BaseException:
                await connection.close()
                raise
            view = reply.tournament
            if view.status == "running" and view.round_match:
                queue.put_nowait(RoundToPlay(view.current_round, view.round_match))
            report(f"{account.name} (level {options.level}) entered tournament "
                   f"{view.code} ({len(view.entrants)}/{view.max_players})")
            entered.append((connection, account, queue))
            views.append(view)
        finals = await together(
            _tournament_bot(connection, account, queue, options,
                            random.Random(rng.randrange(2**32)), report, speaker=index == 0)
            for index, (connection, account, queue) in enumerate(entered)
        )
    finally:
        for connection, _, _ in entered:
            await connection.close()
    return views[0], finals[0]


async def together(coroutines: Iterable[Coroutine[Any, Any, T]]) -> list[T]:
    """Run ``coroutines`` at once and return their results in order; the first to fail
    cancels the others (no bot is left playing alone after its peers gave up)."""
    tasks = [asyncio.create_task(coroutine) for coroutine in coroutines]
    try:
        return await asyncio.gather(*tasks)
    finally:
        for task in tasks:
            task.cancel()
        await asyncio.gather(*tasks, return_exceptions=True)


@dataclass(frozen=True)
class RoundToPlay:
    """A round being played, as a view says it (the join's reply, a resync's snapshot)."""

    round: int
    match: str


@dataclass(frozen=True)
class Cut:
    """The bot can follow the tournament no more: the connection failed, or the
    tournament is gone from it."""

    detail: str


#: What a tournament bot acts on, in order: the tournament's events, a round to play,
#: the end (from a resync's snapshot of a finished tournament), or being cut off.
News: TypeAlias = TournamentEvent | RoundToPlay | Outcome | Cut


def tournament_news(code: str, queue: asyncio.Queue[News]) -> Callable[[Listened], None]:
    def listen(message: Listened) -> None:
        if isinstance(message, TournamentEvent) and message.tournament == code:
            queue.put_nowait(message)
        elif isinstance(message, Tournament) and message.tournament.code == code:
            view = message.tournament  # a resync's snapshot: some events were lost
            if view.status == "finished":
                standings = message.standings
                queue.put_nowait(tournament_end(standings if isinstance(standings, list)
                                                else []))
            elif view.status == "running" and view.round_match:
                queue.put_nowait(RoundToPlay(view.current_round, view.round_match))
        elif isinstance(message, ConnectionNotice) and (message.state == "failed" or (
                message.state == "gone" and message.tournament == code)):
            queue.put_nowait(Cut(message.detail))
    return listen


async def _tournament_bot(
    connection: Connection, account: Account, queue: asyncio.Queue[News],
    options: BotOptions, rng: random.Random, report: Report, *, speaker: bool,
) -> Outcome:
    """One bot: every round of the tournament, until its end."""
    played: set[str] = set()
    while True:
        news = await queue.get()
        if isinstance(news, Cut):
            raise ClientError(f"{account.name}: {news.detail}")
        if isinstance(news, Outcome):
            return news
        if isinstance(news, TournamentStarted) and speaker:
            report(f"tournament started: {news.rounds} round(s), "
                   f"{len(news.entrants)} entrants")
        elif isinstance(news, RoundStarting | RoundToPlay) and news.match is not None \
                and news.match not in played:
            code = news.match
            played.add(code)
            player = BotPlayer(
                connection, account, code,
                bot_for_level(options.level, seed=rng.randrange(2**32)),
                pace_s=options.pace_s, rng=rng, report=report, level=options.level,
            )
            try:
                await player.join(ready=False)
                await player.play()
            except MatchGone as gone:  # a restart lost the round: the next one may come
                report(f"{gone}; round {news.round} is lost, waiting for the next")
            except ServerRefused as refusal:  # the round ended before the bot came
                report(f"{account.name} missed round {news.round}: {refusal}")
            finally:
                player.detach()
                connection.forget(code)
        elif isinstance(news, RoundEnded) and speaker:
            leaders = ", ".join(f"{row.rank}. {row.name} {row.total_score}"
                                for row in news.standings[:5])
            report(f"round {news.round} ended; standings: {leaders}")
        elif isinstance(news, TournamentEnded):
            return Outcome.of(news)
