"""A tournament's deals checked against the commitment its server published before
anyone entered (docs/protocol.md, Committed deals): each revealed seed against its
round's commitment, and all of them, once revealed, against the tournament's.

What does not match is said loudly: it means the server dealt other deals than those it
had committed to (or sent a commitment it cannot keep).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from rich.text import Text

from client_cli.render import printable
from gaps.commitment import check_deals

#: How a mismatch is shown: nobody may miss it.
ALARM = "bold white on red"


@dataclass(frozen=True)
class DealsReport:
    """What a check of a tournament's view found: ``line`` says where its deals stand;
    ``mismatches``, one sentence each, what does not hold (none: all that is revealed
    holds)."""

    line: Text
    mismatches: tuple[str, ...]


def _texts(value: Any) -> list[Any] | None:
    return list(value) if isinstance(value, list) else None


def deals_report(view: Mapping[str, Any]) -> DealsReport:
    """Check ``view``'s revealed seeds against its commitment."""
    commitment = view.get("commitment")
    winnable = " (winnable: each proven so by the solver)" if view.get("deals") == "winnable" \
        else ""
    if commitment is None:
        if view.get("deals_ready") is False:
            return DealsReport(Text(f"Deals: being drawn{winnable}; entries open once they "
                                    "are committed."), ())
        return DealsReport(Text("Deals: none committed (a tournament from before "
                                "commitments)."), ())
    rounds, seeds = _texts(view.get("round_commitments")), _texts(view.get("seeds"))
    if not isinstance(commitment, str) or rounds is None or seeds is None \
            or not all(isinstance(r, str) for r in rounds) \
            or not all(s is None or isinstance(s, str) for s in seeds):
        return DealsReport(Text("Deals: the server's commitment is malformed."),
                           ("the server sent a commitment that cannot be checked",))
    found = check_deals(commitment, rounds, seeds)
    revealed = sum(1 for seed in seeds if seed is not None)
    line = Text(printable(f"Deals{winnable}: committed, SHA-256 {commitment}"))
    if found.complete:
        line.append(printable(f"; all {len(seeds)} revealed, and they match it."), style="green")
    elif revealed:
        line.append(printable(f"; {len(found.verified)} of the {revealed} revealed so far "
                              "match their round's commitment."))
    else:
        line.append("; each seed is revealed when its round ends.")
    return DealsReport(line, found.mismatches)


def alarm(mismatches: tuple[str, ...] | list[str]) -> Text:
    """The loud warning for ``mismatches``."""
    text = Text("THE DEALS DO NOT MATCH THE COMMITMENT", style=ALARM)
    for mismatch in mismatches:
        text.append(printable(f"\n  {mismatch}"), style="bold red")
    text.append("\n  The server dealt other deals than those it had committed to.", style="red")
    return text


def revealed_line(view: Mapping[str, Any], number: int, seed: str) -> tuple[Text, str | None]:
    """What ``round_ended`` revealing ``seed`` for round ``number`` says: a line, and the
    mismatch (None: it matches its round's commitment)."""
    rounds = _texts(view.get("round_commitments")) or []
    if not view.get("commitment") or not 1 <= number <= len(rounds):
        return Text(printable(f"Round {number}'s deal: {seed}.")), None
    seeds: list[str | None] = [None] * len(rounds)
    seeds[number - 1] = seed
    found = check_deals(str(view["commitment"]), [str(r) for r in rounds], seeds)
    if found.mismatches:
        return Text(printable(f"Round {number}'s deal: {seed}."), style=ALARM), \
            found.mismatches[0]
    return Text(printable(f"Round {number}'s deal: {seed}, as committed.")), None
