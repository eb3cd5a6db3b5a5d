"""server.logs: structured logs, one JSON object a line."""

from __future__ import annotations

import io
import json
import logging
import sys
import threading
import warnings
from collections.abc import Iterator
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import pytest

from gaps_protocol.times import parse_time
from server import logs
from server.logs import JsonFormatter
from tests.processes import marked_environment
from tests.server_process import solving_par


@pytest.fixture
def capture() -> Iterator[tuple[logging.Logger, io.StringIO]]:
    """A logger of its own writing through JsonFormatter into a string."""
    stream = io.StringIO()
    handler = logging.StreamHandler(stream)
    handler.setFormatter(JsonFormatter())
    logger = logging.getLogger("gaps.test.logs")
    logger.handlers[:] = [handler]
    logger.propagate = False
    logger.setLevel(logging.DEBUG)
    yield logger, stream
    logger.handlers.clear()
    logger.propagate = True


def entries(stream: io.StringIO) -> list[dict[str, Any]]:
    return [json.loads(line) for line in stream.getvalue().splitlines()]


def test_a_log_record_is_one_json_object_on_one_line(
    capture: tuple[logging.Logger, io.StringIO],
) -> None:
    logger, stream = capture
    logger.info("listening")
    lines = stream.getvalue().splitlines()
    assert len(lines) == 1
    assert isinstance(json.loads(lines[0]), dict)


def test_an_entry_has_time_level_logger_and_message(
    capture: tuple[logging.Logger, io.StringIO],
) -> None:
    logger, stream = capture
    logger.warning("disk %s is %d%% full", "/var", 93)
    (entry,) = entries(stream)
    assert entry["level"] == "warning"
    assert entry["logger"] == "gaps.test.logs"
    assert entry["message"] == "disk /var is 93% full"
    assert set(entry) == {"time", "level", "logger", "message"}


def test_the_time_is_rfc_3339_utc_with_milliseconds(
    capture: tuple[logging.Logger, io.StringIO],
) -> None:
    logger, stream = capture
    before = datetime.now(UTC)
    logger.info("now")
    (entry,) = entries(stream)
    logged = parse_time(entry["time"])  # the one form of every time (gaps_protocol.times)
    assert logged.utcoffset() == timedelta(0)
    assert entry["time"].endswith("Z")
    assert len(entry["time"].split("T")[1].removesuffix("Z")) == len("12:34:56.789")
    assert abs(logged - before) < timedelta(seconds=5)


def test_the_extra_fields_of_a_record_are_added_to_the_entry(
    capture: tuple[logging.Logger, io.StringIO],
) -> None:
    logger, stream = capture
    logger.info("listening", extra={"host": "127.0.0.1", "port": 8765, "ids": [1, 2],
                                    "public": False, "nothing": None})
    (entry,) = entries(stream)
    assert entry["host"] == "127.0.0.1"
    assert entry["port"] == 8765
    assert entry["ids"] == [1, 2]
    assert entry["public"] is False
    assert entry["nothing"] is None


def test_extra_values_that_are_not_json_are_written_as_text(
    capture: tuple[logging.Logger, io.StringIO],
) -> None:
    logger, stream = capture
    when = datetime(2026, 1, 2, 3, 4, 5, tzinfo=UTC)
    logger.info("paths", extra={"path": Path("/srv/gaps"), "when": when})
    (entry,) = entries(stream)
    assert entry["path"] == "/srv/gaps"
    assert entry["when"] == str(when)


def test_standard_record_attributes_stay_out_of_the_entry(
    capture: tuple[logging.Logger, io.StringIO],
) -> None:
    logger, stream = capture
    logger.error("plain %s", "arg")
    (entry,) = entries(stream)
    for attribute in ("args", "msg", "levelno", "pathname", "lineno", "funcName", "created",
                      "thread", "process", "exc_info", "exc_text", "stack_info", "module"):
        assert attribute not in entry


def test_an_exception_adds_its_traceback_text(
    capture: tuple[logging.Logger, io.StringIO],
) -> None:
    logger, stream = capture
    try:
        raise ZeroDivisionError("the match broke")
    except ZeroDivisionError:
        logger.exception("request failed", extra={"frame": '{"type":"ping"}'})
    lines = stream.getvalue().splitlines()
    assert len(lines) == 1  # the traceback's lines are escaped, not broken out
    (entry,) = entries(stream)
    assert entry["level"] == "error"
    assert entry["message"] == "request failed"
    assert entry["frame"] == '{"type":"ping"}'
    assert "Traceback (most recent call last)" in entry["exception"]
    assert "ZeroDivisionError: the match broke" in entry["exception"]
    assert "test_an_exception_adds_its_traceback_text" in entry["exception"]


def test_a_record_without_an_exception_has_no_exception_field(
    capture: tuple[logging.Logger, io.StringIO],
) -> None:
    logger, stream = capture
    logger.info("fine", exc_info=False)
    assert "exception" not in entries(stream)[0]


def test_non_ascii_text_survives_the_round_trip(
    capture: tuple[logging.Logger, io.StringIO],
) -> None:
    logger, stream = capture
    logger.info("card 8♣ for zoë", extra={"player": "zoë"})
    (entry,) = entries(stream)
    assert entry["message"] == "card 8♣ for zoë"
    assert entry["player"] == "zoë"


