"""Replay: a recorded game rebuilds exactly; the first refused action is reported."""

from __future__ import annotations

import random

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from gaps import RULESETS, Game, Move, Seed
from gaps.errors import NotationError
from gaps.move import REDEAL, STOP, UNDO, Action
from gaps.replay import Replay, replay

SEED = Seed(bytes.fromhex("00000000000000000034"))


def recorded(ruleset: str, number: int, max_moves: int = 10_000) -> tuple[Game, list[Action]]:
    game = Game(Seed(number.to_bytes(10, "big")), ruleset)
    actions = game.random_playout(random.Random(number), max_moves=max_moves)
    return game, actions


def assert_identical(one: Game, two: Game) -> None:
    assert one == two
    assert (one.moves_made, one.redeals_used, one.stopped, one.score, one.result()) == (
        two.moves_made, two.redeals_used, two.stopped, two.score, two.result()
    )
    assert one.layout() == two.layout()


@pytest.mark.parametrize("ruleset", list(RULESETS))
def test_a_recorded_game_replays_to_the_identical_game(ruleset: str) -> None:
    for number in range(10):
        game, actions = recorded(ruleset, number)
        result = replay(game.seed, ruleset, actions)
        assert result.ok and result.error is None and result.failed_action is None
        assert result.applied == len(actions)
        assert_identical(result.game, game)
        assert result.score == game.score


def test_a_game_replays_from_its_text_actions() -> None:
    game, actions = recorded("classic", 4)
    result = replay(game.seed, "classic", [str(action) for action in actions])
    assert result.ok
    assert_identical(result.game, game)


def test_a_63_action_game_replays_exactly() -> None:
    number = 0
    while True:
        game, actions = recorded("classic", number)
        if len(actions) >= 63:
            break
        number += 1
    actions = actions[:63]
    prefix = Game(game.seed, "classic")
    for action in actions:
        prefix.push(action)
    result = replay(game.seed, "classic", actions)
    assert result.ok and result.applied == 63
    assert_identical(result.game, prefix)


def test_the_first_refused_action_is_reported_with_its_index_and_reason() -> None:
    game, actions = recorded("classic", 2)
    moves = [action for action in actions if isinstance(action, Move)][:10]
    bad = [*moves[:6], UNDO, *moves[6:]]
    result = replay(game.seed, "classic", bad)
    assert not result.ok
    assert result.applied == 6
    assert result.failed_action == UNDO
    assert result.error is not None and result.error.reason == "undo_not_allowed"
    expected = Game(game.seed, "classic")
    for move in moves[:6]:
        expected.play(move)
    assert_identical(result.game, expected)


def test_a_move_that_is_not_legal_in_the_replayed_position_is_reported() -> None:
    game = Game(SEED, "classic")
    legal = game.legal_moves()[0]
    illegal = next(
        Move.parse(text)
        for text in ("2C", "3C", "4C", "5C", "6C", "7C", "8C")
        if Move.parse(text) not in game.legal_moves()
    )
    result = replay(SEED, "classic", [legal, illegal, legal])
    assert result.applied == 1
    assert result.failed_action == illegal
    assert result.error is not None and result.error.reason in {
        "not_a_gap", "row_required", "wrong_card", "dead_gap"
    }


def test_actions_after_a_stop_are_reported_as_game_over() -> None:
    result = replay(SEED, "classic", ["stop", "redeal"])
    assert result.applied == 1
    assert result.error is not None and result.error.reason == "game_over"
    assert result.game.stopped


def test_a_redeal_before_being_blocked_is_reported() -> None:
    result = replay(SEED, "classic", [REDEAL])
    assert (result.applied, result.failed_action) == (0, REDEAL)
    assert result.error is not None and result.error.reason == "redeal_not_allowed"


def test_text_that_does_not_parse_raises_a_notation_error() -> None:
    with pytest.raises(NotationError, match="'8X'"):
        replay(SEED, "classic", ["stop", "8X"])


@pytest.mark.parametrize(
    "text", ["2H>" + "1" * 5000, "8C>r" + "1" * 5000 + "c1", "\u3000stop", "Q\u017f", "2H>03"]
)
def test_text_a_bare_int_or_unicode_folding_would_misread_raises_a_notation_error(
    text: str,
) -> None:
    with pytest.raises(NotationError) as caught:
        replay(SEED, "classic", ["stop", text])
    assert repr(text[:40]) in str(caught.value)


@settings(max_examples=200, deadline=None)
@given(st.lists(st.one_of(
    st.sampled_from(["stop", "redeal", "undo", "2C>1", "2D>2", "8C", "KS>r4c13"]),
    st.text(max_size=8),
), max_size=6))
def test_any_text_replays_or_raises_a_notation_error(actions: list[str]) -> None:
    try:
        result = replay(SEED, "classic", actions)
    except NotationError:
        return
    assert 0 <= result.applied <= len(actions)
    assert result.ok == (result.applied == len(actions))


def test_an_unknown_ruleset_raises_a_notation_error() -> None:
    with pytest.raises(NotationError):
        replay(SEED, "gaps", [])


def test_an_empty_replay_is_the_deal() -> None:
    result = replay(SEED, "montana", [])
    assert isinstance(result, Replay)
    assert result.ok and result.applied == 0
    assert_identical(result.game, Game(SEED, "montana"))


def test_undo_and_redeal_replay_in_addiction() -> None:
    game = Game(SEED, "addiction")
    actions: list[Action] = []

    def push(action: Action) -> None:
        game.push(action)
        actions.append(action)

    for _ in range(3):
        push(game.legal_moves()[-1])
    push(UNDO)
    push(REDEAL)
    push(game.legal_moves()[0])
    push(UNDO)
    push(game.legal_moves()[-1])
    push(STOP)
    result = replay(SEED, "addiction", actions)
    assert result.ok and result.applied == 9
    assert_identical(result.game, game)
    assert result.game.moves_made == 5


@settings(max_examples=100, deadline=None)
@given(
    st.binary(min_size=1, max_size=10).map(Seed),
    st.sampled_from(list(RULESETS)),
    st.lists(st.integers(0, 10_000), max_size=120),
)
def test_replay_of_any_recorded_game_reproduces_it_exactly(
    seed: Seed, ruleset: str, picks: list[int]
) -> None:
    game = Game(seed, ruleset)
    actions: list[Action] = []
    for pick in picks:
        if game.is_over():
            break
        moves = game.legal_moves()
        if pick % 11 == 0 and game.can_undo():
            action: Action = UNDO
        elif pick % 53 == 0:
            action = STOP
        elif moves:
            action = moves[pick % len(moves)]
        elif game.can_redeal():
            action = REDEAL
        else:
            break
        game.push(action)
        actions.append(action)
    result = replay(seed, ruleset, actions)
    assert result.ok and result.applied == len(actions)
    assert_identical(result.game, game)
    assert result.game.undo_stack() == game.undo_stack()
