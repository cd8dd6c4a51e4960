"""Fixtures of the operator's API: a real server (with its admin port) on the test's
Redis, admin tokens minted and recorded as ``paigow-server admin token`` does, and an
HTTP client."""

from __future__ import annotations

import dataclasses
import time
from collections.abc import AsyncIterator, Mapping
from typing import Any

import aiohttp
import pytest
import pytest_asyncio
import redis.asyncio

from server.admin import tokens
from server.app import App
from server.config import Settings
from server.store import AdminTokenRecord, AdminTokens

SECRET = b"test-secret-0123456789"  # server_settings's


@pytest.fixture
def admin_settings(server_settings: Settings) -> Settings:
    """The test server's settings with the operator's API on a free loopback port."""
    return dataclasses.replace(server_settings, admin_port=0, node_name="one")


@pytest_asyncio.fixture
async def admin_app(
    admin_settings: Settings, redis_client: redis.asyncio.Redis
) -> AsyncIterator[App]:
    """A running server with its operator API (stopped after the test)."""
    app = App(admin_settings)
    await app.start()
    try:
        yield app
    finally:
        await app.stop()


async def mint(client: redis.asyncio.Redis, name: str = "ops", ttl_s: int = 600) -> str:
    """A standing admin token for ``name``, as ``paigow-server admin token`` makes one."""
    now = int(time.time())
    token, claims = tokens.mint(SECRET, name, ttl_s, now)
    await AdminTokens(client).record(AdminTokenRecord(claims.token_id, name, claims.expires_s, now))
    return token


class Api:
    """Calls to one server's operator API, with a token or none."""

    def __init__(self, session: aiohttp.ClientSession, port: int) -> None:
        self.session = session
        self.base = f"http://127.0.0.1:{port}"

    async def call(
        self, method: str, path: str, token: str | None = None, body: Any = None
    ) -> tuple[int, Any, Mapping[str, str]]:
        """(status, the JSON body or the text, headers)."""
        headers = {"Authorization": f"Bearer {token}"} if token is not None else {}
        async with self.session.request(
            method, self.base + path, headers=headers, json=body
        ) as response:
            if response.content_type == "application/json":
                data: Any = await response.json()
            else:
                data = await response.text()
            return response.status, data, response.headers


@pytest_asyncio.fixture
async def api(admin_app: App) -> AsyncIterator[Api]:
    assert admin_app.admin is not None
    async with aiohttp.ClientSession() as session:
        yield Api(session, admin_app.admin.port)
