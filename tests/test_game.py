"""The game: deal, moves, refusals, redeals per ruleset, undo, stop, end of game, score."""

from __future__ import annotations

import random
from collections import Counter

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from gaps import RULESETS, Card, Game, IllegalAction, Move, Seed, Slot
from gaps.errors import REASONS, GapsError, NotationError
from gaps.game import GAP, dealt_grid, redealt_grid
from gaps.move import REDEAL, STOP, UNDO, Action, Redeal, Stop, Undo, parse_action
from gaps.ruleset import Ruleset
from gaps.shuffle import shuffle

SEED = Seed(bytes.fromhex("00000000000000000034"))

# Every way a move can go wrong is on this board:
#   r1c1 is a gap in column 1 (any 2 may come), r2c7 is live (it takes 8D, which stands
#   in column 13), r3c12 is dead (right of KH), r3c13 is dead (right of a gap).
PLAY = """
-- 2C 3C 4C 5C 6C 7C 8C 9C TC JC QC KC
2D 3D 4D 5D 6D 7D -- 9D TD JD QD KD 8D
2H 3H 4H 5H 6H 7H 8H 9H TH JH KH -- --
QH 2S 3S 4S 5S 6S 7S 8S 9S TS JS QS KS
"""

# Blocked; preserved sequences of 3, 2, 0 and 4 cards; QC and KC also in their final
# columns of row 1 (only paganini keeps those). Reached by legal play from SEED.
BLOCKED = """
2C 3C 4C 6C 7C 8C 9C KS -- -- QC KC 2S
2H 3H 5S 6S 9H TH 5C TS JS QS 9S 3S 4S
7D 8D JH 4H 5H 6H 7H 8H 6D QH KH -- --
2D 3D 4D 5D QD KD 9D TD JD 7S 8S TC JC
"""

# Blocked, with a full row: its gap stays in column 13 at a redeal.
FULL_ROW_BLOCKED = """
2C 3C 4C 5C 6C 7C 8C 9C TC JC QC KC --
2D 3D KH -- 4H 5H 6H 7H 8H 9H TH JH QH
2H 3H KS -- 4S 5S 6S 7S 8S 9S TS JS QS
2S 3S KD -- 4D 5D 6D 7D 8D 9D TD JD QD
"""

# The only move, KD, leaves a gap right of KH: blocked.
LAST_MOVE_BLOCKS = """
2C 3C 4C 5C 6C 7C 8C 9C TC JC QC KC --
2D 3D KH KD 4H 5H 6H 7H 8H 9H TH JH QH
2H 3H KS -- -- 5S 6S 7S 8S 9S TS JS QS
2S 3S QD -- 4D 5D 6D 7D 8D 9D TD JD 4S
"""

WON = "\n".join(
    " ".join(f"{rank}{suit}" for rank in "23456789TJQK") + " --" for suit in "HSCD"
)

# One move (KS) from a win.
NEAR_WON = """
2C 3C 4C 5C 6C 7C 8C 9C TC JC QC KC --
2D 3D 4D 5D 6D 7D 8D 9D TD JD QD KD --
2H 3H 4H 5H 6H 7H 8H 9H TH JH QH KH --
2S 3S 4S 5S 6S 7S 8S 9S TS JS QS -- KS
"""


def game_at(layout: str, ruleset: str = "classic", redeals_used: int = 0) -> Game:
    return Game.from_layout(layout, ruleset, seed=SEED, redeals_used=redeals_used)


def snapshot(game: Game) -> tuple[object, ...]:
    return (
        game.state_key(), game.moves_made, game.redeals_used, game.stopped, game.layout(),
        game.undo_stack(), game.score, game.result(),
    )


def refused(game: Game, action: Action | str, reason: str) -> IllegalAction:
    """Assert that ``action`` is refused for ``reason`` and changes nothing."""
    if isinstance(action, str):
        action = parse_action(action)
    before = snapshot(game)
    with pytest.raises(IllegalAction) as caught:
        game.push(action)
    assert caught.value.reason == reason, caught.value
    assert snapshot(game) == before
    return caught.value


def cells(game: Game, row: int) -> list[str]:
    return game.layout().splitlines()[row - 1].split()


def slots(text: str) -> list[Slot]:
    return [Slot.parse(part) for part in text.split()]


def cards_on(game: Game) -> Counter[int]:
    return Counter(code for code in game.grid_codes() if code != GAP)


def assert_48_cards_and_4_gaps(game: Game) -> None:
    codes = game.grid_codes()
    assert len(codes) == 52
    assert codes.count(GAP) == 4
    assert sorted(code for code in codes if code != GAP) == [
        code for code in range(52) if code % 13 != 0
    ]


# -- the deal ----------------------------------------------------------------------------


@pytest.mark.parametrize("ruleset", list(RULESETS))
def test_a_deal_has_48_cards_and_4_gaps_and_no_ace(ruleset: str) -> None:
    for number in range(20):
        game = Game(Seed(number.to_bytes(10, "big")), ruleset)
        assert_48_cards_and_4_gaps(game)
        assert len(game.gaps()) == 4
        assert game.redeals_used == 0 and game.moves_made == 0 and not game.stopped


def test_the_gaps_of_a_deal_are_where_the_aces_were_dealt() -> None:
    deck = list(range(52))
    shuffle(deck, SEED.data, b"deal")
    game = Game(SEED, "classic")
    aces_at = [index for index, code in enumerate(deck) if code % 13 == 0]
    assert [slot.index for slot in game.gaps()] == aces_at
    assert [code for code in game.grid_codes() if code != GAP] == [c for c in deck if c % 13]


