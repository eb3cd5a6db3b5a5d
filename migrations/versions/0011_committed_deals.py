"""committed deals: a tournament's seeds drawn at its creation, whether they are only
deals proven winnable, and the daily challenge's winnable deal of each day

Revision ID: 0011
Revises: 0010
Create Date: 2026-12-03 04:00:00.000000

``tournament_deals``: the seed of each round of a tournament, drawn when it is created
(or, for ``deals = 'winnable'``, once the solver has proven them) and committed to in its
view before anyone enters (docs/protocol.md, Committed deals). Tournaments stored before
this revision have none: their rounds are dealt a fresh seed each, as before.
``tournaments.deals``: ``any`` (every tournament stored before this revision) or
``winnable``. ``daily_deals``: the deal each day's challenge of a ruleset deals, the
first of its candidates the solver proved winnable (``candidate`` says which), kept so
that every process deals the same.
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision = "0011"
down_revision = "0010"
branch_labels = None
depends_on = None


def upgrade() -> None:
    op.add_column(
        "tournaments", sa.Column("deals", sa.String(8), nullable=False, server_default="any")
    )
    op.create_table(
        "tournament_deals",
        sa.Column("tournament_id", sa.BigInteger().with_variant(sa.Integer(), "sqlite"),
                  sa.ForeignKey("tournaments.id"), primary_key=True),
        sa.Column("round", sa.SmallInteger(), primary_key=True),
        sa.Column("seed", sa.LargeBinary(64), nullable=False),
    )
    op.create_table(
        "daily_deals",
        sa.Column("ruleset", sa.String(16), primary_key=True),
        sa.Column("day", sa.Date(), primary_key=True),
        sa.Column("seed", sa.LargeBinary(64), nullable=False),
        sa.Column("candidate", sa.SmallInteger(), nullable=False),
    )


def downgrade() -> None:
    op.drop_table("daily_deals")
    op.drop_table("tournament_deals")
    with op.batch_alter_table("tournaments") as tournaments:
        tournaments.drop_column("deals")
