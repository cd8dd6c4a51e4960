"""Player accounts: balances in Redis, money coming in from outside.

Chips enter the product only here: a guest's starting balance and operator credits,
each a ledger entry of kind ``credit`` from the ``outside`` pot in the account's own
ledger, counted in the account's ``in`` total that the audit balances against
everything held; they leave it when an idle guest account is closed
(:mod:`server.store.players.guests`), or by an operator's debit or reversal of a credit
(:meth:`AccountStore.operate`: entries of kind ``debit`` or ``reversal`` to the
``outside`` pot), counted in its ``out``. Every key of an account is in
the player's slot. Moves between an account and a table are transfers
(:mod:`server.store.chips.transfers`), made by the table's commits
(:mod:`server.store.tables.commit`).

The client must return bytes (``decode_responses`` off).
"""

from __future__ import annotations

import enum
import hashlib
import re
import time
from collections.abc import Sequence
from dataclasses import dataclass, field

import redis.asyncio

from server.auth.tokens import check_player
from server.store.chips.account_ledgers import AccountLedgerStore
from server.store.client.replies import as_int, as_str, stream_entries
from server.store.errors import store_call
from server.store.lua.accounts import CREDIT, OPERATE
from server.store.tables.commit_args import MAX_AMOUNT

OUTSIDE = "outside"
"""The ledger ``source`` of chips that come into the product (not a table pot)."""

CREDIT_KIND = "credit"
"""The ledger ``kind`` of chips that come into the product."""


def guest_key(player: str) -> str:
    """The ledger key of a guest's starting balance."""
    return f"guest:{player}"


OPERATOR_KEY = re.compile(r"[A-Za-z0-9_.-]{1,64}")
"""An operator's idempotency key: 1 to 64 of letters, digits, ``_``, ``.``, ``-`` (the
ledger key of its entry is ``op:<key>``, apart from every other ledger key)."""

MAX_REASON = 200
"""The longest reason an operator's move keeps (characters)."""


class Move(enum.StrEnum):
    """What an operator does to an account (:meth:`AccountStore.operate`)."""

    CREDIT = "credit"
    DEBIT = "debit"
    REVERSAL = "reversal"


class Refusal(enum.StrEnum):
    """Why an operator's move was refused, nothing written (:class:`MoveRefused`)."""

    KEY_REUSED = "key_reused"
    UNKNOWN_PLAYER = "unknown_player"
    CLOSED = "account_closed"
    INSUFFICIENT = "insufficient_balance"
    NO_ENTRY = "entry_not_found"
    NOT_A_CREDIT = "not_a_credit"
    REVERSED = "already_reversed"


_REFUSALS = {
    "conflict": Refusal.KEY_REUSED,
    "unknown": Refusal.UNKNOWN_PLAYER,
    "closed": Refusal.CLOSED,
    "insufficient": Refusal.INSUFFICIENT,
    "no_entry": Refusal.NO_ENTRY,
    "not_credit": Refusal.NOT_A_CREDIT,
    "reversed": Refusal.REVERSED,
}

_EXPLAINED = {
    Refusal.KEY_REUSED: "this idempotency key was used for another request",
    Refusal.UNKNOWN_PLAYER: "no such account (a credit may create it if asked)",
    Refusal.CLOSED: "the account was closed",
    Refusal.INSUFFICIENT: "the account holds fewer chips than that",
    Refusal.NO_ENTRY: "no such entry in the account's ledger in Redis",
    Refusal.NOT_A_CREDIT: "that entry is not a credit from outside",
    Refusal.REVERSED: "that credit was reversed before",
}


class MoveRefused(ValueError):
    """An operator's move refused, nothing moved: ``reason`` says why; ``balance`` the
    account's (where known), ``entry`` the ledger id concerned (the reversal that came
    first, for :attr:`Refusal.REVERSED`), ``amount`` what was asked."""

    def __init__(self, reason: Refusal, balance: int = 0, entry: str = "", amount: int = 0):
        super().__init__(_EXPLAINED[reason])
        self.reason = reason
        self.balance = balance
        self.entry = entry
        self.amount = amount


@dataclass(frozen=True, slots=True)
class Moved:
    """An operator's move done: ``applied`` False when it is the repeat of a key's
    first request (nothing moved now; the first result given again). ``balance``: the
    account's right after the move; ``entry``: its ledger id; ``amount``: chips moved."""

    applied: bool
    balance: int
    entry: str
    amount: int


@dataclass(frozen=True, slots=True)
class LedgerEntry:
    """One entry of an account's ledger as the operator sees it: ``extra`` holds its
    fields beyond the usual ones (``reason``, ``by``, ``reverses``, ``xfer``)."""

    entry: str
    key: str
    kind: str
    amount: int
    source: str
    dest: str
    table: str
    extra: dict[str, str] = field(default_factory=dict)


_ENTRY_FIELDS = ("key", "kind", "player", "amount", "source", "dest", "table")


