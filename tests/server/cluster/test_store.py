"""What several nodes keep in Redis (``server/store/nodes/shared.py``): registrations, the
filtered replay, the holder's publications, where players are connected. Here, not
beside the store's other tests: those run on a Redis Cluster too (``make test``), and
several nodes need one Redis (docs/DESIGN.md, "Several nodes on one Redis")."""

from __future__ import annotations

import asyncio

import pytest
import redis.asyncio
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from server.cluster.registry import Membership
from server.host.fanout import frame_for, pack_outbound
from server.store.nodes.shared import ClusterStore
from server.store.tables.store import TableStore
from tests.helpers import until
from tests.server.store.helpers import T, lease, next_commit


@pytest.fixture
def cluster(redis_client: redis.asyncio.Redis) -> ClusterStore:
    return ClusterStore(redis_client)


@pytest.fixture
def store(redis_client: redis.asyncio.Redis) -> TableStore:
    return TableStore(redis_client, events_cap=5, log_cap=4)


@pytest.mark.asyncio
async def test_registrations_run_out_by_redis_clock(cluster: ClusterStore) -> None:
    first = await cluster.beat("n1#a", 60_000, {"name": "n1", "url": "ws://h:1/"})
    assert first.instances == ["n1#a"]
    assert first.expires["n1#a"] - first.now == 60_000
    short = await cluster.beat("n2#b", 50, {"name": "n2"})
    assert short.instances == ["n1#a", "n2#b"]
    assert (await cluster.node_info(["n1#a"]))["n1#a"] == {"name": "n1", "url": "ws://h:1/"}

    async def gone() -> bool:
        return (await cluster.live_nodes()).instances == ["n1#a"]

    await until(gone, 5, "the short registration to run out")
    assert (await cluster.node_info(["n2#b"]))["n2#b"] == {}  # its hash expired with it
    await cluster.leave("n1#a")
    assert (await cluster.live_nodes()).instances == []


@pytest.mark.asyncio
async def test_the_holder_publishes_its_summary_seats_and_messages_in_order(
    cluster: ClusterStore, redis_client: redis.asyncio.Redis
) -> None:
    keys = cluster.keys
    async with redis_client.pubsub() as pubsub:
        await pubsub.subscribe(keys.player_channel("ann"), keys.table_channel(T))
        for _ in range(2):
            assert await pubsub.get_message(timeout=2.0) is not None  # subscribed
        messages = [(keys.player_channel("ann"), b"cards"), (keys.table_channel(T), b"event")]
        await cluster.publish_commit(T, b"summary", ["ann", "bob"], [], messages)
        got: list[tuple[str, bytes]] = []
        while len(got) < 2:
            message = await pubsub.get_message(ignore_subscribe_messages=True, timeout=2.0)
            assert message is not None
            got.append((message["channel"].decode(), message["data"]))
    assert got == messages
    assert await cluster.summaries([T, "other"]) == {T: b"summary"}
    assert await cluster.seated_tables("ann") == [T]
    await cluster.publish_commit(T, None, [], ["ann"], [])
    assert await cluster.seated_tables("ann") == []
    assert await cluster.seated_tables("bob") == [T]
    assert await cluster.summaries([T]) == {T: b"summary"}  # None: kept as it was


@pytest.mark.asyncio
async def test_where_a_player_is_connected(cluster: ClusterStore) -> None:
    await cluster.connected("ann", "n1#a", True)
    await cluster.connected("ann", "n2#b", True)
    assert await cluster.connected_on("ann") == ["n1#a", "n2#b"]
    await cluster.connected("ann", "n1#a", False)
    assert await cluster.connected_on("ann") == ["n2#b"]
    assert await cluster.connected_on("bob") == []


@pytest.mark.asyncio
async def test_watchers_per_node(cluster: ClusterStore) -> None:
    await cluster.set_watchers("n1#a", {T: 3, "u": 1}, 60_000)
    await cluster.set_watchers("n2#b", {T: 2}, 60_000)
    await cluster.set_watchers("n1#a", {"u": 0}, 60_000)
    assert await cluster.watchers([T, "u"]) == {T: {"n1#a": 3, "n2#b": 2}, "u": {}}


frames = st.binary(min_size=1, max_size=70_000)  # long enough for each msgpack length form
players = st.sampled_from(["ann", "bob", "a" * 40])


