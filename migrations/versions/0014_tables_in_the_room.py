"""tables in the room: entrants at tables, arbiters, when each round's play began, who
played it at a table, and the tables' entered results

Revision ID: 0014
Revises: 0013
Create Date: 2026-12-05 08:00:00.000000

``tournament_entries.at_table``: the entrant plays at a table in the room from the next
round dealt. ``tournament_arbiters``: the players the host named to seat entrants at
tables, get the deal sheets and enter results. ``tournament_rounds``: when each round's
play began and whether it had a match (a round with every entrant at a table has none).
``tournament_tables``: who played each round at a table. ``tournament_entered_results``:
the tables' results, kept apart from the server's (``match_players``).
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision = "0014"
down_revision = "0013"
branch_labels = None
depends_on = None

_ID = sa.BigInteger().with_variant(sa.Integer(), "sqlite")


def _tournament() -> sa.Column[int]:
    return sa.Column("tournament_id", _ID, sa.ForeignKey("tournaments.id"), primary_key=True)


def _player(name: str = "player_id", *, primary_key: bool = True) -> sa.Column[int]:
    return sa.Column(name, _ID, sa.ForeignKey("players.id"), primary_key=primary_key,
                     nullable=False)


def upgrade() -> None:
    with op.batch_alter_table("tournament_entries") as entries:
        entries.add_column(
            sa.Column("at_table", sa.Boolean(), nullable=False, server_default=sa.false())
        )
    op.create_table(
        "tournament_arbiters",
        _tournament(),
        _player(),
        sa.Column("named_at", sa.DateTime(timezone=True), nullable=False),
    )
    op.create_table(
        "tournament_rounds",
        _tournament(),
        sa.Column("round", sa.SmallInteger(), primary_key=True),
        sa.Column("started_at", sa.DateTime(timezone=True), nullable=False),
        sa.Column("online", sa.Boolean(), nullable=False),
    )
    op.create_table(
        "tournament_tables",
        _tournament(),
        sa.Column("round", sa.SmallInteger(), primary_key=True),
        _player(),
    )
    op.create_table(
        "tournament_entered_results",
        _tournament(),
        sa.Column("round", sa.SmallInteger(), primary_key=True),
        _player(),
        sa.Column("placed", sa.SmallInteger(), nullable=False),
        sa.Column("redeals", sa.SmallInteger(), nullable=False),
        sa.Column("finish_ms", sa.Integer(), nullable=False),
        sa.Column("won", sa.Boolean(), nullable=False),
        sa.Column("score", sa.SmallInteger(), nullable=False),
        _player("entered_by", primary_key=False),
        sa.Column("entered_at", sa.DateTime(timezone=True), nullable=False),
    )


def downgrade() -> None:
    for table in ("tournament_entered_results", "tournament_tables", "tournament_rounds",
                  "tournament_arbiters"):
        op.drop_table(table)
    with op.batch_alter_table("tournament_entries") as entries:
        entries.drop_column("at_table")
