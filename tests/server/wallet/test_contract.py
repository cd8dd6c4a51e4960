"""The wallet API's contract (protocol/wallet-api.yaml): a well-formed OpenAPI 3.1
document whose schemas hold its own examples and every answer of the reference wallet,
including the idempotency promises it writes out."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import aiohttp
import pytest
import yaml
from jsonschema import Draft202012Validator  # type: ignore[import-untyped]  # check-jsonschema's
from referencing import Registry, Resource
from referencing.jsonschema import DRAFT202012

from tests.server.wallet.running import SECRET, WalletProcess

DOC = Path(__file__).resolve().parents[3] / "protocol" / "wallet-api.yaml"
URI = "urn:paigow:wallet-api"


def document() -> dict[str, Any]:
    loaded: dict[str, Any] = yaml.safe_load(DOC.read_text())
    return loaded


def validator(name: str) -> Draft202012Validator:
    """A validator of ``#/components/schemas/<name>`` (refs resolved in the document)."""
    resource = Resource.from_contents(document(), default_specification=DRAFT202012)
    registry: Registry[Any] = Registry().with_resource(URI, resource)
    schema = {"$ref": f"{URI}#/components/schemas/{name}"}
    return Draft202012Validator(schema, registry=registry)


def check(name: str, instance: Any) -> None:
    errors = [e.message for e in validator(name).iter_errors(instance)]
    assert not errors, (name, instance, errors)


def test_the_document_is_openapi_3_1_with_every_endpoint() -> None:
    doc = document()
    assert doc["openapi"].startswith("3.1.")
    assert doc["security"] == [{"bearer": []}]
    assert doc["components"]["securitySchemes"]["bearer"]["scheme"] == "bearer"
    operations = {
        op["operationId"]: (path, method)
        for path, item in doc["paths"].items()
        for method, op in item.items()
    }
    assert operations == {
        "debit": ("/v1/debit", "post"),
        "credit": ("/v1/credit", "post"),
        "transactionStatus": ("/v1/transactions/{transaction_id}", "get"),
        "cancelTransaction": ("/v1/transactions/{transaction_id}/cancel", "post"),
        "listTransactions": ("/v1/transactions", "get"),
        "balance": ("/v1/players/{player}/balance", "get"),
    }
    description = doc["info"]["description"]
    for promise in ("at most once", "duplicate: true", "never be", "Bearer"):
        assert promise in description
    # Every schema is itself a valid JSON Schema (2020-12, OpenAPI 3.1's dialect).
    for name, schema in doc["components"]["schemas"].items():
        Draft202012Validator.check_schema(schema)
        assert validator(name) is not None


def test_the_examples_hold() -> None:
    for item in document()["paths"].values():
        for op in item.values():
            content = op.get("requestBody", {}).get("content", {}).get("application/json")
            if content and "example" in content:
                name = content["schema"]["$ref"].rsplit("/", 1)[1]
                check(name, content["example"])


@pytest.mark.asyncio
async def test_the_reference_wallet_keeps_the_contract(wallet: WalletProcess) -> None:
    await wallet.fund("zoe", 1000)
    headers = {"Authorization": f"Bearer {SECRET}"}
    base = wallet.url.rstrip("/")
    async with aiohttp.ClientSession(headers=headers) as http:

        async def call(method: str, path: str, body: Any = None) -> tuple[int, Any]:
            async with http.request(method, base + path, json=body) as r:
                return r.status, await r.json()

        debit = {"transaction_id": "t-1", "player": "zoe", "amount": 300, "reason": "buy_in"}
        status, body = await call("POST", "/v1/debit", debit)
        assert status == 200
        check("Applied", body)
        assert body["duplicate"] is False
        assert body["balance"] == 700
        # The same id again: the first answer, nothing changed.
        status, again = await call("POST", "/v1/debit", debit)
        assert status == 200
        check("Applied", again)
        assert again["duplicate"] is True
        assert again["balance"] == 700
        # The same id for another amount: refused.
        status, body = await call("POST", "/v1/debit", {**debit, "amount": 5})
        assert status == 409
        check("Conflict", body)
        assert body["error"] == "conflict"
        status, body = await call(
            "POST", "/v1/debit", {**debit, "transaction_id": "t-2", "amount": 5000}
        )
        assert status == 402
        check("InsufficientFunds", body)
        status, body = await call("GET", "/v1/transactions/t-1")
        assert status == 200
        check("Transaction", body)
        status, body = await call("GET", "/v1/transactions/t-9")
        assert status == 404
        check("Error", body)
        # Cancel: an unknown id for good, an applied one not at all.
        status, body = await call("POST", "/v1/transactions/t-9/cancel", {})
        assert status == 200
        check("Transaction", body)
        assert body["status"] == "cancelled"
        status, body = await call("POST", "/v1/debit", {**debit, "transaction_id": "t-9"})
        assert status == 409
        check("Conflict", body)
        assert body["error"] == "cancelled"
        status, body = await call("POST", "/v1/transactions/t-1/cancel", {})
        assert status == 409
        check("AlreadyApplied", body)
        credit = {"transaction_id": "c-1", "player": "zoe", "amount": 300, "reason": "cash_out"}
        status, body = await call("POST", "/v1/credit", credit)
        assert status == 200
        check("Applied", body)
        status, body = await call("GET", "/v1/transactions?from_ms=0&to_ms=9007199254740991")
        assert status == 200
        check("Page", body)
        assert [t["transaction_id"] for t in body["transactions"]] == ["t-1", "t-9", "c-1"]
        status, body = await call("GET", "/v1/players/zoe/balance")
        assert status == 200
        check("Balance", body)
        assert body["balance"] == 1000
    async with (
        aiohttp.ClientSession() as anonymous,
        anonymous.post(base + "/v1/debit", json=debit) as r,
    ):
        assert r.status == 401
        check("Error", await r.json())
