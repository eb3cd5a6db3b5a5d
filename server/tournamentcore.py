"""The rules of a tournament, without I/O: a state, commands, and what each one does.

A tournament is in the duplicate format: every entrant plays the same deals, round by
round; each round is one match of every entrant still in. ``handle(state, command, now)``
returns a :class:`Step`: the new state, the reply (or the ``ServerError`` refusing the
command), the events to publish in order, the rows to store first, the next instant to
be woken at, and what the actor is to do besides: deal a round (create its match) or
check in the database whether the round's match has ended. Nothing here reads a clock,
sleeps, stores or logs; ``now`` is wall-clock milliseconds since the Unix epoch.

Its state and the records it asks to store live in ``server.tournamentstate``, its
commands and steps in ``server.tournamentcommands``, what followers see in
``server.tournamentviews``, and its rebuild from stored rows in
``server.tournamentrestore``.

Deadlines are state: a scheduled start (``start_at``), the end of a break
(``next_round_at``) and the next check of the round being played (``check_at``). Every
``handle`` first applies what is due at ``now``, in time order.

The organiser steers the evening: announcements to every entrant and follower (the last
``ANNOUNCEMENTS_KEPT`` are in the view, for whoever follows later), a pause between
rounds (asked during a round, it holds the next round back once this one has ended;
the break's end is not applied while paused), a cancel with a reason at any time
before the end (a round being played is abandoned: its match is given up, unrated, and
not counted; the standings stay those of the rounds counted), late entry until a
round they chose (``late_entry_until_round``), and reinstating an entrant they removed
(seated from the next round dealt).

An entrant who missed a counted round (they entered late, or were removed then) scores
0 for it and is charged the round's whole time limit: missing a round never ranks
anyone above those who played it with the same score.

A scheduled tournament whose start comes with nobody to play is cancelled (``if_empty:
"cancel"``, the default) or, if its organiser chose ``if_empty: "wait"`` at creation,
starts as soon as its first entrant joins.

Its deals are committed before anyone enters (``gaps.commitment``): the seed of every
round is drawn when it is created and is part of its state, with the commitment in its
view; a round is dealt its own seed (dealt again after its match was lost, the same
seed: every entrant had been shown it at the same instant, so the commitment holds and
nobody gains on another), revealed once the round has ended, and all of them once the
tournament is over. A tournament of ``deals: "winnable"`` has no seed when it is
created: the actor draws deals until the solver proves them winnable (``DrawDeals``),
off the players' path, and entries open once they are committed (``DealsDrawn``).

Tables in the room (docs/tables.md): the host, or an arbiter they name, marks entrants
as playing at a table, from the next round dealt. A round's match seats the entrants
online only; a round with every entrant at a table has no match and ends by its own
clock (its countdown and time limit, as a match would). Once a round's play has begun
(its countdown over) the host and the arbiters get its deal sheet, and enter each
table's result, checked against the rules and the round's time limit and scored as the
rules score; an entered result is kept apart (``entered``) and counted with the others
once its round is. A result entered after its round was counted updates the standings
(``result_entered``); the last round waits for its tables' results until its time limit
and a break have passed, then the tournament ends without those not entered.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import replace

import msgspec

from gaps.board import ALL_PLACED
from gaps.par import final_score
from gaps.ruleset import Ruleset
from gaps.seed import Seed
from gaps_protocol.messages import events as said
from gaps_protocol.messages.events import UNNUMBERED
from gaps_protocol.messages.replies import DealSheet
from gaps_protocol.messages.views import StandingsRow
from server.clock import iso
from server.errors import ServerError, bots_not_allowed
from server.records import Ms
from server.tournamentcommands import (
    Announce,
    Cancel,
    CheckRound,
    Command,
    DealRound,
    DealsDrawn,
    DrawDeals,
    Entered,
    EnterResult,
    Join,
    LookForRound,
    NameArbiter,
    NoDeals,
    Out,
    Pause,
    Reinstate,
    Remove,
    Reply,
    Resume,
    RoundDealt,
    RoundEnded,
    RoundLost,
    RoundRunning,
    SetTable,
    Standing,
    Start,
    Step,
    Tick,
    Viewed,
)
from server.tournamentstate import (
    ANNOUNCEMENTS_KEPT,
    NOBODY_ENTERED,
    PODIUM,
    Announcement,
    AnnouncementMade,
    ArbiterNamed,
    DealsCommitted,
    EnteredResult,
    Entrant,
    EntrantAdded,
    EntrantReinstated,
    EntrantRemoved,
    PauseSet,
    ResultEntered,
    Round,
    RoundBegun,
    RoundScore,
    RoundStarted,
    StandingsRecorded,
    TableSet,
    TournamentCancelled,
    TournamentFinished,
    TournamentStarted,
    TournamentState,
)
from server.tournamentviews import (
    commitment_members,
    entered_members,
    entered_view,
    entrant_view,
    share_code,
    standings,
)


def handle(state: TournamentState, command: Command, now: Ms) -> Step:
    """Apply what is due at ``now``, then ``command``. A refused command changes nothing
    itself: its step carries only what was due (and the refusal as ``reply``)."""
    out = Out()
    state = advance(state, now, out)
    reply: Reply
    try:
        state, reply = _command(state, command, now, out)
    except ServerError as error:
        reply = error
    state = advance(state, now, out)
    return Step(
        state=state,
        reply=reply,
        events=tuple(out.events),
        writes=tuple(out.writes),
        wake_at=next_deadline(state),
        deal=out.deal,
        look=out.look,
        draw=out.draw,
        abandon=out.abandon,
        closed=out.closed,
    )


def _command(
    state: TournamentState, command: Command, now: Ms, out: Out
) -> tuple[TournamentState, Reply]:
    match command:
        case Join(player_id=player_id, name=name, bot=bot):
            return _join(state, player_id, name, bot, now, out), Entered()
        case Remove(by=by, player=player, reason=reason):
            return _remove(state, by, player, reason, now, out), Entered()
        case Start(by=by):
            if by != state.host_id:
                raise ServerError("not_host", f"only the host starts tournament {state.code}")
            require_open(state)
            require_deals(state)
            if not state.seated():
                raise ServerError("bad_message", f"tournament {state.code} has no entrants")
            return _begin(state, now, out), Viewed()
        case Reinstate(by=by, player=player):
            return _reinstate(state, by, player, now, out), Entered()
        case Cancel(by=by, reason=reason):
            _require_host(state, by, "cancels tournament")
            require_not_over(state)
            return _cancel(state, reason, now, out, by_host=True), Viewed()
        case Pause(by=by):
            return _pause(state, by, now, out), Viewed()
        case Resume(by=by):
            return _resume(state, by, now, out), Viewed()
        case Announce(by=by, text=text):
            return _announce(state, by, text, now, out), Viewed()
        case NameArbiter(by=by, player_id=player_id, name=name):
            return _name_arbiter(state, by, player_id, name, now, out), Viewed()
        case SetTable(by=by, player=player, at_table=at_table):
            return _set_table(state, by, player, at_table, out), Viewed()
        case EnterResult():
            return _enter_result(state, command, now, out), Standing()
        case Tick():
            return state, None
        case RoundDealt(number=number, code=code):
            return _dealt(state, number, code, now, out), None
        case CheckRound():
            if state.round_code is not None:
                if state.check_at is None:  # a look is under way: look again after it
                    state = replace(state, look_again=True)
                else:
                    state = replace(state, check_at=now)  # looked for at once: ``advance``
            return state, None
        case RoundRunning(number=number):
            if state.round_code is not None and state.current_round == number:
                delay = 0 if state.look_again else state.check_ms
                state = replace(state, check_at=now + delay, look_again=False)
            return state, None
        case RoundEnded():
            return _round_ended(state, command, now, out), None
        case RoundLost(number=number, code=code):
            if state.round_code == code and state.current_round == number:
                # Dealt again at once: the round is not counted, nobody played it.
                state = replace(
                    state, rounds=state.rounds[:-1], check_at=None, look_again=False,
                    next_round_at=now, dealing_again=True,
                )
            return state, None
        case DealsDrawn(seeds=seeds):
            return _committed(state, seeds, out), None
        case NoDeals(reason=reason):
            if state.preparing:
                state = _cancel(state, reason, now, out)
            return replace(state, drawing=False), None
    raise AssertionError(f"unknown command {command!r}")


# -- entrants --------------------------------------------------------------------------


def require_open(state: TournamentState) -> None:
    if state.status == "running":
        raise ServerError("already_started", f"tournament {state.code} has started")
    if state.status == "finished":
        raise ServerError(
            "tournament_finished", f"tournament {state.code} is over", status="finished"
        )
    if state.status == "cancelled":
        raise ServerError(
            "tournament_finished",
            f"tournament {state.code} was cancelled: {state.cancel_reason}",
            status="cancelled",
            reason=state.cancel_reason,
        )


def require_not_over(state: TournamentState) -> None:
    """Refuse what only a tournament not over takes (``tournament_finished``)."""
    if state.over:
        require_open(state)


def _require_host(state: TournamentState, by: int, does: str) -> None:
    if by != state.host_id:
        raise ServerError("not_host", f"only the host {does} {state.code}")


def require_deals(state: TournamentState) -> None:
    if state.preparing:
        raise ServerError(
            "deals_not_ready",
            f"tournament {state.code} is still drawing its winnable deals: entries open "
            "once they are committed (deals_committed), in a moment",
        )


def _join(
    state: TournamentState, player_id: int, name: str, bot: bool, now: Ms, out: Out
) -> TournamentState:
    entrant = state.entrant(player_id)
    if entrant is not None:
        if entrant.removed:
            raise ServerError(
                "removed",
                f"the host removed you from tournament {state.code}: {entrant.removed_reason}",
                reason=entrant.removed_reason,
            )
        return state  # they follow it again (from another connection)
    late = state.status == "running"
    if late:
        _require_late_entry(state)
    else:
        require_open(state)
    require_deals(state)
    if bot and not state.options.bots:
        raise bots_not_allowed(
            f"the host of tournament {state.code} lets no bot enter", refused_by="tournament"
        )
    if len(state.seated()) >= state.options.max_players:
        raise ServerError(
            "tournament_full",
            f"tournament {state.code} has its {state.options.max_players} players",
        )
    out.writes.append(EntrantAdded(player_id, now, len(state.entrants) + 1))
    joined = said.EntrantJoined(
        tournament=state.code, seq=UNNUMBERED, player_id=player_id, name=name, bot=bot
    )
    if late:
        joined = msgspec.structs.replace(joined, late=True, from_round=state.current_round + 1)
    out.emit(joined)
    state = replace(state, entrants=(*state.entrants, Entrant(player_id, name, bot)))
    if state.start_due:
        state = _begin(state, now, out)
    return state


def _require_late_entry(state: TournamentState) -> None:
    """A running tournament takes an entrant while its next round to deal (the one after
    the round being played) is at most ``late_entry_until_round``."""
    until = min(state.options.late_entry_until_round, state.options.rounds)
    if until == 0:
        require_open(state)  # raises: it has started
    if state.current_round + 1 > until:
        raise ServerError(
            "late_entry_closed",
            f"tournament {state.code} took late entrants until round {until} was dealt",
            late_entry_until_round=until,
        )


def _named(state: TournamentState, player: str) -> Entrant | None:
    """The entrant named ``player``, in any case."""
    return next((e for e in state.entrants if e.name.lower() == player.lower()), None)


def _remove(
    state: TournamentState, by: int, player: str, reason: str, now: Ms, out: Out
) -> TournamentState:
    _require_host(state, by, "removes entrants of")
    require_not_over(state)
    found = _named(state, player)
    if found is None or found.removed:
        raise ServerError(
            "not_an_entrant", f"{player!r} is not in tournament {state.code}", player=player
        )
    if state.playing:
        raise ServerError(
            "round_in_play",
            f"round {state.current_round} of {state.code} is being played: "
            "remove an entrant once it has ended",
            round=state.current_round,
        )
    entrant = found
    out.writes.append(EntrantRemoved(entrant.player_id, reason, now))
    out.emit(said.EntrantRemoved(
        tournament=state.code, seq=UNNUMBERED,
        player_id=entrant.player_id,
        name=entrant.name,
        reason=reason,
        after_round=state.current_round,
    ))
    removed = replace(entrant, removed_reason=reason)
    return replace(
        state,
        entrants=tuple(removed if e is entrant else e for e in state.entrants),
    )


def _reinstate(
    state: TournamentState, by: int, player: str, now: Ms, out: Out
) -> TournamentState:
    _require_host(state, by, "reinstates entrants of")
    require_not_over(state)
    entrant = _named(state, player)
    if entrant is None:
        raise ServerError(
            "not_an_entrant", f"{player!r} is not in tournament {state.code}", player=player
        )
    if not entrant.removed:
        raise ServerError(
            "not_removed", f"{entrant.name} is in tournament {state.code}: nothing to reinstate",
            player=entrant.name,
        )
    if len(state.seated()) >= state.options.max_players:
        raise ServerError(
            "tournament_full",
            f"tournament {state.code} has its {state.options.max_players} players",
        )
    out.writes.append(EntrantReinstated(entrant.player_id, now))
    out.emit(said.EntrantReinstated(
        tournament=state.code, seq=UNNUMBERED,
        player_id=entrant.player_id,
        name=entrant.name,
        from_round=state.current_round + 1,
    ))
    back = replace(entrant, removed_reason=None)
    return replace(state, entrants=tuple(back if e is entrant else e for e in state.entrants))


# -- the host's hand on the evening ------------------------------------------------------


def _pause(state: TournamentState, by: int, now: Ms, out: Out) -> TournamentState:
    _require_host(state, by, "pauses tournament")
    _require_running(state, "paused")
    if state.paused:
        raise ServerError("already_paused", f"tournament {state.code} is paused already")
    out.writes.append(PauseSet(True, now))
    # Asked during a round, the pause holds from the round's end: the round goes on.
    out.emit(said.TournamentPaused(
        tournament=state.code, seq=UNNUMBERED,
        after_round=state.current_round, round_in_play=state.playing,
    ))
    return replace(state, paused=True)


def _resume(state: TournamentState, by: int, now: Ms, out: Out) -> TournamentState:
    _require_host(state, by, "resumes tournament")
    _require_running(state, "resumed")
    if not state.paused:
        raise ServerError("not_paused", f"tournament {state.code} is not paused")
    out.writes.append(PauseSet(False, now))
    # A break that ended during the pause ends now: the next round is dealt at once
    # (each round has its countdown); one that had time left keeps it.
    next_round_at = None if state.next_round_at is None else max(state.next_round_at, now)
    out.emit(said.TournamentResumed(
        tournament=state.code, seq=UNNUMBERED,
        next_round_at=None if next_round_at is None else iso(next_round_at),
    ))
    return replace(state, paused=False, next_round_at=next_round_at)


def _require_running(state: TournamentState, what: str) -> None:
    if state.status != "running":
        raise ServerError(
            "not_running",
            f"tournament {state.code} is {state.status}: only a running one is {what}",
            status=state.status,
        )


def _announce(
    state: TournamentState, by: int, text: str, now: Ms, out: Out
) -> TournamentState:
    _require_host(state, by, "makes announcements in tournament")
    require_not_over(state)
    out.writes.append(AnnouncementMade(text, now))
    out.emit(said.TournamentAnnouncement(tournament=state.code, seq=UNNUMBERED,
                                         text=text, at=iso(now)))
    kept = (*state.announcements, Announcement(text, now))[-ANNOUNCEMENTS_KEPT:]
    return replace(state, announcements=kept)


# -- tables in the room ------------------------------------------------------------------


def _require_desk(state: TournamentState, by: int, does: str) -> None:
    """Refuse anyone but the host and the arbiters they named (``not_arbiter``)."""
    if by != state.host_id and not state.is_arbiter(by):
        raise ServerError(
            "not_arbiter", f"only the host or an arbiter they named {does} {state.code}"
        )


def _name_arbiter(
    state: TournamentState, by: int, player_id: int, name: str, now: Ms, out: Out
) -> TournamentState:
    _require_host(state, by, "names the arbiters of")
    require_not_over(state)
    if player_id == state.host_id or state.is_arbiter(player_id):
        return state  # may do what an arbiter does already
    out.writes.append(ArbiterNamed(player_id, now))
    out.emit(said.ArbiterNamed(tournament=state.code, seq=UNNUMBERED,
                               player_id=player_id, name=name))
    return replace(state, arbiters=(*state.arbiters, (player_id, name)))


def _set_table(
    state: TournamentState, by: int, player: str, at_table: bool, out: Out
) -> TournamentState:
    _require_desk(state, by, "seats entrants at tables in")
    require_not_over(state)
    entrant = _named(state, player)
    if entrant is None or entrant.removed:
        raise ServerError(
            "not_an_entrant", f"{player!r} is not in tournament {state.code}", player=player
        )
    if entrant.at_table == at_table:
        return state
    out.writes.append(TableSet(entrant.player_id, at_table))
    out.emit(said.EntrantTable(
        tournament=state.code, seq=UNNUMBERED,
        player_id=entrant.player_id,
        name=entrant.name,
        at_table=at_table,
        from_round=state.current_round + 1,
    ))
    moved = replace(entrant, at_table=at_table)
    return replace(state, entrants=tuple(moved if e is entrant else e for e in state.entrants))


def _started_round(state: TournamentState, number: int, now: Ms) -> Round:
    """Round ``number``, once its play has begun (``round_not_started`` before)."""
    if 1 <= number <= len(state.rounds):
        round_ = state.rounds[number - 1]
        if round_.started_at is None or round_.started_at <= now or round_.counted:
            return round_
        raise ServerError(
            "round_not_started",
            f"round {number} of tournament {state.code} starts at {iso(round_.started_at)}",
            round=number, starts_at=iso(round_.started_at),
        )
    if not 1 <= number <= state.options.rounds:
        raise ServerError(
            "bad_message",
            f"tournament {state.code} has rounds 1 to {state.options.rounds}, not {number}",
            field="round",
        )
    raise ServerError(
        "round_not_started", f"round {number} of tournament {state.code} is not dealt yet",
        round=number, starts_at=None,
    )


def deal_sheet(state: TournamentState, by: int, number: int, now: Ms) -> DealSheet:
    """The ``deal_sheet`` reply for round ``number``: given to the host and the arbiters,
    once the round's play has begun."""
    _require_desk(state, by, "gets the deal sheets of")
    round_ = _started_round(state, number, now)
    seed = state.seed_of(number)
    if seed is None:
        raise ServerError(
            "round_not_started",
            f"tournament {state.code} committed no deals (it was stored before they were): "
            "it has no deal sheets",
            round=number, starts_at=None,
        )
    return DealSheet(
        id=None,
        tournament=state.code,
        round=number,
        seed=str(Seed(seed)),
        ruleset=state.options.ruleset,
        match=round_.match,
        started_at=None if round_.started_at is None else iso(round_.started_at),
    )


