"""Commitments to a set of deals: published before the deals are played, checked after.

A tournament's seeds are drawn when it is created. Its **commitment** is one SHA-256
over the ordered list, published at once; each round's own commitment is the SHA-256 of
that round's seed (``Seed.commitment``, what the round's match carries), published with
it. Each seed is revealed when its round ends and the whole list at the end: anyone can
then recompute both and see that no deal was chosen after the commitment (as BigDeal's
organisers do for bridge). docs/protocol.md defines the hashes so that any language can
recompute them:

* a round's commitment: ``sha256(seed)``, hex, the seed as its raw bytes (10 for the
  server's seeds; the share code ``ABCD-EFGH-...`` is their base32);
* the tournament's commitment: ``sha256(seed_1 || seed_2 || ... || seed_n)``, hex, the
  raw bytes of the seeds of rounds 1 to n, one after the other.
"""

from __future__ import annotations

import hashlib
from collections.abc import Sequence
from dataclasses import dataclass

from gaps.errors import NotationError
from gaps.seed import Seed

__all__ = ["DealsCheck", "check_deals", "deals_commitment", "round_commitments"]


def deals_commitment(seeds: Sequence[Seed]) -> str:
    """The commitment to ``seeds`` in round order: SHA-256 of their bytes, one after the
    other, in lower-case hex."""
    if not seeds:
        raise ValueError("a commitment needs at least one seed")
    return hashlib.sha256(b"".join(seed.data for seed in seeds)).hexdigest()


def round_commitments(seeds: Sequence[Seed]) -> list[str]:
    """Each round's own commitment: the SHA-256 of its seed, hex (``Seed.commitment``)."""
    return [seed.commitment for seed in seeds]


@dataclass(frozen=True)
class DealsCheck:
    """What a check of revealed seeds found.

    ``verified`` lists the rounds whose revealed seed hashes to their published round
    commitment; ``mismatches`` says, for each round whose does not (or whose seed is not
    a share code), why, in words; ``complete`` is True once every seed is revealed and
    they hash to the tournament's commitment, False when they are all revealed and do
    not, and None while some are still secret.
    """

    verified: tuple[int, ...]
    mismatches: tuple[str, ...]
    complete: bool | None

    @property
    def ok(self) -> bool:
        return not self.mismatches and self.complete is not False


def check_deals(
    commitment: str, rounds: Sequence[str], seeds: Sequence[str | None]
) -> DealsCheck:
    """Check the revealed ``seeds`` (share codes, None while secret; one per round)
    against the published ``commitment`` and round commitments ``rounds``."""
    mismatches: list[str] = []
    verified: list[int] = []
    revealed: list[Seed] = []
    if len(seeds) != len(rounds):
        mismatches.append(
            f"{len(rounds)} round commitments were published but {len(seeds)} seeds"
        )
    for number, (promised, code) in enumerate(zip(rounds, seeds, strict=False), start=1):
        if code is None:
            continue
        try:
            seed = Seed.parse(code)
        except NotationError as error:
            mismatches.append(f"round {number}: {error}")
            continue
        revealed.append(seed)
        if seed.commitment != promised.lower():
            mismatches.append(
                f"round {number}: seed {seed} hashes to {seed.commitment[:16]}…, not to the "
                f"published {promised[:16]}…"
            )
        else:
            verified.append(number)
    complete: bool | None = None
    if seeds and len(revealed) == len(seeds) == len(rounds):
        complete = deals_commitment(revealed) == commitment.lower()
        if not complete:
            mismatches.append(
                "the revealed seeds hash to "
                f"{deals_commitment(revealed)[:16]}…, not to the published commitment "
                f"{commitment[:16]}…"
            )
    return DealsCheck(tuple(verified), tuple(mismatches), complete)
