"""client_cli.selection: what pointing at a cell of the board means.

The deal of seed AAAA-BBBB-CCCC-DDDD (classic):

    3C 8C 3S 7H TC QC 2S 4D 6C 4S JH -- 7S
    KS KH 2D QS QD KC 9C JC KD JD 5C QH 6H
    8D TD 3D 2H -- 9H 7D 6S -- 9D 6D JS 7C
    3H -- 2C 4H 8H TH 5H 9S 5S TS 5D 4C 8S
"""

from __future__ import annotations

from client_cli.selection import destinations, point
from gaps import Card, Game, Move, Seed, Slot

KNOWN = Seed.parse("AAAA-BBBB-CCCC-DDDD")


def at(text: str) -> int:
    return Slot.parse(text).index


def test_a_card_is_selected_with_its_destination_then_moved_there() -> None:
    game = Game(KNOWN, "classic")
    picked = point(game, at("r2c12"))  # QH
    assert picked.selected == at("r2c12") and picked.targets == {at("r1c12")}
    assert picked.action is None
    moved = point(game, at("r1c12"), picked.selected)
    assert moved.action == "QH" and moved.selected is None


def test_a_live_gap_plays_the_one_card_that_fits() -> None:
    assert point(Game(KNOWN, "classic"), at("r3c5")).action == "3H"


def test_a_card_with_nowhere_to_go_says_so() -> None:
    picked = point(Game(KNOWN, "classic"), at("r2c11"))  # 5C: right of 4C is 8S
    assert picked.targets == frozenset() and picked.message == "5C has nowhere to go now"


def test_twos_go_to_any_gap_in_column_one_and_dead_gaps_are_explained() -> None:
    game = Game(KNOWN, "classic")
    game.play(Move.parse("3H"))  # r4c1 is now a gap, r4c2 a dead one
    two = point(game, at("r4c3"))  # 2C
    assert two.targets == {at("r4c1")}
    assert destinations(game, Card.parse("2D")) == [Slot(4, 1)]
    assert "any 2 fits at r4c1" in str(point(game, at("r4c1")).message)
    assert point(game, at("r4c1"), at("r2c3")).action == "2D>4"
    assert point(game, at("r4c2")).message == "the gap at r4c2 is dead (right of another gap)"
    assert point(game, at("r4c3"), at("r4c3")).selected is None  # pointing again lets go


def test_a_game_that_is_over_picks_nothing() -> None:
    game = Game(KNOWN, "classic")
    game.stop()
    assert point(game, at("r2c12")).message == "this game is over"
