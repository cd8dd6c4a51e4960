"""Draining a node through the API (two servers on one Redis), and the bearer check of
tokens that are not admin tokens (the operator's JWTs, wired by the server)."""

from __future__ import annotations

import asyncio
import dataclasses
import time
from dataclasses import dataclass
from pathlib import Path

import aiohttp
import pytest
import redis.asyncio

from server.app import App
from server.auth import tokens as player_tokens
from server.config import Settings
from tests.helpers import until
from tests.server.admin.conftest import SECRET, Api, mint
from tests.server.auth.operator_keys import AUDIENCE, ISSUER, JwksServer, claims, rsa_key
from tests.server.processes import ServerProcess, server_args


@pytest.mark.asyncio
async def test_a_node_drained_through_the_api_hands_its_tables_over(
    admin_settings: Settings, redis_client: redis.asyncio.Redis
) -> None:
    one = App(admin_settings)
    two = App(dataclasses.replace(admin_settings, node_name="two", admin_port=None))
    asked = asyncio.Event()
    two.on_drain = asked.set  # what run() does: stop the process
    await one.start()
    try:
        await two.start()
        assert one.admin is not None
        token = await mint(redis_client)
        async with aiohttp.ClientSession() as session:
            api = Api(session, one.admin.port)

            async def both_hold() -> bool | None:
                _, body, _ = await api.call("GET", "/api/v1/nodes", token)
                held = {n["name"]: n["tables_held"] for n in body["nodes"]}
                return True if held.get("one") and held.get("two") else None

            await until(both_hold, 20, "each node to hold a table")
            status, body, _ = await api.call("POST", "/api/v1/nodes/two/drain", token)
            assert (status, body["node"], body["told"]) == (202, "two", 1)
            async with asyncio.timeout(10):
                await asked.wait()
            await two.stop()  # as run() does once asked
            assert one.stores is not None
            found = await one.stores.tables.leases.holders(["fast", "slow"])
            assert all(h is not None and h[1] == one.owner for h in found)
            _, body, _ = await api.call("GET", "/api/v1/nodes", token)
            assert [n["name"] for n in body["nodes"]] == ["one"]
            assert {t["holder"] for t in body["tables"]} == {"one"}
    finally:
        await two.stop()
        await one.stop()


@dataclass(frozen=True)
class PlayerIdentity:
    """What a bearer check answers for a player's token: a name, no role."""

    name: str
    roles: tuple[str, ...] = ()


@pytest.mark.asyncio
async def test_a_bearer_identity_needs_the_admin_role(
    admin_settings: Settings, redis_client: redis.asyncio.Redis
) -> None:
    """The server's own check of player tokens, given as the bearer check: a genuine
    player's token is an identity without the admin role (403), a forged one is
    refused by the check (401); admin tokens still work beside it."""

    async def check(token: str) -> PlayerIdentity:
        return PlayerIdentity(player_tokens.verify(SECRET, token, int(time.time())))

    app = App(admin_settings)
    app.operator_bearer = check
    await app.start()
    try:
        assert app.admin is not None
        async with aiohttp.ClientSession() as session:
            api = Api(session, app.admin.port)
            player = player_tokens.issue(SECRET, "alice", 600, int(time.time()))
            status, body, _ = await api.call("GET", "/api/v1/whoami", player)
            assert (status, body["error"]["code"]) == (403, "forbidden")
            forged = player_tokens.issue(b"another-secret-0123456789", "alice", 600, 0)
            status, body, _ = await api.call("GET", "/api/v1/audit", forged)
            assert (status, body["error"]["code"]) == (401, "token_refused")
            status, body, _ = await api.call("GET", "/api/v1/whoami", await mint(redis_client))
            assert (status, body["via"]) == (200, "admin_token")
    finally:
        await app.stop()


@pytest.mark.asyncio
async def test_a_drained_server_process_hands_over_and_exits(
    admin_app: App,
    api: Api,
    admin_settings: Settings,
    redis_client: redis.asyncio.Redis,
    tmp_path: Path,
) -> None:
    """``python -m server`` asked to drain through another node's API: it hands its
    tables over and exits 0, as on SIGTERM; the audit stays clean."""
    assert admin_settings.redis_url is not None
    assert admin_settings.tables_file is not None
    args = server_args(
        admin_settings.redis_url,
        admin_settings.tables_file,
        tmp_path / "data-two",
        secret=SECRET.decode(),
        lease_ms=admin_settings.lease_ms,
        extra=["--node-name", "two"],
    )
    two = ServerProcess(args, tmp_path / "two.log")
    try:
        await two.started(within=30)
        token = await mint(redis_client)

        async def two_holds() -> bool | None:
            _, body, _ = await api.call("GET", "/api/v1/nodes", token)
            return True if any(t["holder"] == "two" for t in body["tables"]) else None

        await until(two_holds, 20, "node two to hold a table")
        status, body, _ = await api.call("POST", "/api/v1/nodes/two/drain", token)
        assert (status, body["told"]) == (202, 1)
        assert await two.exited(within=30) == 0, two.output()[-2000:]
        assert "asked to drain" in two.output()
        _, body, _ = await api.call("GET", "/api/v1/nodes", token)
        assert [n["name"] for n in body["nodes"]] == ["one"]
        assert {t["holder"] for t in body["tables"]} == {"one"}
        status, body, _ = await api.call("GET", "/api/v1/audit", token)
        assert body["ok"], body["text"]
    finally:
        two.close()


@pytest.mark.asyncio
async def test_an_operator_jwt_with_the_admin_role_opens_the_api(
    admin_settings: Settings, redis_client: redis.asyncio.Redis
) -> None:
    """With a JWKS configured, the server wires the operator's JWTs as the API's bearer
    check by itself: a JWT with the admin role is let in and named on the ledger, one
    without it gets 403, one signed by a key outside the JWKS 401."""
    key = rsa_key("ops-2026")
    async with JwksServer(key).running() as jwks:
        settings = dataclasses.replace(
            admin_settings, jwt_jwks_url=jwks.url, jwt_issuer=ISSUER, jwt_audience=AUDIENCE
        )
        app = App(settings)
        await app.start()
        try:
            assert app.admin is not None
            async with aiohttp.ClientSession() as session:
                api = Api(session, app.admin.port)
                admin = key.sign(claims("opsdesk", name="Night desk", roles=["admin"]))
                status, body, _ = await api.call("GET", "/api/v1/whoami", admin)
                assert (status, body["via"], body["name"]) == (200, "bearer", "Night desk")
                player = key.sign(claims("alice", roles=["player"]))
                status, body, _ = await api.call("GET", "/api/v1/whoami", player)
                assert (status, body["error"]["code"]) == (403, "forbidden")
                stranger = rsa_key("ops-2026").sign(claims("opsdesk", roles=["admin"]))
                status, body, _ = await api.call("GET", "/api/v1/audit", stranger)
                assert (status, body["error"]["code"]) == (401, "token_refused")
        finally:
            await app.stop()
