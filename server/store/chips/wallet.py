"""The operator's wallet, Redis's side (wallet mode; docs/DESIGN.md, "The operator's
wallet").

In wallet mode a player's chips live in the operator's wallet, and the player's
account here is a pass-through: a buy-in's chips come into it from the wallet just
before the table's usual transfer takes them, and chips a table pays out go back to
the wallet from it. Every step is one script in the player's slot, so each is atomic
and the account's ledger records it (the audit needs nothing new to add them up):

- *A debit* (buy-in, rebuy) is an **intent** written before the wallet is asked
  (:meth:`WalletStore.open`): its transaction id, ``<base>-<attempt>``, follows from the
  request (``base``: :func:`debit_base`) and the attempt, so that every retry, and the
  recovery after a crash, asks about the same one. The wallet's answer applies it
  (:meth:`apply`: the chips come into the account from outside, held for the request)
  or voids it (:meth:`void`); the request then releases it (:meth:`release`).
- *A credit* (cash-out, leave, a seat freed, a table closed) is queued by
  :meth:`sweep`: the account's chips that no request holds leave it for the player's
  outbox in one step, under a transaction id from the account's own counter; the
  outbox is sent in order until the wallet acknowledges each (:meth:`ack`).
"""

from __future__ import annotations

import hashlib
from collections.abc import Iterable
from dataclasses import dataclass

import redis.asyncio

from server.store.chips.account_ledgers import AccountLedgerStore
from server.store.chips.records import now_ms
from server.store.client.replies import as_int, as_str
from server.store.errors import store_call
from server.store.lua.wallet import (
    INTENT_APPLY,
    INTENT_OPEN,
    INTENT_RELEASE,
    INTENT_VOID,
    OUTBOX_ACK,
    SWEEP,
)


def debit_base(player: str, request_key: str) -> str:
    """The base of the transaction ids of ``player``'s request ``request_key``
    (``<session>:<rid>``): the same for every retry of the request, unique to it."""
    digest = hashlib.blake2b(f"{player}\0{request_key}".encode(), digest_size=12).hexdigest()
    return f"pgd-{digest}"


def credit_prefix(player: str) -> str:
    """The prefix of ``player``'s credit transaction ids (then ``-<n>``)."""
    return f"pgc-{hashlib.blake2b(player.encode(), digest_size=12).hexdigest()}"


@dataclass(frozen=True, slots=True)
class Intent:
    """A debit's intent as :meth:`WalletStore.open` found or made it: ``state``
    (``open``: ask the wallet; ``applied``: in the account, held; ``done``: the table
    took it; ``other``: the request asked another amount; ``guest``: a guest's account,
    the wallet not asked), the transaction id and the amount."""

    player: str
    base: str
    state: str
    txid: str
    amount: int


@dataclass(frozen=True, slots=True)
class OpenIntent:
    """An open intent found by :meth:`WalletStore.open_intents`: since ``ms``."""

    player: str
    base: str
    txid: str
    amount: int
    ms: int


@dataclass(frozen=True, slots=True)
class WalletTxn:
    """One wallet transaction as this server recorded it: ``kind`` (``debit`` or
    ``credit``), ``amount``, ``state`` (a debit ``open``, ``applied`` or ``void``; a
    credit ``pending`` or ``acked``), when (ms)."""

    player: str
    txid: str
    kind: str
    amount: int
    state: str
    ms: int


def _txn(player: str, txid: str, raw: bytes | str) -> WalletTxn:
    kind, amount, state, ms = as_str(raw).split("|")
    return WalletTxn(player, txid, kind, int(amount), state, int(ms))


