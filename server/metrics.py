"""What an operator watches: this process's metrics, in the Prometheus text format.

Off the players' path: what a request or a commit counts is a plain number added to
(``Metrics.answered``, the journal's and the lobby's own counts, ``server.histogram``),
with no lock, since only the event loop's thread writes them; everything else (open
connections, live matches by state, tournaments by status, the quick-match queue,
backlogs, process memory and CPU) is read when ``/metrics`` is scraped. One registry per
``Server``: several servers in one process (the tests) do not share their numbers.

docs/operations.md, "Metrics", lists every metric and how to scrape them.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass
from typing import Final, Protocol

from prometheus_client import CollectorRegistry, ProcessCollector, generate_latest
from prometheus_client.core import (
    CounterMetricFamily,
    GaugeMetricFamily,
    HistogramMetricFamily,
    Metric,
)
from prometheus_client.registry import Collector

from gaps_protocol.messages.common import Message
from gaps_protocol.messages.errors import Error
from gaps_protocol.messages.replies import ActionOk
from server.broker import Broker
from server.clock import Clock
from server.histogram import Histogram
from server.lobby import Lobby
from server.matchmaker import Matchmaker
from server.matchstate import PHASES
from server.outages import Outage
from server.par_worker import ParWorker
from server.storage.journal import Journal
from server.tournament import Tournaments

#: The content type of what ``exposition`` returns.
CONTENT_TYPE: Final = "text/plain; version=0.0.4; charset=utf-8"

#: A tournament's statuses (``server.tournamentstate``).
TOURNAMENT_STATUSES: Final = ("open", "running", "finished", "cancelled")

#: The limits a ``rate_limited`` refusal is counted against (``rate_limited{limit}``).
RATE_LIMITS: Final = (
    "requests_per_connection",
    "costly_per_player",
    "costly_per_address",
    "connections_per_address",
)


class _Outbox(Protocol):
    @property
    def waiting(self) -> int: ...


class _Connection(Protocol):
    @property
    def outbox(self) -> _Outbox: ...


@dataclass(frozen=True)
class Sources:
    """The parts of the server the scrape reads (built once by ``server.app``)."""

    sessions: Iterable[_Connection]
    lobby: Lobby
    tournaments: Tournaments
    #: The quick-match queue, on the leader only.
    matchmaker: Callable[[], Matchmaker | None]
    leading: Callable[[], bool]
    broker: Broker
    journal: Journal
    par_worker: ParWorker
    outages: tuple[Outage, ...]


class Metrics:
    """This process's counts, and the registry that shows them with the rest.

    :param clock: the server's clock (``monotonic``: an action's latency).
    """

    def __init__(self, *, clock: Clock) -> None:
        self._monotonic = clock.monotonic
        #: WebSocket connections accepted.
        self.connections_opened = 0
        #: Actions acknowledged, and the time from their receipt to their ``action_ok``.
        self.actions = 0
        self.action_seconds = Histogram()
        #: Requests refused, by error code; ``rate_limited`` ones by the limit that refused.
        self.refusals: Counter[str] = Counter()
        self.rate_limited: Counter[str] = Counter()
        self.registry = CollectorRegistry()
        self._sources: Sources | None = None
        self.registry.register(_ServerCollector(self))
        # Process memory (RSS), CPU seconds, open files: read from /proc at scrape time.
        ProcessCollector(registry=self.registry)

    def observe(self, sources: Sources) -> None:
        """Read ``sources`` at every scrape from now on."""
        self._sources = sources

    @property
    def sources(self) -> Sources | None:
        return self._sources

    def received(self) -> float:
        """The instant a request is received, for ``answered``."""
        return self._monotonic()

    def answered(self, reply: Message, received: float) -> None:
        """A reply was sent to a request received at ``received``: an acknowledged action
        is counted with its latency, a refusal by its code."""
        if isinstance(reply, ActionOk):
            self.actions += 1
            self.action_seconds.observe(self._monotonic() - received)
        elif isinstance(reply, Error):
            self.refusals[reply.code] += 1

    def limited(self, limit: str) -> None:
        """A request or a connection was refused ``rate_limited`` by ``limit`` (one of
        ``RATE_LIMITS``)."""
        self.rate_limited[limit] += 1

    def exposition(self) -> bytes:
        """Every metric, in the Prometheus text format (``CONTENT_TYPE``)."""
        return generate_latest(self.registry)


class _ServerCollector(Collector):
    """Reads the counts and the server's state at scrape time."""

    def __init__(self, metrics: Metrics) -> None:
        self._metrics = metrics

    def collect(self) -> Iterator[Metric]:
        metrics = self._metrics
        yield from _requests(metrics)
        sources = metrics.sources
        if sources is not None:
            yield from _connections(metrics, sources)
            yield from _matches(sources)
            yield from _tournaments_and_queue(sources)
            yield from _storage_and_broker(sources)
            yield from _par(sources.par_worker)


def _requests(metrics: Metrics) -> Iterator[Metric]:
    yield CounterMetricFamily(
        "gaps_actions", "Actions acknowledged (rate() gives actions a second).",
        value=metrics.actions,
    )
    yield _histogram(
        "gaps_action_latency_seconds",
        "Time from an action's receipt to its acknowledgement (action_ok).",
        metrics.action_seconds,
    )
    refusals = CounterMetricFamily(
        "gaps_refusals", "Requests refused, by error code.", labels=["code"]
    )
    for code, count in sorted(metrics.refusals.items()):
        refusals.add_metric([code], count)
    yield refusals
    limited = CounterMetricFamily(
        "gaps_rate_limited",
        "Requests and connections refused rate_limited, by the limit that refused them.",
        labels=["limit"],
    )
    for limit in RATE_LIMITS:
        limited.add_metric([limit], metrics.rate_limited[limit])
    yield limited


