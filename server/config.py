"""Settings: command-line flags over environment variables over defaults."""

from __future__ import annotations

import argparse
import os
from dataclasses import dataclass, field, fields
from pathlib import Path
from typing import Any

from server.forwarded import BadNetwork, Network, parse_networks
from server.par_worker import PAR_MAX_NODES, PAR_TIME_BUDGET_S


def _limit(default: float, help: str) -> Any:
    return field(default=default, metadata={"help": help})


@dataclass(frozen=True)
class Limits:
    """What one client may cost the server. Each is a flag ``--requests-per-s`` and an
    environment variable ``GAPS_REQUESTS_PER_S`` (docs/protocol.md, Limits)."""

    requests_per_s: float = _limit(20.0, "requests a connection may send a second, sustained")
    request_burst: int = _limit(60, "requests a connection may send at once")
    costly_requests_per_min: float = _limit(
        30.0,
        "costly requests (create_match, tournament_create, get_replay, leaderboard...) "
        "a player may make a minute, sustained",
    )
    costly_request_burst: int = _limit(10, "such costly requests a player may make at once")
    # An address is sized for a club of 50 players behind one NAT: each registers or
    # says hello (before a player is known, so the address pays alone) and creates or
    # reads something, all at once, and again at a reconnection (docs/operations.md).
    costly_requests_per_min_per_ip: float = _limit(
        600.0,
        "costly requests all connections from one address may make a minute, sustained "
        "(register, hello and HTTP reads included)",
    )
    costly_request_burst_per_ip: int = _limit(
        200, "such costly requests all connections from one address may make at once"
    )
    refusals_before_close: int = _limit(
        50, "rate_limited refusals (one forgiven a second) before the connection is closed"
    )
    max_connections_per_ip: int = _limit(128, "open connections from one address")
    max_open_matches_per_player: int = _limit(3, "lobby matches one player may host at once")
    max_pending_bytes: int = _limit(
        256 * 1024, "bytes waiting to be sent to one connection before sending waits"
    )
    send_timeout_s: float = _limit(
        10.0, "how long a send may wait on a client that does not read before it is dropped"
    )
    auth_timeout_s: float = _limit(
        10.0, "how long a connection may stay without register or hello before it is closed"
    )

    def __post_init__(self) -> None:
        for limit in fields(self):
            value = getattr(self, limit.name)
            if not value > 0:
                raise ValueError(f"limit {limit.name} must be above 0, got {value}")


def limit_flags() -> list[tuple[str, str, str]]:
    """(field, flag, environment variable) of every limit, in order."""
    return [
        (f.name, "--" + f.name.replace("_", "-"), "GAPS_" + f.name.upper())
        for f in fields(Limits)
    ]


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
    #: Whether declared bots may wait in the quick-match queue (they race bots only).
    quick_match_bots: bool = False
    log_level: str = "INFO"
    #: A cluster's match leases (PostgreSQL only): how long one lasts unrenewed, and how
    #: often the owner renews its leases and looks for matches to take over.
    lease_s: float = 4.0
    lease_renew_s: float = 1.0
    #: The par of finished matches: processes solving it (0: none, par is not computed),
    #: and each match's budget (positions over the deal and its redeals, seconds).
    par_workers: int = 1
    par_max_nodes: int = PAR_MAX_NODES
    par_time_budget_s: float = PAR_TIME_BUDGET_S
    #: Load balancers whose ``X-Forwarded-For`` is believed (server/forwarded.py).
    trusted_proxies: tuple[Network, ...] = ()
    #: The names of the players who are operators (docs/fair-play.md): granted here only.
    operators: tuple[str, ...] = ()
    #: Where ``/metrics`` is served (docs/operations.md, Metrics): a listener of its own,
    #: never the players' port; None: not served.
    metrics_host: str = "127.0.0.1"
    metrics_port: int | None = None
    #: The operator's Ed25519 key (PEM) results are signed with; None: the cluster's own,
    #: kept in the database (server/signing.py).
    signing_key_file: Path | None = None
    limits: Limits = Limits()

    def __post_init__(self) -> None:
        if not 0 < self.lease_renew_s < self.lease_s:
            raise ValueError(
                f"lease_renew_s ({self.lease_renew_s}) must be above 0 and below lease_s "
                f"({self.lease_s}): a lease must be renewed before it runs out"
            )
        if self.par_workers < 0:
            raise ValueError(f"par_workers must be 0 or more, not {self.par_workers}")
        if self.metrics_port is not None and not 0 <= self.metrics_port <= 65535:
            raise ValueError(f"metrics_port must be a TCP port (0-65535), not {self.metrics_port}")
        if self.par_max_nodes < 1 or not self.par_time_budget_s > 0:
            raise ValueError(
                f"par budgets must be above 0: par_max_nodes {self.par_max_nodes}, "
                f"par_time_budget_s {self.par_time_budget_s}"
            )


