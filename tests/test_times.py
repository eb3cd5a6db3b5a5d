"""The one form of an instant on the wire (gaps_protocol.times): written and read back."""

from __future__ import annotations

import re
from datetime import UTC, datetime, timedelta, timezone

import pytest
from hypothesis import given
from hypothesis import strategies as st

from gaps_protocol.times import EXAMPLE, BadTime, format_time, parse_time

#: The instants the protocol can write: to the millisecond, from year 1 to 9999.
INSTANTS = st.datetimes(
    min_value=datetime(1, 1, 2), max_value=datetime(9999, 12, 30), timezones=st.just(UTC)
).map(lambda moment: moment.replace(microsecond=moment.microsecond // 1000 * 1000))


def test_an_instant_is_written_in_utc_to_the_millisecond_with_z() -> None:
    moment = datetime(2026, 12, 2, 9, 22, 45, 123_456, tzinfo=UTC)
    assert format_time(moment) == EXAMPLE == "2026-12-02T09:22:45.123Z"
    assert format_time(moment.replace(microsecond=0)) == "2026-12-02T09:22:45.000Z"


def test_another_zone_is_written_as_the_same_instant_in_utc() -> None:
    paris = timezone(timedelta(hours=1))
    assert format_time(datetime(2026, 12, 2, 10, 22, 45, tzinfo=paris)) == (
        "2026-12-02T09:22:45.000Z")


def test_a_time_without_a_zone_is_taken_as_utc_as_the_server_keeps_it() -> None:
    assert format_time(datetime(2026, 12, 2, 9, 22, 45, 5_000)) == "2026-12-02T09:22:45.005Z"


@given(INSTANTS)
def test_what_is_written_is_read_back_the_same(moment: datetime) -> None:
    text = format_time(moment)
    assert len(text) == len(EXAMPLE)
    assert parse_time(text) == moment
    assert parse_time(text).tzinfo == UTC


@given(INSTANTS, INSTANTS)
def test_the_written_form_sorts_as_the_instants_do(first: datetime, second: datetime) -> None:
    assert (format_time(first) < format_time(second)) == (first < second)


@pytest.mark.parametrize("text", [
    "2026-12-02T09:22:45.123+00:00",  # an offset instead of Z
    "2026-12-02T09:22:45Z",  # no milliseconds
    "2026-12-02T09:22:45.123456Z",  # microseconds
    "2026-12-02 09:22:45.123Z",  # a space for the T
    "2026-12-02t09:22:45.123z",  # lower case
    "2026-12-02",  # a day, not an instant
    " 2026-12-02T09:22:45.123Z",
    "2026-12-02T09:22:45.123Z\n",
    "２０２６-12-02T09:22:45.123Z",  # digits of another script
    "",
])
def test_any_other_form_is_refused_naming_it(text: str) -> None:
    words = f"{text!r} is not a time in the protocol's form, like 2026-12-02T09:22:45.123Z"
    with pytest.raises(BadTime, match=f"^{re.escape(words)}$"):
        parse_time(text)


@pytest.mark.parametrize("text", ["2026-02-30T00:00:00.000Z", "2026-12-02T24:00:00.000Z"])
def test_a_day_or_hour_that_does_not_exist_is_refused(text: str) -> None:
    with pytest.raises(BadTime, match=f"^'{text}' is not a time: no such day or time of day$"):
        parse_time(text)
