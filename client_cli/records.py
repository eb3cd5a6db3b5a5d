"""Practice records, kept locally: games played, games won and the best score, per ruleset.

They live in ``practice.json`` in the config directory (``client_cli.config.config_dir``),
next to the config file and as private; nothing is sent anywhere. A file that cannot be
read is set aside as if empty (records are a nicety: practice never fails for them), and
the next save writes a good one.
"""

from __future__ import annotations

import json
import os
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Final

from client_cli.config import config_dir

RECORDS_FILE: Final = "practice.json"


@dataclass
class Record:
    """One ruleset's practice record."""

    games: int = 0
    wins: int = 0
    best_score: int | None = None

    def add(self, *, won: bool, score: int) -> None:
        """Count one finished game."""
        self.games += 1
        self.wins += won
        self.best_score = score if self.best_score is None else max(self.best_score, score)

    def __str__(self) -> str:
        best = "-" if self.best_score is None else str(self.best_score)
        return f"{self.games} game{'s' if self.games != 1 else ''}, {self.wins} won, best {best}"

    @staticmethod
    def from_json(data: Mapping[str, Any]) -> Record:
        best = data.get("best_score")
        return Record(int(data["games"]), int(data["wins"]), None if best is None else int(best))


@dataclass
class Records:
    """Every ruleset's record; ``load()`` reads them, ``save()`` writes them back."""

    path: Path
    rulesets: dict[str, Record] = field(default_factory=dict)

    @staticmethod
    def load(path: Path | None = None) -> Records:
        path = path or config_dir() / RECORDS_FILE
        try:
            data = json.loads(path.read_text(encoding="utf-8"))
            return Records(path, {str(name): Record.from_json(record)
                                  for name, record in dict(data["rulesets"]).items()})
        except (OSError, ValueError, TypeError, KeyError, AttributeError):
            return Records(path)  # none yet, or unreadable: start afresh

    def of(self, ruleset: str) -> Record:
        return self.rulesets.setdefault(ruleset, Record())

    def save(self) -> None:
        """Write the records (atomically); an ``OSError`` (a read-only disk) is the
        caller's to ignore."""
        data = {"rulesets": {name: {"games": record.games, "wins": record.wins,
                                    "best_score": record.best_score}
                             for name, record in sorted(self.rulesets.items())}}
        self.path.parent.mkdir(parents=True, exist_ok=True)
        temporary = self.path.with_suffix(".tmp")
        descriptor = os.open(temporary, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
        with os.fdopen(descriptor, "w", encoding="utf-8") as output:
            json.dump(data, output, indent=2)
            output.write("\n")
        os.replace(temporary, self.path)
