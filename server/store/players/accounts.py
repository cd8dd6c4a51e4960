"""Player accounts: balances in Redis, money coming in from outside.

Chips enter the product only here: a guest's starting balance and operator credits,
each a ledger entry of kind ``credit`` from the ``outside`` pot in the account's own
ledger, counted in the account's ``in`` total that the audit balances against
everything held; they leave it only when an idle guest account is closed
(:mod:`server.store.players.guests`), counted in its ``out``. Every key of an account is in
the player's slot. Moves between an account and a table are transfers
(:mod:`server.store.chips.transfers`), made by the table's commits
(:mod:`server.store.tables.commit`).

The client must return bytes (``decode_responses`` off).
"""

from __future__ import annotations

import time
from collections.abc import Sequence
from dataclasses import dataclass

import redis.asyncio

from server.auth.tokens import check_player
from server.store.client.replies import as_int, as_str
from server.store.errors import require_bytes_client, store_call
from server.store.keys import DEFAULT_KEYS, Keys
from server.store.lua.accounts import CREDIT
from server.store.tables.commit_args import MAX_AMOUNT
from server.store.tables.store import DEFAULT_LEDGER_MAXLEN

OUTSIDE = "outside"
"""The ledger ``source`` of chips that come into the product (not a table pot)."""

CREDIT_KIND = "credit"
"""The ledger ``kind`` of chips that come into the product."""


def guest_key(player: str) -> str:
    """The ledger key of a guest's starting balance."""
    return f"guest:{player}"


@dataclass(frozen=True, slots=True)
class CreditResult:
    """``applied`` is False when the key (or the guest account) already existed."""

    applied: bool
    balance: int


class AccountStore:
    """Account balances, guest accounts and operator credits."""

    def __init__(
        self,
        client: redis.asyncio.Redis,
        *,
        keys: Keys = DEFAULT_KEYS,
        ledger_maxlen: int = DEFAULT_LEDGER_MAXLEN,
    ) -> None:
        require_bytes_client(client)
        self.redis = client
        self.keys = keys
        self.ledger_maxlen = ledger_maxlen
        self._credit = client.register_script(CREDIT)

    async def _run(
        self, player: str, amount: int, key: str, mode: str, now_ms: int = 0
    ) -> CreditResult:
        check_player(player)
        if amount > MAX_AMOUNT:
            raise ValueError(f"amount above {MAX_AMOUNT}: {amount}")
        k = self.keys
        if mode == "credit" and await self.redis.hexists(k.legacy_credits(), key):
            # Applied under the first key layout, to an account the migration could
            # not name (docs/DESIGN.md, "Keys ready for Redis Cluster").
            return CreditResult(applied=False, balance=await self.balance(player) or 0)
        # Listed before any chip can reach it (a single-key command: the set has a slot
        # of its own, apart from the account's).
        await self.redis.sadd(k.accounts(), player)
        applied, balance = await self._credit(
            keys=[k.account(player), k.credits(player), k.account_ledger(player)],
            args=[player, amount, key, self.ledger_maxlen, mode, now_ms],
        )
        return CreditResult(applied=bool(applied), balance=int(balance))

    @store_call
    async def ensure_guest(
        self, player: str, starting_balance: int, now_ms: int | None = None
    ) -> CreditResult:
        """Create ``player``'s account with ``starting_balance`` (>= 0) if it has none,
        marked a guest's, active at ``now_ms`` (default: now).

        Idempotent: an existing account is left as it is (``applied`` False). The
        starting balance is a ledger credit keyed :func:`guest_key`.
        """
        if starting_balance < 0:
            raise ValueError("a starting balance is not negative")
        now = time.time_ns() // 1_000_000 if now_ms is None else now_ms
        return await self._run(player, starting_balance, guest_key(player), "guest", now)

    @store_call
    async def credit(self, player: str, amount: int, key: str) -> CreditResult:
        """Add ``amount`` (> 0) chips from outside to ``player``'s account (created if
        needed), at most once per ``key`` and account: a repeated key changes nothing.
        """
        if amount <= 0:
            raise ValueError("a credit is a positive amount")
        if not key:
            raise ValueError("a credit needs an idempotency key")
        return await self._run(player, amount, key, "credit")

    @store_call
    async def balance(self, player: str) -> int | None:
        """The account balance, or None if ``player`` has no account."""
        raw = await self.redis.hget(self.keys.account(player), "balance")
        return None if raw is None else as_int(raw)

    @store_call
    async def exists(self, player: str) -> bool:
        """Whether ``player`` has an account."""
        return bool(await self.redis.exists(self.keys.account(player)))

    @store_call
    async def list_accounts(self) -> list[tuple[str, int]]:
        """``(player, balance)`` of every account, sorted by player."""
        players = sorted([as_str(m) async for m in self.redis.sscan_iter(self.keys.accounts())])
        if not players:
            return []
        async with self.redis.pipeline(transaction=False) as pipe:
            for player in players:
                pipe.hget(self.keys.account(player), "balance")
            balances = await pipe.execute()
        return [(p, as_int(b)) for p, b in zip(players, balances, strict=True)]

    @store_call
    async def display_names(self, players: Sequence[str]) -> dict[str, str]:
        """The display name of each of ``players`` at their last hello (kept by
        :class:`~server.store.players.sessions.SessionStore`); a player never seen at a hello
        (an account only credited so far) has none."""
        if not players:
            return {}
        names = await self.redis.hmget(self.keys.names(), list(players))
        return {p: as_str(n) for p, n in zip(players, names, strict=True) if n is not None}
