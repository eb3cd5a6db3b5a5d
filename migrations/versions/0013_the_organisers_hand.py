"""the organiser's hand on a tournament: its own countdown and break, late entry, a
pause between rounds, and the host's announcements

Revision ID: 0013
Revises: 0012
Create Date: 2026-12-04 08:00:00.000000

``tournaments.countdown_s`` and ``break_s``: the organiser's countdown of each round and
break between rounds (null: the server's settings, as for every tournament stored before
this revision). ``late_entry_until_round``: players may enter a running tournament until
this round is dealt (0: no late entry). ``paused``: the host holds the next round back.
``tournament_announcements``: what the host said to every entrant and follower; the view
shows the last ones.
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision = "0013"
down_revision = "0012"
branch_labels = None
depends_on = None


def upgrade() -> None:
    with op.batch_alter_table("tournaments") as tournaments:
        tournaments.add_column(sa.Column("countdown_s", sa.SmallInteger(), nullable=True))
        tournaments.add_column(sa.Column("break_s", sa.Integer(), nullable=True))
        tournaments.add_column(
            sa.Column("late_entry_until_round", sa.SmallInteger(), nullable=False,
                      server_default="0")
        )
        tournaments.add_column(
            sa.Column("paused", sa.Boolean(), nullable=False, server_default=sa.false())
        )
    op.create_table(
        "tournament_announcements",
        sa.Column("id", sa.BigInteger().with_variant(sa.Integer(), "sqlite"),
                  primary_key=True, autoincrement=True),
        sa.Column("tournament_id", sa.BigInteger().with_variant(sa.Integer(), "sqlite"),
                  sa.ForeignKey("tournaments.id"), nullable=False),
        sa.Column("text", sa.String(500), nullable=False),
        sa.Column("at", sa.DateTime(timezone=True), nullable=False),
    )
    op.create_index(
        "ix_tournament_announcements_tournament_id", "tournament_announcements",
        ["tournament_id"],
    )


def downgrade() -> None:
    op.drop_index("ix_tournament_announcements_tournament_id", "tournament_announcements")
    op.drop_table("tournament_announcements")
    with op.batch_alter_table("tournaments") as tournaments:
        for column in ("paused", "late_entry_until_round", "break_s", "countdown_s"):
            tournaments.drop_column(column)
