"""The tables, as SQLAlchemy 2 models. Migrations in migrations/ create them."""

from __future__ import annotations

from datetime import date, datetime

from sqlalchemy import (
    BigInteger,
    Boolean,
    Date,
    DateTime,
    Float,
    ForeignKey,
    Index,
    Integer,
    LargeBinary,
    SmallInteger,
    String,
    false,
    func,
    text,
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
    # A bot, as declared at registration (docs/fair-play.md); no message changes it.
    bot: Mapped[bool] = mapped_column(Boolean, server_default=false())

    # Names differing only in case are one name: "Ana" would pass for "ana". (Names are
    # ASCII, so lower() is the same on every backend.)
    __table_args__ = (Index("ux_players_name_lower", func.lower(name), unique=True),)


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
    # race (a lobby match), quick (matchmaking), tournament (a round) or daily (solo)
    kind: Mapped[str] = mapped_column(String(12), server_default="race")
    tournament_id: Mapped[int | None] = mapped_column(ForeignKey("tournaments.id"))
    round: Mapped[int | None] = mapped_column(SmallInteger)
    # A daily challenge's day: its seed stays secret until that day is over.
    daily_date: Mapped[date | None] = mapped_column(Date)
    # The countdown before the deal; None for matches stored before it was.
    countdown_s: Mapped[int | None] = mapped_column(SmallInteger)
    # The deal's par (best final score over its redeals), computed after the match ends;
    # None until then. par_exact is False when par_score is only a lower bound.
    par_score: Mapped[int | None] = mapped_column(SmallInteger)
    par_exact: Mapped[bool | None] = mapped_column(Boolean)
    # Whether the host lets bots sit (the server's own matches: quick, daily, rounds say
    # what their queue or tournament says).
    bots: Mapped[bool] = mapped_column(Boolean, server_default=false())

    __table_args__ = (Index("ix_matches_status_public", "status", "public"),)


class MatchPlayer(Base):
    """A player's entry in a match and, once the match ends, the result."""

    __tablename__ = "match_players"

    match_id: Mapped[int] = mapped_column(ForeignKey("matches.id"), primary_key=True)
    player_id: Mapped[int] = mapped_column(ForeignKey("players.id"), primary_key=True)
    joined_at: Mapped[datetime] = mapped_column(DateTime(timezone=True))
    ready: Mapped[bool] = mapped_column(Boolean, default=False, server_default=false())
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


class Rating(Base):
    """A player's openskill (Plackett-Luce) rating in one ruleset."""

    __tablename__ = "ratings"

    player_id: Mapped[int] = mapped_column(ForeignKey("players.id"), primary_key=True)
    ruleset: Mapped[str] = mapped_column(String(16), primary_key=True)
    mu: Mapped[float] = mapped_column(Float)
    sigma: Mapped[float] = mapped_column(Float)
    ordinal: Mapped[float] = mapped_column(Float)  # mu - 3 sigma: what boards sort by
    games: Mapped[int] = mapped_column(Integer)
    updated_at: Mapped[datetime] = mapped_column(DateTime(timezone=True))

    __table_args__ = (Index("ix_ratings_board", "ruleset", text("ordinal DESC"), "player_id"),)


class RatingChange(Base):
    """One rating update: the history of a player's rating, match by match."""

    __tablename__ = "rating_history"

    id: Mapped[int] = mapped_column(BigId, primary_key=True, autoincrement=True)
    player_id: Mapped[int] = mapped_column(ForeignKey("players.id"))
    ruleset: Mapped[str] = mapped_column(String(16))
    match_id: Mapped[int] = mapped_column(ForeignKey("matches.id"))
    rank: Mapped[int] = mapped_column(SmallInteger)
    mu: Mapped[float] = mapped_column(Float)
    sigma: Mapped[float] = mapped_column(Float)
    ordinal: Mapped[float] = mapped_column(Float)
    at: Mapped[datetime] = mapped_column(DateTime(timezone=True))

    __table_args__ = (Index("ix_rating_history_player", "player_id", "ruleset", "id"),)


class BoardEntry(Base):
    """A player's standing in one ruleset over one period, kept up to date as matches end.

    Leaderboards read these rows through an index per board instead of aggregating
    every result on each request.
    """

    __tablename__ = "board_entries"

    ruleset: Mapped[str] = mapped_column(String(16), primary_key=True)
    period: Mapped[str] = mapped_column(String(6), primary_key=True)  # all, month or day
    period_start: Mapped[date] = mapped_column(Date, primary_key=True)  # 2000-01-01 for all
    player_id: Mapped[int] = mapped_column(ForeignKey("players.id"), primary_key=True)
    games: Mapped[int] = mapped_column(Integer)
    wins: Mapped[int] = mapped_column(Integer)
    best_score: Mapped[int] = mapped_column(SmallInteger)
    best_score_ms: Mapped[int] = mapped_column(Integer)  # the finish time of that game
    fastest_win_ms: Mapped[int | None] = mapped_column(Integer)
    fastest_win_score: Mapped[int | None] = mapped_column(SmallInteger)

    __table_args__ = (
        Index(
            "ix_board_score",
            "ruleset",
            "period",
            "period_start",
            text("best_score DESC"),
            "best_score_ms",
            "player_id",
        ),
        Index(
            "ix_board_time",
            "ruleset",
            "period",
            "period_start",
            "fastest_win_ms",
            text("fastest_win_score DESC"),
            "player_id",
        ),
        Index(
            "ix_board_wins",
            "ruleset",
            "period",
            "period_start",
            text("wins DESC"),
            "games",
            "player_id",
        ),
    )


class BoardCount(Base):
    """How many rows of one board sort into one bucket of its sort key: the counted index
    a rank is read from (``server.storage.board_counts``), kept in the transaction that
    writes ``board_entries``.

    ``bucket``, then ``sub``, ascend in the board's order; ``bot`` tells the people's
    board from the bots'.
    """

    __tablename__ = "board_counts"

    board: Mapped[str] = mapped_column(String(8), primary_key=True)  # score, time or wins
    ruleset: Mapped[str] = mapped_column(String(16), primary_key=True)
    period: Mapped[str] = mapped_column(String(6), primary_key=True)
    period_start: Mapped[date] = mapped_column(Date, primary_key=True)
    bot: Mapped[bool] = mapped_column(Boolean, primary_key=True)
    bucket: Mapped[int] = mapped_column(Integer, primary_key=True)
    sub: Mapped[int] = mapped_column(Integer, primary_key=True)
    rows: Mapped[int] = mapped_column(Integer)


class Tournament(Base):
    __tablename__ = "tournaments"

    id: Mapped[int] = mapped_column(BigId, primary_key=True, autoincrement=True)
    code: Mapped[str] = mapped_column(String(8), unique=True)
    name: Mapped[str] = mapped_column(String(64))
    host_id: Mapped[int] = mapped_column(ForeignKey("players.id"))
    ruleset: Mapped[str] = mapped_column(String(16))
    rounds: Mapped[int] = mapped_column(SmallInteger)
    max_players: Mapped[int] = mapped_column(SmallInteger)
    round_time_limit_s: Mapped[int] = mapped_column(Integer)
    start_at: Mapped[datetime | None] = mapped_column(DateTime(timezone=True))
    # open (taking entrants), running, finished, cancelled
    status: Mapped[str] = mapped_column(String(12))
    current_round: Mapped[int] = mapped_column(SmallInteger)
    created_at: Mapped[datetime] = mapped_column(DateTime(timezone=True))
    started_at: Mapped[datetime | None] = mapped_column(DateTime(timezone=True))
    ended_at: Mapped[datetime | None] = mapped_column(DateTime(timezone=True))
    # Whether the host lets bots enter.
    bots: Mapped[bool] = mapped_column(Boolean, server_default=false())
    # Why it was cancelled (status ``cancelled``).
    cancel_reason: Mapped[str | None] = mapped_column(String(200))
    # A scheduled start with nobody entered: ``cancel`` or ``wait`` for the first entrant.
    if_empty: Mapped[str] = mapped_column(String(8), server_default="cancel")
    # Which deals its rounds are dealt: ``any``, or only ``winnable`` ones (proven so by
    # the solver, without redeal, before entries open).
    deals: Mapped[str] = mapped_column(String(8), server_default="any")
    # The organiser's countdown of each round and break between rounds (None: the
    # server's settings, as for every tournament stored before they were chosen).
    countdown_s: Mapped[int | None] = mapped_column(SmallInteger)
    break_s: Mapped[int | None] = mapped_column(Integer)
    # Players may enter while running until this round is dealt (0: no late entry).
    late_entry_until_round: Mapped[int] = mapped_column(SmallInteger, server_default="0")
    # The host paused it: no round is dealt until they resume it.
    paused: Mapped[bool] = mapped_column(Boolean, server_default=false())


class TournamentAnnouncement(Base):
    """What the host of a tournament said to every entrant and follower."""

    __tablename__ = "tournament_announcements"

    id: Mapped[int] = mapped_column(BigId, primary_key=True, autoincrement=True)
    tournament_id: Mapped[int] = mapped_column(ForeignKey("tournaments.id"), index=True)
    text: Mapped[str] = mapped_column(String(500))
    at: Mapped[datetime] = mapped_column(DateTime(timezone=True))


class TournamentDeal(Base):
    """The seed of one round of a tournament, drawn (and committed to) before anyone
    entered: secret until that round has ended (docs/protocol.md, Committed deals)."""

    __tablename__ = "tournament_deals"

    tournament_id: Mapped[int] = mapped_column(ForeignKey("tournaments.id"), primary_key=True)
    round: Mapped[int] = mapped_column(SmallInteger, primary_key=True)
    seed: Mapped[bytes] = mapped_column(LargeBinary(64))


class TournamentEntry(Base):
    __tablename__ = "tournament_entries"

    tournament_id: Mapped[int] = mapped_column(ForeignKey("tournaments.id"), primary_key=True)
    player_id: Mapped[int] = mapped_column(ForeignKey("players.id"), primary_key=True)
    joined_at: Mapped[datetime] = mapped_column(DateTime(timezone=True))
    total_score: Mapped[int] = mapped_column(Integer, default=0)
    total_time_ms: Mapped[int] = mapped_column(BigInteger, default=0)
    rounds_played: Mapped[int] = mapped_column(SmallInteger, default=0)
    rank: Mapped[int | None] = mapped_column(SmallInteger)
    # Removed by the host between rounds, with the reason shown to all (None: still in).
    removed_at: Mapped[datetime | None] = mapped_column(DateTime(timezone=True))
    removed_reason: Mapped[str | None] = mapped_column(String(200))
    # The place in the joining order (1 first); none for entries stored before it was kept.
    position: Mapped[int | None] = mapped_column(SmallInteger)
    # They play at a table in the room (docs/tables.md), from the next round dealt.
    at_table: Mapped[bool] = mapped_column(Boolean, server_default=false())


class TournamentArbiter(Base):
    """A player the host of a tournament named an arbiter: they seat entrants at tables,
    get the deal sheets and enter the tables' results."""

    __tablename__ = "tournament_arbiters"

    tournament_id: Mapped[int] = mapped_column(ForeignKey("tournaments.id"), primary_key=True)
    player_id: Mapped[int] = mapped_column(ForeignKey("players.id"), primary_key=True)
    named_at: Mapped[datetime] = mapped_column(DateTime(timezone=True))


class TournamentRound(Base):
    """When a round's play began (its countdown over), and whether it had a match (a
    round with every entrant at a table has none)."""

    __tablename__ = "tournament_rounds"

    tournament_id: Mapped[int] = mapped_column(ForeignKey("tournaments.id"), primary_key=True)
    round: Mapped[int] = mapped_column(SmallInteger, primary_key=True)
    started_at: Mapped[datetime] = mapped_column(DateTime(timezone=True))
    online: Mapped[bool] = mapped_column(Boolean)


class TournamentTable(Base):
    """An entrant who played a round at a table in the room."""

    __tablename__ = "tournament_tables"

    tournament_id: Mapped[int] = mapped_column(ForeignKey("tournaments.id"), primary_key=True)
    round: Mapped[int] = mapped_column(SmallInteger, primary_key=True)
    player_id: Mapped[int] = mapped_column(ForeignKey("players.id"), primary_key=True)


class TournamentEnteredResult(Base):
    """A table's result in a round, entered by the host or an arbiter (``entered_by``):
    kept apart from the results the server validated (``match_players``)."""

    __tablename__ = "tournament_entered_results"

    tournament_id: Mapped[int] = mapped_column(ForeignKey("tournaments.id"), primary_key=True)
    round: Mapped[int] = mapped_column(SmallInteger, primary_key=True)
    player_id: Mapped[int] = mapped_column(ForeignKey("players.id"), primary_key=True)
    placed: Mapped[int] = mapped_column(SmallInteger)
    redeals: Mapped[int] = mapped_column(SmallInteger)
    finish_ms: Mapped[int] = mapped_column(Integer)
    won: Mapped[bool] = mapped_column(Boolean)
    score: Mapped[int] = mapped_column(SmallInteger)
    entered_by: Mapped[int] = mapped_column(ForeignKey("players.id"))
    entered_at: Mapped[datetime] = mapped_column(DateTime(timezone=True))


class DailyEntry(Base):
    """A player's one attempt at a day's challenge in a ruleset."""

    __tablename__ = "daily_entries"

    ruleset: Mapped[str] = mapped_column(String(16), primary_key=True)
    day: Mapped[date] = mapped_column(Date, primary_key=True)
    player_id: Mapped[int] = mapped_column(ForeignKey("players.id"), primary_key=True)
    match_id: Mapped[int] = mapped_column(ForeignKey("matches.id"))
    score: Mapped[int | None] = mapped_column(SmallInteger)
    finish_ms: Mapped[int | None] = mapped_column(Integer)

    __table_args__ = (
        Index("ix_daily_board", "ruleset", "day", text("score DESC"), "finish_ms", "player_id"),
    )


class DailyDeal(Base):
    """The deal of a day's challenge in a ruleset: the first of its candidate seeds that
    the solver proved winnable, kept so that every process deals the same."""

    __tablename__ = "daily_deals"

    ruleset: Mapped[str] = mapped_column(String(16), primary_key=True)
    day: Mapped[date] = mapped_column(Date, primary_key=True)
    seed: Mapped[bytes] = mapped_column(LargeBinary(64))
    # Which candidate it is (0 the first): server.daily derives them from the day.
    candidate: Mapped[int] = mapped_column(SmallInteger)


class ServerSecret(Base):
    """Server-wide secrets, made once (the key daily challenge seeds derive from)."""

    __tablename__ = "server_secrets"

    name: Mapped[str] = mapped_column(String(32), primary_key=True)
    value: Mapped[bytes] = mapped_column(LargeBinary(64))


class SigningKey(Base):
    """A key the server signs results with (server.signing). The key of the highest
    generation is the current one; the others are retired. None is ever deleted: the
    documents an old key signed still verify with it."""

    __tablename__ = "signing_keys"

    generation: Mapped[int] = mapped_column(Integer, primary_key=True, autoincrement=False)
    # gaps.canonical.key_id of the public key
    key_id: Mapped[str] = mapped_column(String(16), unique=True)
    public_key: Mapped[bytes] = mapped_column(LargeBinary(32))  # Ed25519, raw
    # None for a key the operator gives in a file: its private half stays in the file.
    private_key: Mapped[bytes | None] = mapped_column(LargeBinary(32))
    created_at: Mapped[datetime] = mapped_column(DateTime(timezone=True))


class MatchLease(Base):
    """Which process owns a live match, until when, and under which epoch.

    Only a cluster (PostgreSQL) keeps leases: the embedded single process owns every
    match. ``epoch`` grows by one at every take-over and never otherwise, so an action
    row is stored only while the epoch its writer took the match with is still the
    row's (``server.storage.journal``)."""

    __tablename__ = "match_leases"

    match_id: Mapped[int] = mapped_column(ForeignKey("matches.id"), primary_key=True)
    # The owning process, as server.storage.leases.process_name() names it.
    owner: Mapped[str] = mapped_column(String(96))
    epoch: Mapped[int] = mapped_column(BigInteger)
    # Set by the owner's clock at each renewal; past it, any process may take over.
    expires_at: Mapped[datetime] = mapped_column(DateTime(timezone=True))

    __table_args__ = (Index("ix_match_leases_expires_at", "expires_at"),)


class SeatReview(Base):
    """A result that does not simply count on the boards and ratings: ``held`` (timing
    flags, until an operator decides), ``cleared`` (it counts), ``voided`` or
    ``suspended`` (its player was suspended from rated play when the match ended)."""

    __tablename__ = "seat_reviews"

    match_id: Mapped[int] = mapped_column(ForeignKey("matches.id"), primary_key=True)
    player_id: Mapped[int] = mapped_column(ForeignKey("players.id"), primary_key=True)
    status: Mapped[str] = mapped_column(String(10))
    flags: Mapped[str] = mapped_column(String(32))  # comma-separated: fast,even
    intervals: Mapped[int] = mapped_column(Integer)
    median_ms: Mapped[float | None] = mapped_column(Float)
    spread_ratio: Mapped[float | None] = mapped_column(Float)
    created_at: Mapped[datetime] = mapped_column(DateTime(timezone=True))
    decided_at: Mapped[datetime | None] = mapped_column(DateTime(timezone=True))

    __table_args__ = (Index("ix_seat_reviews_status", "status", "created_at"),)


class Suspension(Base):
    """An account suspended from rated play: its results from ``since`` on do not count."""

    __tablename__ = "suspensions"

    player_id: Mapped[int] = mapped_column(ForeignKey("players.id"), primary_key=True)
    since: Mapped[datetime] = mapped_column(DateTime(timezone=True))
    reason: Mapped[str] = mapped_column(String(200))


class AuditEntry(Base):
    """One operator's decision. Append-only: triggers refuse UPDATE and DELETE."""

    __tablename__ = "audit_log"

    id: Mapped[int] = mapped_column(BigId, primary_key=True, autoincrement=True)
    at: Mapped[datetime] = mapped_column(DateTime(timezone=True))
    operator: Mapped[str] = mapped_column(String(64))
    decision: Mapped[str] = mapped_column(String(16))  # clear, void or suspend
    target: Mapped[str] = mapped_column(String(64))  # "match CODE player NAME" or "player NAME"
    reason: Mapped[str] = mapped_column(String(200))