# One client for every example: each one flushes the database first.
@settings(
    max_examples=25, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(
    st.lists(
        st.tuples(frames, st.dictionaries(players, frames, max_size=3)), min_size=1, max_size=4
    )
)
@pytest.mark.asyncio
async def test_the_filtered_replay_gives_what_frame_for_gives(
    redis_client: redis.asyncio.Redis,
    events: list[tuple[bytes, dict[str, bytes]]],
) -> None:
    """``EVENTS_FOR`` reads the stored events in Lua: for each player asked, exactly the
    frame the holder would send them; nobody else's private frame."""
    await redis_client.flushdb()
    store = TableStore(redis_client)
    cluster = ClusterStore(redis_client)
    token = await lease(store)
    stored = [pack_outbound(e) for e in events]
    await next_commit(store, token, events=list(enumerate(stored, start=1)))
    replay = await cluster.events_for(T, 0, ["ann", "zed"])
    assert replay is not None
    assert [seq for seq, _, _ in replay.events] == list(range(1, len(events) + 1))
    for (_, public, private), blob in zip(replay.events, stored, strict=True):
        assert public == frame_for(blob, None)
        assert set(private) <= {"ann"}
        assert private.get("ann", public) == frame_for(blob, "ann")
    assert await cluster.events_for(T, len(events), ["ann"]) is not None
    assert (await cluster.events_for(T, len(events), ["ann"])).events == []  # type: ignore[union-attr]
    assert await cluster.events_for(T, len(events) + 1, []) is None


@pytest.mark.asyncio
async def test_the_filtered_replay_says_when_it_no_longer_reaches_back(
    store: TableStore, cluster: ClusterStore
) -> None:
    token = await lease(store)  # the store keeps 5 entries: 5 commits' events
    for version in range(6):
        seqs = (2 * version + 1, 2 * version + 2)
        events = [(s, pack_outbound((b"e%d" % s, {}))) for s in seqs]
        await next_commit(store, token, after=version, events=events)
    assert await cluster.events_for(T, 1, []) is None
    for after in (2, 3, 10):  # from an entry's first event, from its second one
        replay = await cluster.events_for(T, after, [])
        assert replay is not None
        assert [(s, p) for s, p, _ in replay.events] == [
            (n, b"e%d" % n) for n in range(after + 1, 13)
        ]


@pytest.mark.asyncio
async def test_a_lapse_is_said_only_where_another_node_could_take_this_one_for_dead(
    cluster: ClusterStore, store: TableStore
) -> None:
    """A node whose registration ran out says so (its players' seats are brought in
    line: a walk over all of them) when another node was live before or after; a node
    alone throughout had nobody take it for dead, and says nothing."""
    lapses: list[str] = []

    def membership(instance: str) -> Membership:
        return Membership(
            cluster,
            store,
            ["t1"],
            instance,
            {"name": instance},
            100,
            on_placed=lambda: None,
            on_lapsed=lambda: lapses.append(instance),
            on_handed_over=lambda table, to: None,
            on_changed=lambda came, gone: None,
        )

    alone = membership("a#1")
    assert await alone._register() is not None
    await asyncio.sleep(0.3)  # paused past its registration, nobody else there
    assert await alone._register() is not None
    assert lapses == []
    await cluster.beat("b#2", 60_000, {"name": "b"})  # another node, live meanwhile
    await asyncio.sleep(0.3)
    assert await alone._register() is not None
    assert lapses == ["a#1"]
    await cluster.leave("a#1")
    await cluster.leave("b#2")


@pytest.mark.asyncio
async def test_one_instance_at_a_time_holds_a_node_name(cluster: ClusterStore) -> None:
    """A process starting under a name takes it: the instance that held it (its
    earlier life) is no longer live, and that one's renewals are refused from then on,
    nothing written; another name is untouched."""
    old = await cluster.beat("n#old", 60_000, {"name": "n"}, name="n", take=True)
    assert (old.refused, old.set_aside, old.instances) == (False, None, ["n#old"])
    assert not (await cluster.beat("n#old", 60_000, {"name": "n"}, name="n")).refused
    await cluster.beat("m#1", 60_000, {"name": "m"}, name="m", take=True)

    new = await cluster.beat("n#new", 60_000, {"name": "n"}, name="n", take=True)
    assert (new.refused, new.set_aside, new.instances) == (False, "n#old", ["m#1", "n#new"])
    refused = await cluster.beat("n#old", 60_000, {"name": "n", "url": "x"}, name="n")
    assert refused.refused
    assert refused.instances == ["m#1", "n#new"]  # not registered again
    assert (await cluster.node_info(["n#old"]))["n#old"] == {"name": "n"}  # not written
    renewed = await cluster.beat("n#new", 60_000, {"name": "n"}, name="n")
    assert not renewed.refused
    assert renewed.set_aside is None
    for instance in ("m#1", "n#new", "n#old"):
        await cluster.leave(instance)


@pytest.mark.asyncio
async def test_a_restarted_node_sets_its_earlier_life_aside_and_a_live_one_steps_back(
    cluster: ClusterStore, store: TableStore
) -> None:
    """The first registration of a process under a node's name sets aside the instance
    that held the name: the new one does not count it live (nor waits for it). If that
    earlier instance is in fact alive, its next heartbeat finds the name taken: it
    stops being a node (it wants no table, it registers no more)."""

    def membership(instance: str) -> Membership:
        return Membership(
            cluster,
            store,
            ["t1", "t2"],
            instance,
            {"name": "n"},
            60_000,
            on_placed=lambda: None,
            on_lapsed=lambda: None,
            on_handed_over=lambda table, to: None,
            on_changed=lambda came, gone: None,
        )

    earlier = membership("n#1")
    await earlier.beat()
    assert earlier.live == ["n#1"]
    assert earlier.wants("t1")
    assert earlier.wants("t2")
    token = await store.leases.acquire("t1", "n#1", 60_000)
    assert token is not None
    await store.leases.acquire("t2", "m#9", 60_000)  # another node's: left alone

    later = membership("n#2")
    await later.beat()
    assert later.set_aside == "n#1"
    # Its leases given up: the table is taken now, not when the lease runs out; one
    # that is not its own is left as it is.
    assert await store.leases.holder("t1") is None
    held = await store.leases.holder("t2")
    assert held is not None
    assert held[1] == "m#9"
    assert not await store.leases.renew("t1", "n#1", token, 60_000)  # fenced
    assert await store.leases.acquire("t1", "n#2", 60_000) == token + 1
    assert later.live == ["n#2"]
    assert later.wants("t1")
    assert later.wants("t2")

    await earlier.beat()  # alive after all: its renewal is refused
    assert earlier.retired
    assert earlier.draining
    assert not earlier.wants("t1")
    assert not earlier.wants("t2")
    assert not earlier.registered
    await earlier.beat()  # and stays out
    assert (await cluster.live_nodes()).instances == ["n#2"]
    await later.beat()
    assert not later.retired
    await cluster.leave("n#2")
