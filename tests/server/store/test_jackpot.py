"""The progressive jackpots' meters on the real Redis: contributions, hits, resets, each
once under retries, two hits at once from two clients, a crash between a hit's steps,
and the audit through all of it."""

from __future__ import annotations

import asyncio
import json
import signal
import sys
from collections.abc import Callable

import pytest
import redis.asyncio

from server.store.audit.check import audit
from server.store.audit.report import AuditReport
from server.store.client.replies import stream_entries
from server.store.jackpot.meters import JackpotStore, contribution_key, hit_key
from server.store.players.accounts import AccountStore
from server.store.tables.store import StoredTable

SEED = 1000
RATE = 2500  # a quarter of each wager goes to the meter


def no_tables(stored: StoredTable) -> tuple[int, int, int]:
    raise AssertionError("these tests store no table")


async def checked(client: redis.asyncio.Redis) -> AuditReport:
    report = await audit(client, no_tables)
    assert report.ok, report.explain()
    return report


@pytest.fixture
def jackpots(redis_client: redis.asyncio.Redis) -> JackpotStore:
    return JackpotStore(redis_client)


async def contribute(
    store: JackpotStore, round_no: int, seat: int = 0, wager: int = 4, table: str = "t1"
) -> int:
    done = await store.contribute(
        "grand",
        seed=SEED,
        contribution_bps=RATE,
        table_id=table,
        round_no=round_no,
        seat=seat,
        player="ann",
        wager=wager,
    )
    return done.chips


async def hit(
    store: JackpotStore,
    round_no: int,
    *,
    seat: int = 0,
    table: str = "t1",
    player: str = "ann",
    share: int = 10_000,
) -> tuple[int, int]:
    paid = await store.hit(
        "grand",
        seed=SEED,
        share_bps=share,
        table_id=table,
        round_no=round_no,
        seat=seat,
        player=player,
    )
    return paid.paid, paid.after


@pytest.mark.asyncio
async def test_the_meter_starts_at_its_seed_funded_by_the_house(
    jackpots: JackpotStore, redis_client: redis.asyncio.Redis
) -> None:
    assert not (await jackpots.read("grand")).started
    assert await contribute(jackpots, 1) == 1  # a quarter of 4 chips
    meter = await jackpots.read("grand")
    assert (meter.started, meter.meter, meter.seeded, meter.contributed) == (True, 1001, 1000, 1)
    assert await jackpots.names() == ["grand"]
    assert await jackpots.meters(["grand", "minor"]) == {"grand": 1001, "minor": None}
    report = await checked(redis_client)
    assert (report.meters_total, report.jackpot_house_total) == (1001, -1001)
    assert report.ledger_entries == 2  # the seed and the contribution
    assert "jackpots (1): meters 1001" in report.explain()


@pytest.mark.asyncio
async def test_a_contribution_is_counted_once_and_its_fractions_kept(
    jackpots: JackpotStore, redis_client: redis.asyncio.Redis
) -> None:
    # One chip a wager at 25 %: a quarter of a chip each time, whole every fourth.
    chips = [await contribute(jackpots, r, wager=1) for r in range(1, 9)]
    assert chips == [0, 0, 0, 1, 0, 0, 0, 1]
    again = await jackpots.contribute(
        "grand",
        seed=SEED,
        contribution_bps=RATE,
        table_id="t1",
        round_no=4,
        seat=0,
        player="ann",
        wager=1,
    )
    assert (again.applied, again.chips, again.meter) == (False, 1, 1002)
    # Retries of the rounds that made no whole chip do not move the fraction either.
    assert [await contribute(jackpots, r, wager=1) for r in (1, 2, 3)] == [0, 0, 0]
    meter = await jackpots.read("grand")
    assert (meter.meter, meter.frac, meter.contributed) == (1002, 0, 2)
    # The next wager starts a new quarter: three more are needed for a chip.
    assert [await contribute(jackpots, r, wager=1) for r in (9, 10, 11, 12)] == [0, 0, 0, 1]
    await checked(redis_client)


