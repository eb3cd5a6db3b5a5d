"""A tournament's deals checked against the commitment its server published before
anyone entered (docs/protocol.md, Committed deals): each revealed seed against its
round's commitment, and all of them, once revealed, against the tournament's.

What does not match is said loudly: it means the server dealt other deals than those it
had committed to (or sent a commitment it cannot keep).
"""

from __future__ import annotations

from dataclasses import dataclass

from rich.text import Text

from client_cli.render import printable
from gaps.commitment import check_deals
from gaps_protocol.messages.views import TournamentView

#: How a mismatch is shown: nobody may miss it.
ALARM = "bold white on red"


@dataclass(frozen=True)
class DealsReport:
    """What a check of a tournament's view found: ``line`` says where its deals stand;
    ``mismatches``, one sentence each, what does not hold (none: all that is revealed
    holds)."""

    line: Text
    mismatches: tuple[str, ...]


def deals_report(view: TournamentView) -> DealsReport:
    """Check ``view``'s revealed seeds against its commitment."""
    commitment = view.commitment
    winnable = " (winnable: each proven so by the solver)" if view.deals == "winnable" \
        else ""
    if commitment is None:
        if view.deals_ready is False:
            return DealsReport(Text(f"Deals: being drawn{winnable}; entries open once they "
                                    "are committed."), ())
        return DealsReport(Text("Deals: none committed (a tournament from before "
                                "commitments)."), ())
    seeds = view.seeds
    found = check_deals(commitment, view.round_commitments, seeds)
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


def revealed_line(view: TournamentView, number: int, seed: str) -> tuple[Text, str | None]:
    """What ``round_ended`` revealing ``seed`` for round ``number`` says: a line, and the
    mismatch (None: it matches its round's commitment)."""
    rounds = view.round_commitments
    if not view.commitment or not 1 <= number <= len(rounds):
        return Text(printable(f"Round {number}'s deal: {seed}.")), None
    seeds: list[str | None] = [None] * len(rounds)
    seeds[number - 1] = seed
    found = check_deals(view.commitment, list(rounds), seeds)
    if found.mismatches:
        return Text(printable(f"Round {number}'s deal: {seed}."), style=ALARM), \
            found.mismatches[0]
    return Text(printable(f"Round {number}'s deal: {seed}, as committed.")), None
