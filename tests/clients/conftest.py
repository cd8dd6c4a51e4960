"""The client tests' server fixture: the shared one, with a teardown that cannot hang.

Server bug worked around here (reported): ``TableHost.stop`` cancels the table task,
but on Python 3.11 ``asyncio.wait_for`` in ``TableHost._timer_step`` can swallow that
cancellation when the wake event fires at the same moment; the task then waits
forever and ``App.stop`` never returns. Cancelling the table task again ends it.
"""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator

import pytest_asyncio

from server.app import App
from server.config import Settings


@pytest_asyncio.fixture
async def app(server_settings: Settings) -> AsyncIterator[App]:
    """A running server (stopped after the test); its URL is ``ws://127.0.0.1:{app.port}/``."""
    server = App(server_settings)
    await server.start()
    try:
        yield server
    finally:
        stopping = asyncio.ensure_future(server.stop())
        while not stopping.done():
            await asyncio.wait({stopping}, timeout=0.5)
            for task in asyncio.all_tasks():
                if task.get_name().startswith("table-") and task.cancelling():
                    task.cancel()
        await stopping
