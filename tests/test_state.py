"""The compact state: encode/decode round trips, its byte layout, and bad bytes refused."""

from __future__ import annotations

import random
from collections.abc import Callable

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from gaps import RULESETS, Card, Game, Move, Seed
from gaps.errors import StateFormatError
from gaps.state import decode_state, encode_state, parse_state, state_text

SEED = Seed(bytes.fromhex("00000000000000000034"))


def played(ruleset: str, number: int, max_moves: int = 10_000) -> Game:
    game = Game(Seed(number.to_bytes(10, "big")), ruleset)
    game.random_playout(random.Random(number), max_moves=max_moves)
    return game


def assert_same_game(one: Game, two: Game) -> None:
    assert one.state_key() == two.state_key()
    assert (one.moves_made, one.redeals_used, one.stopped) == (
        two.moves_made, two.redeals_used, two.stopped
    )
    assert one.undo_stack() == two.undo_stack()
    assert (one.score, one.result()) == (two.score, two.result())


@pytest.mark.parametrize("ruleset", list(RULESETS))
def test_a_state_decodes_to_the_same_game(ruleset: str) -> None:
    for number in range(8):
        for max_moves in (0, 5, 10_000):
            game = played(ruleset, number, max_moves)
            assert_same_game(decode_state(encode_state(game), game.seed), game)
            assert_same_game(parse_state(state_text(game), game.seed), game)


def test_a_stopped_game_stays_stopped() -> None:
    game = Game(SEED, "classic")
    game.stop()
    decoded = decode_state(encode_state(game), SEED)
    assert decoded.stopped and decoded.result() == "stopped"


def test_the_layout_is_version_ruleset_redeals_flags_moves_grid_and_undo_list() -> None:
    game = Game(SEED, "addiction")
    moves = game.legal_moves()[:2]
    game.play(moves[0])
    game.redeal()
    game.play(game.legal_moves()[0])
    game.play(game.legal_moves()[0])
    data = encode_state(game)
    assert data[0] == 1
    assert data[1] == list(RULESETS).index("addiction") == 2
    assert data[2] == 1
    assert data[3] == 0
    assert int.from_bytes(data[4:8], "big") == 3
    assert list(data[8:60]) == [255 if code < 0 else code for code in game.grid_codes()]
    assert int.from_bytes(data[60:62], "big") == 2
    assert [(data[62 + 2 * i], data[63 + 2 * i]) for i in range(2)] == [
        (card.code, slot.index) for card, slot in game.undo_stack()
    ]
    assert len(data) == 62 + 4


def test_a_state_without_undo_is_62_bytes_however_long_the_game() -> None:
    for ruleset in ("classic", "no-redeal", "spaces", "montana", "paganini"):
        game = played(ruleset, 3)
        assert game.moves_made > 0
        assert len(encode_state(game)) == 62
        assert len(state_text(game)) == 83


def test_a_decoded_addiction_game_can_still_undo() -> None:
    game = Game(SEED, "addiction")
    start = game.layout()
    game.play(game.legal_moves()[0])
    decoded = decode_state(encode_state(game), SEED)
    decoded.undo()
    assert decoded.layout() == start


def test_a_decoded_game_redeals_with_the_seed_it_is_given() -> None:
    game = played("classic", 1, max_moves=0)
    game.random_playout(random.Random(1), redeal=False)
    assert game.can_redeal()
    decoded = decode_state(encode_state(game), game.seed)
    game.redeal()
    decoded.redeal()
    assert decoded.layout() == game.layout()


def test_the_state_holds_no_seed() -> None:
    game = Game(SEED, "classic")
    assert SEED.data not in encode_state(game)
    assert decode_state(encode_state(game), Seed(b"other")).seed == Seed(b"other")


def valid() -> bytearray:
    game = Game(SEED, "addiction")
    game.play(game.legal_moves()[0])
    return bytearray(encode_state(game))


def with_bytes(at: int, *values: int) -> bytes:
    data = valid()
    data[at : at + len(values)] = bytes(values)
    return bytes(data)


def swapped_grid_cells() -> bytes:
    data = valid()
    grid = data[8:60]
    card = next(i for i, byte in enumerate(grid) if byte != 255)
    data[8 + card] = next(byte for byte in grid if byte != 255 and byte != grid[card])
    return bytes(data)


@pytest.mark.parametrize(
    ("data", "words"),
    [
        (b"", "at least 62 bytes"),
        (bytes(valid()[:61]), "at least 62 bytes"),
        (with_bytes(0, 2), "version 2"),
        (with_bytes(1, 6), "ruleset index 6"),
        (with_bytes(2, 4), "4 redeals used"),
        (with_bytes(3, 2), "flags"),
        (swapped_grid_cells(), "bad grid"),
        (with_bytes(8, 0), "bad grid"),
        (with_bytes(60, 0, 5), "5 undo moves need 72 bytes"),
        (bytes(valid()) + b"\x00", "need 64 bytes, got 65"),
        (with_bytes(62, 60, 1), "undo"),
        (with_bytes(62, 1, 200), "undo"),
        (with_bytes(1, 0), "classic has no undo"),
    ],
    ids=[
        "empty", "short", "version", "ruleset", "redeals", "flags", "doubled card", "ace",
        "undo count", "trailing byte", "undo card", "undo slot", "undo without undo",
    ],
)
def test_bad_bytes_raise_a_state_format_error_saying_what_is_wrong(data: bytes, words: str) -> None:
    with pytest.raises(StateFormatError, match=words):
        decode_state(data, SEED)


