"""Prometheus metrics of one server process (served on ``/metrics``)."""

from __future__ import annotations

from prometheus_client import CollectorRegistry, Counter, Gauge, Histogram, generate_latest


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

    def render(self) -> bytes:
        """The Prometheus text exposition."""
        return generate_latest(self.registry)
