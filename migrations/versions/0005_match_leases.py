"""match leases: which process owns each live match, fenced by an epoch

Revision ID: 0005
Revises: 0004
Create Date: 2026-11-30 20:00:00.000000

A cluster of server processes shares one PostgreSQL database. Each live match is owned by
exactly one process, which holds a lease on it (``match_leases``) and renews it; when the
lease runs out, another process takes the match over with the epoch raised by one. The
journal stores an action only while its writer's epoch is still the lease's, checked in
the transaction that stores it.
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision = "0005"
down_revision = "0004"
branch_labels = None
depends_on = None


def upgrade() -> None:
    op.create_table(
        "match_leases",
        sa.Column("match_id", sa.BigInteger().with_variant(sa.Integer(), "sqlite"),
                  sa.ForeignKey("matches.id"), primary_key=True),
        sa.Column("owner", sa.String(96), nullable=False),
        sa.Column("epoch", sa.BigInteger(), nullable=False),
        sa.Column("expires_at", sa.DateTime(timezone=True), nullable=False),
    )
    op.create_index("ix_match_leases_expires_at", "match_leases", ["expires_at"])


def downgrade() -> None:
    op.drop_index("ix_match_leases_expires_at", table_name="match_leases")
    op.drop_table("match_leases")