PLAY = (
    "-- 2C 3C 4C 5C 6C 7C 8C 9C TC JC QC KC\n"
    "2D 3D 4D 5D 6D 7D -- 9D TD JD QD KD 8D\n"
    "2H 3H 4H 5H 6H 7H 8H 9H TH JH KH -- --\n"
    "QH 2S 3S 4S 5S 6S 7S 8S 9S TS JS QS KS"
)


def test_an_undo_list_that_does_not_lead_back_through_legal_moves_is_refused() -> None:
    game = Game.from_layout(PLAY, "addiction", seed=SEED)
    game.play(Move.parse("8D"))
    data = bytearray(encode_state(game))
    assert decode_state(bytes(data), SEED) == game
    data[62] = Card.parse("QH").code  # QH, in column 1, cannot have got there by a move
    with pytest.raises(StateFormatError, match="undo entry QH"):
        decode_state(bytes(data), SEED)


@pytest.mark.parametrize("text", ["!!!!", "A", "not base64 at all \u00e9"])
def test_text_that_is_not_base64url_state_is_refused(text: str) -> None:
    with pytest.raises(StateFormatError):
        parse_state(text, SEED)


def valid_text() -> str:
    text = state_text(decode_state(bytes(valid()), SEED))
    assert len(text) % 4 == 2 and "_" in text  # the cases below need both
    return text


def test_state_text_with_ascii_space_around_it_is_read() -> None:
    assert parse_state(f" {valid_text()}\r\n", SEED) == decode_state(bytes(valid()), SEED)


@pytest.mark.parametrize(
    "change",
    [
        lambda text: text + "==",
        lambda text: text.replace("_", "/"),
        lambda text: text[:20] + "!" + text[20:],
        lambda text: text[:20] + " " + text[20:],
        lambda text: text[:20] + "\u00e9" + text[20:],
        lambda text: "\u3000" + text,
        lambda text: text[:-1] + chr(ord(text[-1]) + 1),
        lambda text: text + "AAA",
    ],
    ids=["padding", "plus-slash alphabet", "skipped character", "inner space", "non-ascii",
         "ideographic space", "stray low bits", "a length of 1 mod 4"],
)
def test_only_the_text_state_text_writes_is_read(change: Callable[[str], str]) -> None:
    text = change(valid_text())
    with pytest.raises(StateFormatError, match="not base64url") as caught:
        parse_state(text, SEED)
    assert repr(text[:40]) in str(caught.value)


@settings(max_examples=300, deadline=None)
@given(st.one_of(st.text(max_size=90), st.text("AQIaz09_-+/= ", max_size=90)))
def test_any_text_is_a_state_that_round_trips_or_raises_a_state_format_error(text: str) -> None:
    try:
        game = parse_state(text, SEED)
    except StateFormatError:
        return
    assert state_text(game) == text.strip(" \t\n\r\f\v")


def test_a_state_is_bytes() -> None:
    with pytest.raises(StateFormatError, match="bytes"):
        decode_state("AQIAAA", SEED)  # type: ignore[arg-type]
    game = Game(SEED, "classic")
    assert decode_state(bytearray(encode_state(game)), SEED) == game
    assert decode_state(memoryview(encode_state(game)), SEED) == game


def test_too_many_undo_moves_do_not_fit() -> None:
    # A 2 going back and forth between two column-1 gaps is legal for ever.
    game = Game.from_layout(PLAY, "addiction", seed=SEED)
    for _ in range(0x8000):
        game.play(Move.parse("2D>1"))
        game.play(Move.parse("2D>2"))
    with pytest.raises(StateFormatError, match="undo moves"):
        encode_state(game)


@settings(max_examples=150, deadline=None)
@given(
    st.sampled_from(list(RULESETS)),
    st.integers(0, 10_000),
    st.integers(0, 400),
    st.booleans(),
)
def test_every_reachable_game_round_trips(
    ruleset: str, number: int, max_moves: int, stop: bool
) -> None:
    game = played(ruleset, number, max_moves)
    if stop and not game.is_over():
        game.stop()
    assert_same_game(decode_state(encode_state(game), game.seed), game)
    assert_same_game(parse_state(state_text(game), game.seed), game)


@settings(max_examples=200, deadline=None)
@given(st.integers(0, 65), st.integers(0, 255))
def test_a_changed_byte_decodes_to_a_valid_game_or_raises_state_format_error(
    at: int, value: int
) -> None:
    data = valid()
    data[at % len(data)] = value
    try:
        game = decode_state(bytes(data), SEED)
    except StateFormatError:
        return
    codes = game.grid_codes()
    assert codes.count(-1) == 4 and len(set(codes)) == 49
    encode_state(game)


@settings(max_examples=100, deadline=None)
@given(st.binary(max_size=80))
def test_random_bytes_never_raise_anything_but_state_format_error(data: bytes) -> None:
    try:
        decode_state(data, SEED)
    except StateFormatError:
        pass