def test_a_deal_is_a_pure_function_of_seed_and_ruleset() -> None:
    assert Game(SEED, "classic").layout() == Game(Seed(SEED.data), "classic").layout()
    assert Game(SEED, "classic").layout() != Game(Seed(b"other"), "classic").layout()


def test_the_same_seed_gives_the_same_deal_in_every_ruleset_but_montana() -> None:
    layouts = {name: Game(SEED, name).layout() for name in RULESETS}
    assert len({layouts[name] for name in RULESETS if name != "montana"}) == 1
    assert layouts["montana"] != layouts["classic"]


@pytest.mark.parametrize("number", range(12))
def test_montana_swaps_the_2s_into_column_1_in_the_order_they_lie_in_the_deal(number: int) -> None:
    seed = Seed(number.to_bytes(10, "big"))
    grid = list(Game(seed, "classic").grid_codes())
    twos = [code for code in grid if code != GAP and code % 13 == 1]
    for row, two in enumerate(twos):
        here = grid.index(two)
        grid[here], grid[row * 13] = grid[row * 13], grid[here]
    montana = Game(seed, "montana")
    assert list(montana.grid_codes()) == grid
    assert [montana.card_at(Slot(row, 1)) for row in range(1, 5)] == [
        Card.from_code(two) for two in twos
    ]
    assert_48_cards_and_4_gaps(montana)
    assert montana.placed >= 4


def test_dealt_grid_is_what_game_starts_with() -> None:
    for name, ruleset in RULESETS.items():
        assert tuple(dealt_grid(SEED, ruleset)) == Game(SEED, name).grid_codes()


# -- reading the position ------------------------------------------------------------------


def test_layout_and_from_layout_round_trip() -> None:
    game = game_at(PLAY)
    assert game.layout() == PLAY.strip()
    assert str(game) == PLAY.strip()
    assert Game.from_layout(game.layout()).grid_codes() == game.grid_codes()


def test_card_at_slot_of_and_gaps_read_the_grid() -> None:
    game = game_at(PLAY)
    assert game.card_at(Slot(2, 13)) == Card.parse("8D")
    assert game.card_at(Slot(1, 1)) is None
    assert game.slot_of(Card.parse("QH")) == Slot(4, 1)
    assert game.gaps() == slots("r1c1 r2c7 r3c12 r3c13")
    assert game.grid_codes()[0] == GAP


def test_is_dead_gap_means_right_of_a_king_or_of_a_gap() -> None:
    game = game_at(PLAY)
    assert game.is_dead_gap(Slot(3, 12))  # right of KH
    assert game.is_dead_gap(Slot(3, 13))  # right of a gap
    assert not game.is_dead_gap(Slot(2, 7))  # right of 7D
    assert not game.is_dead_gap(Slot(1, 1))  # column 1 takes any 2
    assert not game.is_dead_gap(Slot(1, 2))  # not a gap at all


# -- moves ---------------------------------------------------------------------------------


def test_a_gap_in_column_1_accepts_any_2() -> None:
    for two in ("2C", "2D", "2H", "2S"):
        game = game_at(PLAY)
        came_from = game.slot_of(Card.parse(two))
        game.play(Move.parse(f"{two}>1"))
        assert game.card_at(Slot(1, 1)) == Card.parse(two)
        assert game.card_at(came_from) is None
        assert game.moves_made == 1


def test_a_2_standing_in_column_1_of_another_row_may_move_to_a_column_1_gap() -> None:
    game = game_at(PLAY)
    game.play(Move.parse("2D>1"))
    assert game.gaps()[0] == Slot(2, 1)
    game.play(Move.parse("2D>2"))  # and back
    assert game.gaps()[0] == Slot(1, 1)


def test_a_gap_takes_the_card_one_rank_higher_in_the_suit_of_its_left_neighbour() -> None:
    game = game_at(PLAY)
    game.play(Move.parse("8D"))
    assert game.card_at(Slot(2, 7)) == Card.parse("8D")
    assert game.card_at(Slot(2, 13)) is None
    assert game.placed_per_row()[1] == 12


def test_a_move_with_its_named_slot_is_the_same_move() -> None:
    game = game_at(PLAY)
    assert game.is_legal(Move.parse("8D>r2c7"))
    game.play(Move.parse("8D>r2c7"))
    assert game.card_at(Slot(2, 7)) == Card.parse("8D")


def test_legal_moves_lists_every_2_for_a_column_1_gap_and_one_card_per_live_gap() -> None:
    game = game_at(PLAY)
    assert sorted(map(str, game.legal_moves())) == ["2C>1", "2D>1", "2H>1", "2S>1", "8D"]
    assert all(game.is_legal(move) for move in game.legal_moves())


def test_a_card_other_than_a_2_has_at_most_one_destination() -> None:
    for number in range(10):
        game = Game(Seed(number.to_bytes(10, "big")), "classic")
        destinations = Counter(
            move.card for move in game.legal_moves() if move.card.rank != 2
        )
        assert all(count == 1 for count in destinations.values())


def test_destination_says_where_a_legal_move_goes() -> None:
    game = game_at(PLAY)
    assert game.destination(Move.parse("8D")) == Slot(2, 7)
    assert game.destination(Move.parse("2S>1")) == Slot(1, 1)
    with pytest.raises(IllegalAction) as caught:
        game.destination(Move.parse("9D"))
    assert caught.value.reason == "not_a_gap"


def test_any_legal_move_may_be_made_in_any_order() -> None:
    one, two = game_at(PLAY), game_at(PLAY)
    one.play(Move.parse("8D"))
    one.play(Move.parse("2H>1"))
    two.play(Move.parse("2H>1"))
    two.play(Move.parse("8D"))
    assert one.layout() == two.layout()


