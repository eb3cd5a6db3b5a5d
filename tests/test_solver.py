"""The one-deal solver: exact verdicts, lines the engine accepts, honest budgets."""

from __future__ import annotations

import random
from collections import deque
from itertools import count

import pytest

from gaps import GAP, Game, Move, Seed
from gaps.solver import Budget, Verdict, solve

# Every row complete: 2..K of one suit, then the gap in column 13.
WON = """
2C 3C 4C 5C 6C 7C 8C 9C TC JC QC KC --
2D 3D 4D 5D 6D 7D 8D 9D TD JD QD KD --
2H 3H 4H 5H 6H 7H 8H 9H TH JH QH KH --
2S 3S 4S 5S 6S 7S 8S 9S TS JS QS KS --
"""
# The Queen and King of spades stand in column 13 of rows 1 and 2: two moves win.
WON_IN_TWO = """
2C 3C 4C 5C 6C 7C 8C 9C TC JC QC KC QS
2D 3D 4D 5D 6D 7D 8D 9D TD JD QD KD KS
2H 3H 4H 5H 6H 7H 8H 9H TH JH QH KH --
2S 3S 4S 5S 6S 7S 8S 9S TS JS -- -- --
"""
# Every gap is right of a King and no 2 is in column 1: nothing can ever move.
DEAD = """
KC -- 2C 3C 4C 5C 6C 7C 8C 9C TC JC QC
KD -- 2D 3D 4D 5D 6D 7D 8D 9D TD JD QD
KH -- 2H 3H 4H 5H 6H 7H 8H 9H TH JH QH
KS -- 2S 3S 4S 5S 6S 7S 8S 9S TS JS QS
"""
# Row 1 needs its 2 back in column 1; the other rows can never be fixed (dead gaps).
ONE_ROW = """
-- 3C 4C 5C 6C 7C 8C 9C TC JC QC KC 2C
KD -- 2D 3D 4D 5D 6D 7D 8D 9D TD JD QD
KH -- 2H 3H 4H 5H 6H 7H 8H 9H TH JH QH
KS -- 2S 3S 4S 5S 6S 7S 8S 9S TS JS QS
"""


def deal(number: int) -> Game:
    return Game(Seed(number.to_bytes(10, "big")), "no-redeal")


def replayed(game: Game, line: tuple[Move, ...]) -> Game:
    """``game`` after ``line``, every move checked by the engine."""
    played = game.copy()
    for move in line:
        played.play(move)
    return played


def reachable(game: Game) -> list[Game]:
    """Every position reachable from ``game`` (``game`` first), breadth-first by the engine."""
    found = [game]
    seen = {game.grid_codes()}
    queue = deque([game])
    while queue:
        here = queue.popleft()
        for move in here.legal_moves():
            there = here.copy()
            there.play(move)
            if there.grid_codes() not in seen:
                seen.add(there.grid_codes())
                found.append(there)
                queue.append(there)
    return found


def most_placed(game: Game) -> int:
    """The most cards any line places, by a plain breadth-first search over the engine."""
    return max(position.placed for position in reachable(game))


def test_a_won_position_is_won_in_no_moves() -> None:
    verdict = solve(Game.from_layout(WON, "no-redeal"))
    assert (verdict.status, verdict.placed, verdict.line) == ("won", 48, ())


def test_a_position_two_moves_from_a_win_is_won_by_exactly_those_moves() -> None:
    verdict = solve(Game.from_layout(WON_IN_TWO, "no-redeal"))
    assert verdict.status == "won"
    assert verdict.line == (Move.parse("QS"), Move.parse("KS"))


def test_a_position_with_only_dead_gaps_is_lost_with_nothing_placed() -> None:
    verdict = solve(Game.from_layout(DEAD, "no-redeal"))
    assert (verdict.status, verdict.placed, verdict.line, verdict.nodes) == ("lost", 0, (), 0)


def test_a_forced_line_places_a_whole_row_and_no_more() -> None:
    game = Game.from_layout(ONE_ROW, "no-redeal")
    verdict = solve(game)
    assert verdict.status == "lost"
    assert verdict.placed == 12
    assert replayed(game, verdict.line).placed == 12


