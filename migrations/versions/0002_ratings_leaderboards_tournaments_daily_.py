"""ratings, leaderboards, tournaments, daily challenges

Revision ID: 0002
Revises: 0001
Create Date: 2026-11-29 17:05:04.240548
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision = "0002"
down_revision = "0001"
branch_labels = None
depends_on = None


def upgrade() -> None:
    op.create_table(
        "server_secrets",
        sa.Column("name", sa.String(length=32), nullable=False),
        sa.Column("value", sa.LargeBinary(length=64), nullable=False),
        sa.PrimaryKeyConstraint("name"),
    )
    op.create_table(
        "board_entries",
        sa.Column("ruleset", sa.String(length=16), nullable=False),
        sa.Column("period", sa.String(length=6), nullable=False),
        sa.Column("period_start", sa.Date(), nullable=False),
        sa.Column(
            "player_id", sa.BigInteger().with_variant(sa.Integer(), "sqlite"), nullable=False
        ),
        sa.Column("games", sa.Integer(), nullable=False),
        sa.Column("wins", sa.Integer(), nullable=False),
        sa.Column("best_score", sa.SmallInteger(), nullable=False),
        sa.Column("best_score_ms", sa.Integer(), nullable=False),
        sa.Column("fastest_win_ms", sa.Integer(), nullable=True),
        sa.Column("fastest_win_score", sa.SmallInteger(), nullable=True),
        sa.ForeignKeyConstraint(
            ["player_id"],
            ["players.id"],
        ),
        sa.PrimaryKeyConstraint("ruleset", "period", "period_start", "player_id"),
    )
    op.create_table(
        "ratings",
        sa.Column(
            "player_id", sa.BigInteger().with_variant(sa.Integer(), "sqlite"), nullable=False
        ),
        sa.Column("ruleset", sa.String(length=16), nullable=False),
        sa.Column("mu", sa.Float(), nullable=False),
        sa.Column("sigma", sa.Float(), nullable=False),
        sa.Column("ordinal", sa.Float(), nullable=False),
        sa.Column("games", sa.Integer(), nullable=False),
        sa.Column("updated_at", sa.DateTime(timezone=True), nullable=False),
        sa.ForeignKeyConstraint(
            ["player_id"],
            ["players.id"],
        ),
        sa.PrimaryKeyConstraint("player_id", "ruleset"),
    )
    op.create_table(
        "tournaments",
        sa.Column(
            "id",
            sa.BigInteger().with_variant(sa.Integer(), "sqlite"),
            autoincrement=True,
            nullable=False,
        ),
        sa.Column("code", sa.String(length=8), nullable=False),
        sa.Column("name", sa.String(length=64), nullable=False),
        sa.Column("host_id", sa.BigInteger().with_variant(sa.Integer(), "sqlite"), nullable=False),
        sa.Column("ruleset", sa.String(length=16), nullable=False),
        sa.Column("rounds", sa.SmallInteger(), nullable=False),
        sa.Column("max_players", sa.SmallInteger(), nullable=False),
        sa.Column("round_time_limit_s", sa.Integer(), nullable=False),
        sa.Column("start_at", sa.DateTime(timezone=True), nullable=True),
        sa.Column("status", sa.String(length=12), nullable=False),
        sa.Column("current_round", sa.SmallInteger(), nullable=False),
        sa.Column("created_at", sa.DateTime(timezone=True), nullable=False),
        sa.Column("started_at", sa.DateTime(timezone=True), nullable=True),
        sa.Column("ended_at", sa.DateTime(timezone=True), nullable=True),
        sa.ForeignKeyConstraint(
            ["host_id"],
            ["players.id"],
        ),
        sa.PrimaryKeyConstraint("id"),
        sa.UniqueConstraint("code"),
    )
    op.create_table(
        "tournament_entries",
        sa.Column(
            "tournament_id", sa.BigInteger().with_variant(sa.Integer(), "sqlite"), nullable=False
        ),
        sa.Column(
            "player_id", sa.BigInteger().with_variant(sa.Integer(), "sqlite"), nullable=False
        ),
        sa.Column("joined_at", sa.DateTime(timezone=True), nullable=False),
        sa.Column("total_score", sa.Integer(), nullable=False),
        sa.Column("total_time_ms", sa.BigInteger(), nullable=False),
        sa.Column("rounds_played", sa.SmallInteger(), nullable=False),
        sa.Column("rank", sa.SmallInteger(), nullable=True),
        sa.ForeignKeyConstraint(
            ["player_id"],
            ["players.id"],
        ),
        sa.ForeignKeyConstraint(
            ["tournament_id"],
            ["tournaments.id"],
        ),
        sa.PrimaryKeyConstraint("tournament_id", "player_id"),
    )
    op.create_table(
        "daily_entries",
        sa.Column("ruleset", sa.String(length=16), nullable=False),
        sa.Column("day", sa.Date(), nullable=False),
        sa.Column(
            "player_id", sa.BigInteger().with_variant(sa.Integer(), "sqlite"), nullable=False
        ),
        sa.Column("match_id", sa.BigInteger().with_variant(sa.Integer(), "sqlite"), nullable=False),
        sa.Column("score", sa.SmallInteger(), nullable=True),
        sa.Column("finish_ms", sa.Integer(), nullable=True),
        sa.ForeignKeyConstraint(
            ["match_id"],
            ["matches.id"],
        ),
        sa.ForeignKeyConstraint(
            ["player_id"],
            ["players.id"],
        ),
        sa.PrimaryKeyConstraint("ruleset", "day", "player_id"),
    )
    op.create_table(
        "rating_history",
        sa.Column(
            "id",
            sa.BigInteger().with_variant(sa.Integer(), "sqlite"),
            autoincrement=True,
            nullable=False,
        ),
        sa.Column(
            "player_id", sa.BigInteger().with_variant(sa.Integer(), "sqlite"), nullable=False
        ),
        sa.Column("ruleset", sa.String(length=16), nullable=False),
        sa.Column("match_id", sa.BigInteger().with_variant(sa.Integer(), "sqlite"), nullable=False),
        sa.Column("rank", sa.SmallInteger(), nullable=False),
        sa.Column("mu", sa.Float(), nullable=False),
        sa.Column("sigma", sa.Float(), nullable=False),
        sa.Column("ordinal", sa.Float(), nullable=False),
        sa.Column("at", sa.DateTime(timezone=True), nullable=False),
        sa.ForeignKeyConstraint(
            ["match_id"],
            ["matches.id"],
        ),
        sa.ForeignKeyConstraint(
            ["player_id"],
            ["players.id"],
        ),
        sa.PrimaryKeyConstraint("id"),
    )
    with op.batch_alter_table("rating_history", schema=None) as batch_op:
        batch_op.create_index(
            "ix_rating_history_player", ["player_id", "ruleset", "id"], unique=False
        )

    # One index per leaderboard, in its sort order, so a page is an index range scan.
    op.create_index(
        "ix_ratings_board", "ratings", ["ruleset", sa.text("ordinal DESC"), "player_id"]
    )
    op.create_index(
        "ix_board_score",
        "board_entries",
        [
            "ruleset",
            "period",
            "period_start",
            sa.text("best_score DESC"),
            "best_score_ms",
            "player_id",
        ],
    )
    op.create_index(
        "ix_board_time",
        "board_entries",
        [
            "ruleset",
            "period",
            "period_start",
            "fastest_win_ms",
            sa.text("fastest_win_score DESC"),
            "player_id",
        ],
    )
    op.create_index(
        "ix_board_wins",
        "board_entries",
        ["ruleset", "period", "period_start", sa.text("wins DESC"), "games", "player_id"],
    )
    op.create_index(
        "ix_daily_board",
        "daily_entries",
        ["ruleset", "day", sa.text("score DESC"), "finish_ms", "player_id"],
    )

    with op.batch_alter_table("matches", schema=None) as batch_op:
        batch_op.add_column(
            sa.Column("kind", sa.String(length=12), server_default="race", nullable=False)
        )
        batch_op.add_column(
            sa.Column(
                "tournament_id", sa.BigInteger().with_variant(sa.Integer(), "sqlite"), nullable=True
            )
        )
        batch_op.add_column(sa.Column("round", sa.SmallInteger(), nullable=True))
        batch_op.add_column(sa.Column("daily_date", sa.Date(), nullable=True))
        batch_op.create_foreign_key(
            "fk_matches_tournament", "tournaments", ["tournament_id"], ["id"]
        )


def downgrade() -> None:
    with op.batch_alter_table("matches", schema=None) as batch_op:
        batch_op.drop_constraint("fk_matches_tournament", type_="foreignkey")
        batch_op.drop_column("daily_date")
        batch_op.drop_column("round")
        batch_op.drop_column("tournament_id")
        batch_op.drop_column("kind")

    with op.batch_alter_table("rating_history", schema=None) as batch_op:
        batch_op.drop_index("ix_rating_history_player")

    for index, table in [
        ("ix_daily_board", "daily_entries"),
        ("ix_board_wins", "board_entries"),
        ("ix_board_time", "board_entries"),
        ("ix_board_score", "board_entries"),
        ("ix_ratings_board", "ratings"),
    ]:
        op.drop_index(index, table_name=table)
    op.drop_table("rating_history")
    op.drop_table("daily_entries")
    op.drop_table("tournament_entries")
    op.drop_table("tournaments")
    op.drop_table("ratings")
    op.drop_table("board_entries")
    op.drop_table("server_secrets")
