"""The operator's API against a real server and Redis: nothing without a credential,
the tokens it refuses, and the moves of chips, once each."""

from __future__ import annotations

import asyncio
import re
import time

import pytest
import redis.asyncio

from server.admin import tokens
from server.admin.server import CSP, PUBLIC_ROUTES
from server.app import App
from server.auth import tokens as player_tokens
from server.store import AdminTokens
from tests.server.admin.conftest import SECRET, Api, mint

SAMPLES = {"player": "alice", "name": "one", "table": "fast", "file": "console.js"}


def concrete(path: str) -> str:
    """A route's path with a sample value for each of its parameters."""
    return re.sub(r"\{(\w+)\}", lambda m: SAMPLES[m.group(1)], path)


@pytest.mark.asyncio
async def test_no_route_answers_without_a_good_credential(
    admin_app: App, api: Api, redis_client: redis.asyncio.Redis
) -> None:
    """Every route of the router, each method, with no token and with bad ones: 401,
    and nothing done; the console's own files alone are public."""
    assert admin_app.admin is not None
    now = int(time.time())
    forged, _ = tokens.mint(b"another-secret-0123456789", "ops", 600, now)
    unrecorded, _ = tokens.mint(SECRET, "ops", 600, now)
    expired, claims = tokens.mint(SECRET, "ops", 1, now - 10)
    await AdminTokens(redis_client).record(
        __import__("server.store", fromlist=["AdminTokenRecord"]).AdminTokenRecord(
            claims.token_id, "ops", claims.expires_s, now - 10
        )
    )
    revoked = await mint(redis_client)
    await AdminTokens(redis_client).revoke(tokens.read(SECRET, revoked, now).token_id)
    player = player_tokens.issue(SECRET, "alice", 600, now)
    bad = [None, "", "garbage", forged, unrecorded, expired, revoked, player, "pgadmin1.x.y"]
    checked = 0
    for route in admin_app.admin.app.router.routes():
        info = route.resource.get_info() if route.resource is not None else {}
        path = info.get("path") or info.get("formatter")
        assert path, route
        if route.method == "HEAD":
            continue
        if route.name in PUBLIC_ROUTES:
            status, _, headers = await api.call(route.method, concrete(path))
            assert status in (200, 404)
            assert headers["Content-Security-Policy"] == CSP
            continue
        for token in bad:
            status, body, headers = await api.call(
                route.method, concrete(path), token, {"amount": 5, "key": "k", "reason": "r"}
            )
            assert status == 401, (route, token, body)
            assert body["error"]["code"] in ("unauthorized", "token_refused", "token_revoked")
            assert headers["WWW-Authenticate"].startswith("Bearer")
        checked += 1
    assert checked >= 13
    # Nor a path that is no route: no probing of the API without a token.
    status, _, _ = await api.call("GET", "/api/v1/nothing")
    assert status == 401
    assert await redis_client.exists("pg:account:{alice}") == 0  # nothing was credited
    good = await mint(redis_client, "carol")
    status, body, headers = await api.call("GET", "/api/v1/whoami", good)
    assert (status, body["name"], body["via"]) == (200, "carol", "admin_token")
    assert headers["Cache-Control"] == "no-store"
    status, body, _ = await api.call("GET", "/api/v1/nothing", good)
    assert (status, body["error"]["code"]) == (404, "not_found")