def _bad_result(field: str, message: str) -> ServerError:
    return ServerError(
        "bad_message", f"tournament_enter_result: field {field!r}: {message}", field=field
    )


def check_result(command: EnterResult, ruleset: Ruleset, time_limit_ms: int) -> int:
    """The score of an entered result, as the rules score it; refuses (``bad_message``,
    naming the field) what the rules and the round's time limit do not allow."""
    if not 0 <= command.placed <= ALL_PLACED:
        raise _bad_result("placed", f"placed must be from 0 to {ALL_PLACED}, got {command.placed}")
    if not 0 <= command.redeals <= ruleset.redeals:
        raise _bad_result(
            "redeals",
            f"{ruleset.name} allows {ruleset.redeals} redeal(s), got {command.redeals}",
        )
    if not 0 <= command.finish_ms <= time_limit_ms:
        raise _bad_result(
            "finish_ms",
            f"the round's time limit is {time_limit_ms} ms, got {command.finish_ms}",
        )
    if command.won != (command.placed == ALL_PLACED):
        raise _bad_result(
            "won",
            f"a game is won when all {ALL_PLACED} cards are placed: won is "
            f"{str(command.won).lower()} with {command.placed} placed",
        )
    return final_score(command.placed, command.redeals)


def _enter_result(
    state: TournamentState, command: EnterResult, now: Ms, out: Out
) -> TournamentState:
    _require_desk(state, command.by, "enters results in")
    require_not_over(state)
    round_ = _started_round(state, command.number, now)
    entrant = _named(state, command.player)
    if entrant is None:
        raise ServerError(
            "not_an_entrant", f"{command.player!r} is not in tournament {state.code}",
            player=command.player,
        )
    if entrant.player_id not in round_.tables:
        raise ServerError(
            "not_at_table",
            f"{entrant.name} did not play round {round_.number} of {state.code} at a table",
            player=entrant.name, round=round_.number,
        )
    score = check_result(
        command, Ruleset.named(state.options.ruleset), state.options.round_time_limit_s * 1000
    )
    result = EnteredResult(
        entrant.player_id, command.placed, command.redeals, command.finish_ms, command.won,
        score, command.by, now,
    )
    replaced = round_.entered_for(entrant.player_id) is not None
    entered = tuple(r for r in round_.entered if r.player_id != entrant.player_id)
    round_ = replace(round_, entered=(*entered, result))
    rounds = list(state.rounds)
    rounds[round_.number - 1] = round_
    state = replace(state, rounds=tuple(rounds))
    out.writes.append(ResultEntered(round_.number, result))
    rows = standings(state) if round_.counted else None
    if rows is not None:
        out.writes.append(StandingsRecorded(tuple(rows)))
    out.emit(said.ResultEntered(
        tournament=state.code, seq=UNNUMBERED,
        **entered_members(state, round_.number, result),
        replaced=replaced,
        standings=rows,
    ))
    last = round_.number == state.options.rounds
    if last and round_.counted and not round_.awaited and state.status == "running":
        return _finish(state, now, out, rows=rows)  # every table's result is in
    return state


