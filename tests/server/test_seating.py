"""The index of who sits where, kept by the hosts as their states change."""

from __future__ import annotations

import pytest
import redis.asyncio

from server.host import TableHost
from server.seating import Seating
from server.store.players.accounts import AccountStore
from server.store.tables.store import TableStore
from server.table.events import Event, PlaceBet, SitDown, StandUp
from server.table.machine import step
from server.table.state import TableConfig, TableState, new_table
from tests.server.table.helpers import seed

pytestmark = pytest.mark.asyncio


def _host(client: redis.asyncio.Redis, table_id: str, seating: Seating[TableHost]) -> TableHost:
    return TableHost(
        TableConfig(table_id=table_id, name=table_id),
        TableStore(client),
        "owner",
        accounts=AccountStore(client),
        seating=seating,
    )


def _apply(host: TableHost, *events: Event) -> None:
    """What a commit does to the host's state (the state machine, then ``state =``)."""
    state: TableState = host.state if host.state is not None else new_table(host.config)
    for event in events:
        state = step(state, event, 1_000).state
        host.state = state


def _sit(player: str, seat: int | None = None) -> SitDown:
    return SitDown(player, player.title(), seat, 500, seed(1))


async def test_hosts_follow_sitting_down_and_standing_up(
    redis_client: redis.asyncio.Redis,
) -> None:
    seating = Seating[TableHost]()
    a, b = _host(redis_client, "a", seating), _host(redis_client, "b", seating)
    assert seating.hosts_of("ann") == []
    _apply(b, _sit("ann"))
    _apply(a, _sit("ann"), _sit("bob"))
    assert seating.hosts_of("ann") == [b, a]  # in the order they seated her
    assert seating.hosts_of("bob") == [a]
    _apply(b, StandUp("ann"))  # between rounds: at once
    assert seating.hosts_of("ann") == [a]
    _apply(a, StandUp("ann"), StandUp("bob"))
    assert seating.hosts_of("ann") == []
    assert seating.hosts_of("bob") == []


async def test_a_change_that_keeps_the_seats_changes_nothing(
    redis_client: redis.asyncio.Redis,
) -> None:
    seating = Seating[TableHost]()
    host = _host(redis_client, "a", seating)
    _apply(host, _sit("ann", 2))
    _apply(host, PlaceBet("ann", 10, 0))  # a new seat object for ann, same player
    assert seating.hosts_of("ann") == [host]


async def test_a_loaded_or_dropped_state_is_indexed_as_a_whole(
    redis_client: redis.asyncio.Redis,
) -> None:
    seating = Seating[TableHost]()
    first = _host(redis_client, "a", seating)
    _apply(first, _sit("ann"), _sit("bob"))
    stored = first.state
    first.state = None  # e.g. a host that gave its table up
    assert seating.hosts_of("ann") == []
    second = _host(redis_client, "a", seating)
    second.state = stored  # loaded as stored (a takeover)
    assert seating.hosts_of("ann") == [second]
    assert seating.hosts_of("bob") == [second]
