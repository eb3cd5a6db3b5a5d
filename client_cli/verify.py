"""Audit a finished match from its replay document, with ``gaps`` alone.

Pure: ``verify(document)`` takes the replay (the dict of docs/protocol.md, format
``gaps-replay/1``) and returns a ``Report``. It checks that

* SHA-256 of the revealed seed is the commitment published when the match started;
* for every player, each recorded action replays legally from the seed, and the score
  recorded with each action is the score the rules give after it;
* each player's final score, placed cards, redeals, moves and win are what the replay
  gives, and the end reason agrees with the replayed game (a win is a win, a loss is a
  blocked game with no redeal left, a stop ends with ``stop``);
* the ranks follow from those results as ruled (``win_by`` time or score).

The result holds when no discrepancy is found.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, Final

from gaps import GapsError, Ruleset, Seed
from gaps.game import Game
from gaps.move import Stop, parse_action

FORMAT: Final = "gaps-replay/1"


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


def _field(data: Mapping[str, Any], key: str, kind: type | tuple[type, ...], where: str) -> Any:
    if not isinstance(data, Mapping) or key not in data:
        raise NotAReplay(f"{where} has no {key!r}")
    value = data[key]
    if not isinstance(value, kind) or (isinstance(value, bool) and kind is int):
        raise NotAReplay(f"{where}.{key} is {value!r}, of the wrong type")
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
        raise NotAReplay(f"format is {found_format!r}, expected {FORMAT!r}")
    match = _field(document, "match", Mapping, "the document")
    report.code = str(match.get("code", "?"))
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
    commitment = match.get("commitment")
    if commitment != seed.commitment:
        report.discrepancies.append(
            f"the seed's SHA-256 is {seed.commitment}, not the commitment {commitment!r}"
        )
    players = _field(document, "players", list, "the document")
    finishes: list[tuple[Mapping[str, Any], PlayerCheck, int]] = []
    for number, player in enumerate(players, start=1):
        if not isinstance(player, Mapping):
            raise NotAReplay(f"players[{number - 1}] is not an object")
        check, score_ms = _verify_player(player, seed, ruleset, report)
        report.players.append(check)
        finishes.append((player, check, score_ms))
    _verify_ranks(finishes, str(match.get("win_by", "time")), report)


def _verify_player(
    player: Mapping[str, Any], seed: Seed, ruleset: Ruleset, report: Report
) -> tuple[PlayerCheck, int]:
    """Replay one player's actions; returns what it gave and when the final score came."""
    name = str(player.get("name", player.get("player_id", "?")))
    where = f"player {name}"
    actions = _field(player, "actions", list, where)
    game = Game(seed, ruleset)
    score_ms = 0
    last_seq = 0
    replayed = 0
    last_action = None
    for number, entry in enumerate(actions, start=1):
        text = _field(entry, "action", str, f"{where} action #{number}")
        seq = _field(entry, "seq", int, f"{where} action #{number}")
        recorded = _field(entry, "score", int, f"{where} action #{number}")
        t_ms = entry.get("t_ms") if isinstance(entry.get("t_ms"), int) else 0
        label = f"{name}: action #{number} (seq {seq}) {text!r}"
        if seq <= last_seq:
            report.discrepancies.append(f"{label}: seq does not increase (after {last_seq})")
        last_seq = seq
        try:
            action = parse_action(text)
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
        last_action = action
        if game.score != before:
            score_ms = t_ms
        if recorded != game.score:
            report.discrepancies.append(
                f"{label}: recorded score {recorded}, the rules give {game.score}"
            )
    else:
        _compare_totals(player, game, name, report)
        _check_end_reason(player, game, last_action, name, report)
    rank = player.get("rank")
    check = PlayerCheck(
        name=name, actions=replayed, score=game.score, placed=game.placed,
        redeals=game.redeals_used, moves=game.moves_made, won=game.is_won(),
        rank=rank if isinstance(rank, int) else None,
    )
    return check, score_ms


def _compare_totals(player: Mapping[str, Any], game: Game, name: str, report: Report) -> None:
    expected = {
        "score": game.score, "placed": game.placed, "redeals": game.redeals_used,
        "moves": game.moves_made, "won": game.is_won(),
    }
    for key, value in expected.items():
        recorded = player.get(key)
        if recorded != value or isinstance(recorded, bool) != isinstance(value, bool):
            report.discrepancies.append(
                f"{name}: recorded {key} {recorded!r}, the replay gives {value!r}"
            )


def _check_end_reason(
    player: Mapping[str, Any], game: Game, last_action: object, name: str, report: Report
) -> None:
    reason = player.get("end_reason")
    result = game.result()
    if reason == "won" and result != "won":
        report.discrepancies.append(f"{name}: recorded as won, but the replay ends {result}")
    elif reason == "lost" and result != "lost":
        report.discrepancies.append(f"{name}: recorded as lost, but the replay ends {result}")
    elif reason == "stopped" and not isinstance(last_action, Stop):
        report.discrepancies.append(f"{name}: recorded as stopped, but the last action is no stop")
    elif result in ("won", "lost") and reason != result:
        report.discrepancies.append(
            f"{name}: the replay ends {result}, but the recorded end is {reason!r}"
        )


def _sort_key(won: bool, score: int, finish_ms: int, score_ms: int, win_by: str) -> tuple[int, ...]:
    if win_by == "score":
        return (-score, finish_ms)
    if won:
        return (0, finish_ms)
    return (1, -score, score_ms)


def _verify_ranks(
    finishes: Sequence[tuple[Mapping[str, Any], PlayerCheck, int]], win_by: str, report: Report
) -> None:
    """Ranks as ruled: equal keys share a rank, the next rank skips (1, 1, 3)."""
    if win_by not in ("time", "score"):
        report.discrepancies.append(f"match.win_by is {win_by!r}, not 'time' or 'score'")
        return
    if any(check.rank is None for _, check, _ in finishes):
        report.discrepancies.append("a player has no rank")
        return
    keyed = []
    for player, check, score_ms in finishes:
        finish_ms = player.get("finish_ms")
        if not isinstance(finish_ms, int):
            report.discrepancies.append(f"{check.name}: no finish time, so no rank can be checked")
            return
        keyed.append((_sort_key(check.won, check.score, finish_ms, score_ms, win_by), check))
    keyed.sort(key=lambda item: item[0])
    expected_rank = 0
    previous: tuple[int, ...] | None = None
    for position, (key, check) in enumerate(keyed, start=1):
        if key != previous:
            expected_rank, previous = position, key
        if check.rank != expected_rank:
            report.discrepancies.append(
                f"{check.name}: recorded rank {check.rank}, the results give rank {expected_rank}"
            )
