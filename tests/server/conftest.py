"""Fixtures of the shell's tests: servers with chosen tables and settings, and a Redis of
a test's own to stop and start again."""

from __future__ import annotations

import dataclasses
import shutil
import tempfile
from collections.abc import AsyncIterator, Awaitable, Callable
from pathlib import Path
from typing import Any

import pytest_asyncio
import redis.asyncio

from server.app import App
from server.config import Settings
from server.store.embedded.process import EmbeddedRedis

StartApp = Callable[..., Awaitable[App]]


@pytest_asyncio.fixture
async def start_app(
    server_settings: Settings, redis_client: redis.asyncio.Redis, tmp_path: Path
) -> AsyncIterator[StartApp]:
    """Start in-process servers on the session's (flushed) Redis: ``await start_app(
    tables="...", **settings)``; every one is stopped after the test."""
    apps: list[App] = []

    async def start(tables: str | None = None, **changes: Any) -> App:
        settings = server_settings
        if tables is not None:
            path = tmp_path / f"tables-{len(apps)}.toml"
            path.write_text(tables)
            settings = dataclasses.replace(settings, tables_file=path)
        app = App(dataclasses.replace(settings, **changes))
        apps.append(app)
        await app.start()
        return app

    try:
        yield start
    finally:
        for app in reversed(apps):
            await app.stop()


@pytest_asyncio.fixture
async def own_redis() -> AsyncIterator[EmbeddedRedis]:
    """A redis-server of the test's own, to stop (``astop``: SHUTDOWN, the append-only
    file synced) and start again (``astart``), in a short folder: its unix socket's path,
    hence its URL, stays the same across a restart. Stopped and removed after the test."""
    folder = Path(tempfile.mkdtemp(prefix="pg-own-"))
    server = EmbeddedRedis(folder)
    await server.astart()
    try:
        yield server
    finally:
        await server.astop()
        shutil.rmtree(folder, ignore_errors=True)
