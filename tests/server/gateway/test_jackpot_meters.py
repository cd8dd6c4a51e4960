"""The jackpots' meters as protocol/PROTOCOL.md promises them (minor 7), over real
sockets and the real Redis: in ``tables`` and ``table_info``, and live after
``watch_jackpots`` (at most one ``jackpot`` message a second per jackpot, the last one
the meter as it stands), from whichever node changed the meter, and again after Redis
restarted."""

from __future__ import annotations

import asyncio
import itertools
import math
from pathlib import Path

import pytest
import redis.asyncio

from protocol.messages import (
    GetTableInfo,
    JackpotChange,
    ListTables,
    UnwatchJackpots,
    WatchJackpots,
)
from protocol.structs import JackpotList, JackpotMeter, TableInfo, TableList
from server.app import App
from server.catalog import change_table, seed_catalog
from server.config import Settings
from server.gateway.jackpots import JackpotRelay
from server.rules.bonus import BONUS_CLASS_CODES
from server.rules.progressive import (
    DEFAULT_PROGRESSIVE_PAY_TABLE,
    PROGRESSIVE,
    JackpotOptions,
    progressive_pay_table,
)
from server.store import TableCatalog
from server.store.embedded.process import EmbeddedRedis
from server.store.jackpot.meters import JackpotStore
from server.tables_file import parse_tables
from tests.helpers import until, url
from tests.server.conftest import StartApp
from tests.server.helpers import Client, quick_tables

JACKPOT = """
[jackpot.grand]
seed = 1000
contribution_bps = 10000
wager = 5
tables = ["j1"]
"""
TABLES = quick_tables("j1", "plain", betting_ms=60_000) + JACKPOT
_ROUNDS = itertools.count(1)


async def contribute(store: JackpotStore, chips: int, table_id: str = "j1") -> int:
    """``chips`` more on the meter (all of a wager goes to it); the meter after."""
    done = await store.contribute(
        "grand",
        seed=1000,
        contribution_bps=10_000,
        table_id=table_id,
        round_no=next(_ROUNDS),
        seat=0,
        player="ann",
        wager=chips,
    )
    assert done.applied
    return done.meter


def meters(client: Client) -> list[int]:
    return [m.meter for m in client.messages if isinstance(m, JackpotChange)]


async def heard(client: Client, meter: int) -> None:
    await client.wait(lambda: meters(client) and meters(client)[-1] == meter)


@pytest.mark.asyncio
async def test_the_lobby_and_table_info_show_the_meter(
    start_app: StartApp, redis_client: redis.asyncio.Redis
) -> None:
    app = await start_app(tables=TABLES)
    client = await Client.hello(url(app))
    try:
        listed = await client.ok(ListTables)
        assert isinstance(listed, TableList)
        offered = {t.table_id: t.jackpot for t in listed.tables}
        assert offered == {"j1": "grand", "plain": None}
        assert listed.jackpots == (JackpotMeter("grand", 1000),)  # never started: the seed

        store = JackpotStore(redis_client)
        after = await contribute(store, 37)
        assert after == 1037
        await until(lambda: app.jackpot_relay and app.jackpot_relay.meters["grand"] == 1037)
        listed = await client.ok(ListTables)
        assert listed.jackpots == (JackpotMeter("grand", 1037),)

        info = await client.ok(GetTableInfo, table_id="j1")
        assert isinstance(info, TableInfo)
        assert info.jackpot is not None
        assert (info.jackpot.name, info.jackpot.meter, info.jackpot.wager) == ("grand", 1037, 5)
        top = info.jackpot.paytable[0]
        assert (top.bonus_class, top.meter_bps, top.fixed) == (
            "natural_7_card_straight_flush",
            10_000,
            0,
        )
        assert all((line.meter_bps > 0) != (line.fixed > 0) for line in info.jackpot.paytable)
        plain = await client.ok(GetTableInfo, table_id="plain")
        assert plain.jackpot is None
    finally:
        await client.close()


@pytest.mark.asyncio
async def test_only_watchers_get_the_changes_at_most_one_a_second(
    start_app: StartApp, redis_client: redis.asyncio.Redis
) -> None:
    app = await start_app(tables=TABLES)
    watcher = await Client.hello(url(app), label="w")
    other = await Client.hello(url(app), label="o")
    store = JackpotStore(redis_client)
    try:
        answered = await watcher.ok(WatchJackpots)
        assert answered == JackpotList((JackpotMeter("grand", 1000),))
        loop_time = asyncio.get_running_loop().time
        started = loop_time()
        last = 0
        for _ in range(20):
            last = await contribute(store, 3)
        await heard(watcher, last)
        elapsed = loop_time() - started
        got = meters(watcher)
        # The throttle: one message at once, then at most one a second.
        assert len(got) <= 1 + math.ceil(elapsed / 1.0)
        assert got == sorted(got)
        assert got[-1] == 1060
        assert meters(other) == []  # never asked

        # One subscription for the node, whatever the number of watchers.
        more = [await Client.hello(url(app), label=f"m{i}") for i in range(3)]
        for c in more:
            await c.ok(WatchJackpots)
        channel = JackpotStore(redis_client).keys.jackpot_channel("grand")
        assert await redis_client.pubsub_numsub(channel) == [(channel.encode(), 1)]
        for c in more:
            await c.close()

        assert await watcher.ok(UnwatchJackpots) is None
        before = len(watcher.messages)
        await contribute(store, 1)
        await other.ok(WatchJackpots)  # a later watcher hears the next change
        final = await contribute(store, 1)
        await heard(other, final)
        assert not any(isinstance(m, JackpotChange) for m in watcher.messages[before:])
    finally:
        await watcher.close()
        await other.close()


