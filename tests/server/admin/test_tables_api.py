"""The tables catalog through the operator's API: a table created, changed and closed
over HTTP is hosted, changed and let go by the server, and every refusal is typed."""

from __future__ import annotations

import pytest
import redis.asyncio

from server.app import App
from tests.helpers import until
from tests.server.admin.conftest import Api, mint

PEARL = {"id": "pearl", "name": "Pearl (25-250)", "min_bet": 25, "max_bet": 250}


@pytest.mark.asyncio
async def test_a_table_is_created_changed_and_closed_through_the_api(
    admin_app: App, api: Api, redis_client: redis.asyncio.Redis
) -> None:
    token = await mint(redis_client, "floor")
    status, body, _ = await api.call("POST", "/api/v1/tables", token, PEARL)
    assert (status, body["status"], body["id"], body["max_bet"]) == (201, "open", "pearl", 250)
    # Picked up by the server (here its only node), hosted and listed.
    await until(lambda: "pearl" in admin_app.hosts)
    status, body, _ = await api.call("GET", "/api/v1/catalog", token)
    assert status == 200
    assert {t["id"]: t["status"] for t in body["tables"]}["pearl"] == "open"

    status, body, _ = await api.call("PATCH", "/api/v1/tables/pearl", token, {"max_bet": 500})
    assert (status, body["max_bet"]) == (200, 500)
    await until(lambda: admin_app.hosts["pearl"].config.max_bet == 500)

    status, body, _ = await api.call("DELETE", "/api/v1/tables/pearl", token)
    assert (status, body["status"]) == (202, "closing")
    await until(lambda: "pearl" not in admin_app.hosts)
    status, body, _ = await api.call("GET", "/api/v1/catalog?all=1", token)
    assert {t["id"]: t["status"] for t in body["tables"]}["pearl"] == "closed"


@pytest.mark.asyncio
async def test_the_catalog_s_refusals_are_typed_and_write_nothing(
    admin_app: App, api: Api, redis_client: redis.asyncio.Redis
) -> None:
    token = await mint(redis_client, "floor")
    before = await redis_client.hget("pg:catalog", "rev")
    bad = {**PEARL, "min_bet": 500}  # a minimum over its maximum
    status, body, _ = await api.call("POST", "/api/v1/tables", token, bad)
    assert (status, body["error"]["code"]) == (400, "bad_config")
    status, body, _ = await api.call("POST", "/api/v1/tables", token, {**PEARL, "sauce": 1})
    assert (status, body["error"]["code"]) == (400, "bad_config")
    status, body, _ = await api.call("PATCH", "/api/v1/tables/nowhere", token, {"max_bet": 9})
    assert (status, body["error"]["code"]) == (404, "no_such_table")
    status, body, _ = await api.call("POST", "/api/v1/tables", token, [1, 2])
    assert (status, body["error"]["code"]) == (400, "bad_json")
    assert await redis_client.hget("pg:catalog", "rev") == before

    status, _, _ = await api.call("POST", "/api/v1/tables", token, PEARL)
    assert status == 201
    status, body, _ = await api.call("POST", "/api/v1/tables", token, PEARL)
    assert (status, body["error"]["code"]) == (409, "table_exists")
    status, _, _ = await api.call("DELETE", "/api/v1/tables/pearl", token)
    assert status == 202
    status, body, _ = await api.call("PATCH", "/api/v1/tables/pearl", token, {"max_bet": 400})
    assert (status, body["error"]["code"]) == (409, "table_not_open")


@pytest.mark.asyncio
async def test_a_commission_free_table_through_the_api(
    admin_app: App, api: Api, redis_client: redis.asyncio.Redis
) -> None:
    # docs/RULES.md, "Commission-free tables": the option as any other, taken once every
    # live node reads the settings' newer format (this node switches it on itself).
    token = await mint(redis_client, "floor")
    status, body, _ = await api.call(
        "POST", "/api/v1/tables", token, {**PEARL, "commission_free": "tiger"}
    )
    assert (status, body["error"]["code"]) == (400, "bad_config")
    assert "commission_free is one of" in body["error"]["message"]

    async def created() -> int | None:
        ez = {**PEARL, "id": "ez", "commission_free": "ez"}
        status, _, _ = await api.call("POST", "/api/v1/tables", token, ez)
        return status if status == 201 else None

    await until(created)
    await until(lambda: "ez" in admin_app.hosts)
    assert admin_app.hosts["ez"].config.rules.commission_free.value == "ez"
    status, body, _ = await api.call(
        "PATCH", "/api/v1/tables/ez", token, {"commission_free": "nine_low"}
    )
    assert (status, body["commission_free"]) == (200, "nine_low")
    await until(lambda: admin_app.hosts["ez"].config.rules.commission_free.value == "nine_low")


@pytest.mark.asyncio
async def test_a_table_naming_a_jackpot_is_refused_through_the_api(
    admin_app: App, api: Api, redis_client: redis.asyncio.Redis
) -> None:
    """A table offers a jackpot only by a tables file's ``[jackpot.<name>]``: a
    ``side_bets.progressive`` of its own would set a shared meter's seed and rate."""
    token = await mint(redis_client, "floor")
    before = await redis_client.hget("pg:catalog", "rev")
    mine = {"progressive": {"jackpot": "mine", "seed": 5, "contribution_bps": 9000}}
    status, body, _ = await api.call("POST", "/api/v1/tables", token, {**PEARL, "side_bets": mine})
    assert (status, body["error"]["code"]) == (400, "bad_config")
    assert "[jackpot.<name>]" in body["error"]["message"]
    assert await redis_client.hget("pg:catalog", "rev") == before
    status, _, _ = await api.call("POST", "/api/v1/tables", token, PEARL)
    assert status == 201
    status, body, _ = await api.call("PATCH", "/api/v1/tables/pearl", token, {"side_bets": mine})
    assert (status, body["error"]["code"]) == (400, "bad_config")
    assert "[jackpot.<name>]" in body["error"]["message"]
