"""Prometheus metrics of one server process (served on ``/metrics``).

Besides requests and commits, two stall gauges an operator needs when players report
lag: how late the event loop runs a timer (anything that blocks the loop blocks every
table and connection of the process) and how long the garbage collector pauses.

Named by Prometheus's conventions: the unit in the name (``_seconds``, ``_chips``),
counters end in ``_total``. Also here: the process's and the runtime's own series
(``process_*``, ``python_*``), the build (``paigow_build_info``), the connections'
closes by close code, and the business of the tables: chips wagered, the house's
result, players seated, rounds settled, the length of a round and of its phases
(:meth:`Metrics.committed`, told of every commit). The alert and recording rules and
the dashboard built on them are in ``deploy/prometheus`` and ``deploy/grafana``.
"""

from __future__ import annotations

import asyncio
import gc
import time
from collections import deque
from collections.abc import Callable
from typing import Any, NoReturn

from prometheus_client import (
    GC_COLLECTOR,
    PLATFORM_COLLECTOR,
    PROCESS_COLLECTOR,
    CollectorRegistry,
    Counter,
    Gauge,
    Histogram,
    generate_latest,
)
from prometheus_client.core import CounterMetricFamily, Metric
from prometheus_client.registry import Collector
from websockets.protocol import Protocol

LAG_PROBE_S = 0.1
"""The loop-lag probe's period: a timer that fires this often and times itself."""

_STALL_BUCKETS = (0.001, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1.0, 2.5, 5.0)
_PHASE_BUCKETS = (0.1, 0.25, 0.5, 1.0, 2.5, 5.0, 10.0, 15.0, 20.0, 30.0, 45.0, 60.0, 120.0)
_ROUND_BUCKETS = (1.0, 2.5, 5.0, 10.0, 15.0, 20.0, 30.0, 45.0, 60.0, 90.0, 120.0, 300.0)

CLOSE_CODES: frozenset[int] = frozenset(
    {1000, 1001, 1002, 1003, 1005, 1006, 1007, 1008, 1009, 1011, 1012, 1013, 1014}
    | set(range(4000, 4020))
)
"""The close codes counted by their own label; any other a client sends is ``other`` (a
client may send any code from 3000 to 4999: the series must stay few)."""