# -- running ---------------------------------------------------------------------------


def _begin(state: TournamentState, now: Ms, out: Out) -> TournamentState:
    """The start: the first round is dealt at once."""
    out.writes.append(TournamentStarted(now))
    out.emit(said.TournamentStarted(
        tournament=state.code, seq=UNNUMBERED,
        rounds=state.options.rounds,
        entrants=[entrant_view(e) for e in state.entrants],
    ))
    return replace(state, status="running", start_due=False, next_round_at=now)


def _deal(state: TournamentState, at: Ms, out: Out) -> TournamentState:
    """Deal the next round (or finish, if nobody is left to play it): a match for the
    entrants online; a round of tables only has none and starts at once."""
    seats = state.seated()
    if not seats:  # the host removed everyone
        return _finish(state, at, out)
    number = len(state.rounds) + 1
    online = tuple(e for e in seats if not e.at_table)
    tables = tuple(e.player_id for e in seats if e.at_table)
    out.writes.append(RoundBegun(number, tables))
    state = replace(
        state, dealing=number, next_round_at=None, dealing_again=False, dealing_tables=tables
    )
    if not online:
        return _dealt(state, number, "", at, out)
    out.deal = DealRound(
        number, tuple((e.player_id, e.name, e.bot) for e in online), state.seed_of(number)
    )
    return state


