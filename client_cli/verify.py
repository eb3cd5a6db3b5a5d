"""Audit a finished match from its replay document, with ``gaps`` alone.

Pure: ``verify(document)`` takes the replay (the dict of docs/protocol.md, format
``gaps-replay/1``) and returns a ``Report``. It checks that

* SHA-256 of the revealed seed is the commitment published when the match started;
* for every player, each recorded action replays legally from the seed, and the score
  recorded with each action is the score the rules give after it;
* each player's final score, placed cards, redeals, moves and win are what the replay
  gives, and the end reason agrees with the replayed game (a win is a win, a loss is a
  blocked game with no redeal left, a stop ends with ``stop``, and a game ended by the
  clock, a disconnect or leaving had not ended by its own play);
* the times (server milliseconds from the match start) hold together: a player's action
  times never go backwards; a game its own play ended (won, lost, stopped) finishes at
  the time of its last action, the one that ended it; a game ended by ``time`` finishes
  at the time limit; one ended by ``disconnected`` or ``left`` no earlier than its last
  action; and no game finishes after the time limit. The time limit is
  ``match.time_limit_s`` when the document gives it, else the finish time of the games
  ended by ``time`` (which must then agree), else unknown;
* the ranks follow from those results and times as ruled (``win_by`` time or score),
  by ``gaps.ranking``, which the server ranks matches with;
* the deal's ``par``, when the document has one (exact or a lower bound), is no lower
  than any player's replayed score: every score is reached by a line of the deal.

Each failed check is one line of ``Report.discrepancies`` naming the player and the
field. A document that cannot be read at all (not an object, a field missing or of the
wrong type, text that is no share code) is one line too: ``verify`` never raises on a
JSON value. The result holds when no discrepancy is found.
"""

from __future__ import annotations

import reprlib
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, Final

from gaps import GapsError, Ruleset, Seed
from gaps.game import Game
from gaps.move import parse_action
from gaps.notation import quoted
from gaps.ranking import WIN_BY, Finish, rank

FORMAT: Final = "gaps-replay/1"

#: How a game ends: by its own play, or from outside it (docs/protocol.md, ``action``).
ENDED_BY_PLAY: Final = ("won", "lost", "stopped")
ENDED_FROM_OUTSIDE: Final = ("time", "disconnected", "left")

#: How much of a recorded value a discrepancy quotes.
_SHOWN_CHARS: Final = 60

#: ``repr`` that stops a few levels down: ``repr`` of a list nested as deep as
#: ``json.loads`` allows would raise ``RecursionError``.
_REPR: Final = reprlib.Repr()
_REPR.maxlevel = 3


@dataclass(frozen=True)
class PlayerCheck:
    """What the replay of one player gave."""

    name: str
    actions: int
    score: int
    placed: int
    redeals: int
    moves: int
    won: bool
    rank: int | None
    #: The replay says the player is a bot (``bot: true``); a person otherwise.
    bot: bool = False


@dataclass
class Report:
    code: str = "?"
    seed: str = "?"
    ruleset: str = "?"
    players: list[PlayerCheck] = field(default_factory=list)
    discrepancies: list[str] = field(default_factory=list)

    @property
    def holds(self) -> bool:
        return not self.discrepancies


class NotAReplay(ValueError):
    """The document is not a replay this client can read."""


@dataclass(frozen=True)
class _Entry:
    """One recorded action, its fields read and typed."""

    number: int
    seq: int
    text: str
    score: int
    t_ms: int

    def label(self, name: str) -> str:
        return f"{name}: action #{self.number} (seq {self.seq}) {quoted(self.text)}"


@dataclass(frozen=True)
class _Timing:
    """When one player's game went, for the time checks and the ranks."""

    check: PlayerCheck
    end_reason: object
    finish_ms: int | None  # None when the document has no integer there
    last_action_ms: int | None  # None when no action is recorded
    score_ms: int  # when the final score was reached: the last action that changed it


def _shown(value: object) -> str:
    """A recorded value for a message, cut short: a document may hold anything."""
    if isinstance(value, str):
        return quoted(value, max_chars=_SHOWN_CHARS)
    text = _REPR.repr(value)
    return text if len(text) <= _SHOWN_CHARS else f"{text[:_SHOWN_CHARS]}..."


def _named(value: object) -> str:
    """A code or name as given, or shown cut short when it is no text."""
    return value if isinstance(value, str) else _shown(value)


def _is_int(value: object) -> bool:
    return isinstance(value, int) and not isinstance(value, bool)


def _field(data: object, key: str, kind: type | tuple[type, ...], where: str) -> Any:
    if not isinstance(data, Mapping) or key not in data:
        raise NotAReplay(f"{where} has no {key!r}")
    value = data[key]
    if not isinstance(value, kind) or (isinstance(value, bool) and kind is int):
        raise NotAReplay(f"{where}.{key} is {_shown(value)}, of the wrong type")
    return value


def verify(document: Mapping[str, Any]) -> Report:
    """Check every recorded number of a replay; see the module docstring."""
    report = Report()
    try:
        _verify(document, report)
    except NotAReplay as error:
        report.discrepancies.append(f"not a readable gaps replay: {error}")
    return report