def test_every_level_is_written_in_lower_case(
    capture: tuple[logging.Logger, io.StringIO],
) -> None:
    logger, stream = capture
    logger.debug("d")
    logger.info("i")
    logger.warning("w")
    logger.error("e")
    logger.critical("c")
    assert [e["level"] for e in entries(stream)] == ["debug", "info", "warning", "error",
                                                      "critical"]


@pytest.fixture
def restore_root_logging() -> Iterator[None]:
    """What ``logs.configure`` changes, put back after the test."""
    root = logging.getLogger()
    handlers, level = list(root.handlers), root.level
    websockets_level = logging.getLogger("websockets").level
    hooks = (warnings.showwarning, sys.excepthook, threading.excepthook, sys.unraisablehook)
    yield
    root.handlers[:] = handlers
    root.setLevel(level)
    logging.getLogger("websockets").setLevel(websockets_level)
    warnings.showwarning, sys.excepthook, threading.excepthook, sys.unraisablehook = hooks


@pytest.fixture
def stderr(restore_root_logging: None, monkeypatch: pytest.MonkeyPatch) -> io.StringIO:
    """What ``logs.configure("INFO")`` writes to stderr."""
    captured = io.StringIO()
    monkeypatch.setattr(sys, "stderr", captured)
    logs.configure("INFO")
    return captured


def test_configure_sends_json_lines_to_stderr_at_the_given_level(
    restore_root_logging: None, monkeypatch: pytest.MonkeyPatch,
) -> None:
    stderr = io.StringIO()
    monkeypatch.setattr(sys, "stderr", stderr)
    logs.configure("warning")
    root = logging.getLogger()
    assert len(root.handlers) == 1
    assert isinstance(root.handlers[0].formatter, JsonFormatter)
    assert root.level == logging.WARNING
    logging.getLogger("gaps.test.configure").info("hidden")
    logging.getLogger("gaps.test.configure").warning("shown", extra={"match": "K7QX2M"})
    (entry,) = [json.loads(line) for line in stderr.getvalue().splitlines()]
    assert entry["message"] == "shown"
    assert entry["match"] == "K7QX2M"


def test_configure_quiets_the_websockets_library(restore_root_logging: None) -> None:
    logs.configure("DEBUG")
    assert logging.getLogger().level == logging.DEBUG
    assert logging.getLogger("websockets").level == logging.WARNING


def test_a_warning_of_a_library_is_a_json_line_with_its_category_and_source(
    stderr: io.StringIO,
) -> None:
    with warnings.catch_warnings():
        warnings.simplefilter("always")
        warnings.showwarning = logs._log_warning  # catch_warnings put the default back
        warnings.warn("an old call", DeprecationWarning, stacklevel=1)
    (entry,) = entries(stderr)
    assert entry["logger"] == "py.warnings" and entry["level"] == "warning"
    assert entry["message"] == "an old call"
    assert entry["category"] == "DeprecationWarning"
    assert entry["source"].startswith(__file__ + ":")


def test_an_exception_that_ends_a_thread_is_a_json_line(stderr: io.StringIO) -> None:
    def fail() -> None:
        raise LookupError("nothing there")

    thread = threading.Thread(target=fail, name="doomed")
    thread.start()
    thread.join()
    (entry,) = entries(stderr)
    assert entry["level"] == "error" and entry["thread_name"] == "doomed"
    assert "LookupError: nothing there" in entry["exception"]


def test_an_uncaught_exception_is_a_json_line(stderr: io.StringIO) -> None:
    try:
        raise KeyError("gone")
    except KeyError as error:
        sys.excepthook(type(error), error, error.__traceback__)
    (entry,) = entries(stderr)
    assert (entry["level"], entry["message"]) == ("critical", "uncaught exception")
    assert "KeyError: 'gone'" in entry["exception"]


def test_an_exception_python_ignores_is_a_json_line(stderr: io.StringIO) -> None:
    class Faulty:
        def __del__(self) -> None:
            raise OSError("cannot close")

    Faulty()
    (entry,) = entries(stderr)
    assert entry["level"] == "error"
    assert entry["message"].startswith("Exception ignored in")
    assert "Faulty" in entry["object"]
    assert "OSError: cannot close" in entry["exception"]


async def test_a_real_server_writes_only_json_lines_to_stderr_until_it_stops(
    tmp_path: Path,
) -> None:
    """A server on a fresh SQLite file (its migration makes SQLAlchemy warn), solving a
    match's par when SIGTERM comes: every line of its stderr is a JSON object."""
    log = tmp_path / "server.log"
    environment = marked_environment()
    async with solving_par(
        tmp_path, environment, args=["--log-level", "INFO"], log=log
    ) as server:
        server.terminate()
        assert await server.exited() == 0
    lines = log.read_text().splitlines()
    logged = [json.loads(line) for line in lines]
    assert all(isinstance(entry, dict) for entry in logged)
    assert any(entry["logger"] == "py.warnings" for entry in logged)
    assert logged[-1]["message"] == "stopped"