@pytest.mark.asyncio
async def test_credit_debit_reverse_once_each(api: Api, redis_client: redis.asyncio.Redis) -> None:
    token = await mint(redis_client, "dana")
    credit = {"amount": 5000, "reason": "welcome bonus", "key": "c-1"}
    status, body, _ = await api.call("POST", "/api/v1/players/alcie/credit", token, credit)
    assert (status, body["error"]["code"]) == (404, "unknown_player")
    assert await redis_client.exists("pg:account:{alcie}") == 0
    status, body, _ = await api.call(
        "POST", "/api/v1/players/alice/credit", token, {**credit, "create": True}
    )
    assert status == 201, body
    assert (body["applied"], body["balance"], body["amount"]) == (True, 5000, 5000)
    first = body
    # A retry: the same answer, nothing moved; another body with the key: a conflict.
    status, body, _ = await api.call(
        "POST", "/api/v1/players/alice/credit", token, {**credit, "create": True}
    )
    assert status == 200
    assert {**body, "applied": True} == first
    status, body, _ = await api.call(
        "POST", "/api/v1/players/alice/credit", token, {**credit, "amount": 50, "create": True}
    )
    assert (status, body["error"]["code"]) == (409, "key_reused")
    # A debit, never below zero.
    debit = {"amount": 6000, "reason": "chargeback", "key": "d-1"}
    status, body, _ = await api.call("POST", "/api/v1/players/alice/debit", token, debit)
    assert (status, body["error"]["code"], body["error"]["balance"]) == (
        409,
        "insufficient_balance",
        5000,
    )
    status, body, _ = await api.call(
        "POST", "/api/v1/players/alice/debit", token, {**debit, "amount": 1000, "key": "d-2"}
    )
    assert (status, body["balance"]) == (201, 4000)
    # The credit of 5000 cannot be reversed now (4000 left): refused whole.
    undo = {"entry": first["entry"], "reason": "typo", "key": "u-1"}
    status, body, _ = await api.call("POST", "/api/v1/players/alice/reverse", token, undo)
    assert (status, body["error"]["code"]) == (409, "insufficient_balance")
    mistaken = {"amount": 700, "reason": "meant bob", "key": "c-2"}
    status, body, _ = await api.call("POST", "/api/v1/players/alice/credit", token, mistaken)
    assert status == 201
    undo = {"entry": body["entry"], "reason": "meant bob", "key": "u-2"}
    status, body, _ = await api.call("POST", "/api/v1/players/alice/reverse", token, undo)
    assert (status, body["balance"], body["amount"]) == (201, 4000, 700)
    status, body, _ = await api.call("POST", "/api/v1/players/alice/reverse", token, undo)
    assert (status, body["applied"], body["balance"]) == (200, False, 4000)
    status, body, _ = await api.call(
        "POST", "/api/v1/players/alice/reverse", token, {**undo, "key": "u-3"}
    )
    assert (status, body["error"]["code"]) == (409, "already_reversed")
    # Bad bodies: typed errors.
    for bad, code in (
        ({"amount": "5", "reason": "r", "key": "k"}, "bad_field"),
        ({"amount": 5, "reason": "r"}, "bad_field"),
        ({"amount": 5, "reason": "r", "key": "with space"}, "bad_request"),
        ({"amount": True, "reason": "r", "key": "k"}, "bad_field"),
        ([1, 2], "bad_json"),
    ):
        status, body, _ = await api.call("POST", "/api/v1/players/alice/credit", token, bad)
        assert (status, body["error"]["code"]) == (400, code), bad
    status, body, _ = await api.call("POST", "/api/v1/players/a:b/credit", token, credit)
    assert (status, body["error"]["code"]) == (400, "bad_player")
    # The look-up: balance, and the ledger newest first with who did what and why.
    status, body, _ = await api.call("GET", "/api/v1/players/alice", token)
    assert status == 200
    assert body["balance"] == 4000
    assert [e["kind"] for e in body["ledger"]] == ["reversal", "credit", "debit", "credit"]
    assert body["ledger"][0]["extra"] == {
        "reason": "meant bob",
        "by": "dana",
        "reverses": undo["entry"],
    }
    status, body, _ = await api.call("GET", "/api/v1/players?q=ALI", token)
    assert body["players"] == [{"player": "alice", "name": None, "balance": 4000}]
    status, body, _ = await api.call("GET", "/api/v1/players/alice/ledger?count=2", token)
    assert [e["kind"] for e in body["ledger"]] == ["reversal", "credit"]
    older = body["ledger"][1]["entry"]
    status, body, _ = await api.call("GET", f"/api/v1/players/alice/ledger?before={older}", token)
    assert [e["kind"] for e in body["ledger"]] == ["debit", "credit"]
    status, body, _ = await api.call("GET", "/api/v1/players/alice/ledger?before=x", token)
    assert (status, body["error"]["code"]) == (400, "bad_request")
    status, body, _ = await api.call("GET", "/api/v1/players/nobody", token)
    assert (status, body["error"]["code"]) == (404, "unknown_player")
    status, body, _ = await api.call("GET", "/api/v1/audit", token)
    assert status == 200
    assert body["ok"], body["text"]
    assert (body["credited"], body["removed"], body["accounts_total"]) == (5700, 1700, 4000)
    assert (body["meters_total"], body["jackpot_house_total"]) == (0, 0)  # no jackpot yet


@pytest.mark.asyncio
async def test_sessions_tables_and_the_bearer_check(
    admin_app: App, api: Api, redis_client: redis.asyncio.Redis
) -> None:
    token = await mint(redis_client)
    status, body, _ = await api.call("POST", "/api/v1/players/alice/sessions/revoke", token)
    assert (status, body["player"], body["nodes_told"]) == (200, "alice", 1)
    assert await redis_client.get("pg:player:{alice}:revoked") is not None
    status, body, _ = await api.call("GET", "/api/v1/tables", token)
    assert status == 200
    assert [t["table"] for t in body["tables"]] == ["fast", "slow"]
    assert {t["holder"] for t in body["tables"]} == {"one"}
    status, body, _ = await api.call("GET", "/api/v1/tables/fast", token)
    assert (status, body["table"]) == (200, "fast")
    assert "hands" not in body
    assert "seed" not in body
    status, body, _ = await api.call("GET", "/api/v1/tables/nope", token)
    assert (status, body["error"]["code"]) == (404, "unknown_table")
    status, body, _ = await api.call("GET", "/api/v1/nodes", token)
    assert [n["name"] for n in body["nodes"]] == ["one"]
    assert body["nodes"][0]["tables_held"] == 2
    status, body, _ = await api.call("POST", "/api/v1/nodes/one/drain", token)
    assert (status, body["error"]["code"]) == (409, "last_node")
    status, body, _ = await api.call("POST", "/api/v1/nodes/zzz/drain", token)
    assert (status, body["error"]["code"]) == (404, "unknown_node")


@pytest.mark.asyncio
async def test_the_api_is_off_unless_a_port_is_given(app: App) -> None:
    assert app.settings.admin_port is None
    assert app.admin is None


@pytest.mark.asyncio
async def test_retries_at_once_move_the_chips_once(
    api: Api, redis_client: redis.asyncio.Redis
) -> None:
    """Ten copies of one credit sent together (a client retrying before the first
    answer): one is applied, every answer is the same credit."""
    token = await mint(redis_client)
    body = {"amount": 300, "reason": "deposit 81", "key": "dep-81", "create": True}
    answers = await asyncio.gather(
        *(api.call("POST", "/api/v1/players/zoe/credit", token, body) for _ in range(10))
    )
    assert sorted(status for status, _, _ in answers) == [200] * 9 + [201]
    assert {(b["balance"], b["entry"]) for _, b, _ in answers} == {(300, answers[0][1]["entry"])}
    _, found, _ = await api.call("GET", "/api/v1/players/zoe", token)
    assert (found["balance"], len(found["ledger"])) == (300, 1)