def _committed(
    state: TournamentState, seeds: tuple[bytes, ...], out: Out
) -> TournamentState:
    """The winnable deals drawn: stored, then their commitment said; entries open."""
    if not state.preparing:
        return state  # cancelled meanwhile (or committed already)
    if len(seeds) != state.options.rounds:
        raise AssertionError(f"{len(seeds)} deals drawn for {state.options.rounds} rounds")
    out.writes.append(DealsCommitted(seeds))
    state = replace(state, seeds=seeds, drawing=False)
    out.emit(said.DealsCommitted(tournament=state.code, seq=UNNUMBERED,
                                 **commitment_members(state)))
    return state


def _dealt(
    state: TournamentState, number: int, code: str, now: Ms, out: Out
) -> TournamentState:
    if state.dealing != number or state.over:
        return state  # cancelled while its match was being created: it is not played
    started_at = now + state.options.countdown_s * 1000
    out.writes.append(RoundStarted(number, started_at, online=bool(code)))
    out.emit(said.RoundStarting(
        tournament=state.code, seq=UNNUMBERED,
        round=number,
        match=code or None,
        countdown_ms=state.options.countdown_s * 1000,
        tables=[state.name_of(p) for p in state.dealing_tables],
    ))
    round_ = Round(number, code, started_at=started_at, tables=state.dealing_tables)
    return replace(
        state,
        dealing=None,
        dealing_tables=(),
        rounds=(*state.rounds, round_),
        check_at=now + state.check_ms if code else None,
    )


