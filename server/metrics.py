"""Prometheus metrics of one server process (served on ``/metrics``).

Besides requests and commits, two stall gauges an operator needs when players report
lag: how late the event loop runs a timer (anything that blocks the loop blocks every
table and connection of the process) and how long the garbage collector pauses.
"""

from __future__ import annotations

import asyncio
import gc
import time
from collections import deque
from collections.abc import Callable
from typing import Any, NoReturn

from prometheus_client import CollectorRegistry, Counter, Gauge, Histogram, generate_latest
from prometheus_client.core import CounterMetricFamily, Metric
from prometheus_client.registry import Collector

LAG_PROBE_S = 0.1
"""The loop-lag probe's period: a timer that fires this often and times itself."""

_STALL_BUCKETS = (0.001, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1.0, 2.5, 5.0)


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
        self._per_type: dict[str, tuple[Counter, Histogram]] = {}
        self._gc_by_generation = [self.gc_pause.labels(str(g)) for g in range(3)]
        # Pauses timed by the collector's callback, not yet in the histogram (bounded:
        # nothing grows if no one flushes).
        self._gc_pending: deque[tuple[int, float]] = deque(maxlen=10_000)

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