# -- refusals: every reason, in a situation that shows it, and nothing changes --------------


def test_every_reason_has_a_description() -> None:
    assert set(REASONS) == {
        "not_a_gap", "dead_gap", "wrong_card", "row_required", "not_in_play",
        "redeal_not_allowed", "no_redeals_left", "undo_not_allowed", "nothing_to_undo",
        "game_over",
    }
    assert all(REASONS.values())


def test_an_illegal_action_carries_its_reason_and_message() -> None:
    error = IllegalAction("dead_gap", "8C: the gap at r1c2 is dead")
    assert (error.reason, error.message, str(error)) == (
        "dead_gap", "8C: the gap at r1c2 is dead", "8C: the gap at r1c2 is dead"
    )
    assert isinstance(error, GapsError)
    assert "dead_gap" in repr(error)
    with pytest.raises(ValueError, match="unknown reason"):
        IllegalAction("nonsense", "x")


def test_a_move_to_a_slot_holding_a_card_is_not_a_gap() -> None:
    error = refused(game_at(PLAY), "9C>r1c2", "not_a_gap")
    assert "r1c2 holds 2C" in str(error)
    refused(game_at(PLAY), "2H>2", "not_a_gap")


def test_a_card_whose_lower_neighbour_has_a_card_on_its_right_is_not_a_gap() -> None:
    error = refused(game_at(PLAY), "6C", "not_a_gap")
    assert "5C" in str(error) and "6C" in str(error)


def test_a_card_whose_lower_neighbour_stands_in_column_13_has_no_slot() -> None:
    error = refused(game_at(PLAY), "9D", "not_a_gap")
    assert "8D stands in column 13" in str(error)


def test_a_gap_right_of_a_king_is_dead() -> None:
    error = refused(game_at(PLAY), "QH>r3c12", "dead_gap")
    assert "KH" in str(error)


def test_a_gap_right_of_another_gap_is_dead() -> None:
    error = refused(game_at(PLAY), "QH>r3c13", "dead_gap")
    assert "gap on its left" in str(error)


def test_a_gap_in_column_1_takes_only_a_2() -> None:
    error = refused(game_at(PLAY), "9D>r1c1", "wrong_card")
    assert "only a 2" in str(error)
    refused(game_at(PLAY), "9D>1", "wrong_card")


def test_a_live_gap_refuses_any_card_but_the_one_it_takes() -> None:
    error = refused(game_at(PLAY), "9D>r2c7", "wrong_card")
    assert "takes 8D" in str(error)
    refused(game_at(PLAY), "2H>r2c7", "wrong_card")


def test_the_slot_a_card_leaves_can_be_a_dead_gap() -> None:
    game = game_at(PLAY)
    game.play(Move.parse("8D"))  # r2c13 is now a gap right of KD: dead
    refused(game, "QH>r2c13", "dead_gap")


def test_a_2_needs_its_row() -> None:
    error = refused(game_at(PLAY), "2H", "row_required")
    assert "2H>1" in str(error)


def test_aces_are_not_in_play() -> None:
    refused(game_at(PLAY), "AC", "not_in_play")
    refused(game_at(PLAY), "AS>r1c1", "not_in_play")
    with pytest.raises(IllegalAction) as caught:
        game_at(PLAY).slot_of(Card.parse("AH"))
    assert caught.value.reason == "not_in_play"


def test_no_redeal_is_ever_allowed_in_no_redeal() -> None:
    error = refused(game_at(PLAY, "no-redeal"), REDEAL, "redeal_not_allowed")
    assert "no-redeal" in str(error)


@pytest.mark.parametrize("ruleset", ["classic", "spaces", "montana", "paganini"])
def test_a_redeal_before_being_blocked_is_refused_where_redeals_need_a_block(ruleset: str) -> None:
    game = game_at(PLAY, ruleset)
    assert not game.can_redeal()
    error = refused(game, REDEAL, "redeal_not_allowed")
    assert "only when blocked" in str(error)


@pytest.mark.parametrize(
    ("ruleset", "redeals"), [("classic", 2), ("addiction", 3), ("paganini", 3)]
)
def test_a_redeal_when_all_are_used_is_refused(ruleset: str, redeals: int) -> None:
    refused(game_at(PLAY, ruleset, redeals_used=redeals), REDEAL, "no_redeals_left")


@pytest.mark.parametrize("ruleset", ["classic", "no-redeal", "spaces", "montana", "paganini"])
def test_undo_is_refused_where_the_ruleset_has_none(ruleset: str) -> None:
    game = game_at(PLAY, ruleset)
    game.play(Move.parse("8D"))
    assert not game.can_undo()
    refused(game, UNDO, "undo_not_allowed")
    assert game.undo_stack() == []


def test_undo_with_no_move_since_the_start_is_refused() -> None:
    refused(Game(SEED, "addiction"), UNDO, "nothing_to_undo")


def test_undo_with_no_move_since_the_last_redeal_is_refused() -> None:
    game = game_at(PLAY, "addiction")
    game.play(Move.parse("8D"))
    game.redeal()
    refused(game, UNDO, "nothing_to_undo")


@pytest.mark.parametrize("action", ["8D", "2H>1", "redeal", "stop", "9D", "AC"])
def test_every_action_after_a_stop_is_refused_as_game_over(action: str) -> None:
    game = game_at(PLAY, "addiction")
    game.stop()
    refused(game, action, "game_over")


def test_undo_after_a_stop_is_refused_as_game_over_in_addiction() -> None:
    game = game_at(PLAY, "addiction")
    game.play(Move.parse("8D"))
    game.stop()
    refused(game, UNDO, "game_over")