@pytest.mark.asyncio
async def test_a_hit_pays_the_meter_into_the_account_once_and_reseeds(
    jackpots: JackpotStore, redis_client: redis.asyncio.Redis
) -> None:
    accounts = AccountStore(redis_client)
    await accounts.credit("ann", 100, "op:ann")
    for r in range(1, 41):
        await contribute(jackpots, r, wager=10)  # 2 chips and a half each
    assert (await jackpots.read("grand")).meter == SEED + 100
    assert await hit(jackpots, 41) == (1100, SEED)
    assert await accounts.balance("ann") == 1200
    # The retry: the same payment, no second one.
    paid = await jackpots.hit(
        "grand", seed=SEED, share_bps=10_000, table_id="t1", round_no=41, seat=0, player="ann"
    )
    assert (paid.applied, paid.paid, paid.before, paid.after) == (False, 1100, 1100, SEED)
    assert await accounts.balance("ann") == 1200
    meter = await jackpots.read("grand")
    assert (meter.meter, meter.seeded, meter.paid, meter.hits) == (SEED, 2000, 1100, 1)
    assert await jackpots.pending("grand") == []
    # The account's ledger has the hit, under its key, joined by its transfer id.
    entries = stream_entries(await redis_client.xrange(jackpots.keys.account_ledger("ann")))
    last = {k: v.decode() for k, v in entries[-1][1].items()}
    key = hit_key("grand", "t1", 41, 0)
    assert (last["key"], last["kind"], last["amount"]) == (key, "jackpot", "1100")
    assert last["xfer"] == f"{key}.x"
    report = await checked(redis_client)
    assert report.accounts_total == 1200
    assert report.jackpot_house_total == -2100  # two seeds and 100 contributed


@pytest.mark.asyncio
async def test_a_share_of_the_meter_leaves_the_rest_and_tops_up_to_the_seed(
    jackpots: JackpotStore, redis_client: redis.asyncio.Redis
) -> None:
    for r in range(1, 401):
        await contribute(jackpots, r, wager=40)  # 10 chips each
    assert (await jackpots.read("grand")).meter == 5000
    assert await hit(jackpots, 401, share=1000) == (500, 4500)  # 10 %, nothing reset
    assert await hit(jackpots, 402, share=9000) == (4050, SEED)  # 450 left: topped up
    meter = await jackpots.read("grand")
    assert (meter.seeded, meter.paid) == (SEED + 550, 4550)
    await checked(redis_client)


@pytest.mark.asyncio
async def test_a_share_of_a_huge_meter_is_exact(
    jackpots: JackpotStore, redis_client: redis.asyncio.Redis
) -> None:
    big = 999_999_999_997  # meter * share passes 2**53: the script splits it
    paid = await jackpots.hit(
        "huge", seed=big, share_bps=9_999, table_id="t1", round_no=1, seat=2, player="ann"
    )
    assert paid.paid == big * 9_999 // 10_000
    await checked(redis_client)


@pytest.mark.asyncio
async def test_two_hits_at_once_from_two_nodes_are_paid_in_the_order_redis_runs_them(
    new_client: Callable[[], redis.asyncio.Redis], redis_client: redis.asyncio.Redis
) -> None:
    first, second = new_client(), new_client()
    try:
        nodes = [JackpotStore(first), JackpotStore(second)]
        for game in range(5):
            for r in range(1, 21):
                await contribute(nodes[r % 2], 1000 * game + r, wager=20)  # 5 chips each
            meter = (await nodes[0].read("grand")).meter
            hits = await asyncio.gather(
                nodes[0].hit(
                    "grand",
                    seed=SEED,
                    share_bps=10_000,
                    table_id="north",
                    round_no=game,
                    seat=1,
                    player="ann",
                ),
                nodes[1].hit(
                    "grand",
                    seed=SEED,
                    share_bps=10_000,
                    table_id="south",
                    round_no=game,
                    seat=3,
                    player="bob",
                ),
            )
            # One was paid the whole meter, the other the seed it was reset to.
            assert sorted(h.paid for h in hits) == [SEED, meter]
            before = sorted(h.before for h in hits)
            assert before == [SEED, meter]
            assert all(h.after == SEED for h in hits)
        await checked(redis_client)
        accounts = AccountStore(redis_client)
        total = (await accounts.balance("ann") or 0) + (await accounts.balance("bob") or 0)
        assert total == (await nodes[0].read("grand")).paid
    finally:
        await first.aclose()
        await second.aclose()


@pytest.mark.asyncio
async def test_a_crash_between_the_payment_and_the_account(
    jackpots: JackpotStore, redis_client: redis.asyncio.Redis
) -> None:
    accounts = AccountStore(redis_client)
    for r in range(1, 5):
        await contribute(jackpots, r, wager=100)
    step = await jackpots.hit_step(
        "grand", seed=SEED, share_bps=10_000, table_id="t1", round_no=9, seat=4, player="cy"
    )
    assert (step.paid, step.balance) == (1100, None)
    # The process dies here: the payment left the meter, the account lacks it.
    assert await accounts.balance("cy") is None
    report = await checked(redis_client)
    assert report.to_accounts == 1100
    # Another node finishes it, once; the table's retry of the hit changes nothing more.
    assert await jackpots.deliver_pending() == 1
    assert await jackpots.deliver_pending() == 0
    assert await accounts.balance("cy") == 1100
    assert await hit(jackpots, 9, seat=4, player="cy") == (1100, SEED)
    assert await accounts.balance("cy") == 1100
    report = await checked(redis_client)
    assert report.in_transit == 0


