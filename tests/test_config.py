"""server.config: command-line flags over environment variables over defaults."""

from __future__ import annotations

import argparse
import dataclasses
import os
from pathlib import Path

import pytest

from server.config import Limits, Settings, add_arguments, from_arguments

ENVIRONMENT = ("GAPS_HOST", "GAPS_PORT", "DATABASE_URL", "REDIS_URL", "GAPS_DATA_DIR",
               "GAPS_COUNTDOWN_S", "GAPS_GRACE_S", "GAPS_MAX_HISTORY_EVENTS", "GAPS_LOG_LEVEL")


@pytest.fixture(autouse=True)
def clean_environment(monkeypatch: pytest.MonkeyPatch) -> None:
    """No setting comes from the environment the tests run in."""
    for name in [*ENVIRONMENT, *(name for name in os.environ if name.startswith("GAPS_"))]:
        monkeypatch.delenv(name, raising=False)


def settings_from(*argv: str) -> Settings:
    """Settings as the server builds them: a parser made now, reading the environment now."""
    parser = argparse.ArgumentParser()
    add_arguments(parser)
    return from_arguments(parser.parse_args(list(argv)))


def test_without_flags_or_environment_every_setting_is_its_default() -> None:
    assert settings_from() == Settings()


def test_the_defaults_are_the_documented_ones() -> None:
    defaults = Settings()
    assert defaults.host == "127.0.0.1"
    assert defaults.port == 8765
    assert defaults.database_url is None
    assert defaults.redis_url is None
    assert defaults.data_dir == Path("var")
    assert defaults.countdown_s == 3
    assert defaults.grace_s == 30.0
    assert defaults.max_history_events == 512
    assert defaults.log_level == "INFO"