@pytest.mark.parametrize("action", ["KS", "2H>1", "redeal", "stop"])
def test_every_action_after_a_win_is_refused_as_game_over(action: str) -> None:
    game = game_at(NEAR_WON, "addiction")
    game.play(Move.parse("KS"))
    assert game.is_won()
    refused(game, action, "game_over")


@pytest.mark.parametrize("action", ["redeal", "stop", "QD>r2c4", "4H"])
def test_every_action_after_a_loss_is_refused_as_game_over(action: str) -> None:
    game = game_at(FULL_ROW_BLOCKED, "classic", redeals_used=2)
    assert game.is_lost()
    refused(game, action, "game_over")


def test_redeal_in_no_redeal_when_blocked_is_game_over_since_the_game_is_lost() -> None:
    refused(game_at(BLOCKED, "no-redeal"), REDEAL, "game_over")


def test_push_refuses_what_is_not_an_action() -> None:
    with pytest.raises(TypeError):
        game_at(PLAY).push("8D")  # type: ignore[arg-type]


# -- blocked, won, lost, stop ----------------------------------------------------------------


def test_a_position_with_live_gaps_is_playing() -> None:
    game = game_at(PLAY)
    assert not game.is_blocked() and not game.is_over()
    assert game.result() == "playing"


def test_blocked_with_a_redeal_left_is_blocked_not_over() -> None:
    game = game_at(BLOCKED)
    assert game.is_blocked() and not game.is_over() and not game.is_lost()
    assert game.legal_moves() == []
    assert game.result() == "blocked"
    assert game.can_redeal()


def test_blocked_with_no_redeal_left_is_lost_and_over() -> None:
    for ruleset, used in [("classic", 2), ("no-redeal", 0), ("spaces", 2), ("paganini", 3)]:
        game = game_at(BLOCKED, ruleset, redeals_used=used)
        assert game.is_lost() and game.is_over()
        assert game.result() == "lost"
        assert not game.can_redeal()


def test_a_lost_addiction_game_ends_even_though_undo_exists() -> None:
    game = game_at(LAST_MOVE_BLOCKS, "addiction", redeals_used=3)
    assert game.legal_moves() == [Move.parse("KD")]
    game.play(Move.parse("KD"))
    assert game.is_lost() and game.is_over() and game.result() == "lost"
    assert len(game.undo_stack()) == 1 and not game.can_undo()
    refused(game, UNDO, "game_over")


def test_a_blocked_addiction_game_with_a_redeal_left_may_undo() -> None:
    game = game_at(LAST_MOVE_BLOCKS, "addiction", redeals_used=2)
    game.play(Move.parse("KD"))
    assert game.result() == "blocked" and game.can_undo()
    game.undo()
    assert game.layout() == LAST_MOVE_BLOCKS.strip()


def test_a_won_game_is_over_and_scores_58_without_redeal() -> None:
    game = game_at(WON)
    assert game.is_won() and game.is_blocked() and game.is_over() and not game.is_lost()
    assert game.result() == "won"
    assert game.placed == 48
    assert game.score == 58


def test_any_suit_may_sit_in_any_row_for_a_win() -> None:
    for order in ("CDHS", "SHDC", "DCSH"):
        layout = "\n".join(
            " ".join(f"{rank}{suit}" for rank in "23456789TJQK") + " --" for suit in order
        )
        assert game_at(layout).is_won()


def test_playing_the_last_card_wins() -> None:
    game = game_at(NEAR_WON)
    assert not game.is_won() and game.placed == 47
    game.play(Move.parse("KS"))
    assert game.is_won() and game.result() == "won" and game.score == 58


def test_a_win_after_a_redeal_gets_no_bonus() -> None:
    assert game_at(WON, redeals_used=1).score == 48 - 5
    assert game_at(WON, "addiction", redeals_used=3).score == 48 - 15


def test_stop_ends_the_game_and_the_score_stands() -> None:
    game = game_at(BLOCKED)
    score = game.score
    game.stop()
    assert game.stopped and game.is_over() and game.result() == "stopped"
    assert game.score == score == 9
    assert game.legal_moves() == [] and not game.is_legal(Move.parse("2H>1"))


def test_stop_is_allowed_while_playing_not_only_when_blocked() -> None:
    game = game_at(PLAY)
    game.stop()
    assert game.result() == "stopped"


# -- score ------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("layout", "ruleset", "redeals", "score"),
    [
        (PLAY, "classic", 0, 6 + 10),
        (BLOCKED, "classic", 0, 9),
        (BLOCKED, "classic", 1, 9 - 5),
        (BLOCKED, "classic", 2, 9 - 10),
        (FULL_ROW_BLOCKED, "classic", 0, 18),
        (FULL_ROW_BLOCKED, "addiction", 3, 18 - 15),
        (WON, "classic", 0, 48 + 10),
        (WON, "classic", 2, 48 - 10),
    ],
)
def test_the_score_is_placed_minus_5_per_redeal_plus_10_for_a_win_without_redeal(
    layout: str, ruleset: str, redeals: int, score: int
) -> None:
    assert game_at(layout, ruleset, redeals).score == score


def test_the_lowest_score_is_minus_15() -> None:
    no_run = Game.from_layout(
        "\n".join(line.split(" ", 1)[1] + " " + line.split(" ", 1)[0] for line in WON.splitlines()),
        "addiction",
        redeals_used=3,
    )
    assert no_run.placed == 0
    assert no_run.score == -15