def _round_ended(
    state: TournamentState, ended: RoundEnded, now: Ms, out: Out
) -> TournamentState:
    if state.round_code != ended.code or state.current_round != ended.number:
        return state  # counted already (a check and the lobby's word both came)
    return _count(state, ended.scores, ended.ended_at, now, out)


def _count(
    state: TournamentState, scores: tuple[RoundScore, ...], ended_at: Ms, now: Ms, out: Out
) -> TournamentState:
    """Count the round being played: its match's ``scores`` and the results entered."""
    counted = replace(state.rounds[-1], scores=scores, ended_at=ended_at)
    state = replace(
        state, rounds=(*state.rounds[:-1], counted), check_at=None, look_again=False
    )
    rows = standings(state)
    out.writes.append(StandingsRecorded(tuple(rows)))
    last = counted.number >= state.options.rounds
    break_ms = round(state.options.break_s * 1000)
    if last:
        # The tables' results are awaited until the round's time limit and a break
        # have passed: the arbiters enter them then.
        next_round_at = (
            max(ended_at, _time_up(state, counted)) + break_ms if counted.awaited else None
        )
    else:
        next_round_at = ended_at + break_ms
    out.emit(said.RoundEnded(
        tournament=state.code, seq=UNNUMBERED,
        round=counted.number,
        match=counted.match,
        seed=share_code(state.seed_of(counted.number)),
        standings=rows,
        # Paused: the next round waits for the host's resume.
        next_round_at=None if next_round_at is None or state.paused else iso(next_round_at),
        paused=state.paused,
        entered=[entered_view(state, counted.number, r) for r in counted.entered],
        results_awaited=[state.name_of(p) for p in counted.awaited],
    ))
    if last and next_round_at is None:
        return _finish(state, now, out, rows=rows)
    return replace(state, next_round_at=next_round_at)


