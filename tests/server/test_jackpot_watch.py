"""The node's watch over its tables file's jackpots: the hits a crash left undelivered
are delivered, and the meters are in ``paigow_jackpot_meter_chips``."""

from __future__ import annotations

import pytest
import redis.asyncio

from server.app import App
from server.app.jackpots import JackpotWatch
from server.config import Settings
from server.metrics import Metrics
from server.rules.progressive import JackpotOptions
from server.store.jackpot.meters import JackpotStore
from tests.conftest import FAST_TABLES
from tests.helpers import until
from tests.server.test_metrics import samples, scrape

GRAND = JackpotOptions("grand", seed=700, contribution_bps=5000)
MINOR = JackpotOptions("minor", seed=50, contribution_bps=1000)


def meter_of(found: dict[tuple[str, tuple[tuple[str, str], ...]], float], name: str) -> float:
    return found[("paigow_jackpot_meter_chips", (("jackpot", name),))]


async def half_hit(store: JackpotStore) -> None:
    """A contribution, then a hit whose process died before the account had it."""
    await store.contribute(
        "grand",
        seed=700,
        contribution_bps=5000,
        table_id="fast",
        round_no=1,
        seat=0,
        player="ann",
        wager=100,
    )
    await store.hit_step(
        "grand", seed=700, share_bps=10_000, table_id="fast", round_no=1, seat=0, player="ann"
    )


@pytest.mark.asyncio
async def test_one_pass(redis_client: redis.asyncio.Redis) -> None:
    store = JackpotStore(redis_client)
    await half_hit(store)
    metrics = Metrics()
    await JackpotWatch(store, [GRAND, MINOR], metrics).run_once()
    assert await store.pending("grand") == []
    assert await redis_client.hget(store.keys.account("ann"), "balance") == b"750"
    found = samples(metrics.render().decode())
    assert meter_of(found, "grand") == 700  # reset to the seed by the hit
    assert meter_of(found, "minor") == 50  # never started: its seed


@pytest.mark.asyncio
async def test_a_node_runs_it(server_settings: Settings, redis_client: redis.asyncio.Redis) -> None:
    assert server_settings.tables_file is not None
    server_settings.tables_file.write_text(
        FAST_TABLES
        + '\n[jackpot.grand]\nseed = 700\ncontribution_bps = 5000\nwager = 5\ntables = ["fast"]\n'
    )
    store = JackpotStore(redis_client)
    await half_hit(store)
    app = App(server_settings)
    await app.start()
    try:

        async def delivered() -> bool | None:
            return (await store.pending("grand")) == [] or None

        await until(delivered, what="the hit delivered", within=30)
        assert await redis_client.hget(store.keys.account("ann"), "balance") == b"750"
        assert meter_of(await scrape(app), "grand") == 700
    finally:
        await app.stop()
