"""Structured logs: one JSON object a line on stderr, and nothing else there.

What a serving process says on stdout (where it listens: ``announce``) is one such line
too, since systemd and Docker merge stdout into the same log.

Besides the log records, what Python itself would write to stderr goes through the same
formatter: warnings (``warnings.warn`` of a library: logger ``py.warnings``), uncaught
exceptions of the main thread and of other threads, and exceptions Python can only
ignore ("Exception ignored in ...", at garbage collection or at exit).
"""

from __future__ import annotations

import json
import logging
import sys
import threading
import warnings
from datetime import UTC, datetime
from types import TracebackType
from typing import Any, TextIO

from gaps_protocol.times import format_time

_STANDARD = set(logging.LogRecord("", 0, "", 0, "", (), None).__dict__) | {"message", "asctime"}


class JsonFormatter(logging.Formatter):
    def format(self, record: logging.LogRecord) -> str:
        entry = {
            "time": format_time(datetime.fromtimestamp(record.created, UTC)),
            "level": record.levelname.lower(),
            "logger": record.name,
            "message": record.getMessage(),
        }
        entry.update({k: v for k, v in record.__dict__.items() if k not in _STANDARD})
        if record.exc_info:
            entry["exception"] = self.formatException(record.exc_info)
        return json.dumps(entry, default=str)


def announce(message: str, **fields: Any) -> None:
    """Say ``message`` (with ``fields``) on stdout, as one JSON line like the log's: what
    a process that started the server reads (a ``ws://host:port`` URL in the message)."""
    record = logging.getLogger("gaps.server").makeRecord(
        "gaps.server", logging.INFO, "", 0, message, (), None, extra=fields
    )
    print(JsonFormatter().format(record), flush=True)


def configure(level: str) -> None:
    """Log records at ``level`` and above as JSON lines on stderr, and Python's own
    writings to stderr (see the module's doc) as records."""
    handler = logging.StreamHandler(sys.stderr)
    handler.setFormatter(JsonFormatter())
    root = logging.getLogger()
    root.handlers[:] = [handler]
    root.setLevel(level.upper())
    logging.getLogger("websockets").setLevel(logging.WARNING)
    warnings.showwarning = _log_warning
    sys.excepthook = _log_uncaught
    threading.excepthook = _log_uncaught_in_thread
    sys.unraisablehook = _log_unraisable


def _log_warning(
    message: Warning | str,
    category: type[Warning],
    filename: str,
    lineno: int,
    file: TextIO | None = None,
    line: str | None = None,
) -> None:
    """``warnings.showwarning``, as ``logging.captureWarnings`` makes it but with the
    warning's parts as fields. A warning shown to a given file goes there, as ever."""
    if file is not None:
        file.write(warnings.formatwarning(message, category, filename, lineno, line))
        return
    logging.getLogger("py.warnings").warning(
        str(message), extra={"category": category.__name__, "source": f"{filename}:{lineno}"}
    )


def _log_uncaught(
    kind: type[BaseException], error: BaseException, trace: TracebackType | None
) -> None:
    logging.getLogger("gaps").critical("uncaught exception", exc_info=(kind, error, trace))


def _log_uncaught_in_thread(uncaught: Any) -> None:
    """``threading.excepthook``: an exception that ended a thread (SystemExit is silent,
    as by default)."""
    if issubclass(uncaught.exc_type, SystemExit):
        return
    thread = uncaught.thread.name if uncaught.thread is not None else None
    logging.getLogger("gaps").error(
        "uncaught exception in a thread",
        exc_info=(uncaught.exc_type, uncaught.exc_value, uncaught.exc_traceback),
        extra={"thread_name": thread},
    )


def _log_unraisable(unraisable: Any) -> None:
    """``sys.unraisablehook``: an exception Python could not raise (in ``__del__``, a
    callback at exit...)."""
    try:
        about = repr(unraisable.object) if unraisable.object is not None else None
    except Exception:
        about = object.__repr__(unraisable.object)
    logging.getLogger("gaps").error(
        unraisable.err_msg or "Exception ignored in",
        exc_info=(unraisable.exc_type, unraisable.exc_value, unraisable.exc_traceback),
        extra={"object": about},
    )
