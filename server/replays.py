"""The replay export of a finished match: seed, ruleset, par and every action with its time.

Anyone can check it with gaps alone (``gaps.replay``), which is what ``gaps verify`` does.
"""

from __future__ import annotations

from datetime import datetime
from typing import Any, Final

from gaps import Seed
from gaps_protocol.times import format_time

FORMAT: Final = "gaps-replay/1"


def replay_document(stored: dict[str, Any]) -> dict[str, Any]:
    """Shape ``Store.replay``'s rows into the published document."""
    match = stored["match"]
    actions_by_player: dict[int, list[dict[str, Any]]] = {}
    for action in stored["actions"]:
        actions_by_player.setdefault(action["player_id"], []).append(
            {
                "seq": action["seq"],
                "action": action["action"],
                "t_ms": action["t_ms"],
                "score": action["score"],
            }
        )
    return {
        "format": FORMAT,
        "match": {
            "id": match["id"],
            "code": match["code"],
            "ruleset": match["ruleset"],
            "win_by": match["win_by"],
            "time_limit_s": match["time_limit_s"],
            "rated": match["rated"],
            "seed": str(Seed(match["seed"])),
            "commitment": match["commitment"],
            "started_at": _time(match["started_at"]),
            "ended_at": _time(match["ended_at"]),
            "par": _par(match),
        },
        "players": [
            {
                "player_id": player["player_id"],
                "name": player["name"],
                "bot": player["bot"],
                "rank": player["rank"],
                "score": player["score"],
                "placed": player["placed"],
                "redeals": player["redeals"],
                "moves": player["moves"],
                "won": player["won"],
                "end_reason": player["end_reason"],
                "finish_ms": player["finish_ms"],
                # null when the result counts; else held (for review), cleared, voided
                # or suspended (docs/fair-play.md)
                "review": player.get("review"),
                "actions": actions_by_player.get(player["player_id"], []),
            }
            for player in stored["players"]
        ],
    }


def _par(match: dict[str, Any]) -> dict[str, Any] | None:
    """The deal's par: ``score`` exact, or a lower bound (``exact`` false: "unknown");
    None while it is not computed."""
    if match.get("par_score") is None:
        return None
    return {"score": match["par_score"], "exact": bool(match["par_exact"])}


def _time(value: datetime | None) -> str | None:
    return None if value is None else format_time(value)