def _time_up(state: TournamentState, round_: Round) -> Ms:
    """When round ``round_``'s time limit is up (its play began at ``started_at``)."""
    started_at = round_.started_at if round_.started_at is not None else 0
    return started_at + state.options.round_time_limit_s * 1000


def _finish(
    state: TournamentState, now: Ms, out: Out, *, rows: list[StandingsRow] | None = None
) -> TournamentState:
    rows = standings(state) if rows is None else rows
    out.writes.append(TournamentFinished(now))
    out.emit(said.TournamentEnded(
        tournament=state.code, seq=UNNUMBERED,
        standings=rows,
        podium=[row for row in rows if row.rank <= PODIUM and not row.removed],
        seeds=[share_code(seed) for seed in state.seeds],
    ))
    out.closed = True
    return replace(
        state, status="finished", next_round_at=None, check_at=None, dealing_again=False
    )


def _cancel(
    state: TournamentState, reason: str, now: Ms, out: Out, *, by_host: bool = False
) -> TournamentState:
    """Cancel the tournament; a round being played is abandoned, not counted."""
    abandoned = state.round_code
    rounds = tuple(round_ for round_ in state.rounds if round_.counted)
    out.writes.append(TournamentCancelled(reason, now, len(rounds)))
    out.emit(said.TournamentCancelled(
        tournament=state.code, seq=UNNUMBERED,
        reason=reason,
        by_host=by_host,
        abandoned_round=None if abandoned is None else state.current_round,
        seeds=[share_code(s) for s in state.seeds],
    ))
    out.abandon = abandoned
    # Asked for in this very step (a scheduled start or a break due at the cancel's
    # instant): not needed any more; a round's match created now would be left unplayed.
    out.draw = None
    out.deal = None
    out.closed = True
    return replace(
        state, status="cancelled", cancel_reason=reason, rounds=rounds, dealing=None,
        next_round_at=None,
        check_at=None, look_again=False, start_due=False, dealing_again=False,
        drawing=False,  # a draw under way is for nothing
    )


