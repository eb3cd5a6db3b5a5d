"""declared bots, bots allowed in a match or tournament, entrants removed by the host

Revision ID: 0007
Revises: 0006
Create Date: 2026-12-01 02:30:00.000000

``players.bot``: the account is a bot, as declared at ``register``; never changed by any
message. ``matches.bots`` and ``tournaments.bots``: whether the host lets bots sit (no by
default: every match and tournament stored before this revision said no). An entrant the
host removed between rounds keeps their row, with ``removed_at`` and ``removed_reason``:
a resumed tournament keeps them out of the rounds left.
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision = "0007"
down_revision = "0006"
branch_labels = None
depends_on = None


def upgrade() -> None:
    # Plain ADD COLUMN, on SQLite too: a batch would copy ``players`` into a new table and
    # lose its expression index (names unique in any case), which SQLite cannot reflect.
    op.add_column(
        "players", sa.Column("bot", sa.Boolean(), nullable=False, server_default=sa.false())
    )
    op.add_column(
        "matches", sa.Column("bots", sa.Boolean(), nullable=False, server_default=sa.false())
    )
    op.add_column(
        "tournaments", sa.Column("bots", sa.Boolean(), nullable=False, server_default=sa.false())
    )
    op.add_column(
        "tournament_entries",
        sa.Column("removed_at", sa.DateTime(timezone=True), nullable=True),
    )
    op.add_column(
        "tournament_entries", sa.Column("removed_reason", sa.String(200), nullable=True)
    )


def downgrade() -> None:
    with op.batch_alter_table("tournament_entries") as entries:
        entries.drop_column("removed_reason")
        entries.drop_column("removed_at")
    with op.batch_alter_table("tournaments") as tournaments:
        tournaments.drop_column("bots")
    with op.batch_alter_table("matches") as matches:
        matches.drop_column("bots")
    # The batch copies ``players`` on SQLite: its expression index is made again after.
    op.drop_index("ux_players_name_lower", table_name="players")
    with op.batch_alter_table("players") as players:
        players.drop_column("bot")
    op.create_index("ux_players_name_lower", "players", [sa.text("lower(name)")], unique=True)