def test_environment_variables_override_the_defaults(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("GAPS_HOST", "0.0.0.0")
    monkeypatch.setenv("GAPS_PORT", "9000")
    monkeypatch.setenv("DATABASE_URL", "postgresql://gaps@db/gaps")
    monkeypatch.setenv("REDIS_URL", "redis://cache:6379/0")
    monkeypatch.setenv("GAPS_DATA_DIR", "/srv/gaps")
    monkeypatch.setenv("GAPS_COUNTDOWN_S", "5")
    monkeypatch.setenv("GAPS_GRACE_S", "12.5")
    monkeypatch.setenv("GAPS_MAX_HISTORY_EVENTS", "64")
    monkeypatch.setenv("GAPS_LOG_LEVEL", "DEBUG")
    assert settings_from() == Settings(
        host="0.0.0.0", port=9000, database_url="postgresql://gaps@db/gaps",
        redis_url="redis://cache:6379/0", data_dir=Path("/srv/gaps"), countdown_s=5,
        grace_s=12.5, max_history_events=64, log_level="DEBUG",
    )


def test_flags_override_the_environment(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("GAPS_HOST", "0.0.0.0")
    monkeypatch.setenv("GAPS_PORT", "9000")
    monkeypatch.setenv("DATABASE_URL", "postgresql://gaps@db/gaps")
    monkeypatch.setenv("REDIS_URL", "redis://cache:6379/0")
    monkeypatch.setenv("GAPS_DATA_DIR", "/srv/gaps")
    monkeypatch.setenv("GAPS_COUNTDOWN_S", "5")
    monkeypatch.setenv("GAPS_GRACE_S", "12.5")
    monkeypatch.setenv("GAPS_MAX_HISTORY_EVENTS", "64")
    monkeypatch.setenv("GAPS_LOG_LEVEL", "DEBUG")
    settings = settings_from(
        "--host", "::1", "--port", "0", "--database-url", "sqlite:///x.db",
        "--redis-url", "redis://other/1", "--data-dir", "here", "--countdown-s", "0",
        "--grace-s", "1", "--max-history-events", "8", "--log-level", "WARNING",
    )
    assert settings == Settings(
        host="::1", port=0, database_url="sqlite:///x.db", redis_url="redis://other/1",
        data_dir=Path("here"), countdown_s=0, grace_s=1.0, max_history_events=8,
        log_level="WARNING",
    )


def test_flags_override_the_defaults() -> None:
    settings = settings_from("--port", "1234", "--grace-s", "0.5")
    assert settings.port == 1234
    assert settings.grace_s == 0.5
    assert settings.host == "127.0.0.1"


def test_a_flag_overrides_only_its_own_setting(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("GAPS_PORT", "9000")
    monkeypatch.setenv("GAPS_HOST", "0.0.0.0")
    settings = settings_from("--port", "9001")
    assert settings.port == 9001
    assert settings.host == "0.0.0.0"


def test_settings_have_the_right_types() -> None:
    settings = settings_from("--port", "80", "--countdown-s", "2", "--grace-s", "3",
                             "--max-history-events", "10", "--data-dir", "d")
    assert isinstance(settings.port, int)
    assert isinstance(settings.countdown_s, int)
    assert isinstance(settings.grace_s, float)
    assert isinstance(settings.max_history_events, int)
    assert isinstance(settings.data_dir, Path)


def test_environment_numbers_get_the_right_types(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("GAPS_PORT", "81")
    monkeypatch.setenv("GAPS_COUNTDOWN_S", "4")
    monkeypatch.setenv("GAPS_GRACE_S", "2")
    monkeypatch.setenv("GAPS_MAX_HISTORY_EVENTS", "100")
    settings = settings_from()
    assert (settings.port, settings.countdown_s, settings.max_history_events) == (81, 4, 100)
    assert settings.grace_s == 2.0 and isinstance(settings.grace_s, float)
    assert isinstance(settings.countdown_s, int)


@pytest.mark.parametrize("name", ["DATABASE_URL", "REDIS_URL"])
def test_an_empty_url_in_the_environment_counts_as_unset(
    monkeypatch: pytest.MonkeyPatch, name: str
) -> None:
    monkeypatch.setenv(name, "")
    settings = settings_from()
    assert settings.database_url is None
    assert settings.redis_url is None


@pytest.mark.parametrize(
    ("name", "attribute"),
    [("GAPS_PORT", "port"), ("GAPS_COUNTDOWN_S", "countdown_s"), ("GAPS_GRACE_S", "grace_s"),
     ("GAPS_MAX_HISTORY_EVENTS", "max_history_events")],
)
def test_an_empty_number_in_the_environment_means_its_default(
    monkeypatch: pytest.MonkeyPatch, name: str, attribute: str
) -> None:
    # `GAPS_PORT= gaps-server` must not crash: empty counts as unset, as for the others.
    monkeypatch.setenv(name, "")
    assert getattr(settings_from(), attribute) == getattr(Settings(), attribute)


def test_a_bad_flag_value_is_a_usage_error() -> None:
    with pytest.raises(SystemExit):
        settings_from("--port", "eighty")


def test_from_arguments_reads_a_namespace() -> None:
    expected = dataclasses.replace(
        Settings(), host="h", port=1, database_url="postgres://x/y", redis_url=None,
        data_dir=Path("p"), countdown_s=0, grace_s=2.0, max_history_events=3, log_level="ERROR",
    )
    parser = argparse.ArgumentParser()
    add_arguments(parser)
    options = parser.parse_args([])
    for name in ("host", "port", "database_url", "redis_url", "data_dir", "countdown_s",
                 "grace_s", "max_history_events", "log_level"):
        setattr(options, name, getattr(expected, name))
    assert from_arguments(options) == expected


def test_from_arguments_keeps_the_default_of_settings_that_have_no_flag() -> None:
    assert settings_from().retain_finished_s == Settings().retain_finished_s


def test_from_arguments_ignores_other_options_of_the_command_line() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("command", nargs="?", default="serve")
    add_arguments(parser)
    options = parser.parse_args(["migrate", "--port", "5"])
    assert from_arguments(options) == Settings(port=5)


def test_settings_are_immutable() -> None:
    settings = Settings()
    with pytest.raises(AttributeError):
        settings.port = 1  # type: ignore[misc]


def test_the_help_names_each_environment_variable() -> None:
    parser = argparse.ArgumentParser()
    add_arguments(parser)
    text = parser.format_help()
    for name in ("GAPS_HOST", "GAPS_PORT", "DATABASE_URL", "REDIS_URL", "GAPS_DATA_DIR"):
        assert name in text


def test_a_limit_of_zero_or_less_is_refused_naming_it() -> None:
    with pytest.raises(ValueError, match="request_burst must be above 0, got 0"):
        Limits(request_burst=0)
    with pytest.raises(ValueError, match="send_timeout_s must be above 0"):
        Limits(send_timeout_s=-1.0)


def test_the_par_settings_come_from_flags_and_the_environment(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setenv("GAPS_PAR_TIME_BUDGET_S", "2.5")
    settings = settings_from("--par-workers", "0", "--par-max-nodes", "1000")
    assert (settings.par_workers, settings.par_max_nodes, settings.par_time_budget_s) == (
        0, 1000, 2.5
    )


@pytest.mark.parametrize(
    "changes", [{"par_workers": -1}, {"par_max_nodes": 0}, {"par_time_budget_s": 0.0}]
)
def test_par_settings_out_of_range_are_refused(changes: dict[str, float]) -> None:
    with pytest.raises(ValueError, match="par"):
        Settings(**changes)  # type: ignore[arg-type]


def test_operators_are_named_by_the_configuration_only(monkeypatch: pytest.MonkeyPatch) -> None:
    assert Settings().operators == ()
    monkeypatch.setenv("GAPS_OPERATORS", " boss, deputy ,,")
    assert settings_from().operators == ("boss", "deputy")
    assert settings_from("--operators", "chief").operators == ("chief",)
    monkeypatch.setenv("GAPS_OPERATORS", "")
    assert settings_from().operators == ()


def test_bots_stay_out_of_quick_match_unless_the_operator_lets_them_in(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    assert Settings().quick_match_bots is False
    assert settings_from("--quick-match-bots").quick_match_bots is True
    for value, allowed in (("1", True), ("TRUE", True), ("on", True), ("0", False),
                           ("no", False), ("", False)):
        monkeypatch.setenv("GAPS_QUICK_MATCH_BOTS", value)
        assert settings_from().quick_match_bots is allowed, value
    monkeypatch.setenv("GAPS_QUICK_MATCH_BOTS", "1")
    assert settings_from("--no-quick-match-bots").quick_match_bots is False


def test_every_option_names_its_environment_variable_in_its_help() -> None:
    parser = argparse.ArgumentParser()
    add_arguments(parser)
    for action in parser._actions:
        if action.dest == "help":
            continue
        variable = {"database_url": "DATABASE_URL", "redis_url": "REDIS_URL"}.get(
            action.dest, "GAPS_" + action.dest.upper()
        )
        assert variable in (action.help or ""), action.option_strings


def test_metrics_are_served_only_where_the_operator_says(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    assert (Settings().metrics_host, Settings().metrics_port) == ("127.0.0.1", None)
    monkeypatch.setenv("GAPS_METRICS_PORT", "9101")
    monkeypatch.setenv("GAPS_METRICS_HOST", "10.0.0.5")
    assert (settings_from().metrics_host, settings_from().metrics_port) == ("10.0.0.5", 9101)
    assert settings_from("--metrics-port", "0").metrics_port == 0
    monkeypatch.setenv("GAPS_METRICS_PORT", "")
    assert settings_from().metrics_port is None
    with pytest.raises(ValueError, match="metrics_port must be a TCP port"):
        Settings(metrics_port=70000)


def test_the_log_level_is_one_of_logging_s_and_any_case(monkeypatch: pytest.MonkeyPatch) -> None:
    assert settings_from("--log-level", "debug").log_level == "DEBUG"
    monkeypatch.setenv("GAPS_LOG_LEVEL", "warning")
    assert settings_from().log_level == "WARNING"
    with pytest.raises(SystemExit):
        settings_from("--log-level", "loud")
