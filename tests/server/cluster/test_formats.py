"""Releases side by side on one Redis (``server/store/nodes/formats.py``): a newer stored
format is switched on only once every live node announces that it reads it; a node that
announces nothing (a node of 0.1.0) holds every format back until it leaves; a format
on stays on, and a node that does not read it refuses to start."""

from __future__ import annotations

import pytest
import redis.asyncio

from server.cluster.registry import Membership
from server.store import FORMATS, FormatsAhead, announcement
from server.store.nodes.formats import OLDEST, read_by_all, reads_of
from server.store.nodes.shared import ClusterStore
from server.store.tables.store import TableStore
from server.version import SERVER_VERSION

NEW = frozenset({"format-b"})
"""A format of a release later than 0.1.0, for the test (the real ones are named in
FORMATS)."""


@pytest.fixture
def cluster(redis_client: redis.asyncio.Redis) -> ClusterStore:
    return ClusterStore(redis_client)


def membership(cluster: ClusterStore, instance: str, reads: frozenset[str]) -> Membership:
    return Membership(
        cluster,
        TableStore(cluster.redis),
        ["t1"],
        instance,
        {"name": instance.partition("#")[0]},
        60_000,
        on_placed=lambda: None,
        on_lapsed=lambda: None,
        on_handed_over=lambda table, to: None,
        on_changed=lambda came, gone: None,
        reads=reads,
    )


def test_a_node_that_announces_nothing_reads_none_of_the_named_formats() -> None:
    assert reads_of({"name": "n", "url": "ws://x/", "started": "1"}) == OLDEST == frozenset()
    assert reads_of(announcement("0.2.0", {"b", "a"})) == {"a", "b"}
    assert announcement("0.2.0", {"b", "a"}) == {"release": "0.2.0", "reads": "a,b"}
    assert reads_of(announcement("0.2.0", ())) == frozenset()
    assert read_by_all([announcement("0.3.0", {"a", "b"}), announcement("0.2.0", {"a"})]) == {"a"}
    assert read_by_all([announcement("0.3.0", {"a"}), {"name": "old"}]) == frozenset()


@pytest.mark.asyncio
async def test_a_node_announces_its_release_and_what_it_reads(cluster: ClusterStore) -> None:
    node = membership(cluster, "n1#1", frozenset(FORMATS))
    await node.start()
    try:
        info = (await cluster.node_info(["n1#1"]))["n1#1"]
        assert info["release"] == SERVER_VERSION
        assert reads_of(info) == frozenset(FORMATS)
        assert info["name"] == "n1"
        # Alone, it switched on every format it reads.
        assert cluster.formats_on == frozenset(FORMATS)
    finally:
        await node.stop()
        await cluster.leave("n1#1")


@pytest.mark.asyncio
async def test_an_old_node_holds_a_newer_format_back_until_it_leaves(
    cluster: ClusterStore, redis_client: redis.asyncio.Redis
) -> None:
    # A node of 0.1.0: it registers with its name, url and start, and nothing else.
    await cluster.beat("old#1", 60_000, {"name": "old", "url": "ws://x/", "started": "1"})
    new = membership(cluster, "new#1", NEW)
    await new.start()
    try:
        assert new.store.formats_on == frozenset()
        await new.beat()
        assert new.store.formats_on == frozenset()  # still held back
        assert await redis_client.smembers(cluster.keys.formats()) == set()
        # A node of a release between reads none of NEW either.
        await cluster.beat("mid#1", 60_000, announcement("0.2.0", {"format-a"}))
        await cluster.leave("old#1")
        await new.beat()
        assert new.store.formats_on == frozenset()
        await cluster.leave("mid#1")
        await new.beat()
        assert new.store.formats_on == NEW  # every live node reads it now
        assert await redis_client.smembers(cluster.keys.formats()) == {b"format-b"}
        # It stays on: a node that does not read it refuses to start, registering nothing.
        older = membership(cluster, "older#1", frozenset({"format-a"}))
        with pytest.raises(FormatsAhead, match="format-b"):
            await older.start()
        assert (await cluster.live_nodes()).instances == ["new#1"]
        # One that reads it starts.
        peer = membership(cluster, "peer#1", NEW | {"format-c"})
        await peer.start()
        await peer.stop()
        await cluster.leave("peer#1")
    finally:
        await new.stop()
        await cluster.leave("new#1")


@pytest.mark.asyncio
async def test_the_switch_is_refused_when_the_live_nodes_changed_since_they_were_read(
    cluster: ClusterStore, redis_client: redis.asyncio.Redis
) -> None:
    """The check and the switch are one script over the live nodes as they are then: a
    node that registered between the caller's read and its switch is not overlooked."""
    await cluster.beat("new#1", 60_000, announcement("9.0.0", NEW))
    keys = [cluster.keys.nodes(), cluster.keys.formats(), cluster.keys.node("new#1")]
    # An old node registers after new#1 read the live nodes (just new#1).
    await cluster.beat("old#1", 60_000, {"name": "old"})
    reply = await cluster._formats_switch(keys=keys, args=[1, "new#1", "format-b"])
    assert reply == [b"changed"]
    assert await redis_client.smembers(cluster.keys.formats()) == set()
    # With both read, the old one's hash lists nothing: refused as well.
    both = [*keys[:2], cluster.keys.node("new#1"), cluster.keys.node("old#1")]
    reply = await cluster._formats_switch(keys=both, args=[2, "new#1", "old#1", "format-b"])
    assert reply == [b"changed"]
    await cluster.leave("old#1")
    assert await cluster.switch_formats(NEW) == NEW
    await cluster.leave("new#1")