@pytest.mark.asyncio
async def test_a_change_made_for_a_table_on_one_node_is_seen_on_the_other(
    start_app: StartApp, redis_client: redis.asyncio.Redis
) -> None:
    tables = quick_tables("j1", "q2", betting_ms=60_000) + JACKPOT
    a = await start_app(tables, node_name="a")
    b = await start_app(tables, node_name="b")
    await until(
        lambda: all(sum(h.ready for h in n.hosts.values()) == 1 for n in (a, b)), 10, "spread"
    )
    other = b if a.hosts["j1"].ready else a  # the node that does not hold "j1"
    assert not other.hosts["j1"].ready
    lobby = await Client.hello(url(other), label="lobby")
    try:
        await lobby.ok(WatchJackpots)
        channel = JackpotStore(redis_client).keys.jackpot_channel("grand")
        assert await redis_client.pubsub_numsub(channel) == [(channel.encode(), 2)]  # a node each
        # The table's contribution, as its holder's round makes it.
        after = await contribute(JackpotStore(redis_client), 250)
        await heard(lobby, after)
        listed = await lobby.ok(ListTables)
        assert listed.jackpots == (JackpotMeter("grand", after),)
    finally:
        await lobby.close()


@pytest.mark.asyncio
async def test_after_a_redis_restart_the_relay_listens_again(
    own_redis: EmbeddedRedis, tmp_path: Path
) -> None:
    tables = tmp_path / "tables.toml"
    tables.write_text(TABLES)
    app = App(
        Settings(
            port=0,
            redis_url=own_redis.url,
            data_dir=tmp_path / "data",
            tables_file=tables,
            token_secret="jackpot-meter-secret-0123456789",
            lease_ms=3000,
        )
    )
    await app.start()
    client = own_redis.client()
    watcher: Client | None = None
    try:
        watcher = await Client.hello(url(app))
        await watcher.ok(WatchJackpots)
        first = await contribute(JackpotStore(client), 10)
        await heard(watcher, first)

        # A change whose message no one heard (as one published while the relay was
        # not subscribed): written without its publication.
        await client.hset(JackpotStore(client).keys.jackpot("grand"), "meter", 5555)
        await client.aclose()
        await own_redis.astop()
        await own_redis.astart()
        client = own_redis.client()
        # Subscribed again, the relay reads the meter again and tells it.
        await heard(watcher, 5555)
        # And hears the changes from then on.
        after = await contribute(JackpotStore(client), 1)
        assert after == 5556
        await heard(watcher, after)
    finally:
        if watcher is not None:
            await watcher.close()
        await client.aclose()
        await app.stop()


async def _jackpots_shown(client: Client, table_id: str) -> tuple[str | None, str | None]:
    """The jackpot the lobby shows for ``table_id``, and ``table_info``'s."""
    listed = await client.ok(ListTables)
    assert isinstance(listed, TableList)
    (summary,) = [t for t in listed.tables if t.table_id == table_id]
    info = await client.ok(GetTableInfo, table_id=table_id)
    assert isinstance(info, TableInfo)
    return summary.jackpot, None if info.jackpot is None else info.jackpot.name


@pytest.mark.asyncio
async def test_a_store_seeded_before_the_jackpot_shows_none_at_its_table(
    start_app: StartApp, redis_client: redis.asyncio.Redis
) -> None:
    """The tables file lists j1 under [jackpot.grand], but the store's catalog was
    seeded before (j1 offers no progressive wager): neither the lobby nor table_info
    shows a meter the table does not offer."""
    await seed_catalog(TableCatalog(redis_client), parse_tables(TABLES))  # no jackpot read
    app = await start_app(tables=TABLES)
    assert PROGRESSIVE not in app.hosts["j1"].config.side_kinds
    client = await Client.hello(url(app))
    try:
        assert await _jackpots_shown(client, "j1") == (None, None)
        listed = await client.ok(ListTables)
        assert listed.jackpots == ()
        # Nor the meters a watcher is answered, nor their changes.
        assert await client.ok(WatchJackpots) == JackpotList(jackpots=())
        await contribute(JackpotStore(redis_client), 5)
        await asyncio.sleep(0.3)
        assert meters(client) == []
    finally:
        await client.close()


