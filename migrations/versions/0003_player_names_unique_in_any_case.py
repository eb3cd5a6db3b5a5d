"""player names unique in any case

Revision ID: 0003
Revises: 0002
Create Date: 2026-12-02 10:00:00.000000

Players whose names differed only in case ("ana", "Ana") could both register. Before the
unique index on lower(name) can exist, each such group keeps its name for its oldest
player (the lowest id), and every later one is renamed to the name with a number added,
"Ana-2", "Ana-3" (cut to 24 characters), the first such name nobody has in any case.
Tokens are unchanged: a renamed player still authenticates, and sees the new name.
"""

from __future__ import annotations

import logging

import sqlalchemy as sa
from alembic import op

revision = "0003"
down_revision = "0002"
branch_labels = None
depends_on = None

NAME_LENGTH = 24

log = logging.getLogger("gaps.server")


def upgrade() -> None:
    rename_case_duplicates(op.get_bind())
    op.create_index("ux_players_name_lower", "players", [sa.text("lower(name)")], unique=True)


def downgrade() -> None:
    op.drop_index("ux_players_name_lower", table_name="players")


def rename_case_duplicates(connection: sa.Connection) -> list[tuple[int, str, str]]:
    """Rename all but the oldest player of each group of names equal in any case; returns
    ``(player id, old name, new name)`` for each renamed player."""
    players = sa.table("players", sa.column("id", sa.Integer), sa.column("name", sa.String))
    rows = connection.execute(sa.select(players.c.id, players.c.name).order_by(players.c.id))
    taken: set[str] = set()
    renames: list[tuple[int, str, str]] = []
    later: list[tuple[int, str]] = []
    for player_id, name in rows:
        if name.lower() in taken:
            later.append((player_id, name))
        else:
            taken.add(name.lower())
    for player_id, name in later:
        number = 2
        while True:
            suffix = f"-{number}"
            new_name = name[: NAME_LENGTH - len(suffix)] + suffix
            if new_name.lower() not in taken:
                break
            number += 1
        taken.add(new_name.lower())
        connection.execute(
            sa.update(players).where(players.c.id == player_id).values(name=new_name)
        )
        renames.append((player_id, name, new_name))
        log.warning(
            "renamed a player: names are unique in any case",
            extra={"player_id": player_id, "old_name": name, "new_name": new_name},
        )
    return renames
