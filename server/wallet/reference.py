"""A reference wallet: the contract of protocol/wallet-api.yaml, kept in SQLite.

Run it with ``python -m server.wallet.reference --port 8790 --secret S --db wallet.sqlite3``
(``make run-wallet`` does, beside a server in wallet mode). It is what the tests start
as a real HTTP server, and what an operator reads to see the contract kept: each
transaction id is applied once (a repeat gets the first answer again), a cancelled id
is never applied, and every answer is given only after its write is committed.

Faults, for the tests, are set on a second port (``--admin-port``, loopback only,
no secret): ``POST /admin/faults`` with any of ``delay_ms`` (each API call waits
first), ``fail`` (the next N API calls answer 500 without doing anything),
``drop_after_commit`` (the next N debits or credits are committed, and then the
connection is closed with no answer: the answer is lost), ``down`` (true: the API's
port stops listening; false: it listens again). ``POST /admin/players`` sets a
player's balance; ``GET /admin/state`` returns every transaction and balance.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import hmac
import json
import logging
import signal
import sqlite3
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from aiohttp import web

log = logging.getLogger(__name__)

_SCHEMA = """
CREATE TABLE IF NOT EXISTS players (player TEXT PRIMARY KEY, balance INTEGER NOT NULL);
CREATE TABLE IF NOT EXISTS txns (
    transaction_id TEXT PRIMARY KEY,
    kind TEXT NOT NULL,
    player TEXT NOT NULL,
    amount INTEGER NOT NULL,
    status TEXT NOT NULL,
    reason TEXT NOT NULL,
    created_ms INTEGER NOT NULL,
    balance INTEGER NOT NULL
);
CREATE INDEX IF NOT EXISTS txns_created ON txns (created_ms, transaction_id);
"""


@dataclass(slots=True)
class Faults:
    """The faults injected (see the module docstring)."""

    delay_ms: int = 0
    fail: int = 0
    drop_after_commit: int = 0
    down: bool = False


class Ledger:
    """The wallet's books in SQLite: balances and transactions, each change one
    transaction of the database (committed before any answer)."""

    def __init__(self, path: str) -> None:
        self.db = sqlite3.connect(path, isolation_level=None, check_same_thread=False)
        self.db.execute("PRAGMA journal_mode=WAL")
        self.db.execute("PRAGMA synchronous=FULL")
        self.db.executescript(_SCHEMA)
        # Players not yet known start with this (None: unknown players are refused).
        self.opening_balance: int | None = None

    def close(self) -> None:
        self.db.close()

    def _txn(self, transaction_id: str) -> dict[str, Any] | None:
        row = self.db.execute(
            "SELECT transaction_id, kind, player, amount, status, reason, created_ms, balance "
            "FROM txns WHERE transaction_id = ?",
            (transaction_id,),
        ).fetchone()
        if row is None:
            return None
        keys = ("transaction_id", "kind", "player", "amount", "status", "reason")
        return {**dict(zip(keys, row[:6], strict=True)), "created_ms": row[6], "balance": row[7]}

    def set_balance(self, player: str, balance: int) -> None:
        self.db.execute(
            "INSERT INTO players (player, balance) VALUES (?, ?) "
            "ON CONFLICT (player) DO UPDATE SET balance = excluded.balance",
            (player, balance),
        )

    def balance(self, player: str) -> int | None:
        row = self.db.execute("SELECT balance FROM players WHERE player = ?", (player,)).fetchone()
        if row is None:
            return self.opening_balance
        return int(row[0])

    def move(
        self, kind: str, transaction_id: str, player: str, amount: int, reason: str
    ) -> tuple[int, dict[str, Any]]:
        """Apply a debit or a credit once by its id: (HTTP status, answer)."""
        self.db.execute("BEGIN IMMEDIATE")
        try:
            found = self._txn(transaction_id)
            if found is not None:
                self.db.execute("ROLLBACK")
                same = (found["kind"], found["player"], found["amount"]) == (kind, player, amount)
                if found["status"] == "cancelled":
                    return 409, {"error": "cancelled", "transaction": found}
                if not same:
                    return 409, {"error": "conflict", "transaction": found}
                return 200, {**found, "duplicate": True}
            balance = self.balance(player)
            if balance is None:
                self.db.execute("ROLLBACK")
                return 404, {"error": "unknown_player"}
            after = balance - amount if kind == "debit" else balance + amount
            if after < 0:
                self.db.execute("ROLLBACK")
                return 402, {"error": "insufficient_funds", "balance": balance}
            now = int(time.time() * 1000)
            self.set_balance(player, after)
            self.db.execute(
                "INSERT INTO txns VALUES (?, ?, ?, ?, 'applied', ?, ?, ?)",
                (transaction_id, kind, player, amount, reason, now, after),
            )
            self.db.execute("COMMIT")
        except BaseException:
            with contextlib.suppress(sqlite3.Error):
                self.db.execute("ROLLBACK")
            raise
        return 200, {**(self._txn(transaction_id) or {}), "duplicate": False}

    def cancel(self, transaction_id: str) -> tuple[int, dict[str, Any]]:
        """Cancel an id not applied (recorded, so a late debit is refused)."""
        self.db.execute("BEGIN IMMEDIATE")
        found = self._txn(transaction_id)
        if found is not None:
            self.db.execute("ROLLBACK")
            if found["status"] == "applied":
                return 409, {"error": "applied", "transaction": found}
            return 200, found
        now = int(time.time() * 1000)
        self.db.execute(
            "INSERT INTO txns VALUES (?, '', '', 0, 'cancelled', '', ?, 0)", (transaction_id, now)
        )
        self.db.execute("COMMIT")
        return 200, self._txn(transaction_id) or {}

    def status(self, transaction_id: str) -> dict[str, Any] | None:
        return self._txn(transaction_id)

    def window(self, from_ms: int, to_ms: int, after: str, limit: int) -> list[dict[str, Any]]:
        """Transactions created in ``[from_ms, to_ms)``, after the cursor ``after``
        (``<created_ms>:<id>``)."""
        a_ms, _, a_id = after.partition(":")
        rows = self.db.execute(
            "SELECT transaction_id FROM txns WHERE created_ms >= ? AND created_ms < ? "
            "AND (created_ms, transaction_id) > (?, ?) ORDER BY created_ms, transaction_id "
            "LIMIT ?",
            (from_ms, to_ms, int(a_ms or -1), a_id, limit),
        ).fetchall()
        return [t for (i,) in rows if (t := self._txn(i)) is not None]

    def state(self) -> dict[str, Any]:
        players = dict(self.db.execute("SELECT player, balance FROM players").fetchall())
        ids = [i for (i,) in self.db.execute("SELECT transaction_id FROM txns ORDER BY rowid")]
        return {"players": players, "transactions": [self._txn(i) for i in ids]}


class ReferenceWallet:
    """The API app and the admin app around one :class:`Ledger`."""

    def __init__(self, ledger: Ledger, secret: str) -> None:
        self.ledger = ledger
        self.secret = secret
        self.faults = Faults()
        self.api = web.Application(middlewares=[self._middleware])
        self.api.add_routes(
            [
                web.post("/v1/debit", self._debit),
                web.post("/v1/credit", self._credit),
                web.get("/v1/transactions", self._list),
                web.get("/v1/transactions/{id}", self._status),
                web.post("/v1/transactions/{id}/cancel", self._cancel),
                web.get("/v1/players/{player}/balance", self._balance),
            ]
        )
        self.admin = web.Application()
        self.admin.add_routes(
            [
                web.post("/admin/faults", self._set_faults),
                web.post("/admin/players", self._set_player),
                web.get("/admin/state", self._state),
            ]
        )
        self._api_runner: web.AppRunner | None = None
        self._api_site: web.TCPSite | None = None
        self.host = "127.0.0.1"
        self.port = 0

    @web.middleware
    async def _middleware(self, request: web.Request, handler: Any) -> web.StreamResponse:
        if self.faults.down:
            # A connection kept alive from before: dropped, as a dead wallet's would be.
            if request.transport is not None:
                request.transport.close()
            raise web.HTTPServiceUnavailable
        given = request.headers.get("Authorization", "")
        if not hmac.compare_digest(given.encode(), f"Bearer {self.secret}".encode()):
            return web.json_response({"error": "unauthorized"}, status=401)
        if self.faults.delay_ms:
            # The request read first: it is processed whole after the delay, though
            # its client may have given up by then (an answer that comes late).
            await request.read()
            await asyncio.sleep(self.faults.delay_ms / 1000)
        if self.faults.fail > 0:
            self.faults.fail -= 1
            return web.json_response({"error": "injected fault"}, status=500)
        response: web.StreamResponse = await handler(request)
        return response

    def _answer(self, request: web.Request, status: int, body: dict[str, Any]) -> web.Response:
        if status == 200 and self.faults.drop_after_commit > 0 and not body.get("duplicate"):
            # Committed, and the answer lost: the connection closes with none.
            self.faults.drop_after_commit -= 1
            if request.transport is not None:
                request.transport.close()
        return web.json_response(body, status=status)

    async def _move(self, request: web.Request, kind: str) -> web.Response:
        try:
            body = await request.json()
            txid, player = str(body["transaction_id"]), str(body["player"])
            amount, reason = int(body["amount"]), str(body.get("reason", ""))
        except (ValueError, KeyError, TypeError):
            return web.json_response({"error": "bad_request"}, status=400)
        if amount <= 0 or not txid or len(txid) > 128:
            return web.json_response({"error": "bad_request"}, status=400)
        status, answer = self.ledger.move(kind, txid, player, amount, reason)
        return self._answer(request, status, answer)

    async def _debit(self, request: web.Request) -> web.Response:
        return await self._move(request, "debit")

    async def _credit(self, request: web.Request) -> web.Response:
        return await self._move(request, "credit")

    async def _status(self, request: web.Request) -> web.Response:
        found = self.ledger.status(request.match_info["id"])
        if found is None:
            return web.json_response({"error": "not_found"}, status=404)
        return web.json_response(found)

    async def _cancel(self, request: web.Request) -> web.Response:
        status, body = self.ledger.cancel(request.match_info["id"])
        return web.json_response(body, status=status)

    async def _list(self, request: web.Request) -> web.Response:
        q = request.query
        try:
            from_ms, to_ms = int(q["from_ms"]), int(q["to_ms"])
            limit = min(1000, max(1, int(q.get("limit", "500"))))
        except (KeyError, ValueError):
            return web.json_response({"error": "bad_request"}, status=400)
        found = self.ledger.window(from_ms, to_ms, q.get("cursor", ""), limit)
        last = found[-1] if len(found) == limit else None
        cursor = f"{last['created_ms']}:{last['transaction_id']}" if last else None
        return web.json_response({"transactions": found, "next_cursor": cursor})

    async def _balance(self, request: web.Request) -> web.Response:
        player = request.match_info["player"]
        balance = self.ledger.balance(player)
        if balance is None:
            return web.json_response({"error": "unknown_player"}, status=404)
        return web.json_response({"player": player, "balance": balance})

    async def _set_faults(self, request: web.Request) -> web.Response:
        body = await request.json()
        f = self.faults
        f.delay_ms = int(body.get("delay_ms", f.delay_ms))
        f.fail = int(body.get("fail", f.fail))
        f.drop_after_commit = int(body.get("drop_after_commit", f.drop_after_commit))
        if "down" in body and bool(body["down"]) != f.down:
            f.down = bool(body["down"])
            await (self.stop_api() if f.down else self.start_api())
        return web.json_response(
            {
                "delay_ms": f.delay_ms,
                "fail": f.fail,
                "drop_after_commit": f.drop_after_commit,
                "down": f.down,
            }
        )

    async def _set_player(self, request: web.Request) -> web.Response:
        body = await request.json()
        self.ledger.set_balance(str(body["player"]), int(body["balance"]))
        return web.json_response({"ok": True})

    async def _state(self, request: web.Request) -> web.Response:
        return web.json_response(self.ledger.state())

    async def start_api(self) -> None:
        """Listen on the API's port (the same port each time)."""
        if self._api_runner is None:
            self._api_runner = web.AppRunner(self.api, handle_signals=False)
            await self._api_runner.setup()
        self._api_site = web.TCPSite(self._api_runner, self.host, self.port, reuse_address=True)
        await self._api_site.start()
        if not self.port:
            server: Any = self._api_site._server  # the port the OS chose
            self.port = int(server.sockets[0].getsockname()[1])

    async def stop_api(self) -> None:
        """Stop listening, and close the connections open (the wallet is down)."""
        site, self._api_site = self._api_site, None
        if site is not None:
            await site.stop()


