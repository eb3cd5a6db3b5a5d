"""tournaments: cancelled with a reason; what a scheduled start does with nobody entered;
each entrant's place in the joining order

Revision ID: 0010
Revises: 0009
Create Date: 2026-12-02 04:00:00.000000

``tournaments.status`` may now be ``cancelled`` (it was ``open``, ``running`` or
``finished``), with ``cancel_reason`` saying why. ``if_empty``: what a scheduled
tournament does when its start comes and nobody has entered: ``cancel`` (every
tournament stored before this revision) or ``wait`` for its first entrant.
``tournament_entries.position``: the entrant's place in the joining order, which two
entries of the same millisecond cannot be told apart by (none before this revision).
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision = "0010"
down_revision = "0009"
branch_labels = None
depends_on = None


def upgrade() -> None:
    op.add_column("tournaments", sa.Column("cancel_reason", sa.String(200), nullable=True))
    op.add_column(
        "tournaments",
        sa.Column("if_empty", sa.String(8), nullable=False, server_default="cancel"),
    )
    op.add_column("tournament_entries", sa.Column("position", sa.SmallInteger(), nullable=True))


def downgrade() -> None:
    with op.batch_alter_table("tournament_entries") as entries:
        entries.drop_column("position")
    with op.batch_alter_table("tournaments") as tournaments:
        tournaments.drop_column("if_empty")
        tournaments.drop_column("cancel_reason")
