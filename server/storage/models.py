"""The tables, as SQLAlchemy 2 models. Migrations in migrations/ create them."""

from __future__ import annotations

from datetime import datetime

from sqlalchemy import (
    BigInteger,
    Boolean,
    DateTime,
    ForeignKey,
    Index,
    Integer,
    LargeBinary,
    SmallInteger,
    String,
)
from sqlalchemy.orm import DeclarativeBase, Mapped, mapped_column

# SQLite only autoincrements an INTEGER PRIMARY KEY.
BigId = BigInteger().with_variant(Integer, "sqlite")


class Base(DeclarativeBase):
    pass


class Player(Base):
    __tablename__ = "players"

    id: Mapped[int] = mapped_column(BigId, primary_key=True, autoincrement=True)
    name: Mapped[str] = mapped_column(String(24), unique=True)
    # SHA-256 of the secret token, hex; the token itself is never stored.
    token_hash: Mapped[str] = mapped_column(String(64), unique=True)
    created_at: Mapped[datetime] = mapped_column(DateTime(timezone=True))


class Match(Base):
    __tablename__ = "matches"

    id: Mapped[int] = mapped_column(BigId, primary_key=True, autoincrement=True)
    code: Mapped[str] = mapped_column(String(8), unique=True)
    ruleset: Mapped[str] = mapped_column(String(16))
    max_players: Mapped[int] = mapped_column(SmallInteger)
    time_limit_s: Mapped[int] = mapped_column(Integer)
    win_by: Mapped[str] = mapped_column(String(8))
    public: Mapped[bool] = mapped_column(Boolean)
    # False when the host chose the deal: the seed was not secret.
    rated: Mapped[bool] = mapped_column(Boolean)
    host_id: Mapped[int] = mapped_column(ForeignKey("players.id"))
    # lobby, running, finished or abandoned
    status: Mapped[str] = mapped_column(String(12))
    # Secret until the match ends (it decides every redeal): never sent before then.
    seed: Mapped[bytes] = mapped_column(LargeBinary(64))
    commitment: Mapped[str] = mapped_column(String(64))
    created_at: Mapped[datetime] = mapped_column(DateTime(timezone=True))
    started_at: Mapped[datetime | None] = mapped_column(DateTime(timezone=True))
    ended_at: Mapped[datetime | None] = mapped_column(DateTime(timezone=True))

    __table_args__ = (Index("ix_matches_status_public", "status", "public"),)


class MatchPlayer(Base):
    """A player's entry in a match and, once the match ends, the result."""

    __tablename__ = "match_players"

    match_id: Mapped[int] = mapped_column(ForeignKey("matches.id"), primary_key=True)
    player_id: Mapped[int] = mapped_column(ForeignKey("players.id"), primary_key=True)
    joined_at: Mapped[datetime] = mapped_column(DateTime(timezone=True))
    score: Mapped[int] = mapped_column(SmallInteger, default=0)
    placed: Mapped[int] = mapped_column(SmallInteger, default=0)
    redeals: Mapped[int] = mapped_column(SmallInteger, default=0)
    moves: Mapped[int] = mapped_column(Integer, default=0)
    won: Mapped[bool] = mapped_column(Boolean, default=False)
    # won, lost, stopped, time, disconnected, left; None while playing
    end_reason: Mapped[str | None] = mapped_column(String(12))
    finish_ms: Mapped[int | None] = mapped_column(Integer)
    score_ms: Mapped[int | None] = mapped_column(Integer)
    rank: Mapped[int | None] = mapped_column(SmallInteger)

    __table_args__ = (Index("ix_match_players_player", "player_id"),)


class ActionRecord(Base):
    """Every action a player made, in order: the source of truth a match is rebuilt from."""

    __tablename__ = "actions"

    id: Mapped[int] = mapped_column(BigId, primary_key=True, autoincrement=True)
    match_id: Mapped[int] = mapped_column(ForeignKey("matches.id"))
    player_id: Mapped[int] = mapped_column(ForeignKey("players.id"))
    seq: Mapped[int] = mapped_column(Integer)  # the client's sequence number
    action: Mapped[str] = mapped_column(String(16))  # gaps notation: 8C, 2H>3, redeal, ...
    kind: Mapped[str] = mapped_column(String(8))  # move, redeal, undo or stop
    card: Mapped[str | None] = mapped_column(String(2))
    from_slot: Mapped[str | None] = mapped_column(String(6))  # r2c5
    to_slot: Mapped[str | None] = mapped_column(String(6))
    t_ms: Mapped[int] = mapped_column(Integer)  # server time from the match start
    score: Mapped[int] = mapped_column(SmallInteger)  # the score after the action

    __table_args__ = (
        Index("ux_actions_match_player_seq", "match_id", "player_id", "seq", unique=True),
    )
