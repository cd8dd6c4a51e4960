"""Every server message of the protocol's vectors goes through the client without error."""

from __future__ import annotations

from dataclasses import replace

import pytest

from clients import handrank
from clients.core import Client, Notice
from clients.model import Applied, TableModel
from clients.text import describe, to_json
from protocol.codec import decode_server, encode
from protocol.messages import TABLE_EVENTS, SeedReveal, Snapshot, TableEvent
from protocol.vectors import SERVER_TO_CLIENT, load_vectors
from server.rules.splits import split_with_low
from server.rules.values import high_name, low_name

VECTORS = [v for v in load_vectors("messages") if v["direction"] == SERVER_TO_CLIENT]


def _snapshot() -> Snapshot:
    for v in VECTORS:
        message = decode_server(bytes.fromhex(v["hex"]))
        if isinstance(message, Snapshot) and message.your_cards:
            return message
    raise AssertionError("no snapshot with cards in the vectors")


def test_every_table_event_type_is_in_the_vectors() -> None:
    types = {type(decode_server(bytes.fromhex(v["hex"]))) for v in VECTORS}
    assert set(TABLE_EVENTS) <= types


@pytest.mark.parametrize("vector", VECTORS, ids=[v["name"] for v in VECTORS])
def test_the_model_applies_each_table_event(vector: dict[str, object]) -> None:
    message = decode_server(bytes.fromhex(str(vector["hex"])))
    if not isinstance(message, TABLE_EVENTS):
        return  # replies: see test_the_client_handles_every_server_frame
    event: TableEvent = message
    assert describe(event) is not None or event.TYPE == "hidden"
    assert to_json(event)["type"] == event.TYPE
    model = TableModel(event.table_id, player_id="p-ana")
    base = replace(_snapshot(), table_id=event.table_id, seq=max(0, event.seq - 1))
    assert model.apply(base) is Applied.APPLIED
    if not isinstance(event, Snapshot) and event.seq == 0:
        return  # nothing can come before seq 0 but a snapshot
    assert model.apply(event) is Applied.APPLIED
    assert model.seq == event.seq


@pytest.mark.asyncio
async def test_the_client_handles_every_server_frame() -> None:
    client = Client("ws://127.0.0.1:9/")  # never connected: frames are fed to it
    queue = client.listen()
    for vector in VECTORS:
        client.feed(bytes.fromhex(vector["hex"]))
    seen = []
    while not queue.empty():
        seen.append(queue.get_nowait())
    assert any(isinstance(e, Notice) for e in seen)  # errors with no request of ours
    await client.close()


def test_the_worked_example_verifies() -> None:
    snapshot = _snapshot()
    model = TableModel(snapshot.table_id)
    model.apply(snapshot)
    seed = next(
        m
        for m in (decode_server(bytes.fromhex(v["hex"])) for v in VECTORS)
        if isinstance(m, SeedReveal)
    )
    assert model.apply(replace(seed, seq=snapshot.seq + 1)) is Applied.APPLIED
    assert model.verification is not None
    assert model.verification.ok, model.verification
    # A seed that does not match the commitment is caught.
    model.apply(snapshot)
    bad = replace(seed, seq=snapshot.seq + 1, seed="11" * 32)
    model.apply(bad)
    assert model.verification is not None
    assert not model.verification.ok
    frame = encode(bad)
    assert decode_server(frame) == bad


def test_the_local_preview_agrees_with_the_rules_engine() -> None:
    import random

    rng = random.Random(7)
    for _ in range(3000):
        cards = rng.sample(range(53), 7)
        low = rng.sample(cards, 2)
        split = split_with_low(cards, low)
        expected = (high_name(split.high_value()), low_name(split.low_value()), split.is_foul())
        assert handrank.preview(cards, low) == expected, (cards, low)
