"""The engine's and the server's closed sets of names are the protocol's: the server puts
them on the wire as they are, typed by these literals (mypy checks every use)."""

from __future__ import annotations

from typing import get_args

from gaps import RULESETS, RulesetName
from gaps.game import GameResult
from gaps_protocol.messages.common import MatchStatus, PlayerStatus, Ruleset, TournamentStatus
from gaps_protocol.messages.errors import ERROR_CODES, is_error_code
from server.errors import ERROR_CODES as SERVER_ERROR_CODES
from server.matchstate import PHASES
from server.tournamentstate import STATUSES


def test_the_rulesets_names_are_the_protocols() -> None:
    assert tuple(RULESETS) == get_args(RulesetName) == get_args(Ruleset)


def test_every_result_of_a_game_is_a_players_status() -> None:
    assert set(get_args(GameResult)) <= set(get_args(PlayerStatus))


def test_a_matchs_phases_are_its_statuses_and_ending() -> None:
    assert set(PHASES) == set(get_args(MatchStatus)) | {"ending"}


def test_a_tournaments_statuses_are_the_protocols() -> None:
    assert STATUSES == get_args(TournamentStatus)


def test_an_error_code_is_one_of_the_protocols_and_the_servers() -> None:
    assert all(is_error_code(code) for code in SERVER_ERROR_CODES)
    assert set(SERVER_ERROR_CODES) == set(ERROR_CODES)
    assert not is_error_code("not_a_code")