def test_placed_per_row_counts_each_preserved_sequence() -> None:
    assert game_at(BLOCKED).placed_per_row() == [3, 2, 0, 4]
    assert game_at(BLOCKED).run_lengths() == [3, 2, 0, 4]
    assert game_at(FULL_ROW_BLOCKED).placed_per_row() == [12, 2, 2, 2]
    assert game_at(PLAY).placed_per_row() == [0, 6, 10, 0]


def test_preserved_sequences_are_the_runs_from_column_1_in_the_suit_of_the_2() -> None:
    runs = game_at(BLOCKED).preserved_sequences()
    assert [[str(card) for card in run] for run in runs] == [
        ["2C", "3C", "4C"], ["2H", "3H"], [], ["2D", "3D", "4D", "5D"]
    ]


def test_a_card_in_its_final_column_beyond_a_break_is_not_placed() -> None:
    # QC and KC stand in their final columns of row 1, but after the break at column 4.
    assert game_at(BLOCKED).placed_per_row()[0] == 3


# -- redeals ------------------------------------------------------------------------------------


def test_a_classic_redeal_keeps_the_preserved_sequences_and_gaps_right_after_them() -> None:
    game = game_at(BLOCKED)
    before = cards_on(game)
    runs = game.preserved_sequences()
    game.redeal()
    assert game.redeals_used == 1 and game.redeals_left == 1
    assert game.preserved_sequences()[0][:3] == runs[0]
    for row, run in enumerate(runs, start=1):
        assert [game.card_at(Slot(row, c + 1)) for c in range(len(run))] == run
    assert game.gaps() == slots("r1c4 r2c3 r3c1 r4c5")
    assert cards_on(game) == before
    assert_48_cards_and_4_gaps(game)
    assert game.score == game.placed - 5


def test_a_redeal_is_not_a_move_and_changes_only_what_the_rules_say() -> None:
    game = game_at(BLOCKED)
    game.redeal()
    assert game.moves_made == 0
    assert not game.stopped


def test_a_full_row_keeps_its_gap_in_column_13() -> None:
    game = game_at(FULL_ROW_BLOCKED)
    game.redeal()
    assert cells(game, 1) == cells(game_at(FULL_ROW_BLOCKED), 1)
    assert game.gaps() == slots("r1c13 r2c3 r3c3 r4c3")


def test_a_row_without_a_2_in_column_1_gets_its_new_gap_in_column_1() -> None:
    game = game_at(BLOCKED)
    game.redeal()
    assert game.card_at(Slot(3, 1)) is None


def test_classic_allows_two_redeals_then_a_block_is_a_loss() -> None:
    game = game_at(FULL_ROW_BLOCKED)
    game.redeal()
    assert game.redeals_left == 1
    game = game_at(FULL_ROW_BLOCKED, redeals_used=1)
    game.redeal()
    assert game.redeals_used == 2 and game.redeals_left == 0
    blocked_again = game_at(FULL_ROW_BLOCKED, redeals_used=2)
    assert blocked_again.result() == "lost"


def test_montana_redeals_like_classic() -> None:
    classic, montana = game_at(BLOCKED, "classic"), game_at(BLOCKED, "montana")
    classic.redeal()
    montana.redeal()
    assert classic.layout() == montana.layout()


def test_spaces_reshuffles_all_48_cards_and_puts_the_gaps_in_column_1() -> None:
    game = game_at(FULL_ROW_BLOCKED, "spaces")
    game.redeal()
    assert game.gaps() == slots("r1c1 r2c1 r3c1 r4c1")
    assert_48_cards_and_4_gaps(game)
    assert game.placed == 0
    # Even the full row was collected: it is not where it was.
    assert cells(game, 1)[1:] != cells(game_at(FULL_ROW_BLOCKED), 1)[:12]


def test_addiction_redeals_at_any_time_keeps_the_sequences_and_drops_4_gaps_at_random() -> None:
    game = game_at(PLAY, "addiction")
    assert not game.is_blocked() and game.can_redeal()
    runs = game.preserved_sequences()
    game.redeal()
    for row, run in enumerate(runs, start=1):
        assert [game.card_at(Slot(row, c + 1)) for c in range(len(run))] == run
    assert_48_cards_and_4_gaps(game)
    assert game.redeals_used == 1


def test_addiction_gaps_fall_where_the_shuffled_aces_land() -> None:
    game = game_at(BLOCKED, "addiction")
    grid = list(game.grid_codes())
    kept = {0, 1, 2, 13, 14, 39, 40, 41, 42}
    collected = [c for i, c in enumerate(grid) if c != GAP and i not in kept] + [0, 13, 26, 39]
    collected.sort()
    shuffle(collected, SEED.data, b"redeal-1")
    free = [i for i in range(52) if i not in kept]
    expected_gaps = sorted(free[k] for k, code in enumerate(collected) if code % 13 == 0)
    game.redeal()
    assert [slot.index for slot in game.gaps()] == expected_gaps


def test_addiction_allows_three_redeals() -> None:
    game = game_at(PLAY, "addiction")
    for _ in range(3):
        game.redeal()
    assert game.redeals_used == 3 and game.score == game.placed - 15
    assert not game.can_redeal()


def test_paganini_keeps_every_card_in_its_final_column_and_gaps_after_the_left_run() -> None:
    game = game_at(BLOCKED, "paganini")
    game.redeal()
    assert cells(game, 1)[:3] == ["2C", "3C", "4C"]
    assert cells(game, 1)[10:12] == ["QC", "KC"]
    assert game.gaps() == slots("r1c4 r2c3 r3c1 r4c5")
    assert_48_cards_and_4_gaps(game)


