"""signing keys: the Ed25519 keys results are signed with, current and retired

Revision ID: 0012
Revises: 0011
Create Date: 2026-12-03 10:00:00.000000

``signing_keys`` holds every key the server has signed replays and daily boards with
(server/signing.py). The key of the highest ``generation`` is the current one; the
others are retired but kept, so that the documents they signed still verify. A key the
operator gives in a file (``--signing-key-file``) is kept without its private half.
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision = "0012"
down_revision = "0011"
branch_labels = None
depends_on = None


def upgrade() -> None:
    op.create_table(
        "signing_keys",
        sa.Column("generation", sa.Integer(), autoincrement=False, nullable=False),
        sa.Column("key_id", sa.String(length=16), nullable=False),
        sa.Column("public_key", sa.LargeBinary(length=32), nullable=False),
        sa.Column("private_key", sa.LargeBinary(length=32), nullable=True),
        sa.Column("created_at", sa.DateTime(timezone=True), nullable=False),
        sa.PrimaryKeyConstraint("generation"),
        sa.UniqueConstraint("key_id"),
    )


def downgrade() -> None:
    op.drop_table("signing_keys")