def _verify(document: Mapping[str, Any], report: Report) -> None:
    if not isinstance(document, Mapping):
        raise NotAReplay("the document is not a JSON object")
    found_format = document.get("format")
    if found_format != FORMAT:
        raise NotAReplay(f"format is {_shown(found_format)}, expected {FORMAT!r}")
    match = _field(document, "match", Mapping, "the document")
    report.code = _named(match.get("code", "?"))
    seed_text = _field(match, "seed", str, "match")
    report.seed = seed_text
    try:
        seed = Seed.parse(seed_text)
    except GapsError as error:
        raise NotAReplay(f"match.seed: {error}") from None
    ruleset_name = _field(match, "ruleset", str, "match")
    try:
        ruleset = Ruleset.named(ruleset_name)
    except GapsError as error:
        raise NotAReplay(f"match.ruleset: {error}") from None
    report.ruleset = ruleset.name
    limit_ms = None
    if "time_limit_s" in match:
        limit_s = _field(match, "time_limit_s", int, "match")
        if limit_s < 1:
            raise NotAReplay(f"match.time_limit_s is {limit_s}, not a positive number of seconds")
        limit_ms = 1000 * limit_s
    commitment = match.get("commitment")
    if commitment != seed.commitment:
        report.discrepancies.append(
            f"the seed's SHA-256 is {seed.commitment}, not the commitment {_shown(commitment)}"
        )
    players = _field(document, "players", list, "the document")
    timings: list[_Timing] = []
    for number, player in enumerate(players, start=1):
        if not isinstance(player, Mapping):
            raise NotAReplay(f"players[{number - 1}] is not an object")
        timing = _verify_player(player, seed, ruleset, report)
        report.players.append(timing.check)
        timings.append(timing)
    _verify_finish_times(timings, limit_ms, report)
    _verify_ranks(timings, match.get("win_by", "time"), report)
    _verify_par(match.get("par"), report)


def _verify_par(par: object, report: Report) -> None:
    """No player scored above the par (a null or missing par: not computed)."""
    if par is None:
        return
    if not isinstance(par, Mapping):
        raise NotAReplay(f"match.par is {_shown(par)}, not an object or null")
    score = _field(par, "score", int, "match.par")
    _field(par, "exact", bool, "match.par")
    for player in report.players:
        if player.score > score:
            report.discrepancies.append(
                f"{player.name}: score {player.score} is above the deal's par {score}"
            )


def _entries(actions: Sequence[object], where: str) -> list[_Entry]:
    entries = []
    for number, entry in enumerate(actions, start=1):
        at = f"{where} action #{number}"
        entries.append(
            _Entry(
                number=number,
                seq=_field(entry, "seq", int, at),
                text=_field(entry, "action", str, at),
                score=_field(entry, "score", int, at),
                t_ms=_field(entry, "t_ms", int, at),
            )
        )
    return entries


def _verify_player(
    player: Mapping[str, Any], seed: Seed, ruleset: Ruleset, report: Report
) -> _Timing:
    """Replay one player's actions and check their order in time."""
    name = _named(player.get("name", player.get("player_id", "?")))
    entries = _entries(_field(player, "actions", list, f"player {name}"), f"player {name}")
    _check_action_order(entries, name, report)
    game = Game(seed, ruleset)
    score_ms = 0
    replayed = 0
    for entry in entries:
        label = entry.label(name)
        try:
            action = parse_action(entry.text)
        except GapsError as error:
            report.discrepancies.append(f"{label} does not parse: {error}")
            break
        before = game.score
        try:
            game.push(action)
        except GapsError as error:
            reason = getattr(error, "reason", "")
            report.discrepancies.append(f"{label} is illegal: {error} [{reason}]")
            break
        replayed += 1
        if game.score != before:
            score_ms = entry.t_ms
        if entry.score != game.score:
            report.discrepancies.append(
                f"{label}: recorded score {entry.score}, the rules give {game.score}"
            )
    else:
        _compare_totals(player, game, name, report)
        _check_end_reason(player, game, name, report)
    rank = player.get("rank")
    finish_ms = player.get("finish_ms")
    return _Timing(
        check=PlayerCheck(
            name=name, actions=replayed, score=game.score, placed=game.placed,
            redeals=game.redeals_used, moves=game.moves_made, won=game.is_won(),
            rank=rank if _is_int(rank) else None, bot=player.get("bot") is True,
        ),
        end_reason=player.get("end_reason"),
        finish_ms=finish_ms if _is_int(finish_ms) else None,
        last_action_ms=entries[-1].t_ms if entries else None,
        score_ms=score_ms,
    )