def test_paganini_allows_three_redeals_when_blocked() -> None:
    assert Ruleset.named("paganini").redeals == 3
    game = game_at(FULL_ROW_BLOCKED, "paganini", redeals_used=2)
    game.redeal()
    assert game.redeals_used == 3


def test_the_redeal_of_game_is_redealt_grid() -> None:
    for name in ("classic", "spaces", "addiction", "paganini", "montana"):
        game = game_at(BLOCKED, name, redeals_used=1)
        expected = redealt_grid(list(game.grid_codes()), RULESETS[name], SEED, 2)
        game.redeal()
        assert list(game.grid_codes()) == expected


def test_redeal_k_draws_from_its_own_stream() -> None:
    first, second = game_at(BLOCKED), game_at(BLOCKED, redeals_used=1)
    first.redeal()
    second.redeal()
    assert first.layout() != second.layout()


def test_two_players_in_the_same_position_get_the_same_redeal_whatever_their_history() -> None:
    one = Game.restore(SEED, "classic", game_at(BLOCKED).grid_codes(), moves_made=3)
    two = Game.restore(SEED, "classic", game_at(BLOCKED).grid_codes(), moves_made=140)
    one.redeal()
    two.redeal()
    assert one.layout() == two.layout()


def test_a_redeal_empties_the_undo_stack_and_keeps_moves_made() -> None:
    game = game_at(PLAY, "addiction")
    game.play(Move.parse("8D"))
    game.play(Move.parse("2H>1"))
    game.redeal()
    assert game.undo_stack() == [] and game.moves_made == 2


# -- undo (addiction) ---------------------------------------------------------------------------


def test_undo_takes_moves_back_one_at_a_time_to_the_start() -> None:
    game = game_at(PLAY, "addiction")
    start = game.layout()
    game.play(Move.parse("8D"))
    after_one = game.layout()
    game.play(Move.parse("2H>1"))
    assert [(str(card), str(slot)) for card, slot in game.undo_stack()] == [
        ("8D", "r2c13"), ("2H", "r3c1")
    ]
    assert game.can_undo()
    game.undo()
    assert game.layout() == after_one
    game.undo()
    assert game.layout() == start
    assert not game.can_undo()
    assert game.moves_made == 2  # undo never gives a move back


def test_undo_goes_back_to_the_last_redeal_and_never_undoes_the_redeal() -> None:
    game = game_at(PLAY, "addiction")
    game.play(Move.parse("8D"))
    game.redeal()
    after_redeal = game.layout()
    move = game.legal_moves()[0]
    game.play(move)
    game.undo()
    assert game.layout() == after_redeal
    assert game.redeals_used == 1
    refused(game, UNDO, "nothing_to_undo")


def test_undo_then_play_again_works_like_a_fresh_move() -> None:
    game = game_at(PLAY, "addiction")
    game.play(Move.parse("2H>1"))
    game.undo()
    game.play(Move.parse("2S>1"))
    assert game.card_at(Slot(1, 1)) == Card.parse("2S")
    assert game.moves_made == 2


# -- restore, copies, equality ---------------------------------------------------------------------


def test_restore_refuses_a_grid_that_is_not_48_cards_and_4_gaps() -> None:
    grid = list(game_at(PLAY).grid_codes())
    with pytest.raises(NotationError, match="52 cells"):
        Game.restore(SEED, "classic", grid[:-1])
    with pytest.raises(NotationError, match="doubled 2C"):
        Game.restore(SEED, "classic", [1] + grid[1:])
    with pytest.raises(NotationError, match="Aces AC"):
        Game.restore(SEED, "classic", [0] + grid[1:])
    with pytest.raises(NotationError, match="99"):
        Game.restore(SEED, "classic", [99, 99] + grid[2:])


def test_restore_refuses_redeal_counts_outside_the_ruleset() -> None:
    grid = game_at(PLAY).grid_codes()
    with pytest.raises(ValueError, match="redeals"):
        Game.restore(SEED, "classic", grid, redeals_used=3)
    with pytest.raises(ValueError, match="redeals"):
        Game.restore(SEED, "classic", grid, redeals_used=-1)
    with pytest.raises(ValueError, match="moves"):
        Game.restore(SEED, "classic", grid, moves_made=-1)


def test_restore_refuses_an_undo_list_in_a_ruleset_without_undo() -> None:
    game = game_at(PLAY, "addiction")
    game.play(Move.parse("8D"))
    undo = [(card.code, slot.index) for card, slot in game.undo_stack()]
    with pytest.raises(ValueError, match="no undo"):
        Game.restore(SEED, "classic", game.grid_codes(), undo=undo)


@pytest.mark.parametrize(
    "undo",
    [
        [(0, 5)],  # an Ace
        [(60, 5)],  # no card
        [(1, 52)],  # no slot
        [(Card.parse("QH").code, Slot(2, 7).index)],  # QH into column 1 was no legal move
        [(Card.parse("9D").code, Slot(2, 7).index)],  # nor 9D one step right, past itself
        [(Card.parse("8D").code, Slot(1, 2).index)],  # r1c2 holds a card
    ],
)
def test_restore_refuses_an_undo_list_that_does_not_lead_back_through_legal_moves(
    undo: list[tuple[int, int]],
) -> None:
    with pytest.raises(ValueError, match="undo"):
        Game.restore(SEED, "addiction", game_at(PLAY).grid_codes(), undo=undo)


def test_restore_keeps_a_consistent_undo_list() -> None:
    game = game_at(PLAY, "addiction")
    game.play(Move.parse("8D"))
    game.play(Move.parse("2H>1"))
    undo = [(card.code, slot.index) for card, slot in game.undo_stack()]
    restored = Game.restore(SEED, "addiction", game.grid_codes(), moves_made=2, undo=undo)
    assert restored == game
    restored.undo()
    restored.undo()
    assert restored.layout() == PLAY.strip()