def _connections(metrics: Metrics, sources: Sources) -> Iterator[Metric]:
    sessions = list(sources.sessions)
    yield GaugeMetricFamily(
        "gaps_connections", "WebSocket connections open.", value=len(sessions)
    )
    yield CounterMetricFamily(
        "gaps_connections_opened", "WebSocket connections accepted.",
        value=metrics.connections_opened,
    )
    yield GaugeMetricFamily(
        "gaps_outbox_frames_waiting",
        "Frames waiting to be sent to clients that do not read fast enough.",
        value=sum(session.outbox.waiting for session in sessions),
    )


def _matches(sources: Sources) -> Iterator[Metric]:
    lobby = sources.lobby
    by_state = Counter(match.state.phase for match in list(lobby.matches.values()))
    live = GaugeMetricFamily(
        "gaps_matches", "Matches this process runs, by state.", labels=["state"]
    )
    for phase in PHASES:
        live.add_metric([phase], by_state[phase])
    yield live
    counts = lobby.counts
    yield CounterMetricFamily(
        "gaps_matches_created", "Matches created by this process.", value=counts.created
    )
    yield CounterMetricFamily(
        "gaps_matches_started", "Matches dealt by this process.", value=counts.started
    )
    ended = CounterMetricFamily(
        "gaps_matches_ended", "Matches over on this process, by outcome.", labels=["outcome"]
    )
    for outcome in ("finished", "abandoned"):
        ended.add_metric([outcome], counts.ended[outcome])
    yield ended
    yield CounterMetricFamily(
        "gaps_lease_takeovers",
        "Matches this process took over while serving: their owner stopped renewing.",
        value=counts.taken_over,
    )
    yield CounterMetricFamily(
        "gaps_leases_lost",
        "Matches this process dropped because another process took their lease over.",
        value=counts.leases_lost,
    )


def _tournaments_and_queue(sources: Sources) -> Iterator[Metric]:
    by_status = Counter(t.state.status for t in list(sources.tournaments.live.values()))
    tournaments = GaugeMetricFamily(
        "gaps_tournaments",
        "Tournaments this process runs (the leader), by status.",
        labels=["status"],
    )
    for status in TOURNAMENT_STATUSES:
        tournaments.add_metric([status], by_status[status])
    yield tournaments
    matchmaker = sources.matchmaker()
    queued = 0
    if matchmaker is not None:
        queued = sum(len(waiting) for waiting in matchmaker.state.queues.values())
    yield GaugeMetricFamily(
        "gaps_quick_match_queue", "Players waiting in the quick-match queue (the leader).",
        value=queued,
    )
    yield GaugeMetricFamily(
        "gaps_leader", "1 while this process leads the cluster.", value=int(sources.leading())
    )


def _storage_and_broker(sources: Sources) -> Iterator[Metric]:
    journal = sources.journal
    yield _histogram(
        "gaps_commit_latency_seconds",
        "Time to commit one group of action rows (the journal's group commit).",
        journal.commit_seconds,
    )
    yield CounterMetricFamily(
        "gaps_actions_committed", "Action rows committed by the journal.",
        value=journal.rows_committed,
    )
    yield GaugeMetricFamily(
        "gaps_broker_backlog",
        "Messages published to the broker and not yet taken by it (Redis' answers awaited).",
        value=sources.broker.backlog,
    )
    up = GaugeMetricFamily(
        "gaps_up", "1 while a part the server needs answers, 0 during its outage.",
        labels=["part"],
    )
    outages = CounterMetricFamily("gaps_outages", "Outages begun, by part.", labels=["part"])
    failures = CounterMetricFamily(
        "gaps_outage_failures",
        "Operations that failed because a part was down (retries, refusals), by part.",
        labels=["part"],
    )
    down = CounterMetricFamily(
        "gaps_outage_seconds", "Seconds a part was down, by part.", labels=["part"]
    )
    for outage in sources.outages:
        up.add_metric([outage.part], int(outage.up))
        outages.add_metric([outage.part], outage.outages)
        failures.add_metric([outage.part], outage.failures)
        down.add_metric([outage.part], outage.down_s)
    yield from (up, outages, failures, down)


def _par(par_worker: ParWorker) -> Iterator[Metric]:
    yield GaugeMetricFamily(
        "gaps_par_jobs_queued", "Finished matches waiting for their par to be solved.",
        value=par_worker.queued,
    )
    jobs = CounterMetricFamily(
        "gaps_par_jobs", "Par solves, by outcome (done: stored).", labels=["outcome"]
    )
    jobs.add_metric(["done"], par_worker.stored)
    jobs.add_metric(["failed"], par_worker.failed)
    yield jobs


def _histogram(name: str, documentation: str, histogram: Histogram) -> HistogramMetricFamily:
    buckets = [
        ("+Inf" if bound == float("inf") else repr(float(bound)), count)
        for bound, count in histogram.cumulative()
    ]
    return HistogramMetricFamily(
        name, documentation, buckets=buckets, sum_value=histogram.sum
    )