class Metrics:
    """The process's metrics, in a registry of its own (so tests can make several)."""

    def __init__(self) -> None:
        self.registry = CollectorRegistry()
        self.connections = Gauge(
            "paigow_connections", "Open WebSocket connections", registry=self.registry
        )
        self.requests = Counter(
            "paigow_requests", "Client requests by message type", ["type"], registry=self.registry
        )
        self.errors = Counter(
            "paigow_errors", "Error replies by code", ["code"], registry=self.registry
        )
        self.latency = Histogram(
            "paigow_request_seconds",
            "Time from a request's arrival to its reply being queued",
            ["type"],
            buckets=(0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 1.0),
            registry=self.registry,
        )
        self.commits = Histogram(
            "paigow_commit_seconds",
            "Time to apply and store one table event",
            buckets=(0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 1.0),
            registry=self.registry,
        )
        self.rounds = Counter("paigow_rounds_settled", "Rounds settled", registry=self.registry)
        self.tables_hosted = Gauge(
            "paigow_tables_hosted", "Tables this process hosts", registry=self.registry
        )
        self.redis_restarts = Counter(
            "paigow_redis_restarts",
            "Times the embedded redis-server died and was started again",
            registry=self.registry,
        )
        self.guests = Gauge(
            "paigow_guests",
            "Guest accounts that exist (as of the last archiver loop)",
            registry=self.registry,
        )
        self.archived = Counter(
            "paigow_archived",
            "Records moved from Redis to the archive by this process",
            ["kind"],
            registry=self.registry,
        )
        self.guests_closed = Counter(
            "paigow_guests_closed",
            "Idle guest accounts closed by this process",
            registry=self.registry,
        )
        self.loop_lag = Histogram(
            "paigow_loop_lag_seconds",
            f"How late the event loop ran a timer due every {LAG_PROBE_S:g} s",
            buckets=_STALL_BUCKETS,
            registry=self.registry,
        )
        self.gc_pause = Histogram(
            "paigow_gc_pause_seconds",
            "Garbage-collector pauses, by generation collected",
            ["generation"],
            buckets=_STALL_BUCKETS,
            registry=self.registry,
        )
        self._register_business()
        self._per_type: dict[str, tuple[Counter, Histogram]] = {}
        self._gc_by_generation = [self.gc_pause.labels(str(g)) for g in range(3)]
        # Pauses timed by the collector's callback, not yet in the histogram (bounded:
        # nothing grows if no one flushes).
        self._gc_pending: deque[tuple[int, float]] = deque(maxlen=10_000)

    def _register_business(self) -> None:
        """The process's own series, the build, the closes and the tables' business."""
        for collector in (PROCESS_COLLECTOR, PLATFORM_COLLECTOR, GC_COLLECTOR):
            # The library's collectors read the running process and interpreter; one
            # instance each serves every registry.
            self.registry.register(collector)
        self.ready = Gauge(
            "paigow_ready",
            "1 while this node serves (what /readyz answers 200 to), else 0",
            registry=self.registry,
        )
        self.build_info = Gauge(
            "paigow_build_info",
            "The server's build: always 1, its labels name the version and commit",
            ["version", "commit"],
            registry=self.registry,
        )
        self.closes = Counter(
            "paigow_connection_closes",
            "WebSocket connections closed, by close code and by which side closed first",
            ["code", "by"],
            registry=self.registry,
        )
        self.wagered = Counter(
            "paigow_wagered_chips",
            "Chips wagered in the rounds settled here (main and side bets)",
            registry=self.registry,
        )
        self.house_won = Counter(
            "paigow_house_won_chips",
            "Chips the house won from the seats it beat (commission included), by round",
            registry=self.registry,
        )
        self.house_paid = Counter(
            "paigow_house_paid_chips",
            "Chips the house lost to the seats that beat it, by round",
            registry=self.registry,
        )
        self.players_seated = Gauge(
            "paigow_players_seated",
            "Seats taken at the tables this process hosts",
            registry=self.registry,
        )
        self.round_length = Histogram(
            "paigow_round_seconds",
            "A round's length: from betting's start to its settlement",
            buckets=_ROUND_BUCKETS,
            registry=self.registry,
        )
        self.phase_length = Histogram(
            "paigow_round_phase_seconds",
            "How long a table stayed in a phase of a round",
            ["phase"],
            buckets=_PHASE_BUCKETS,
            registry=self.registry,
        )
        # Per table hosted here: the phase it is in, since when, and when its round's
        # betting started (monotonic seconds).
        self._phases: dict[str, tuple[str, float, float | None]] = {}
        # Progressive jackpots: each meter as this process last read or heard it.
        self.jackpot_meter = Gauge(
            "paigow_jackpot_meter_chips",
            "Chips on a progressive jackpot's meter, as this process last saw it",
            ["jackpot"],
            registry=self.registry,
        )

    def set_build(self, version: str, commit: str) -> None:
        """Name the build in ``paigow_build_info``."""
        self.build_info.clear()
        self.build_info.labels(version, commit).set(1)

    def closed(self, code: int, by: str) -> None:
        """Count one connection's close: its close code, ``by`` ``server``, ``client``
        or ``neither`` (the connection dropped: code 1006)."""
        label = str(code) if code in CLOSE_CODES else "other"
        self.closes.labels(label, by).inc()

    def count_close(self, protocol: Protocol) -> None:
        """Count a connection's close from its WebSocket protocol state, once the
        connection is lost: the code of the side that closed first."""
        sent, received = protocol.close_sent, protocol.close_rcvd
        if received is not None and (sent is None or protocol.close_rcvd_then_sent):
            self.closed(received.code, "client")
        elif sent is not None:
            self.closed(sent.code, "server")
        else:
            self.closed(1006, "neither")

    def committed(
        self,
        table_id: str,
        phase: str,
        now: float,
        settled: tuple[int, int, int] | None = None,
    ) -> None:
        """A commit of ``table_id`` left it in ``phase`` at ``now`` (monotonic seconds);
        ``settled``: the round it settled, as (chips wagered, won by the house, paid by
        the house). Times the phase that ended and, at a settlement, the round."""
        known = self._phases.get(table_id)
        if known is None or known[0] != phase:
            betting_since = known[2] if known is not None else None
            if known is not None and known[0] != "idle":
                self.phase_length.labels(known[0]).observe(now - known[1])
            if phase == "betting":
                betting_since = now
            self._phases[table_id] = (phase, now, betting_since)
        if settled is not None:
            wagered, won, paid = settled
            self.rounds.inc()
            self.wagered.inc(wagered)
            self.house_won.inc(won)
            self.house_paid.inc(paid)
            betting_since = self._phases[table_id][2]
            if betting_since is not None:
                self.round_length.observe(now - betting_since)

    def jackpot_seen(self, name: str, meter: int) -> None:
        """Jackpot ``name``'s meter showed ``meter`` chips (a read, or its channel)."""
        self.jackpot_meter.labels(name).set(meter)

    def forget_table(self, table_id: str) -> None:
        """``table_id`` is no longer hosted here: its phase is not timed any more."""
        self._phases.pop(table_id, None)

    def count_pipelines(self, sent: Callable[[], tuple[int, int]]) -> None:
        """Expose ``sent()`` (pipelines, script calls: :meth:`TableStore.sent
        <server.store.tables.store.TableStore.sent>`) as two counters, read when scraped: a
        counter bumped at each pipeline would put a lock on every commit's way."""
        self.registry.register(_Sent(sent))

    def for_request(self, kind: str) -> tuple[Counter, Histogram]:
        """The request counter and latency histogram of one message type (their labels
        are looked up once: a lookup costs as much as the observation)."""
        pair = self._per_type.get(kind)
        if pair is None:
            pair = self._per_type[kind] = (self.requests.labels(kind), self.latency.labels(kind))
        return pair

    def render(self) -> bytes:
        """The Prometheus text exposition."""
        self.flush_gc()
        return generate_latest(self.registry)

    def watch_gc(self) -> Callable[[], None]:
        """Time every collection into :attr:`gc_pause`; returns the function that stops it.

        The callback only queues the pause: observing a histogram takes a lock, and a
        collection may start while that very lock is held (in :meth:`render`, say),
        which would deadlock. :meth:`flush_gc` moves the queue into the histogram.
        """
        started = 0.0
        pending = self._gc_pending

        def callback(phase: str, info: dict[str, Any]) -> None:
            nonlocal started
            if phase == "start":
                started = time.perf_counter()
            else:
                pending.append((info["generation"], time.perf_counter() - started))

        gc.callbacks.append(callback)
        return lambda: gc.callbacks.remove(callback)

    def flush_gc(self) -> None:
        """Move the collections timed since the last call into :attr:`gc_pause`."""
        while self._gc_pending:
            generation, seconds = self._gc_pending.popleft()
            self._gc_by_generation[generation].observe(seconds)

    async def probe_loop_lag(self) -> NoReturn:
        """Observe, forever, how late a :data:`LAG_PROBE_S` sleep wakes up."""
        loop = asyncio.get_running_loop()
        while True:
            due = loop.time() + LAG_PROBE_S
            await asyncio.sleep(LAG_PROBE_S)
            self.loop_lag.observe(max(0.0, loop.time() - due))
            self.flush_gc()


class _Sent(Collector):
    """``paigow_redis_pipelines_total`` and ``paigow_redis_script_calls_total``, read
    from the store when scraped (see :meth:`Metrics.count_pipelines`)."""

    def __init__(self, sent: Callable[[], tuple[int, int]]) -> None:
        self._sent = sent

    def collect(self) -> list[Metric]:
        pipelines, calls = self._sent()
        return [
            CounterMetricFamily(
                "paigow_redis_pipelines",
                "Round trips with Redis that carried the commits' script calls",
                value=pipelines,
            ),
            CounterMetricFamily(
                "paigow_redis_script_calls",
                "Script calls (commits, mostly) sent in those round trips",
                value=calls,
            ),
        ]