@pytest.mark.parametrize(
    "layout",
    [
        "",
        "\n".join(PLAY.strip().splitlines()[:3]),
        PLAY.replace("QH 2S", "QH 2S 3S", 1),
        PLAY.replace("QH", "AH"),
        PLAY.replace("QH", "QC"),
        PLAY.replace("QH", "ZZ"),
    ],
)
def test_from_layout_refuses_anything_but_4_rows_of_13_cells_with_the_48_cards(layout: str) -> None:
    with pytest.raises(NotationError):
        Game.from_layout(layout)


@pytest.mark.parametrize(
    "space",
    ["\u3000", "\u00a0", "\u2003", "\x85", "\x1c", "\u2028"],
)
def test_from_layout_refuses_cells_apart_by_anything_but_ascii_whitespace(space: str) -> None:
    lines = PLAY.strip().splitlines()
    lines[1] = lines[1].replace(" ", space, 1)
    with pytest.raises(NotationError):
        Game.from_layout("\n".join(lines))


def test_from_layout_refuses_a_line_split_by_a_unicode_line_separator() -> None:
    with pytest.raises(NotationError):
        Game.from_layout(PLAY.strip().replace("\n", "\u2028"))


@pytest.mark.parametrize(
    "layout",
    [
        PLAY.replace(" ", "\t"),
        PLAY.replace("\n", "\r\n"),
        PLAY.replace(" ", " \t ").replace("\n", " \r\n\t"),
        "\f" + PLAY.replace(" ", "\x0b") + "\r\n\r\n",
    ],
)
def test_from_layout_reads_cells_apart_by_tabs_and_lines_ending_in_crlf(layout: str) -> None:
    assert Game.from_layout(layout).grid_codes() == Game.from_layout(PLAY).grid_codes()


def test_a_copy_is_independent() -> None:
    game = game_at(PLAY, "addiction")
    copy = game.copy()
    assert copy == game
    copy.play(Move.parse("8D"))
    assert copy != game
    assert game.moves_made == 0 and game.card_at(Slot(2, 7)) is None and game.undo_stack() == []


def test_equal_games_have_equal_state_keys_and_games_are_not_hashable() -> None:
    assert game_at(PLAY) == game_at(PLAY)
    assert game_at(PLAY) != game_at(PLAY, "montana")
    assert game_at(PLAY) != "game"
    with pytest.raises(TypeError):
        hash(game_at(PLAY))


def test_in_a_ruleset_without_undo_the_same_position_reached_two_ways_is_equal() -> None:
    one, two = game_at(PLAY), game_at(PLAY)
    one.play(Move.parse("8D"))
    one.play(Move.parse("2H>1"))
    two.play(Move.parse("2H>1"))
    two.play(Move.parse("8D"))
    assert one.state_key() == two.state_key()


def test_repr_shows_ruleset_seed_and_result() -> None:
    text = repr(game_at(BLOCKED))
    assert "classic" in text and str(SEED) in text and "blocked" in text


# -- random playouts -----------------------------------------------------------------------------


@pytest.mark.parametrize("ruleset", list(RULESETS))
def test_a_random_playout_replays_through_push_to_the_identical_game(ruleset: str) -> None:
    for number in range(15):
        game = Game(Seed(number.to_bytes(10, "big")), ruleset)
        actions = game.random_playout(random.Random(number), max_moves=2000)
        again = Game(game.seed, ruleset)
        for action in actions:
            again.push(action)
        assert again == game
        assert again.moves_made == game.moves_made == sum(isinstance(a, Move) for a in actions)
        assert again.redeals_used == game.redeals_used == actions.count(REDEAL)
        assert again.score == game.score


def test_a_random_playout_ends_over_unless_it_hits_max_moves() -> None:
    for number in range(20):
        game = Game(Seed(number.to_bytes(10, "big")), "classic")
        actions = game.random_playout(random.Random(number), max_moves=5000)
        assert game.is_over() or sum(isinstance(a, Move) for a in actions) == 5000


def test_a_random_playout_without_redeal_stops_when_blocked() -> None:
    game = Game(SEED, "classic")
    actions = game.random_playout(random.Random(1), redeal=False)
    assert REDEAL not in actions
    assert game.is_blocked() and game.redeals_used == 0


def test_a_random_playout_respects_max_moves() -> None:
    game = Game(SEED, "addiction")
    actions = game.random_playout(random.Random(1), max_moves=7)
    assert len([a for a in actions if isinstance(a, Move)]) <= 7
    assert game.moves_made == len(actions) - actions.count(REDEAL)


def test_a_random_playout_of_a_stopped_game_does_nothing() -> None:
    game = Game(SEED, "classic")
    game.stop()
    assert game.random_playout(random.Random(1)) == []


# -- properties ---------------------------------------------------------------------------------

seeds = st.binary(min_size=1, max_size=10).map(Seed)
rulesets = st.sampled_from(list(RULESETS))
choices = st.lists(st.integers(0, 10_000), max_size=80)
any_slot = st.builds(Slot, st.integers(1, 4), st.integers(1, 13))
any_move = st.builds(
    Move, st.integers(0, 51).map(Card.from_code), st.one_of(st.none(), any_slot)
)
any_action = st.one_of(any_move, st.sampled_from([REDEAL, UNDO, STOP]))