class WalletStore(AccountLedgerStore):
    """The intents, the outboxes and this server's record of the wallet's
    transactions (see the module docstring). Raises
    :class:`~server.store.errors.StoreUnavailable` where Redis failed: a step may or
    may not have been made then, and every step is safe to make again."""

    def register_scripts(self, client: redis.asyncio.Redis) -> None:
        self._open = client.register_script(INTENT_OPEN)
        self._apply = client.register_script(INTENT_APPLY)
        self._void = client.register_script(INTENT_VOID)
        self._release = client.register_script(INTENT_RELEASE)
        self._sweep = client.register_script(SWEEP)
        self._ack = client.register_script(OUTBOX_ACK)

    # --- debits -------------------------------------------------------------------

    @store_call
    async def open(self, player: str, request_key: str, amount: int) -> Intent:
        """The intent of ``player``'s debit of ``amount`` for request ``request_key``:
        written now (``open``) unless one is under way or done (see :class:`Intent`).
        Written before the wallet is asked, so a crash leaves it for recovery."""
        k = self.keys
        base = debit_base(player, request_key)
        # Listed first (single-key commands, their own slots): recovery finds it.
        await self.redis.sadd(k.wallet_players(), player)
        await self.redis.sadd(k.wallet_work(), player)
        raw = await self._open(
            keys=[k.wallet_intents(player), k.wallet_txns(player), k.account(player)],
            args=[base, amount, now_ms()],
        )
        state, txid, asked = as_str(raw[0]), as_str(raw[1]), as_int(raw[2])
        return Intent(player, base, state, txid, asked)

    @store_call
    async def apply(self, player: str, base: str, txid: str, *, hold: bool) -> str:
        """The wallet applied debit ``txid``: its chips into the account (once), held
        for the request if ``hold``; the intent's state before (``open`` when this
        call applied it)."""
        k = self.keys
        await self.redis.sadd(k.accounts(), player)  # listed before a chip reaches it
        raw = await self._apply(
            keys=[
                k.wallet_intents(player),
                k.wallet_txns(player),
                k.account(player),
                k.account_ledger(player),
            ],
            args=[base, txid, player, self.ledger_maxlen, now_ms(), "hold" if hold else "release"],
        )
        return as_str(raw[0])

    @store_call
    async def void(self, player: str, base: str, txid: str) -> str:
        """The wallet refused debit ``txid`` or cancelled it unapplied; the state before."""
        k = self.keys
        raw = await self._void(
            keys=[k.wallet_intents(player), k.wallet_txns(player)], args=[base, txid, now_ms()]
        )
        return as_str(raw)

    @store_call
    async def release(self, player: str, base: str, txid: str, *, taken: bool) -> str:
        """The request that held debit ``txid``'s chips is over (``taken``: the table
        took them); the state before."""
        k = self.keys
        raw = await self._release(
            keys=[k.wallet_intents(player), k.account(player)],
            args=[base, txid, "done" if taken else "returned", now_ms()],
        )
        return as_str(raw)

    @store_call
    async def intent_state(self, player: str, base: str) -> str:
        """The state of ``player``'s intent ``base`` ('' : none)."""
        raw = await self.redis.hget(self.keys.wallet_intents(player), base)
        return "" if raw is None else as_str(raw).split("|", 1)[0]

    @store_call
    async def open_intents(self, player: str) -> list[OpenIntent]:
        """``player``'s intents still open or applied (held), for recovery."""
        raw = await self.redis.hgetall(self.keys.wallet_intents(player))
        found = []
        for base_raw, value in raw.items():
            state, attempt, amount, ms = as_str(value).split("|")
            if state in ("open", "applied"):
                base = as_str(base_raw)
                found.append(OpenIntent(player, base, f"{base}-{attempt}", int(amount), int(ms)))
        return found

    # --- credits ------------------------------------------------------------------

    @store_call
    async def sweep(self, player: str) -> tuple[int, str]:
        """Queue a credit of the chips ``player``'s account holds and no request holds:
        ``(amount, transaction id)``, ``(0, '')`` if none (or a guest's account)."""
        k = self.keys
        raw = await self._sweep(
            keys=[
                k.account(player),
                k.account_ledger(player),
                k.wallet_txns(player),
                k.wallet_outbox(player),
            ],
            args=[player, credit_prefix(player), self.ledger_maxlen, now_ms()],
        )
        amount = as_int(raw[0])
        if amount:
            await self.redis.sadd(k.wallet_players(), player)
            await self.redis.sadd(k.wallet_work(), player)
        return amount, as_str(raw[1])

    @store_call
    async def head(self, player: str) -> WalletTxn | None:
        """The oldest credit of ``player``'s outbox, if any."""
        k = self.keys
        txid = await self.redis.lindex(k.wallet_outbox(player), 0)
        if txid is None:
            return None
        raw = await self.redis.hget(k.wallet_txns(player), txid)
        if raw is None:  # written together by one script: never
            return WalletTxn(player, as_str(txid), "credit", 0, "pending", 0)
        return _txn(player, as_str(txid), raw)

    @store_call
    async def ack(self, player: str, txid: str) -> bool:
        """The wallet acknowledged credit ``txid``: whether it left the outbox (False:
        it was not the head, a late or duplicate answer)."""
        k = self.keys
        done = await self._ack(
            keys=[k.wallet_outbox(player), k.wallet_txns(player)], args=[txid, now_ms()]
        )
        return bool(as_int(done))

    @store_call
    async def outbox(self, player: str) -> list[WalletTxn]:
        """``player``'s credits waiting, oldest first."""
        k = self.keys
        ids = await self.redis.lrange(k.wallet_outbox(player), 0, -1)
        if not ids:
            return []
        raws = await self.redis.hmget(k.wallet_txns(player), ids)
        return [
            _txn(player, as_str(i), r)
            if r is not None
            else WalletTxn(player, as_str(i), "credit", 0, "pending", 0)
            for i, r in zip(ids, raws, strict=True)
        ]

    # --- who has work, and the record ---------------------------------------------

    @store_call
    async def with_work(self) -> list[str]:
        """Players with an open intent or a credit waiting (or who had one)."""
        return sorted(as_str(p) for p in await self.redis.smembers(self.keys.wallet_work()))

    @store_call
    async def done_with(self, player: str) -> None:
        """Take ``player`` off the workers' list if nothing is left to do (checked again
        after: a step that adds work adds the player back after its own write)."""
        k = self.keys
        if await self.redis.llen(k.wallet_outbox(player)):
            return
        if await self.open_intents(player):
            return
        await self.redis.srem(k.wallet_work(), player)
        # Work written meanwhile put the player back after its write, or is seen here.
        if await self.redis.llen(k.wallet_outbox(player)) or await self.open_intents(player):
            await self.redis.sadd(k.wallet_work(), player)

    @store_call
    async def players(self) -> list[str]:
        """Every player with a wallet transaction."""
        return sorted(as_str(p) for p in await self.redis.smembers(self.keys.wallet_players()))

    @store_call
    async def accounts(self) -> list[str]:
        """Every player with an account (for a sweep of them all)."""
        return sorted(as_str(p) for p in await self.redis.smembers(self.keys.accounts()))

    @store_call
    async def transactions(self, players: Iterable[str] | None = None) -> list[WalletTxn]:
        """This server's record of the wallet's transactions, of ``players`` (all by
        default), oldest first."""
        chosen = list(players) if players is not None else await self.players()
        found: list[WalletTxn] = []
        for p in chosen:
            raw = await self.redis.hgetall(self.keys.wallet_txns(p))
            found += [_txn(p, as_str(t), v) for t, v in raw.items()]
        return sorted(found, key=lambda t: (t.ms, t.txid))
