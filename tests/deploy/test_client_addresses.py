"""Real client addresses through the real HAProxy (deploy/haproxy.cfg, as the local
topology writes it): the balancer passes each client's address (``option forwardfor``),
the node believes it from the balancer only, and counts two clients of two addresses
apart; a forwarding header sent straight to the node by an untrusted peer is ignored,
and so is one a client sends through the balancer."""

from __future__ import annotations

import asyncio
import subprocess
from collections.abc import Iterator
from pathlib import Path

import pytest

from protocol.errors import CloseCode
from tests.deploy.test_local_cluster import SCRIPT, Topology
from tests.server.helpers import Client, close_all

ONE = ("127.0.0.1", 0)
TWO = ("127.0.0.2", 0)
REFUSED = "too many connections from your address"


@pytest.fixture
def one_node(tmp_path: Path) -> Iterator[Topology]:
    up = Topology(tmp_path / "cluster")
    up.env.update(
        {
            "PAIGOW_CLUSTER_NODES": "1",
            # HAProxy reaches the node from 127.0.0.1: the one trusted proxy.
            "PAIGOW_TRUSTED_PROXIES": "127.0.0.1",
            "PAIGOW_CONNECTIONS_PER_ADDRESS": "1",
        }
    )
    try:
        yield up
    finally:
        subprocess.run(
            [str(SCRIPT), "down"], env=up.env, capture_output=True, timeout=120, check=False
        )


async def refused(url: str, **kwargs: object) -> str:
    client = await Client.open(url, **kwargs)  # type: ignore[arg-type]
    try:
        closed = await client.wait_closed()
        assert closed.code == CloseCode.TRY_AGAIN_LATER
        return closed.reason
    finally:
        await client.close()


@pytest.mark.asyncio
async def test_two_addresses_through_the_balancer_are_counted_apart(one_node: Topology) -> None:
    await asyncio.to_thread(one_node.run, "up")
    balancer = one_node.url
    node = f"ws://127.0.0.1:{one_node.node_port}/"
    clients = []
    try:
        # One connection per address: both through the balancer, each its own address.
        first = await Client.hello(balancer, local_addr=ONE)
        clients.append(first)
        second = await Client.hello(balancer, local_addr=TWO)
        clients.append(second)
        assert first.welcome is not None
        assert second.welcome is not None
        # The first address again: at its limit, as the node counts it.
        assert await refused(balancer, local_addr=ONE) == REFUSED
        # A header the client writes itself, through the balancer: the balancer's own
        # (appended last) counts, so 127.0.0.2 is still at its limit.
        forged = {"X-Forwarded-For": "198.51.100.1"}
        assert await refused(balancer, local_addr=TWO, additional_headers=forged) == REFUSED
        # Straight to the node from 127.0.0.2 (not a trusted proxy), claiming another
        # address: ignored, it counts as 127.0.0.2, and is refused for that...
        forged = {"X-Forwarded-For": "198.51.100.2"}
        assert await refused(node, local_addr=TWO, additional_headers=forged) == REFUSED
        # ...and once 127.0.0.2's place is free, claiming 127.0.0.1's (full) does not
        # refuse it: welcomed as itself.
        await second.close()
        await asyncio.sleep(0.5)
        forged = {"X-Forwarded-For": "127.0.0.1"}
        direct = await Client.hello(node, local_addr=TWO, additional_headers=forged)
        clients.append(direct)
        assert direct.welcome is not None
    finally:
        await close_all(clients)
