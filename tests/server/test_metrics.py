"""What an operator watches, read from ``/metrics`` as Prometheus reads it: the process's
and the runtime's series, the build, the closes by code, and the tables' business."""

from __future__ import annotations

import asyncio
from collections.abc import Callable, Coroutine
from typing import Any

import pytest
from prometheus_client.parser import text_string_to_metric_families

from protocol.errors import CloseCode
from protocol.messages import Bet, Join, Results
from server.app import App, round_money
from server.metrics import Metrics
from server.table.state import SeatResult, WagerResult
from server.version import SERVER_VERSION, build_commit
from tests.helpers import until, url
from tests.server.helpers import Client
from tests.server.processes import http_get

Samples = dict[tuple[str, tuple[tuple[str, str], ...]], float]


def samples(text: str) -> Samples:
    """Every sample of the exposition: (name, sorted labels) -> value."""
    return {
        (s.name, tuple(sorted(s.labels.items()))): s.value
        for family in text_string_to_metric_families(text)
        for s in family.samples
    }


async def scrape(app: App) -> Samples:
    status, body = await asyncio.to_thread(http_get, app.port, "/metrics")
    assert status == 200
    return samples(body)


def value(found: Samples, name: str, **labels: str) -> float:
    return found.get((name, tuple(sorted(labels.items()))), 0.0)


@pytest.mark.asyncio
async def test_process_runtime_and_build_series(app: App) -> None:
    found = await scrape(app)
    names = {name for name, _ in found}
    # The process's (Linux /proc) and the interpreter's own series.
    assert {"process_cpu_seconds_total", "process_resident_memory_bytes"} <= names
    assert {"process_open_fds", "process_start_time_seconds"} <= names
    assert {"python_info", "python_gc_objects_collected_total"} <= names
    build = [labels for name, labels in found if name == "paigow_build_info"]
    assert build == [(("commit", build_commit()), ("version", SERVER_VERSION))]
    assert value(found, "paigow_build_info", commit=build_commit(), version=SERVER_VERSION) == 1
    assert value(found, "paigow_ready") == 1  # as /readyz says
    # Prometheus's conventions: a histogram's unit (seconds) is in its name.
    _, body = await asyncio.to_thread(http_get, app.port, "/metrics")
    timed = [
        f.name
        for f in text_string_to_metric_families(body)
        if f.type == "histogram" and f.name.startswith("paigow_")
    ]
    assert "paigow_round_phase_seconds" in timed
    assert all(name.endswith("_seconds") for name in timed), timed


@pytest.mark.asyncio
async def test_a_round_counts_wagers_house_result_seats_and_times(app: App) -> None:
    client = await Client.hello(url(app))
    try:
        await client.ok(Join, table_id="fast", buy_in=500)
        found = await scrape(app)
        assert value(found, "paigow_players_seated") == 1
        await client.ok(Bet, table_id="fast", amount=20, bonus=5)
        results = await client.event("fast", Results, within=30)
        [mine] = results.results
        await until(
            lambda: app.metrics.rounds._value.get() >= 1,
            what="the settlement's commit",
        )
        found = await scrape(app)
    finally:
        await client.close()
    assert value(found, "paigow_rounds_settled_total") == 1
    assert value(found, "paigow_wagered_chips_total") == 25
    won = value(found, "paigow_house_won_chips_total")
    paid = value(found, "paigow_house_paid_chips_total")
    net = mine.payout + mine.bonus_payout - mine.bet - mine.bonus_bet
    assert won - paid == -net  # the house's result is the player's, turned over
    assert value(found, "paigow_round_seconds_count") == 1
    # A round lasts at least its dealing and setting times (200 + 2,000 ms, or the
    # setting ended early by the house way: the dealing at least).
    assert value(found, "paigow_round_seconds_sum") >= 0.2
    for phase in ("betting", "dealing", "setting", "revealing"):
        assert value(found, "paigow_round_phase_seconds_count", phase=phase) >= 1, phase
    assert value(found, "paigow_request_seconds_count", type="Bet") == 1


@pytest.mark.asyncio
async def test_closes_are_counted_by_code_and_side(app: App) -> None:
    def closes(code: str, by: str) -> Callable[[], Coroutine[Any, Any, bool | None]]:
        async def counted() -> bool | None:
            found = await scrape(app)
            return value(found, "paigow_connection_closes_total", code=code, by=by) == 1 or None

        return counted

    client = await Client.hello(url(app))
    await client.close()  # the client closes first: its 1000
    await until(closes("1000", "client"), what="the client's close to be counted")
    # The server closes first: the player's sessions were ended (an operator's
    # revocation): 4001.
    other = await Client.hello(url(app), label="revoked")
    assert app.gateway is not None
    assert app.gateway.revoked(other.player) == 1
    closed = await other.wait_closed()
    assert closed.code == CloseCode.UNAUTHORIZED
    await until(closes(str(closed.code), "server"), what="the server's close to be counted")


def test_close_codes_stay_few() -> None:
    metrics = Metrics()
    for code in range(3000, 5000):  # whatever a client sends
        metrics.closed(code, "client")
    text = metrics.render().decode()
    lines = [
        line for line in text.splitlines() if line.startswith("paigow_connection_closes_total")
    ]
    assert 'paigow_connection_closes_total{by="client",code="other"} 1980.0' in lines
    assert len(lines) == 21  # 4000-4019 by name, the rest as "other"


def test_round_money() -> None:
    def seat(bet: int, bonus: int, net: int) -> SeatResult:
        wagers = (WagerResult("bonus", bonus, 0),) if bonus else ()
        return SeatResult(0, "p", "o", "win", "win", bet, 0, 0, net, 0, wagers)

    assert round_money([seat(20, 5, 19), seat(10, 0, -10), seat(50, 0, 0)]) == (85, 10, 19)


def test_jackpot_meters() -> None:
    metrics = Metrics()
    metrics.jackpot_seen("grand", 1000)
    metrics.jackpot_seen("grand", 1250)
    metrics.jackpot_seen("minor", 40)
    found = samples(metrics.render().decode())
    assert found[("paigow_jackpot_meter_chips", (("jackpot", "grand"),))] == 1250
    assert found[("paigow_jackpot_meter_chips", (("jackpot", "minor"),))] == 40