async def serve(args: argparse.Namespace) -> None:
    ledger = Ledger(args.db)
    if args.opening_balance is not None:
        ledger.opening_balance = args.opening_balance
    wallet = ReferenceWallet(ledger, args.secret)
    wallet.host, wallet.port = args.host, args.port
    await wallet.start_api()
    admin = web.AppRunner(wallet.admin, handle_signals=False)
    await admin.setup()
    admin_site = web.TCPSite(admin, "127.0.0.1", args.admin_port)
    await admin_site.start()
    server: Any = admin_site._server  # the port the OS chose
    admin_port = int(server.sockets[0].getsockname()[1])
    print(
        json.dumps({"listening": wallet.port, "admin": admin_port, "host": wallet.host}),
        flush=True,
    )
    stop = asyncio.Event()
    loop = asyncio.get_running_loop()
    for sig in (signal.SIGTERM, signal.SIGINT):
        loop.add_signal_handler(sig, stop.set)
    await stop.wait()
    await wallet.stop_api()
    if wallet._api_runner is not None:
        await wallet._api_runner.cleanup()
    await admin.cleanup()
    ledger.close()


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(
        prog="python -m server.wallet.reference", description="the reference wallet"
    )
    parser.add_argument("--host", default="127.0.0.1")
    parser.add_argument("--port", type=int, default=8790, help="the API's port (0: any)")
    parser.add_argument("--admin-port", type=int, default=0, help="faults (loopback; 0: any)")
    parser.add_argument("--secret", required=True, help="the shared bearer secret")
    parser.add_argument("--db", type=Path, default=Path("wallet.sqlite3"))
    parser.add_argument(
        "--opening-balance",
        type=int,
        default=None,
        help="a player the wallet does not know starts with this (default: refused)",
    )
    args = parser.parse_args(argv)
    args.db = str(args.db)
    logging.basicConfig(level=logging.INFO)
    asyncio.run(serve(args))


if __name__ == "__main__":
    main()