def play_choices(game: Game, picks: list[int]) -> None:
    """Drive ``game`` with legal actions picked by ``picks``: moves, redeals, undos, stops."""
    for pick in picks:
        if game.is_over():
            return
        moves = game.legal_moves()
        if pick % 97 == 0:
            game.stop()
        elif pick % 13 == 0 and game.can_undo():
            game.undo()
        elif pick % 29 == 0 and game.can_redeal():
            game.redeal()
        elif moves:
            game.play(moves[pick % len(moves)])
        elif game.can_redeal():
            game.redeal()
        else:
            return


@settings(max_examples=150, deadline=None)
@given(seeds, rulesets, choices)
def test_there_are_always_48_cards_and_4_gaps(seed: Seed, ruleset: str, picks: list[int]) -> None:
    game = Game(seed, ruleset)
    for pick in picks:
        play_choices(game, [pick])
        assert_48_cards_and_4_gaps(game)


@settings(max_examples=200, deadline=None)
@given(seeds, rulesets, choices, st.lists(any_action, min_size=1, max_size=10))
def test_no_illegal_action_ever_changes_the_state(
    seed: Seed, ruleset: str, picks: list[int], actions: list[Action]
) -> None:
    game = Game(seed, ruleset)
    play_choices(game, picks)
    for action in actions:
        before = snapshot(game)
        try:
            game.push(action)
        except IllegalAction as error:
            assert error.reason in REASONS
            assert snapshot(game) == before
        assert_48_cards_and_4_gaps(game)


@settings(max_examples=150, deadline=None)
@given(seeds, rulesets, choices)
def test_the_placed_count_and_blocked_read_after_every_action_are_those_of_the_grid(
    seed: Seed, ruleset: str, picks: list[int]
) -> None:
    def blocked(game: Game) -> bool:  # as a game with nothing kept finds it
        return Game.from_layout(game.layout(), ruleset).is_blocked()

    game = Game(seed, ruleset)
    for pick in picks:
        # Read (and kept) before it changes.
        assert game.placed == sum(game.run_lengths())
        assert game.is_blocked() == blocked(game)
        copy = game.copy()
        play_choices(game, [pick])
        assert game.placed == sum(game.run_lengths())
        assert game.is_blocked() == blocked(game)
        assert copy.placed == sum(copy.run_lengths())
        assert copy.is_blocked() == blocked(copy)
    game.random_playout(random.Random(len(picks)))
    assert game.placed == sum(game.run_lengths())
    assert game.is_blocked() == blocked(game)


def test_a_random_playout_that_wins_does_not_redeal_even_after_placed_was_read() -> None:
    rows = [" ".join([*(rank + suit for rank in "23456789TJQK"), "--"]) for suit in "HDC"]
    one_move_short = " ".join([*(rank + "S" for rank in "23456789TJQ"), "--", "KS"])
    game = Game.from_layout("\n".join([one_move_short, *rows]))
    assert game.placed == 47 and not game.is_blocked()  # both kept from here
    assert game.random_playout(random.Random(1)) == [Move.parse("KS")]
    assert game.result() == "won" and game.redeals_used == 0


@settings(max_examples=150, deadline=None)
@given(seeds, rulesets, choices)
def test_the_score_is_always_placed_minus_5_per_redeal_plus_10_for_a_clean_win(
    seed: Seed, ruleset: str, picks: list[int]
) -> None:
    game = Game(seed, ruleset)
    play_choices(game, picks)
    bonus = 10 if game.is_won() and game.redeals_used == 0 else 0
    assert game.score == game.placed - 5 * game.redeals_used + bonus
    assert game.placed == sum(game.placed_per_row())
    assert -15 <= game.score <= 58


@settings(max_examples=150, deadline=None)
@given(seeds, st.sampled_from(["classic", "addiction", "spaces", "montana", "paganini"]), choices)
def test_a_redeal_keeps_what_its_ruleset_keeps_and_places_the_gaps_as_ruled(
    seed: Seed, ruleset: str, picks: list[int]
) -> None:
    game = Game(seed, ruleset)
    game.random_playout(random.Random(len(picks)), redeal=False, max_moves=300)
    play_choices(game, picks[:5])
    if not game.can_redeal():
        return
    runs = game.preserved_sequences()
    grid = game.grid_codes()
    before = cards_on(game)
    game.redeal()
    after = game.grid_codes()
    assert cards_on(game) == before
    gaps = [slot.index for slot in game.gaps()]
    if ruleset == "spaces":
        assert gaps == [0, 13, 26, 39]
        return
    for row, run in enumerate(runs):
        start = row * 13
        assert [Card.from_code(after[start + c]) for c in range(len(run))] == run
        if ruleset != "addiction":
            assert start + len(run) in gaps
    if ruleset == "paganini":
        for index, code in enumerate(grid):
            first = grid[index - index % 13]
            if first != GAP and first % 13 == 1 and index % 13 < 12 and code == first + index % 13:
                assert after[index] == code


@settings(max_examples=100, deadline=None)
@given(seeds, st.sampled_from(["classic", "addiction", "spaces", "paganini"]), choices, choices)
def test_the_same_seed_and_redeal_number_give_the_same_redeal_in_the_same_position(
    seed: Seed, ruleset: str, picks: list[int], other_picks: list[int]
) -> None:
    one = Game(seed, ruleset)
    one.random_playout(random.Random(len(picks)), redeal=False, max_moves=300)
    two = Game.restore(
        seed, ruleset, one.grid_codes(), redeals_used=one.redeals_used,
        moves_made=len(other_picks),
    )
    if not one.can_redeal():
        return
    one.redeal()
    two.redeal()
    assert one.grid_codes() == two.grid_codes()


def test_the_word_actions_are_the_action_classes() -> None:
    assert isinstance(REDEAL, Redeal) and isinstance(UNDO, Undo) and isinstance(STOP, Stop)
