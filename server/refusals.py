"""Refusals of requests the server cannot serve now: a part it needs is down, or the
client sends too much. Each tells the client to send the request again later."""

from __future__ import annotations

from server.broker import BrokerUnavailable
from server.errors import ServerError
from server.storage.outage import is_outage


def unavailable(error: Exception) -> ServerError | None:
    """The refusal for a request that failed because a part the server needs is down,
    or None for any other failure (a bug)."""
    if isinstance(error, BrokerUnavailable):
        return ServerError(
            "broker_unavailable", "the link between server processes is down: retry in a moment"
        )
    if is_outage(error):
        return ServerError(
            "storage_unavailable", "the database could not be reached: nothing was changed, retry"
        )
    return None


def rate_limited(wait_s: float) -> ServerError:
    """Too many requests: send again in ``wait_s`` seconds (rounded up to the ms)."""
    retry_after_ms = max(1, int(wait_s * 1000 + 0.999))
    return ServerError(
        "rate_limited",
        f"too many requests: wait {retry_after_ms} ms",
        retry_after_ms=retry_after_ms,
    )
