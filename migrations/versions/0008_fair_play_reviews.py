"""fair play: held results under review, suspensions from rated play, the audit log

Revision ID: 0008
Revises: 0006
Create Date: 2026-12-01 03:00:00.000000

``seat_reviews`` holds one row per result that does not simply count: held by a timing
flag (``held``), cleared by an operator (``cleared``: it counts), voided (``voided``) or
played while suspended (``suspended``). ``suspensions`` holds the accounts suspended from
rated play. ``audit_log`` keeps every operator's decision: the code has no path that
changes or deletes a row, and triggers refuse UPDATE and DELETE on it (and TRUNCATE on
PostgreSQL).
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision = "0008"
down_revision = "0006"
branch_labels = None
depends_on = None

BIG_ID = sa.BigInteger().with_variant(sa.Integer(), "sqlite")
REFUSAL = "the audit log is append-only: rows are never changed or deleted"


def upgrade() -> None:
    op.create_table(
        "seat_reviews",
        sa.Column("match_id", BIG_ID, sa.ForeignKey("matches.id"), primary_key=True),
        sa.Column("player_id", BIG_ID, sa.ForeignKey("players.id"), primary_key=True),
        sa.Column("status", sa.String(10), nullable=False),
        sa.Column("flags", sa.String(32), nullable=False),
        sa.Column("intervals", sa.Integer(), nullable=False),
        sa.Column("median_ms", sa.Float(), nullable=True),
        sa.Column("spread_ratio", sa.Float(), nullable=True),
        sa.Column("created_at", sa.DateTime(timezone=True), nullable=False),
        sa.Column("decided_at", sa.DateTime(timezone=True), nullable=True),
    )
    op.create_index("ix_seat_reviews_status", "seat_reviews", ["status", "created_at"])
    op.create_table(
        "suspensions",
        sa.Column("player_id", BIG_ID, sa.ForeignKey("players.id"), primary_key=True),
        sa.Column("since", sa.DateTime(timezone=True), nullable=False),
        sa.Column("reason", sa.String(200), nullable=False),
    )
    op.create_table(
        "audit_log",
        sa.Column("id", BIG_ID, primary_key=True, autoincrement=True),
        sa.Column("at", sa.DateTime(timezone=True), nullable=False),
        sa.Column("operator", sa.String(64), nullable=False),
        sa.Column("decision", sa.String(16), nullable=False),
        sa.Column("target", sa.String(64), nullable=False),
        sa.Column("reason", sa.String(200), nullable=False),
    )
    if op.get_bind().dialect.name == "postgresql":
        op.execute(
            "CREATE FUNCTION audit_log_refuse() RETURNS trigger LANGUAGE plpgsql AS $$ "
            f"BEGIN RAISE EXCEPTION '{REFUSAL}'; END $$"
        )
        op.execute(
            "CREATE TRIGGER audit_log_append_only BEFORE UPDATE OR DELETE ON audit_log "
            "FOR EACH ROW EXECUTE FUNCTION audit_log_refuse()"
        )
        op.execute(
            "CREATE TRIGGER audit_log_no_truncate BEFORE TRUNCATE ON audit_log "
            "FOR EACH STATEMENT EXECUTE FUNCTION audit_log_refuse()"
        )
    else:
        for event in ("UPDATE", "DELETE"):
            op.execute(
                f"CREATE TRIGGER audit_log_no_{event.lower()} BEFORE {event} ON audit_log "
                f"BEGIN SELECT RAISE(ABORT, '{REFUSAL}'); END"
            )


def downgrade() -> None:
    if op.get_bind().dialect.name == "postgresql":
        op.execute("DROP TRIGGER audit_log_no_truncate ON audit_log")
        op.execute("DROP TRIGGER audit_log_append_only ON audit_log")
        op.execute("DROP FUNCTION audit_log_refuse()")
    else:
        op.execute("DROP TRIGGER audit_log_no_delete")
        op.execute("DROP TRIGGER audit_log_no_update")
    op.drop_table("audit_log")
    op.drop_table("suspensions")
    op.drop_index("ix_seat_reviews_status", table_name="seat_reviews")
    op.drop_table("seat_reviews")
