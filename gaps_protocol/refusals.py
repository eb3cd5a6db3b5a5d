"""The server's refusals (``error`` replies) as a client reads them."""

from __future__ import annotations

from typing import Any, Final

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


def is_transient(refusal: dict[str, Any]) -> bool:
    """Whether the refusal means "not now": the same request may go again later."""
    return refusal.get("code") in TRANSIENT_CODES


def describe(refusal: dict[str, Any]) -> str:
    """The refusal for people: the server's message, and its reason when it gives one."""
    message = str(refusal.get("message", refusal.get("code", "error")))
    reason = refusal.get("reason")
    return f"{message} ({reason})" if reason else message


def pause_after(refusal: dict[str, Any], pause_s: float) -> float:
    """How long to wait before trying again: ``pause_s``, or longer if the server said how
    long (``retry_after_ms`` of ``rate_limited`` and ``match_unavailable``)."""
    after_ms = refusal.get("retry_after_ms")
    if isinstance(after_ms, int | float) and not isinstance(after_ms, bool):
        return max(pause_s, after_ms / 1000)
    return pause_s
