"""Rulesets: the six named variants, their options as ruled, and lookup by name."""

from __future__ import annotations

import dataclasses

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from gaps.errors import NotationError
from gaps.ruleset import RULESETS, Keep, NewGaps, RedealWhen, Ruleset, Start, UndoPolicy


def test_there_are_exactly_the_six_ruled_rulesets() -> None:
    assert list(RULESETS) == ["classic", "no-redeal", "addiction", "spaces", "montana", "paganini"]


@pytest.mark.parametrize(
    ("name", "redeals", "when", "keep", "new_gaps", "start", "undo"),
    [
        ("classic", 2, RedealWhen.BLOCKED, Keep.LEFT_RUNS, NewGaps.AFTER_RUN,
         Start.AS_DEALT, UndoPolicy.NONE),
        ("no-redeal", 0, RedealWhen.NEVER, Keep.LEFT_RUNS, NewGaps.AFTER_RUN,
         Start.AS_DEALT, UndoPolicy.NONE),
        ("addiction", 3, RedealWhen.ANY_TIME, Keep.LEFT_RUNS, NewGaps.RANDOM,
         Start.AS_DEALT, UndoPolicy.SINCE_REDEAL),
        ("spaces", 2, RedealWhen.BLOCKED, Keep.NOTHING, NewGaps.COLUMN_ONE,
         Start.AS_DEALT, UndoPolicy.NONE),
        ("montana", 2, RedealWhen.BLOCKED, Keep.LEFT_RUNS, NewGaps.AFTER_RUN,
         Start.TWOS_TO_COLUMN_ONE, UndoPolicy.NONE),
        ("paganini", 3, RedealWhen.BLOCKED, Keep.IN_SUIT_COLUMNS, NewGaps.AFTER_RUN,
         Start.AS_DEALT, UndoPolicy.NONE),
    ],
)
def test_each_ruleset_has_the_options_of_the_rulings_table(
    name: str, redeals: int, when: RedealWhen, keep: Keep, new_gaps: NewGaps, start: Start,
    undo: UndoPolicy,
) -> None:
    ruleset = Ruleset.named(name)
    assert ruleset.name == name
    assert (ruleset.redeals, ruleset.redeal_when, ruleset.keep) == (redeals, when, keep)
    assert (ruleset.new_gaps, ruleset.start, ruleset.undo) == (new_gaps, start, undo)
    assert ruleset.description


@pytest.mark.parametrize("text", ["classic", "CLASSIC", " Classic ", "No-Redeal"])
def test_lookup_ignores_case_and_surrounding_space(text: str) -> None:
    assert Ruleset.named(text) is RULESETS[text.strip().lower()]


@pytest.mark.parametrize("text", ["", "gaps", "no redeal", "classic2"])
def test_an_unknown_name_raises_a_notation_error_naming_it_and_the_known_ones(text: str) -> None:
    with pytest.raises(NotationError) as caught:
        Ruleset.named(text)
    assert repr(text) in str(caught.value)
    for name in RULESETS:
        assert name in str(caught.value)


@pytest.mark.parametrize("text", [" Classic\t", "\tNO-REDEAL\r\n", "\x0bmontana\x0c"])
def test_lookup_ignores_surrounding_ascii_whitespace_of_every_kind(text: str) -> None:
    assert Ruleset.named(text) is RULESETS[text.strip(" \t\r\n\x0b\x0c").lower()]


@pytest.mark.parametrize(
    "text",
    [
        "\u3000classic",  # ideographic space
        "classic\u00a0",  # no-break space
        "\x85classic",  # next line: str.strip() would take it
        "\x1cclassic",  # file separator: str.strip() would take it too
        "ｃｌａｓｓｉｃ",  # fullwidth letters, which NFKC folds to "classic"
        "ＣＬＡＳＳＩＣ",  # ... and whose lower() is fullwidth too
        "claſſic",  # long s, which casefold() turns into "s"
        "no\u2011redeal",  # non-breaking hyphen
    ],
)
def test_only_ascii_names_and_ascii_whitespace_are_read(text: str) -> None:
    with pytest.raises(NotationError) as caught:
        Ruleset.named(text)
    assert repr(text) in str(caught.value)


#: Ruleset names in some case, wrapped in whitespace ASCII or not: near misses and hits.
PADDED_NAMES = st.builds(
    lambda before, name, after: before + name + after,
    st.text(alphabet=" \t\r\n\x0b\x0c\x1c\x85\u00a0\u3000", max_size=3),
    st.sampled_from(list(RULESETS)).flatmap(
        lambda name: st.sampled_from([name, name.upper(), name.title()])
    ),
    st.text(alphabet=" \t\r\n\x0b\x0c\x1c\x85\u00a0\u3000", max_size=3),
)


@settings(max_examples=300)
@given(st.text(max_size=30) | PADDED_NAMES)
def test_any_text_names_a_ruleset_or_raises_a_notation_error(text: str) -> None:
    try:
        ruleset = Ruleset.named(text)
    except NotationError as error:
        assert "is not a ruleset" in str(error)
    else:
        assert text.isascii()
        assert ruleset is RULESETS[text.strip(" \t\n\r\f\v").lower()]


def test_a_refused_name_of_any_length_is_quoted_short() -> None:
    with pytest.raises(NotationError) as caught:
        Ruleset.named("x" * 1_000_000)
    assert len(str(caught.value)) < 200


def test_a_ruleset_is_a_frozen_constant() -> None:
    ruleset = Ruleset.named("classic")
    with pytest.raises(dataclasses.FrozenInstanceError):
        ruleset.redeals = 5  # type: ignore[misc]


def test_a_ruleset_prints_as_its_name() -> None:
    assert str(Ruleset.named("montana")) == "montana"
    assert repr(Ruleset.named("montana")) == "Ruleset.named('montana')"


def test_options_compare_equal_to_their_text_values() -> None:
    assert RedealWhen.ANY_TIME == "any_time"
    assert str(Keep.NOTHING) == "nothing"
    assert UndoPolicy("since_redeal") is UndoPolicy.SINCE_REDEAL


def test_only_addiction_has_undo_and_redeals_at_any_time() -> None:
    assert [r.name for r in RULESETS.values() if r.undo is not UndoPolicy.NONE] == ["addiction"]
    assert [r.name for r in RULESETS.values() if r.redeal_when is RedealWhen.ANY_TIME] == [
        "addiction"
    ]
    assert [r.name for r in RULESETS.values() if r.redeal_when is RedealWhen.NEVER] == [
        "no-redeal"
    ]
