"""The shared test helpers: ``until`` waits and bounds, ``url`` reaches a real server."""

from __future__ import annotations

import asyncio
import time

import pytest
from websockets.asyncio.client import ClientConnection, connect

from protocol.codec import decode_server, encode
from protocol.messages import Hello, OkReply, ServerMessage
from server.app import App
from tests.helpers import until, url

# Bounds of the failing waits below: short, since the test waits them out.
SHORT = 0.2


@pytest.mark.asyncio
async def test_until_returns_the_first_truthy_value_of_a_plain_check() -> None:
    calls: list[int] = []

    def third_call() -> int | None:
        calls.append(len(calls))
        return len(calls) * 10 if len(calls) >= 3 else None

    assert await until(third_call, every=0) == 30
    assert len(calls) == 3


@pytest.mark.asyncio
async def test_until_awaits_an_async_check() -> None:
    calls: list[int] = []

    async def second_call() -> str | None:
        await asyncio.sleep(0)
        calls.append(len(calls))
        return "ready" if len(calls) >= 2 else None

    assert await until(second_call, every=0) == "ready"
    assert len(calls) == 2


@pytest.mark.asyncio
async def test_until_fails_after_the_bound_naming_what_and_the_detail() -> None:
    started = time.monotonic()
    with pytest.raises(AssertionError, match=r"after 0.2 s waiting for the moon; it is noon"):
        await until(lambda: None, SHORT, "the moon", detail=lambda: "it is noon")
    assert SHORT <= time.monotonic() - started < SHORT + 5  # bounded, with room for a slow CI


@pytest.mark.asyncio
async def test_until_cancels_a_check_still_running_at_the_bound() -> None:
    cancelled = asyncio.Event()

    async def never() -> bool:
        try:
            await asyncio.Event().wait()
        except asyncio.CancelledError:
            cancelled.set()
            raise
        return True  # pragma: no cover - the event is never set

    with pytest.raises(AssertionError, match="waiting for a frame"):
        await until(never, SHORT, "a frame")
    assert cancelled.is_set()


@pytest.mark.asyncio
async def test_until_lets_an_error_of_the_check_through_timeout_included() -> None:
    def broken() -> None:
        raise TimeoutError("the check's own")

    with pytest.raises(TimeoutError, match="the check's own"):
        await until(broken, SHORT)


@pytest.mark.asyncio
async def test_until_runs_the_given_pause_between_checks() -> None:
    pauses: list[float] = []

    async def pause(seconds: float) -> None:
        pauses.append(seconds)
        await asyncio.sleep(0)

    assert await until(lambda: len(pauses) >= 2 or None, every=0.5, pause=pause) is True
    assert pauses == [0.5, 0.5]


@pytest.mark.asyncio
async def test_url_reaches_the_running_server(app: App) -> None:
    async def reply(ws: ClientConnection) -> ServerMessage:
        return decode_server(await ws.recv(decode=False))

    async with connect(url(app)) as ws:
        await ws.send(encode(Hello(rid="h", min_version=1, max_version=1, client="t", guest=True)))
        ok = await until(lambda: reply(ws), what="the hello's reply", every=0)
    assert isinstance(ok, OkReply)
    assert ok.rid == "h"
