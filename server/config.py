"""Settings: command-line flags over environment variables over defaults."""

from __future__ import annotations

import argparse
import os
from dataclasses import dataclass
from pathlib import Path


@dataclass(frozen=True)
class Settings:
    host: str = "127.0.0.1"
    port: int = 8765
    database_url: str | None = None  # Postgres URL; None: SQLite in data_dir
    redis_url: str | None = None  # Redis URL; None: in-process broker
    data_dir: Path = Path("var")
    countdown_s: int = 3
    grace_s: float = 30.0
    max_history_events: int = 512
    retain_finished_s: float = 600.0
    tournament_countdown_s: int = 10
    tournament_break_s: float = 15.0
    quick_wait_s: float = 5.0
    log_level: str = "INFO"


def _env_float(name: str, default: float) -> float:
    value = os.environ.get(name)
    return default if value is None or value == "" else float(value)


def _env_text(name: str, default: str) -> str:
    """The variable's value; an empty one counts as unset."""
    return os.environ.get(name) or default


def add_arguments(parser: argparse.ArgumentParser) -> None:
    env = os.environ
    defaults = Settings()
    parser.add_argument(
        "--host",
        default=_env_text("GAPS_HOST", defaults.host),
        help="interface to listen on (GAPS_HOST; default %(default)s)",
    )
    parser.add_argument(
        "--port",
        type=int,
        default=int(_env_float("GAPS_PORT", defaults.port)),
        help="TCP port, WebSocket and HTTP (GAPS_PORT; default %(default)s)",
    )
    parser.add_argument(
        "--database-url",
        default=env.get("DATABASE_URL") or None,
        help="Postgres URL (DATABASE_URL); unset: SQLite in --data-dir",
    )
    parser.add_argument(
        "--redis-url",
        default=env.get("REDIS_URL") or None,
        help="Redis URL (REDIS_URL); unset: in-process broker",
    )
    parser.add_argument(
        "--data-dir",
        type=Path,
        default=Path(_env_text("GAPS_DATA_DIR", str(defaults.data_dir))),
        help="where the embedded SQLite database lives (GAPS_DATA_DIR)",
    )
    parser.add_argument(
        "--countdown-s",
        type=int,
        default=int(_env_float("GAPS_COUNTDOWN_S", defaults.countdown_s)),
        help="default countdown before a match starts, seconds",
    )
    parser.add_argument(
        "--grace-s",
        type=float,
        default=_env_float("GAPS_GRACE_S", defaults.grace_s),
        help="how long a disconnected player may take to come back, seconds",
    )
    parser.add_argument(
        "--max-history-events",
        type=int,
        default=int(_env_float("GAPS_MAX_HISTORY_EVENTS", defaults.max_history_events)),
        help="events a match or a tournament keeps for resync",
    )
    parser.add_argument(
        "--tournament-countdown-s",
        type=int,
        default=int(_env_float("GAPS_TOURNAMENT_COUNTDOWN_S", defaults.tournament_countdown_s)),
        help="countdown before each tournament round, seconds",
    )
    parser.add_argument(
        "--tournament-break-s",
        type=float,
        default=_env_float("GAPS_TOURNAMENT_BREAK_S", defaults.tournament_break_s),
        help="pause between tournament rounds, seconds",
    )
    parser.add_argument(
        "--quick-wait-s",
        type=float,
        default=_env_float("GAPS_QUICK_WAIT_S", defaults.quick_wait_s),
        help="how long quick match waits for a fuller group, seconds",
    )
    parser.add_argument("--log-level", default=_env_text("GAPS_LOG_LEVEL", defaults.log_level))


def from_arguments(options: argparse.Namespace) -> Settings:
    return Settings(
        host=options.host,
        port=options.port,
        database_url=options.database_url,
        redis_url=options.redis_url,
        data_dir=options.data_dir,
        countdown_s=options.countdown_s,
        grace_s=options.grace_s,
        max_history_events=options.max_history_events,
        tournament_countdown_s=options.tournament_countdown_s,
        tournament_break_s=options.tournament_break_s,
        quick_wait_s=options.quick_wait_s,
        log_level=options.log_level,
    )