def check_operator_key(key: str) -> str:
    """``key`` if it is an acceptable idempotency key (:data:`OPERATOR_KEY`), else
    ``ValueError``."""
    if not isinstance(key, str) or OPERATOR_KEY.fullmatch(key) is None:
        raise ValueError("an idempotency key is 1 to 64 of [A-Za-z0-9_.-]")
    return key


def fingerprint(move: Move, amount: int, reason: str, create: bool, target: str) -> str:
    """What a key's record keeps of the request it was used for: a repeat must ask
    the same."""
    text = f"{move.value}\n{amount}\n{int(create)}\n{target}\n{reason}"
    return hashlib.sha256(text.encode()).hexdigest()[:32]


@dataclass(frozen=True, slots=True)
class CreditResult:
    """``applied`` is False when the key (or the guest account) already existed."""

    applied: bool
    balance: int


class AccountStore(AccountLedgerStore):
    """Account balances, guest accounts and operator credits."""

    def register_scripts(self, client: redis.asyncio.Redis) -> None:
        self._credit = client.register_script(CREDIT)
        self._operate = client.register_script(OPERATE)

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

    @store_call
    async def operate(
        self,
        move: Move,
        player: str,
        *,
        key: str,
        reason: str,
        by: str,
        amount: int = 0,
        create: bool = False,
        entry: str = "",
    ) -> Moved:
        """An operator's credit, debit or reversal of ``player``'s account, at most
        once per ``key`` (per account): a repeat of the same request moves nothing and
        gets the first :class:`Moved` again (``applied`` False); the same key with
        another request is refused (:attr:`Refusal.KEY_REUSED`).

        A credit adds ``amount`` (> 0) chips from outside, to an account that exists
        unless ``create``; a debit takes ``amount`` back outside, never below zero; a
        reversal takes back the whole amount of the credit at ledger id ``entry``,
        once per credit, and only while the account holds it (else
        :attr:`Refusal.INSUFFICIENT`: nothing taken; a debit of what is left is the
        operator's own decision). ``reason`` (1 to :data:`MAX_REASON` characters) and
        ``by`` (who asked) go on the ledger entry. Refusals raise
        :class:`MoveRefused`; bad arguments ``ValueError``.
        """
        check_player(player)
        check_operator_key(key)
        reason = reason.strip()
        if not reason or len(reason) > MAX_REASON:
            raise ValueError(f"a reason is 1 to {MAX_REASON} characters")
        if move is Move.REVERSAL:
            if not re.fullmatch(r"\d{1,20}-\d{1,20}", entry):
                raise ValueError(f"not a ledger entry id: {entry!r}")
            amount, create = 0, False
        else:
            if isinstance(amount, bool) or not isinstance(amount, int) or amount <= 0:
                raise ValueError("an amount is a positive whole number of chips")
            if amount > MAX_AMOUNT:
                raise ValueError(f"amount above {MAX_AMOUNT}: {amount}")
            entry = ""
            create = create and move is Move.CREDIT
        k = self.keys
        if create:
            # Listed before any chip can reach it (as :meth:`credit` does).
            await self.redis.sadd(k.accounts(), player)
        status, balance, found, moved = await self._operate(
            keys=[
                k.account(player),
                k.credits(player),
                k.account_ledger(player),
                k.account_reversals(player),
            ],
            args=[
                player,
                move.value,
                amount,
                key,
                fingerprint(move, amount, reason, create, entry),
                reason,
                by,
                int(create),
                self.ledger_maxlen,
                entry,
            ],
        )
        status = as_str(status)
        if status in ("applied", "repeat"):
            return Moved(status == "applied", int(balance), as_str(found), int(moved))
        raise MoveRefused(_REFUSALS[status], int(balance), as_str(found), int(moved) or amount)

    @store_call
    async def ledger(self, player: str, count: int = 20, before: str = "+") -> list[LedgerEntry]:
        """The newest ``count`` entries of ``player``'s ledger in Redis (those older
        than the archive's window are in the archive), newest first, from ``before``
        (a ledger id, exclusive; ``+``: the newest)."""
        high = before if before == "+" else "(" + before
        raw = await self.redis.xrevrange(self.keys.account_ledger(player), high, "-", count=count)
        out = []
        for entry_id, fields in stream_entries(raw):
            text = {k: as_str(v) for k, v in fields.items()}
            out.append(
                LedgerEntry(
                    entry=entry_id,
                    key=text.get("key", ""),
                    kind=text.get("kind", ""),
                    amount=int(text.get("amount", "0")),
                    source=text.get("source", ""),
                    dest=text.get("dest", ""),
                    table=text.get("table", ""),
                    extra={k: v for k, v in text.items() if k not in _ENTRY_FIELDS},
                )
            )
        return out

    @store_call
    async def account_flags(self, player: str) -> dict[str, int]:
        """The account's ``guest``, ``seen`` and ``closed`` fields (absent: not there)."""
        raw = await self.redis.hmget(self.keys.account(player), ["guest", "seen", "closed"])
        names = ("guest", "seen", "closed")
        return {n: as_int(v) for n, v in zip(names, raw, strict=True) if v is not None}