# -- deadlines --------------------------------------------------------------------------


def _deadlines(state: TournamentState) -> Iterable[tuple[Ms, int]]:
    """(instant, kind) of every deadline of ``state``: 0 the scheduled start, 1 the end
    of a break (or of the wait for the last round's tables), 2 the next check of the
    round being played, 3 the end of a round of tables only."""
    start_at = state.options.start_at
    # A start waits for the deals: nobody can have entered before they were committed.
    if state.status == "open" and start_at is not None and not state.start_due \
            and not state.preparing:
        yield start_at, 0
    if state.status == "running" and state.dealing is None:
        if state.next_round_at is not None and (not state.paused or state.dealing_again):
            yield state.next_round_at, 1
        if state.check_at is not None and state.round_code is not None:
            yield state.check_at, 2
        if state.playing and state.round_code is None:
            yield _time_up(state, state.rounds[-1]), 3


def next_deadline(state: TournamentState) -> Ms | None:
    return min((at for at, _ in _deadlines(state)), default=None)


def advance(state: TournamentState, now: Ms, out: Out | None = None) -> TournamentState:
    """Apply every deadline due at ``now``, in time order; and ask for the winnable deals
    of a tournament that has none, unless they are being drawn already."""
    out = out if out is not None else Out()
    while True:
        due = min((d for d in _deadlines(state) if d[0] <= now), default=None)
        if due is None:
            if state.preparing and not state.drawing:
                out.draw = DrawDeals(state.options.rounds, state.options.ruleset)
                state = replace(state, drawing=True)
            return state
        at, kind = due
        if kind == 0:
            if state.seated():
                state = _begin(state, at, out)
            elif state.options.if_empty == "wait":
                state = replace(state, start_due=True)
            else:
                state = _cancel(state, NOBODY_ENTERED, at, out)
        elif kind == 1:
            if len(state.rounds) >= state.options.rounds:
                state = _finish(state, at, out)
            else:
                state = _deal(state, at, out)
        elif kind == 2:
            round_ = state.rounds[-1]
            out.look = LookForRound(round_.number, round_.code)
            state = replace(state, check_at=None)
        else:
            state = _count(state, (), at, at, out)
