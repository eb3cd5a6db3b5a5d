"""merge: declared bots (0007) and fair-play reviews (0008), both made from 0006

Revision ID: 0009
Revises: 0007, 0008
Create Date: 2026-12-01 03:30:00.000000

Two branches of issue 16 each added a revision on top of 0006. They touch different
tables and columns (0007: ``players.bot``, ``matches.bots``, ``tournaments.bots``, the
removed entrants' columns; 0008: ``seat_reviews``, ``suspensions``, ``audit_log``), so
either order is right: this revision only joins them into one head.
"""

from __future__ import annotations

revision = "0009"
down_revision = ("0007", "0008")
branch_labels = None
depends_on = None


def upgrade() -> None:
    pass


def downgrade() -> None:
    pass
