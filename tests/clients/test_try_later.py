"""A server that says to try later at start (close 1013: full, too many connections from
this address): the terminal client tries again with backoff, says so, and gets in once
there is room; it gives up only after its start wait."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path

import pytest

from clients.cli import main
from clients.core import Client, ConnectionLost
from clients.errors import TryLater
from clients.events import Disconnected
from tests.helpers import until, url
from tests.server.conftest import StartApp
from tests.server.helpers import Client as RawClient


@pytest.mark.asyncio
async def test_play_waits_for_room_and_says_so(
    start_app: StartApp, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    app = await start_app(max_connections=1)
    holder = await RawClient.hello(url(app))  # the house is full
    play = ["play", "--url", url(app), "--no-session", "--table", "fast", "--bet", "10"]
    running = asyncio.create_task(asyncio.to_thread(main, [*play, "--json"]))
    said: list[dict[str, object]] = []

    def waited() -> bool:
        said.extend(json.loads(line) for line in capsys.readouterr().out.splitlines())
        return any(line["type"] == "client.disconnected" for line in said)

    try:
        await until(waited, 30)
    finally:
        await holder.close()  # room again
    assert await asyncio.wait_for(running, 60) == 0
    said.extend(json.loads(line) for line in capsys.readouterr().out.splitlines())
    waits = [line for line in said if line["type"] == "client.disconnected"]
    assert waits[0]["code"] == 1013
    assert waits[0]["reason"] == "server full"
    assert waits[0]["retrying"] is True
    assert 0 < float(waits[0]["delay_s"]) <= 1.5  # type: ignore[arg-type]
    assert said[-1]["type"] == "client.summary"
    assert said[-1]["rounds"] == 1


@pytest.mark.asyncio
async def test_history_says_each_wait_on_standard_error(
    start_app: StartApp, capsys: pytest.CaptureFixture[str]
) -> None:
    app = await start_app(max_connections=1)
    holder = await RawClient.hello(url(app))
    history = ["history", "--url", url(app), "--no-session"]
    running = asyncio.create_task(asyncio.to_thread(main, history))
    err: list[str] = []

    def waited() -> bool:
        err.extend(capsys.readouterr().err.splitlines())
        return any("server busy [1013]: server full; retrying in" in line for line in err)

    try:
        await until(waited, 30)
    finally:
        await holder.close()
    assert await asyncio.wait_for(running, 60) == 0


@pytest.mark.asyncio
async def test_the_start_wait_ends(start_app: StartApp) -> None:
    """Still refused after ``start_wait_s``: the refusal is raised (the CLI's exit 2)."""
    app = await start_app(connections_per_address=1)
    holder = await RawClient.hello(url(app))
    client = Client(url(app), backoff_s=0.05, backoff_max_s=0.1, start_wait_s=0.5)
    events = client.listen()
    try:
        with pytest.raises(TryLater) as raised:
            await client.connect()
        assert isinstance(raised.value, ConnectionLost)
        assert raised.value.reason == "too many connections from your address"
        waits = []
        while not events.empty():
            event = events.get_nowait()
            if isinstance(event, Disconnected):
                waits.append(event)
        assert waits
        assert all(w.code == 1013 and w.retrying for w in waits)
    finally:
        await client.close()
        await holder.close()
