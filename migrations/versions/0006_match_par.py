"""a match's par: the best final score of its deal, exact or a lower bound

Revision ID: 0006
Revises: 0005
Create Date: 2026-12-01 00:00:00.000000

Par is computed after a match ends, off the hot path (server/par_worker.py): NULL until
then. ``par_exact`` is false when the solver's budget ran out and ``par_score`` is only a
lower bound (shown as "unknown").
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision = "0006"
down_revision = "0005"
branch_labels = None
depends_on = None


def upgrade() -> None:
    with op.batch_alter_table("matches") as matches:
        matches.add_column(sa.Column("par_score", sa.SmallInteger(), nullable=True))
        matches.add_column(sa.Column("par_exact", sa.Boolean(), nullable=True))


def downgrade() -> None:
    with op.batch_alter_table("matches") as matches:
        matches.drop_column("par_exact")
        matches.drop_column("par_score")
