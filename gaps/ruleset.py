"""Rulesets as data: each is a frozen set of named options, looked up by name."""

from __future__ import annotations

from dataclasses import dataclass
from enum import StrEnum
from typing import Final, Literal, TypeAlias

from gaps.errors import NotationError
from gaps.notation import SPACE, quoted


class RedealWhen(StrEnum):
    NEVER = "never"
    BLOCKED = "blocked"  # only when no legal move exists
    ANY_TIME = "any_time"


class Keep(StrEnum):
    """What a redeal leaves in place."""

    LEFT_RUNS = "left_runs"  # each row's preserved sequence from column 1
    NOTHING = "nothing"  # all 48 cards are reshuffled
    IN_SUIT_COLUMNS = "in_suit_columns"  # every card in its final column of its row's suit


class NewGaps(StrEnum):
    """Where the gaps stand after a redeal."""

    AFTER_RUN = "after_run"  # the slot right after each row's preserved sequence
    COLUMN_ONE = "column_one"  # column 1 of each row
    RANDOM = "random"  # the Aces are shuffled in with the cards and removed again


class Start(StrEnum):
    AS_DEALT = "as_dealt"
    TWOS_TO_COLUMN_ONE = "twos_to_column_one"  # Montana: the 2s are swapped into column 1


class UndoPolicy(StrEnum):
    NONE = "none"
    SINCE_REDEAL = "since_redeal"  # moves back to the last redeal; never a redeal itself


#: The rulesets' names (``RULESETS`` holds one ruleset of each).
RulesetName: TypeAlias = Literal[
    "classic", "no-redeal", "addiction", "spaces", "montana", "paganini"
]


@dataclass(frozen=True)
class Ruleset:
    """One named variant of Gaps. Compare rulesets by name; they are constants."""

    name: RulesetName
    redeals: int
    redeal_when: RedealWhen
    keep: Keep
    new_gaps: NewGaps
    start: Start
    undo: UndoPolicy
    description: str

    @staticmethod
    def named(name: str) -> Ruleset:
        """The ruleset called ``name`` (``classic``, ``no-redeal``, ...; any ASCII case)."""
        ruleset = RULESETS.get(name.strip(SPACE).lower()) if name.isascii() else None
        if ruleset is None:
            known = ", ".join(RULESETS)
            raise NotationError(f"{quoted(name)} is not a ruleset: expected one of {known}")
        return ruleset

    def __str__(self) -> str:
        return self.name

    def __repr__(self) -> str:
        return f"Ruleset.named({self.name!r})"


RULESETS: Final[dict[str, Ruleset]] = {
    ruleset.name: ruleset
    for ruleset in (
        Ruleset(
            "classic", 2, RedealWhen.BLOCKED, Keep.LEFT_RUNS, NewGaps.AFTER_RUN,
            Start.AS_DEALT, UndoPolicy.NONE,
            "Gaps: 2 redeals when blocked, preserved sequences kept, gaps after them.",
        ),
        Ruleset(
            "no-redeal", 0, RedealWhen.NEVER, Keep.LEFT_RUNS, NewGaps.AFTER_RUN,
            Start.AS_DEALT, UndoPolicy.NONE,
            "One deal only: blocked means lost.",
        ),
        Ruleset(
            "addiction", 3, RedealWhen.ANY_TIME, Keep.LEFT_RUNS, NewGaps.RANDOM,
            Start.AS_DEALT, UndoPolicy.SINCE_REDEAL,
            "Addiction: 3 redeals at any time, gaps fall at random, undo back to the last redeal.",
        ),
        Ruleset(
            "spaces", 2, RedealWhen.BLOCKED, Keep.NOTHING, NewGaps.COLUMN_ONE,
            Start.AS_DEALT, UndoPolicy.NONE,
            "Spaces: 2 redeals when blocked, all 48 cards reshuffled, gaps in column 1.",
        ),
        Ruleset(
            "montana", 2, RedealWhen.BLOCKED, Keep.LEFT_RUNS, NewGaps.AFTER_RUN,
            Start.TWOS_TO_COLUMN_ONE, UndoPolicy.NONE,
            "Montana: the 2s start in column 1; otherwise as classic.",
        ),
        Ruleset(
            "paganini", 3, RedealWhen.BLOCKED, Keep.IN_SUIT_COLUMNS, NewGaps.AFTER_RUN,
            Start.AS_DEALT, UndoPolicy.NONE,
            "Paganini (our reading): 3 redeals; a redeal keeps every card in its final column.",
        ),
    )
}