@pytest.mark.parametrize("number", [0, 173])
def test_a_lost_deal_places_what_a_breadth_first_search_of_the_engine_finds(number: int) -> None:
    game = deal(number)
    verdict = solve(game)
    assert verdict.status == "lost"
    assert verdict.placed == most_placed(game)
    assert replayed(game, verdict.line).placed == verdict.placed


@pytest.mark.parametrize(
    ("order", "number"),
    [*(("depth-first", number) for number in (7, 194, 197, 306, 308)),
     *(("best-first", number) for number in (2, 7, 12))],
)
def test_a_winning_line_replays_to_a_win_in_the_engine(order: str, number: int) -> None:
    game = deal(number)
    verdict = solve(game, max_nodes=100_000, order=order)
    assert verdict.status == "won"
    assert replayed(game, verdict.line).is_won()


def test_the_solved_game_is_left_as_it_was() -> None:
    game = deal(7)
    before = game.state_key()
    solve(game, max_nodes=100_000)
    assert game.state_key() == before


def test_a_node_budget_gives_unknown_with_a_line_that_replays_to_its_bound() -> None:
    game = deal(7)  # won with about 30,000 nodes
    verdict = solve(game, max_nodes=500)
    assert (verdict.status, verdict.exhausted) == ("unknown", "nodes")
    assert verdict.nodes <= 500
    assert replayed(game, verdict.line).placed == verdict.placed


def test_a_time_budget_gives_unknown_on_a_clock_that_runs_fast() -> None:
    ticks = count()
    verdict = solve(deal(7), time_budget_s=5.0, clock=lambda: float(next(ticks)))
    assert (verdict.status, verdict.exhausted) == ("unknown", "time")


def test_a_memory_budget_gives_unknown_when_the_table_outgrows_it() -> None:
    verdict = solve(deal(7), max_memory_mb=0.05)
    assert (verdict.status, verdict.exhausted) == ("unknown", "memory")


@pytest.mark.parametrize("number", range(20, 30))
def test_a_budget_never_turns_a_verdict_around(number: int) -> None:
    small = solve(deal(number), max_nodes=200)
    large = solve(deal(number), max_nodes=5_000)
    if small.exact:
        assert (small.status, small.placed) == (large.status, large.placed)
    if large.exact:
        assert small.placed <= large.placed


def test_a_verdict_prints_as_its_constructor() -> None:
    verdict = solve(Game.from_layout(WON_IN_TWO, "no-redeal"))
    assert eval(repr(verdict)) == verdict


def test_a_verdict_is_unknown_exactly_when_a_budget_ran_out() -> None:
    with pytest.raises(ValueError, match="unknown exactly when"):
        Verdict("unknown", 3, (), 10, 0.1)
    with pytest.raises(ValueError, match="won, lost or unknown"):
        Verdict("drawn", 3, (), 10, 0.1)


def test_a_budget_refuses_limits_that_are_not_above_zero() -> None:
    with pytest.raises(ValueError, match="max_nodes"):
        Budget(max_nodes=0)
    with pytest.raises(ValueError, match="time_budget_s"):
        Budget(time_budget_s=0)
    with pytest.raises(ValueError, match="max_memory_mb"):
        Budget(max_memory_mb=-1)


def mixed_position(rng: random.Random) -> Game:
    """Clubs and diamonds complete; hearts and spades shuffled over rows 3-4 with 2 gaps."""
    rows = [
        [code for code in range(suit * 13 + 1, suit * 13 + 13)] + [GAP] for suit in (0, 1)
    ]
    rest = [*range(27, 39), *range(40, 52), GAP, GAP]
    rng.shuffle(rest)
    return Game.restore(Seed(b"mixed"), "no-redeal", [*rows[0], *rows[1], *rest])


@pytest.mark.parametrize("number", range(1, 12))
def test_a_shuffled_half_deal_places_what_the_engine_search_finds(number: int) -> None:
    game = mixed_position(random.Random(number))
    verdict = solve(game)
    assert verdict.exact
    assert verdict.placed == most_placed(game)
    assert replayed(game, verdict.line).placed == verdict.placed
