"""board counts: how many rows of each leaderboard sort into each bucket of its key

Revision ID: 0015
Revises: 0014
Create Date: 2026-12-02 09:00:00.000000

``board_counts`` is the counted index a rank is read from (``server.storage.board_counts``):
for each board of ``board_entries`` (score, time, wins), ruleset, period, people or bots,
and bucket of the board's sort key, how many rows it holds. The upgrade counts the rows
already there, with the buckets of this release written out in SQL (the score board:
each score, then each second of its finish time; the time board: each second of the
fastest win; the wins board: each number of wins, then the games, alone below 32 and
then in 16 buckets per doubling).
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision = "0015"
down_revision = "0014"
branch_labels = None
depends_on = None


def _doubling(column: str) -> str:
    """``server.storage.board_counts.Doubling.bucket`` of an integer column, in SQL."""
    cases = " ".join(
        f"WHEN {column} < {32 << shift} THEN {shift * 32} + {column} / {1 << shift}"
        for shift in range(1, 28)
    )
    return f"CASE WHEN {column} < 32 THEN {column} {cases} END"


#: Each board: its name, its bucket and sub-bucket, which rows it shows.
_BOARDS = (
    ("score", "-e.best_score", "e.best_score_ms / 1000", "1 = 1"),
    ("time", "e.fastest_win_ms / 1000", "0", "e.fastest_win_ms IS NOT NULL"),
    ("wins", "-e.wins", _doubling("e.games"), "e.wins > 0"),
)


def upgrade() -> None:
    op.create_table(
        "board_counts",
        sa.Column("board", sa.String(8), primary_key=True),
        sa.Column("ruleset", sa.String(16), primary_key=True),
        sa.Column("period", sa.String(6), primary_key=True),
        sa.Column("period_start", sa.Date(), primary_key=True),
        sa.Column("bot", sa.Boolean(), primary_key=True),
        sa.Column("bucket", sa.Integer(), primary_key=True),
        sa.Column("sub", sa.Integer(), primary_key=True),
        sa.Column("rows", sa.Integer(), nullable=False),
    )
    for board, bucket, sub, shown in _BOARDS:
        op.execute(
            "INSERT INTO board_counts "
            "(board, ruleset, period, period_start, bot, bucket, sub, rows) "
            f"SELECT '{board}', e.ruleset, e.period, e.period_start, p.bot, {bucket}, {sub}, "
            "count(*) FROM board_entries e JOIN players p ON p.id = e.player_id "
            f"WHERE {shown} "
            f"GROUP BY e.ruleset, e.period, e.period_start, p.bot, {bucket}"
            + ("" if sub == "0" else f", {sub}")
        )


def downgrade() -> None:
    op.drop_table("board_counts")