@pytest.mark.asyncio
async def test_a_retried_hit_finishes_its_own_delivery(
    jackpots: JackpotStore, redis_client: redis.asyncio.Redis
) -> None:
    await jackpots.hit_step(
        "grand", seed=SEED, share_bps=10_000, table_id="t1", round_no=1, seat=0, player="cy"
    )
    paid = await jackpots.hit(
        "grand", seed=SEED, share_bps=10_000, table_id="t1", round_no=1, seat=0, player="cy"
    )
    assert (paid.applied, paid.paid, paid.balance) == (False, SEED, SEED)
    assert await jackpots.pending("grand") == []
    await checked(redis_client)


@pytest.mark.asyncio
async def test_the_audit_finds_a_meter_changed_behind_its_back(
    jackpots: JackpotStore, redis_client: redis.asyncio.Redis
) -> None:
    await contribute(jackpots, 1)
    name = jackpots.keys.jackpot("grand")
    await redis_client.hincrby(name, "meter", 50)
    report = await audit(redis_client, no_tables)
    text = report.explain()
    assert "jackpot grand: the meter shows 1051, but 1000 seeded + 1 contributed" in text
    assert "chips do not add up" in text
    # Changed with its totals, so that they agree: the ledger replay disagrees.
    await redis_client.hincrby(name, "contributed", 50)
    report = await audit(redis_client, no_tables)
    assert "jackpot grand: contributed 51, its ledger says 1" in report.explain()
    assert not report.ok


@pytest.mark.asyncio
async def test_bad_arguments_write_nothing(
    jackpots: JackpotStore, redis_client: redis.asyncio.Redis
) -> None:
    base: dict[str, object] = {
        "seed": SEED,
        "contribution_bps": RATE,
        "table_id": "t1",
        "round_no": 1,
        "seat": 0,
        "player": "ann",
        "wager": 1,
    }
    changes: list[tuple[str, dict[str, object]]] = [
        ("gr{and}", {}),
        ("grand", {"wager": 0}),
        ("grand", {"contribution_bps": 10_001}),
        ("grand", {"seed": -1}),
        ("grand", {"player": "a:b"}),
        ("grand", {"table_id": "t{1}"}),
        ("grand", {"wager": True}),
    ]
    for name, change in changes:
        with pytest.raises(ValueError, match=r"jackpot's name|whole number|player name|table id"):
            await jackpots.contribute(name, **{**base, **change})  # type: ignore[arg-type]
    with pytest.raises(ValueError, match=r"a share is a whole number 1\.\.10000"):
        await jackpots.hit(
            "grand", seed=SEED, share_bps=0, table_id="t1", round_no=1, seat=0, player="ann"
        )
    assert await redis_client.dbsize() == 0


def test_keys_name_each_place_once() -> None:
    assert contribution_key("grand", "t1", 7, 2) == "jackpot:grand:contribution:t1:7:2"
    assert hit_key("grand", "t1", 7, 2) != hit_key("grand", "t1", 7, 3)


_KILLED_AFTER_THE_PAYMENT = """
import asyncio, os, signal, sys
from server.store.client.connection import redis_client
from server.store.jackpot.meters import JackpotStore

async def main() -> None:
    store = JackpotStore(redis_client(sys.argv[1], 4, 5.0))
    await store.hit_step(
        "grand", seed=1000, share_bps=10000, table_id="t1", round_no=7, seat=2, player="dee"
    )
    # Killed where hit() would deliver: the payment is out of the meter, not in the account.
    os.kill(os.getpid(), signal.SIGKILL)

asyncio.run(main())
"""


