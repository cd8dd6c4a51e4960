"""The full-screen client when the connection is not there: no server yet, or the
player taken over by another client. Driven with Textual's pilot against real servers."""

from __future__ import annotations

from dataclasses import replace

import pytest
import redis.asyncio

from clients.core import Client
from clients.tui import LobbyScreen, PaigowApp
from server.app import App
from server.config import Settings
from tests.clients.helpers import screen_text
from tests.clients.tui.helpers import SIZE, lobby_listed, sit_at, until_app
from tests.helpers import url
from tests.server.processes import free_port


@pytest.mark.asyncio
async def test_no_server_yet_suggests_one_and_r_connects(
    server_settings: Settings, redis_client: redis.asyncio.Redis
) -> None:
    """Started before the server: the lobby says how to start one and keeps trying; ``r``
    tries at once (the backoff here is 30 s or more, so only ``r`` is quick)."""
    port = free_port()
    client = Client(f"ws://127.0.0.1:{port}/", name="Early", backoff_s=60, backoff_max_s=60)
    tui = PaigowApp(client)
    async with tui.run_test(size=SIZE) as pilot:
        await until_app(pilot, lambda: "make run" in screen_text(tui))
        text = screen_text(tui)
        assert "Is the server running?" in text
        assert "no server: retrying (r: now)" in text
        server = App(replace(server_settings, port=port))
        await server.start()
        try:
            await pilot.press("r")
            await until_app(pilot, lambda: client.connected and lobby_listed(tui))
            assert "connected" in screen_text(tui)
        finally:
            await tui.client.close()
            await server.stop()


@pytest.mark.asyncio
async def test_a_client_taken_over_says_why_and_r_takes_it_back(app: App) -> None:
    """Another client resuming the same session closes this one with 4005: the screen says
    so and what to do (not "reconnecting…" for ever), and ``r`` takes the player back."""
    tui = PaigowApp(Client(url(app), name="Ann"))
    async with tui.run_test(size=SIZE) as pilot:
        table = await sit_at(pilot, tui, "slow")
        first = tui.client
        assert first.resume_token is not None
        async with Client(url(app), resume_token=first.resume_token) as other:
            assert other.player_id == first.player_id
            await until_app(pilot, lambda: not first.connected and tui.ended is not None)
            await until_app(pilot, lambda: "taken over by another client" in screen_text(tui))
            text = screen_text(tui)
            assert "reconnecting" not in text
            assert "r: take it back" in text
            assert not first.reconnecting
            await pilot.press("escape")  # the lobby's log has the whole story
            assert isinstance(tui.screen, LobbyScreen)
            await until_app(pilot, lambda: "(each is then its own player)" in screen_text(tui))
            assert "Another client took this player over (4005" in screen_text(tui)
            await pilot.press("r")
            await until_app(pilot, lambda: first.connected)
            await other.wait_until(lambda: not other.connected, 10)
            assert tui.ended is None
            assert table.model.my_seat is not None  # the seat is still the player's