@pytest.mark.asyncio
async def test_a_table_changed_to_drop_its_jackpot_shows_none(
    start_app: StartApp, redis_client: redis.asyncio.Redis
) -> None:
    app = await start_app(tables=TABLES)
    client = await Client.hello(url(app))
    later = await Client.hello(url(app), label="later")
    try:
        assert await _jackpots_shown(client, "j1") == ("grand", "grand")
        assert await client.ok(WatchJackpots) == JackpotList((JackpotMeter("grand", 1000),))
        await change_table(TableCatalog(redis_client), "j1", {"side_bets": {"progressive": False}})
        await until(lambda: app.hosts["j1"].config.side_bets == (), 10, "the change heard")
        assert await _jackpots_shown(client, "j1") == (None, None)
        # A watcher answered the meter before gets its changes; one answered none since,
        # none (protocol/PROTOCOL.md, watch_jackpots: "one of them").
        assert await later.ok(WatchJackpots) == JackpotList(jackpots=())
        after = await contribute(JackpotStore(redis_client), 5)
        await heard(client, after)
        await asyncio.sleep(0.3)
        assert meters(later) == []
    finally:
        await client.close()
        await later.close()


@pytest.mark.asyncio
async def test_a_node_whose_file_names_no_jackpot_shows_the_one_its_tables_offer(
    start_app: StartApp, redis_client: redis.asyncio.Redis
) -> None:
    """The catalog seeded by a node whose file defines the jackpot; another node, its
    file without it, shows j1's jackpot (and its meter) as its settings offer it."""
    await start_app(tables=TABLES, node_name="a")
    b = await start_app(tables=quick_tables("j1", "plain", betting_ms=60_000), node_name="b")
    client = await Client.hello(url(b))
    try:
        assert await _jackpots_shown(client, "j1") == ("grand", "grand")
        after = await contribute(JackpotStore(redis_client), 12)
        assert b.jackpot_relay is not None
        await until(
            lambda: b.jackpot_relay is not None and b.jackpot_relay.meters["grand"] == after
        )
        listed = await client.ok(ListTables)
        assert listed.jackpots == (JackpotMeter("grand", after),)
    finally:
        await client.close()


class _HeldReads(JackpotStore):
    """The real store, each meters' read answered by Redis and then held until
    ``release`` (a read whose answer comes late, as under load)."""

    def __init__(self, client: redis.asyncio.Redis) -> None:
        super().__init__(client)
        self.answered = asyncio.Event()
        self.release = asyncio.Event()

    async def meters(self, names: list[str]) -> dict[str, int | None]:
        found = await super().meters(names)
        self.answered.set()
        await self.release.wait()
        return found


@pytest.mark.asyncio
async def test_a_read_after_subscribing_never_puts_an_older_meter_back(
    redis_client: redis.asyncio.Redis,
) -> None:
    """The relay subscribes, then reads the meter (changes published before were not
    heard); a change heard while that read's answer is on its way is newer: the late
    answer does not replace it."""
    store = JackpotStore(redis_client)
    before = await contribute(store, 10)
    held = _HeldReads(redis_client)
    relay = JackpotRelay(held, [JackpotOptions("grand", seed=1000, contribution_bps=10_000)])
    relay.start()
    try:
        await asyncio.wait_for(held.answered.wait(), 10)  # it read `before`, held
        after = await contribute(store, 27)
        await until(lambda: relay.meters["grand"] == after, 10, "the change heard")
        held.release.set()
        await until(lambda: not relay._reads, 10, "the read done")
        assert relay.meters["grand"] == after != before
    finally:
        held.release.set()
        await relay.stop()


@pytest.mark.asyncio
async def test_every_class_a_progressive_wager_pays_is_a_line_of_table_info(
    start_app: StartApp,
) -> None:
    """A progressive result's ``pay_class`` is a line of the side bet's pay table (a
    fixed amount) or of ``table_info.jackpot``'s (a share of the meter), never of
    both and never of neither (protocol/PROTOCOL.md, ``WagerResult``)."""
    app = await start_app(tables=TABLES)
    client = await Client.hello(url(app))
    try:
        info = await client.ok(GetTableInfo, table_id="j1")
        assert isinstance(info, TableInfo)
        assert info.jackpot is not None
        (side,) = [b for b in info.side_bets if b.kind == PROGRESSIVE]
        fixed = {line.bonus_class for line in side.paytable}
        meter = {line.bonus_class for line in info.jackpot.paytable if line.meter_bps}
        paying = {
            BONUS_CLASS_CODES[cls]
            for cls in progressive_pay_table(DEFAULT_PROGRESSIVE_PAY_TABLE).awards
        }
        assert fixed | meter == paying
        assert not fixed & meter
        assert "natural_7_card_straight_flush" in meter
    finally:
        await client.close()