@pytest.mark.asyncio
async def test_a_process_killed_between_the_payment_and_the_account(
    jackpots: JackpotStore, redis_client: redis.asyncio.Redis, redis_url: str
) -> None:
    for r in range(1, 5):
        await contribute(jackpots, r, wager=100)
    child = await asyncio.create_subprocess_exec(
        sys.executable, "-c", _KILLED_AFTER_THE_PAYMENT, redis_url
    )
    assert await asyncio.wait_for(child.wait(), 60) == -signal.SIGKILL
    accounts = AccountStore(redis_client)
    assert await accounts.balance("dee") is None
    report = await checked(redis_client)
    assert report.to_accounts == 1100
    assert (await jackpots.read("grand")).meter == SEED
    # The table's holder after it retries the hit: the same payment, delivered once.
    paid = await jackpots.hit(
        "grand", seed=SEED, share_bps=10_000, table_id="t1", round_no=7, seat=2, player="dee"
    )
    assert (paid.applied, paid.paid, paid.balance) == (False, 1100, 1100)
    assert await accounts.balance("dee") == 1100
    assert (await checked(redis_client)).in_transit == 0


@pytest.mark.asyncio
async def test_each_change_of_the_meter_is_published(
    jackpots: JackpotStore, new_client: Callable[[], redis.asyncio.Redis]
) -> None:
    listener = new_client()
    pubsub = listener.pubsub()
    try:
        await pubsub.subscribe(jackpots.keys.jackpot_channel("grand"))
        await contribute(jackpots, 1, wager=4)  # 1 chip: the meter, seeded, shows 1001
        await contribute(jackpots, 1, wager=4)  # a retry: nothing changes, nothing sent
        await contribute(jackpots, 2, wager=1)  # a quarter of a chip: nothing shown yet
        await hit(jackpots, 3)  # paid and reset to the seed
        heard: list[bytes] = []
        for _ in range(50):
            message = await pubsub.get_message(ignore_subscribe_messages=True, timeout=0.2)
            if message is not None:
                heard.append(message["data"])
            if len(heard) == 2:
                break
        assert heard == [b"1001", b"1000"]
    finally:
        await pubsub.aclose()
        await listener.aclose()


_NODE_HITS = """
import asyncio, json, sys
from server.store.client.connection import redis_client
from server.store.jackpot.meters import JackpotStore

async def main() -> None:
    url, table, player, go = sys.argv[1:5]
    client = redis_client(url, 4, 30.0)
    store = JackpotStore(client)
    await client.blpop([go], timeout=30)  # both processes start their hit at once
    paid = await store.hit(
        "grand", seed=1000, share_bps=10000, table_id=table, round_no=1, seat=0, player=player
    )
    print(json.dumps([paid.paid, paid.before, paid.after, paid.balance]))

asyncio.run(main())
"""


@pytest.mark.asyncio
async def test_two_processes_hitting_at_once(
    jackpots: JackpotStore, redis_client: redis.asyncio.Redis, redis_url: str
) -> None:
    for r in range(1, 21):
        await contribute(jackpots, r, wager=20)  # 5 chips each: the meter shows 1100
    go = "test:jackpot:go"
    nodes = [
        await asyncio.create_subprocess_exec(
            sys.executable,
            "-c",
            _NODE_HITS,
            redis_url,
            table,
            player,
            go,
            stdout=asyncio.subprocess.PIPE,
        )
        for table, player in (("north", "ann"), ("south", "bob"))
    ]
    await redis_client.rpush(go, 1, 1)
    outputs = [await asyncio.wait_for(n.communicate(), 60) for n in nodes]
    assert [n.returncode for n in nodes] == [0, 0]
    paid = sorted(json.loads(out) for out, _ in outputs)
    # The first committed took the whole meter, the second the seed it was reset to.
    assert paid == [[SEED, SEED, SEED, SEED], [1100, 1100, SEED, 1100]]
    meter = await jackpots.read("grand")
    assert (meter.meter, meter.paid, meter.hits, meter.seeded) == (SEED, 2100, 2, 3000)
    assert (await checked(redis_client)).accounts_total == 2100


@pytest.mark.asyncio
async def test_a_retry_naming_another_player_pays_no_one_else(
    jackpots: JackpotStore, redis_client: redis.asyncio.Redis
) -> None:
    await jackpots.hit_step(
        "grand", seed=SEED, share_bps=10_000, table_id="t1", round_no=1, seat=0, player="ann"
    )
    # A buggy retry of the same seat's hit with another name: ann's payment, to ann.
    paid = await jackpots.hit(
        "grand", seed=SEED, share_bps=10_000, table_id="t1", round_no=1, seat=0, player="bob"
    )
    assert (paid.applied, paid.player, paid.paid, paid.balance) == (False, "ann", SEED, SEED)
    accounts = AccountStore(redis_client)
    assert (await accounts.balance("ann"), await accounts.balance("bob")) == (SEED, None)
    await checked(redis_client)
