"""The operator's wallet API, called over HTTP (the contract: protocol/wallet-api.yaml).

Every call answers, or raises one of two errors, and the difference is the whole point:

- :class:`WalletRefused`: the wallet answered with a definitive refusal (4xx): nothing
  was applied under that transaction id (``code`` says why: ``insufficient_funds``,
  ``cancelled``, ``conflict``, ``unknown_player``...).
- :class:`WalletUnknown`: no definitive answer (a timeout, a lost connection, a 5xx):
  the transaction may or may not be applied. The caller asks again with the same
  transaction id (the wallet applies an id once) or asks its status.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Any
from urllib.parse import quote

if TYPE_CHECKING:
    import aiohttp


class WalletError(Exception):
    """A call to the wallet that did not succeed."""


class WalletUnknown(WalletError):
    """No definitive answer: the transaction may or may not be applied."""


class WalletRefused(WalletError):
    """A definitive refusal: nothing applied under the transaction id. ``code``: the
    wallet's error code; ``body``: its whole answer."""

    def __init__(self, status: int, code: str, body: dict[str, Any]) -> None:
        super().__init__(f"wallet refused ({status} {code})")
        self.status = status
        self.code = code
        self.body = body


@dataclass(frozen=True, slots=True)
class Txn:
    """A transaction as the wallet records it."""

    transaction_id: str
    kind: str  # debit | credit
    player: str
    amount: int
    status: str  # applied | cancelled
    created_ms: int


def _q(part: str) -> str:
    """One segment of a URL's path."""
    return quote(part, safe="")


def _txn(body: dict[str, Any]) -> Txn:
    return Txn(
        str(body["transaction_id"]),
        str(body.get("kind", "")),
        str(body.get("player", "")),
        int(body.get("amount", 0)),
        str(body["status"]),
        int(body.get("created_ms", 0)),
    )


class WalletClient:
    """The wallet at ``base_url`` (``https://wallet.example/``), authenticated with a
    shared bearer ``secret``; each call gives up after ``timeout_s`` (then
    :class:`WalletUnknown`). Open it with :meth:`start` or ``async with``."""

    def __init__(self, base_url: str, secret: str, *, timeout_s: float = 3.0) -> None:
        self.base_url = base_url.rstrip("/")
        self.secret = secret
        self.timeout_s = timeout_s
        self._session: aiohttp.ClientSession | None = None

    async def start(self) -> None:
        # aiohttp is loaded here, by the first call: a node without a wallet (or a
        # command that calls none) does not spend its import time (docs/DESIGN.md, "Start
        # time").
        import aiohttp

        if self._session is None:
            self._session = aiohttp.ClientSession(
                headers={"Authorization": f"Bearer {self.secret}"},
                timeout=aiohttp.ClientTimeout(total=self.timeout_s),
            )

    async def close(self) -> None:
        session, self._session = self._session, None
        if session is not None:
            await session.close()

    async def __aenter__(self) -> WalletClient:
        await self.start()
        return self

    async def __aexit__(self, *exc: object) -> None:
        await self.close()

    async def _call(self, method: str, path: str, body: dict[str, Any] | None = None) -> Any:
        import aiohttp  # loaded by start() already: bound here for the except clauses

        await self.start()
        assert self._session is not None
        try:
            async with self._session.request(method, self.base_url + path, json=body) as r:
                try:
                    answer = await r.json(content_type=None)
                except (ValueError, aiohttp.ContentTypeError):
                    answer = None
                if r.status >= 500 or r.status in {401, 403}:
                    # 401/403: a wrong secret is an operator's fault to fix, not a
                    # refusal: nothing is known about the transaction.
                    raise WalletUnknown(f"wallet answered {r.status} to {method} {path}")
                if r.status >= 400:
                    data = answer if isinstance(answer, dict) else {}
                    raise WalletRefused(r.status, str(data.get("error", r.status)), data)
                if not isinstance(answer, dict):
                    raise WalletUnknown(f"wallet answered {r.status} with no JSON object")
                return answer
        except (TimeoutError, aiohttp.ClientError, OSError) as exc:
            raise WalletUnknown(f"{method} {path}: {exc!r}") from exc

    async def debit(self, transaction_id: str, player: str, amount: int, reason: str) -> int:
        """Take ``amount`` from ``player``'s wallet, once by ``transaction_id``; the
        balance after it."""
        body = {"transaction_id": transaction_id, "player": player, "amount": amount}
        answer = await self._call("POST", "/v1/debit", {**body, "reason": reason})
        return int(answer.get("balance", 0))

    async def credit(self, transaction_id: str, player: str, amount: int, reason: str) -> int:
        """Give ``amount`` to ``player``'s wallet, once by ``transaction_id``."""
        body = {"transaction_id": transaction_id, "player": player, "amount": amount}
        answer = await self._call("POST", "/v1/credit", {**body, "reason": reason})
        return int(answer.get("balance", 0))

    async def status(self, transaction_id: str) -> Txn | None:
        """The transaction as the wallet has it; None if it never heard of it."""
        try:
            return _txn(await self._call("GET", f"/v1/transactions/{_q(transaction_id)}"))
        except WalletRefused as exc:
            if exc.status == 404:
                return None
            raise

    async def cancel(self, transaction_id: str) -> Txn | None:
        """Make sure ``transaction_id`` is never applied: None once it is cancelled (an
        id never seen is recorded cancelled, so a debit arriving late is refused); the
        transaction if it was applied before (then nothing changed)."""
        try:
            await self._call("POST", f"/v1/transactions/{_q(transaction_id)}/cancel", {})
        except WalletRefused as exc:
            if exc.status == 409 and exc.code == "applied":
                return _txn(exc.body["transaction"])
            raise
        return None

    async def transactions(self, from_ms: int, to_ms: int) -> list[Txn]:
        """Every transaction created in ``[from_ms, to_ms)``, oldest first (pages
        followed to the end)."""
        found: list[Txn] = []
        cursor = ""
        while True:
            query = f"/v1/transactions?from_ms={from_ms}&to_ms={to_ms}&limit=500"
            answer = await self._call("GET", query + (f"&cursor={cursor}" if cursor else ""))
            found += [_txn(t) for t in answer.get("transactions", [])]
            cursor = str(answer.get("next_cursor") or "")
            if not cursor:
                return found

    async def balance(self, player: str) -> int:
        """``player``'s balance in the wallet."""
        return int((await self._call("GET", f"/v1/players/{_q(player)}/balance"))["balance"])