def _env_float(name: str, default: float) -> float:
    value = os.environ.get(name)
    return default if value is None or value == "" else float(value)


def _env_flag(name: str, default: bool) -> bool:
    """The variable as a yes or no: 1, true, yes or on (any case) say yes."""
    value = os.environ.get(name)
    if value is None or value == "":
        return default
    return value.strip().lower() in ("1", "true", "yes", "on")


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
        help="where the embedded SQLite database lives (GAPS_DATA_DIR; default %(default)s)",
    )
    parser.add_argument(
        "--countdown-s",
        type=int,
        default=int(_env_float("GAPS_COUNTDOWN_S", defaults.countdown_s)),
        help="default countdown before a match starts, seconds (GAPS_COUNTDOWN_S; "
        "default %(default)s)",
    )
    parser.add_argument(
        "--grace-s",
        type=float,
        default=_env_float("GAPS_GRACE_S", defaults.grace_s),
        help="how long a disconnected player may take to come back, seconds (GAPS_GRACE_S; "
        "default %(default)s)",
    )
    parser.add_argument(
        "--max-history-events",
        type=int,
        default=int(_env_float("GAPS_MAX_HISTORY_EVENTS", defaults.max_history_events)),
        help="events a match or a tournament keeps for resync (GAPS_MAX_HISTORY_EVENTS; "
        "default %(default)s)",
    )
    parser.add_argument(
        "--tournament-countdown-s",
        type=int,
        default=int(_env_float("GAPS_TOURNAMENT_COUNTDOWN_S", defaults.tournament_countdown_s)),
        help="countdown before each tournament round, seconds (GAPS_TOURNAMENT_COUNTDOWN_S; "
        "default %(default)s)",
    )
    parser.add_argument(
        "--tournament-break-s",
        type=float,
        default=_env_float("GAPS_TOURNAMENT_BREAK_S", defaults.tournament_break_s),
        help="pause between tournament rounds, seconds (GAPS_TOURNAMENT_BREAK_S; "
        "default %(default)s)",
    )
    parser.add_argument(
        "--quick-wait-s",
        type=float,
        default=_env_float("GAPS_QUICK_WAIT_S", defaults.quick_wait_s),
        help="how long quick match waits for a fuller group, seconds (GAPS_QUICK_WAIT_S; "
        "default %(default)s)",
    )
    parser.add_argument(
        "--quick-match-bots",
        action=argparse.BooleanOptionalAction,
        default=_env_flag("GAPS_QUICK_MATCH_BOTS", defaults.quick_match_bots),
        help="let declared bots wait in the quick-match queue, where they race bots only "
        "(GAPS_QUICK_MATCH_BOTS; default: no)",
    )
    parser.add_argument(
        "--lease-s",
        type=float,
        default=_env_float("GAPS_LEASE_S", defaults.lease_s),
        help="PostgreSQL: how long a process's lease on a match lasts unrenewed; another "
        "process takes the match over once it runs out, seconds (GAPS_LEASE_S; "
        "default %(default)s)",
    )
    parser.add_argument(
        "--lease-renew-s",
        type=float,
        default=_env_float("GAPS_LEASE_RENEW_S", defaults.lease_renew_s),
        help="PostgreSQL: how often a process renews its leases and takes over matches "
        "whose lease ran out, seconds (GAPS_LEASE_RENEW_S; default %(default)s)",
    )
    parser.add_argument(
        "--par-workers",
        type=int,
        default=int(_env_float("GAPS_PAR_WORKERS", defaults.par_workers)),
        help="processes that solve the par of finished matches; 0: par is not computed "
        "(GAPS_PAR_WORKERS; default %(default)s)",
    )
    parser.add_argument(
        "--par-max-nodes",
        type=int,
        default=int(_env_float("GAPS_PAR_MAX_NODES", defaults.par_max_nodes)),
        help="positions one match's par may search, over its deal and redeals "
        "(GAPS_PAR_MAX_NODES; default %(default)s)",
    )
    parser.add_argument(
        "--par-time-budget-s",
        type=float,
        default=_env_float("GAPS_PAR_TIME_BUDGET_S", defaults.par_time_budget_s),
        help="CPU seconds one match's par may take; past it, par is a lower bound shown as "
        "unknown (GAPS_PAR_TIME_BUDGET_S; default %(default)s)",
    )
    parser.add_argument(
        "--log-level",
        default=_env_text("GAPS_LOG_LEVEL", defaults.log_level),
        choices=("DEBUG", "INFO", "WARNING", "ERROR", "CRITICAL"),
        type=str.upper,
        help="the least severe log records written, as JSON lines on stderr "
        "(GAPS_LOG_LEVEL; default %(default)s)",
    )
    parser.add_argument(
        "--metrics-host",
        default=_env_text("GAPS_METRICS_HOST", defaults.metrics_host),
        help="interface /metrics is served on, with --metrics-port; keep it private "
        "(GAPS_METRICS_HOST; default %(default)s)",
    )
    parser.add_argument(
        "--metrics-port",
        type=int,
        default=_env_port("GAPS_METRICS_PORT"),
        help="TCP port of /metrics (the Prometheus text format), a listener of its own; "
        "0: a free port, said at start; under --workers N, worker i serves it on this "
        "port + i - 1 (GAPS_METRICS_PORT; default: not served)",
    )
    parser.add_argument(
        "--trusted-proxies",
        type=_networks,
        default=_networks(_env_text("GAPS_TRUSTED_PROXIES", "")),
        metavar="NETWORKS",
        help="comma-separated addresses or networks of load balancers whose X-Forwarded-For "
        "names the client (GAPS_TRUSTED_PROXIES; default: none, the header is ignored)",
    )
    parser.add_argument(
        "--operators",
        type=_names,
        default=_names(_env_text("GAPS_OPERATORS", "")),
        metavar="NAMES",
        help="comma-separated names of registered players who may review flagged results, "
        "void results and suspend accounts; a listed name cannot be registered over the "
        "protocol (GAPS_OPERATORS; default: none)",
    )
    parser.add_argument(
        "--signing-key-file",
        type=Path,
        default=Path(env["GAPS_SIGNING_KEY_FILE"]) if env.get("GAPS_SIGNING_KEY_FILE") else None,
        metavar="FILE",
        help="an Ed25519 private key (PEM, from openssl genpkey -algorithm ed25519) to sign "
        "replays and daily boards with, its public half published at /keys "
        "(GAPS_SIGNING_KEY_FILE; default: a key the servers make at their first start and "
        "keep in the database)",
    )
    limits = parser.add_argument_group("limits", "what one client may cost the server")
    for (name, flag, variable), limit in zip(limit_flags(), fields(Limits), strict=True):
        kind = int if limit.type in (int, "int") else float
        limits.add_argument(
            flag,
            type=kind,
            default=kind(_env_float(variable, getattr(defaults.limits, name))),
            help=f"{limit.metadata['help']} ({variable}; default %(default)s)",
        )


def _env_port(name: str) -> int | None:
    """The variable as a port, or None when it is unset or empty."""
    value = os.environ.get(name)
    return None if value is None or value == "" else int(value)


def _names(text: str) -> tuple[str, ...]:
    """Comma-separated player names, in the order given (spaces around them dropped)."""
    return tuple(name.strip() for name in text.split(",") if name.strip())


def _networks(text: str) -> tuple[Network, ...]:
    try:
        return parse_networks(text)
    except BadNetwork as error:
        raise argparse.ArgumentTypeError(str(error)) from None


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
        quick_match_bots=options.quick_match_bots,
        log_level=options.log_level,
        lease_s=options.lease_s,
        lease_renew_s=options.lease_renew_s,
        par_workers=options.par_workers,
        par_max_nodes=options.par_max_nodes,
        par_time_budget_s=options.par_time_budget_s,
        trusted_proxies=options.trusted_proxies,
        operators=options.operators,
        metrics_host=options.metrics_host,
        metrics_port=options.metrics_port,
        signing_key_file=options.signing_key_file,
        limits=Limits(**{name: getattr(options, name) for name, _, _ in limit_flags()}),
    )