def _check_action_order(entries: Sequence[_Entry], name: str, report: Report) -> None:
    """``seq`` increases; ``t_ms`` starts at the match start and never goes backwards."""
    last_seq, last_t_ms = 0, 0
    for entry in entries:
        label = entry.label(name)
        if entry.seq <= last_seq:
            report.discrepancies.append(f"{label}: seq does not increase (after {last_seq})")
        if entry.t_ms < 0:
            report.discrepancies.append(f"{label}: t_ms {entry.t_ms} is before the match start")
        elif entry.t_ms < last_t_ms:
            report.discrepancies.append(
                f"{label}: t_ms {entry.t_ms} goes back before the t_ms {last_t_ms} of the"
                " action before it"
            )
        last_seq, last_t_ms = entry.seq, max(last_t_ms, entry.t_ms)


def _compare_totals(player: Mapping[str, Any], game: Game, name: str, report: Report) -> None:
    expected = {
        "score": game.score, "placed": game.placed, "redeals": game.redeals_used,
        "moves": game.moves_made, "won": game.is_won(),
    }
    for key, value in expected.items():
        recorded = player.get(key)
        if recorded != value or isinstance(recorded, bool) != isinstance(value, bool):
            report.discrepancies.append(
                f"{name}: recorded {key} {_shown(recorded)}, the replay gives {value!r}"
            )


def _check_end_reason(player: Mapping[str, Any], game: Game, name: str, report: Report) -> None:
    reason = player.get("end_reason")
    result = game.result()
    if reason not in ENDED_BY_PLAY + ENDED_FROM_OUTSIDE:
        report.discrepancies.append(
            f"{name}: end_reason {_shown(reason)} is not one of"
            f" {', '.join(ENDED_BY_PLAY + ENDED_FROM_OUTSIDE)}"
        )
    elif reason in ENDED_BY_PLAY and result != reason:
        report.discrepancies.append(f"{name}: recorded as {reason}, but the replay ends {result}")
    elif reason in ENDED_FROM_OUTSIDE and game.is_over():
        report.discrepancies.append(
            f"{name}: the replay ends {result}, but the recorded end_reason is {reason!r}"
        )


def _time_limit_ms(timings: Sequence[_Timing], limit_ms: int | None, report: Report) -> int | None:
    """The time limit as given, else as the games ended by ``time`` show it, else None."""
    if limit_ms is not None:
        return limit_ms
    by_time = [t for t in timings if t.end_reason == "time" and t.finish_ms is not None]
    if len({t.finish_ms for t in by_time}) > 1:
        finishes = ", ".join(f"{t.check.name} {t.finish_ms}" for t in by_time)
        report.discrepancies.append(
            f"the games ended by time finish at different finish_ms ({finishes}), but the"
            " match has one time limit"
        )
        return None
    return by_time[0].finish_ms if by_time else None


def _verify_finish_times(
    timings: Sequence[_Timing], limit_ms: int | None, report: Report
) -> None:
    """Each ``finish_ms`` is where its end reason puts it (see the module docstring)."""
    limit_ms = _time_limit_ms(timings, limit_ms, report)
    for timing in timings:
        name, reason = timing.check.name, timing.end_reason
        finish, last = timing.finish_ms, timing.last_action_ms
        if finish is None:
            continue  # _verify_ranks says so
        if finish < 0:
            report.discrepancies.append(f"{name}: finish_ms {finish} is before the match start")
        if reason in ENDED_BY_PLAY and last is not None and finish != last:
            report.discrepancies.append(
                f"{name}: finish_ms {finish}, but the game ended ({reason}) with its last"
                f" action, at t_ms {last}"
            )
        elif last is not None and finish < last:
            report.discrepancies.append(
                f"{name}: finish_ms {finish} is before its last action, at t_ms {last}"
            )
        if limit_ms is None:
            continue
        if reason == "time" and finish != limit_ms:
            report.discrepancies.append(
                f"{name}: finish_ms {finish}, but a game ended by time finishes at the time"
                f" limit, {limit_ms}"
            )
        elif finish > limit_ms:
            report.discrepancies.append(
                f"{name}: finish_ms {finish} is after the time limit, {limit_ms}"
            )


def _verify_ranks(timings: Sequence[_Timing], win_by: object, report: Report) -> None:
    """Ranks as the server gives them (``gaps.ranking``): equal results share a rank."""
    if win_by not in WIN_BY:
        report.discrepancies.append(f"match.win_by is {_shown(win_by)}, not 'time' or 'score'")
        return
    finishes = []
    for index, timing in enumerate(timings):
        name = timing.check.name
        if timing.check.rank is None:
            report.discrepancies.append(f"{name}: no rank recorded, so no rank can be checked")
            return
        if timing.finish_ms is None:
            report.discrepancies.append(
                f"{name}: finish_ms is not a time in milliseconds, so no rank can be checked"
            )
            return
        # The index stands for the player: a document's player_id need not be an integer.
        finishes.append(Finish(player_id=index, won=timing.check.won, score=timing.check.score,
                               finish_ms=timing.finish_ms, score_ms=timing.score_ms))
    for expected_rank, finish in rank(finishes, str(win_by)):
        check = timings[finish.player_id].check
        if check.rank != expected_rank:
            report.discrepancies.append(
                f"{check.name}: recorded rank {check.rank}, the results give rank {expected_rank}"
            )
