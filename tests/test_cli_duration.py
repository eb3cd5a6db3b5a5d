"""client_cli.duration: durations as typed, and clock readings."""

from __future__ import annotations

import pytest

from client_cli.duration import (
    DurationError,
    format_duration,
    format_ms,
    parse_duration,
    starts_in,
)


@pytest.mark.parametrize(("text", "seconds"), [
    ("10m", 600), ("90s", 90), ("1h", 3600), ("1h30m", 5400), ("2m30s", 150), ("45", 45),
    (" 5M ", 300), ("1h 2m 3s", 3723),
])
def test_durations_parse(text: str, seconds: int) -> None:
    assert parse_duration(text) == seconds


@pytest.mark.parametrize("text", ["", "10x", "m", "1.5m", "30s10m", "10m10m", "1h30", "0s", "-5m"])
def test_bad_durations_say_what_is_expected(text: str) -> None:
    with pytest.raises(DurationError, match="is not a duration"):
        parse_duration(text)


def test_clock_readings() -> None:
    assert format_duration(42) == "0:42"
    assert format_duration(247) == "4:07"
    assert format_duration(3909) == "1:05:09"
    assert format_ms(151_400) == "2:31.4"
    assert format_ms(None) == "-"


def test_a_countdown_in_words_counts_a_started_second_whole_and_ends_any_moment_now() -> None:
    assert starts_in(15.0) == "in 0:15"
    assert starts_in(4.2) == "in 0:05"
    assert starts_in(0.0) == "any moment now"
    assert starts_in(-3.0) == "any moment now"
