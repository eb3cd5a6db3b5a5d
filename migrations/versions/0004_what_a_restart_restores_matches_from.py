"""what a restart restores lobby and running matches from

Revision ID: 0004
Revises: 0003
Create Date: 2026-11-30 16:45:00.000000

A match in its lobby is restored with its options, seats and ready flags: the countdown
it was created with (matches.countdown_s; NULL for matches stored before, which get the
server's default) and each seat's ready flag (match_players.ready).

Matches left in their lobby or running by servers that restored nothing are abandoned
here: without their ready flags they cannot be taken back as they were, and a running one
would be ended, and rated, long after it was played. (Tournament rounds are the
tournaments' to deal again, as before.)
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision = "0004"
down_revision = "0003"
branch_labels = None
depends_on = None


def upgrade() -> None:
    op.execute(
        sa.text(
            "UPDATE matches SET status = 'abandoned', ended_at = CURRENT_TIMESTAMP "
            "WHERE status IN ('lobby', 'running') AND kind <> 'tournament'"
        )
    )
    with op.batch_alter_table("matches") as matches:
        matches.add_column(sa.Column("countdown_s", sa.SmallInteger(), nullable=True))
    with op.batch_alter_table("match_players") as match_players:
        match_players.add_column(
            sa.Column("ready", sa.Boolean(), nullable=False, server_default=sa.false())
        )


def downgrade() -> None:
    with op.batch_alter_table("match_players") as match_players:
        match_players.drop_column("ready")
    with op.batch_alter_table("matches") as matches:
        matches.drop_column("countdown_s")
