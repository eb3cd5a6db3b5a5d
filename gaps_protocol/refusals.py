"""The server's refusals (``error`` replies) as a client reads them."""

from __future__ import annotations

from typing import Final

from gaps_protocol.messages import Error

#: Refusals that mean "not now, nothing was changed": the same request may go again.
TRANSIENT_CODES: Final = frozenset(
    {
        "storage_unavailable",
        "broker_unavailable",
        "shutting_down",
        "rate_limited",
        "match_unavailable",
    }
)


def is_transient(refusal: Error) -> bool:
    """Whether the refusal means "not now": the same request may go again later."""
    return refusal.code in TRANSIENT_CODES


def describe(refusal: Error) -> str:
    """The refusal for people: the server's message, and its reason when it gives one."""
    reason = refusal.reason
    if isinstance(reason, str) and reason:
        return f"{refusal.message} ({reason})"
    return refusal.message


def pause_after(refusal: Error, pause_s: float) -> float:
    """How long to wait before trying again: ``pause_s``, or longer if the server said how
    long (``retry_after_ms`` of ``rate_limited`` and ``match_unavailable``)."""
    if isinstance(refusal.retry_after_ms, int):
        return max(pause_s, refusal.retry_after_ms / 1000)
    return pause_s
