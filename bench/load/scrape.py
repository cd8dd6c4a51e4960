"""The game server's own stall metrics, read from its ``/metrics`` over a window."""

from __future__ import annotations

import asyncio
import math
import urllib.request

from prometheus_client.parser import text_string_to_metric_families

STALL_HISTOGRAMS = (
    "paigow_loop_lag_seconds",
    "paigow_gc_pause_seconds",
    "paigow_request_seconds",
    "paigow_commit_seconds",
)
SENT_COUNTERS = {"paigow_redis_pipelines": "pipelines", "paigow_redis_script_calls": "calls"}
"""The counters :func:`_scrape` reads beside the histograms, and their series' names."""


def _scrape(url: str) -> dict[str, dict[float, float]]:
    """Cumulative bucket counts of the server's stall histograms, by series.

    Series are ``loop``, ``gc<generation>``, ``bet`` (a bet's time inside the server,
    arrival to reply queued) and ``commit`` (a table event applied and stored, lock
    held); ``{}`` when ``url`` is empty (the bare server has no metrics) or cannot be
    read. The counters of round trips with Redis and of the script calls they carried
    are series ``pipelines`` and ``calls`` of one bucket, ``+Inf``: :func:`stall_delta`
    gives their growth as ``count``.
    """
    if not url:
        return {}
    try:
        with urllib.request.urlopen(url, timeout=10) as response:
            body = response.read().decode()
    except OSError:
        return {}
    series: dict[str, dict[float, float]] = {}
    for family in text_string_to_metric_families(body):
        if family.name in SENT_COUNTERS:
            series[SENT_COUNTERS[family.name]] = {math.inf: family.samples[0].value}
            continue
        if family.name not in STALL_HISTOGRAMS:
            continue
        for sample in family.samples:
            if sample.name != family.name + "_bucket":
                continue
            labels = sample.labels
            if "type" in labels and labels["type"] != "Bet":
                continue
            name = "bet" if "type" in labels else "loop"
            if family.name == "paigow_commit_seconds":
                name = "commit"
            if "generation" in labels:
                name = "gc" + labels["generation"]
            series.setdefault(name, {})[float(sample.labels["le"])] = sample.value
    return series


def stall_delta(
    before: dict[str, dict[float, float]], after: dict[str, dict[float, float]]
) -> dict[str, dict[str, float]]:
    """Per series, over a window: ``count``, ``over_25ms``, ``over_100ms``, ``max_le``
    (the smallest bucket bound holding every observation: the longest stall was at most
    that; ``inf`` if some exceeded the largest bound) and ``p99_le`` (the same for 99 %
    of them)."""
    out: dict[str, dict[str, float]] = {}
    for name, buckets in after.items():
        old = before.get(name, {})
        delta = {le: n - old.get(le, 0.0) for le, n in buckets.items()}
        total = delta.get(math.inf, 0.0)
        bounds = sorted(le for le, n in delta.items() if n >= total)
        p99 = sorted(le for le, n in delta.items() if n >= 0.99 * total)
        out[name] = {
            "count": total,
            "over_25ms": total - delta.get(0.025, 0.0),
            "over_100ms": total - delta.get(0.1, 0.0),
            "max_le": bounds[0] if total and bounds else 0.0,
            "p99_le": p99[0] if total and p99 else 0.0,
        }
    return out


async def server_stalls(url: str) -> dict[str, dict[float, float]]:
    """:func:`_scrape` off the event loop."""
    return await asyncio.to_thread(_scrape, url)
