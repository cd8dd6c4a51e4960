"""Chips between an account and a table, in two steps joined by a transfer id.

A table's keys and an account's live in different slots of a Redis Cluster, and no
script may touch both (docs/DESIGN.md, "Keys ready for Redis Cluster"). So chips
cross in two steps, each one script in one slot, and each step is idempotent by the
transfer's id; the table's slot always records what is under way, so that whoever
holds the table can finish it:

- *From an account to a table* (buy-in, rebuy), an :class:`Incoming`: the table's
  holder records it ``open`` in the table's slot (``TRANSFERS_OPEN``, fenced by its
  lease), the account reserves the chips (``CLAIM``: balance checked, debited, marker
  ``reserved``), the table's commit takes them (the record becomes ``received``); the
  account then settles the marker, and the table forgets the record. A transfer the
  commit did not take is made ``void`` in the table's slot first, so that no commit
  can take it afterwards, and only then refunded by the account (``REFUND``: a marker
  never reserved is refused for good, so a late reservation fails).
- *From a table to an account* (cash-out, leave, a seat stood up), a :class:`Delivery`:
  the table's commit records it in the table's slot with the chips leaving the table;
  the account applies it once (``DELIVER``: marker ``applied:<balance>``); the table
  then forgets it. A round's game logs travel to their players the same way, all the
  logs of one commit in one entry of the table's slot (:func:`pack_logs`: they share
  most of their bytes, so it is compressed), forgotten once each is delivered.

Until both sides are done, the chips are *in transit*: the audit counts a transfer
from the table's record and the account's marker (:mod:`server.store.audit.check`).
:meth:`Transfers.recover` finishes every transfer a table has under way, in the
same steps; the table's holder runs it when it takes the table and whenever a step
failed (:mod:`server.host.recovery`).
"""

from __future__ import annotations

import asyncio
import logging
from collections import defaultdict
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

import redis.asyncio

from server.store.chips.records import (
    ClientRequest,
    Delivery,
    Incoming,
    read_delivery,
    read_incoming,
    read_logs,
)
from server.store.client.batching import ScriptBatcher
from server.store.client.connection import is_cluster
from server.store.client.replies import as_bytes, as_int, as_str
from server.store.errors import StoreUnavailable, store_call
from server.store.keys import REQUEST_TTL_MS, TRANSFER_TTL_MS, Keys
from server.store.lua.accounts import (
    CLAIM,
    DELIVER,
    DELIVER_MANY,
    LOG_WINDOW,
    REFUND,
    SETTLE,
)
from server.store.lua.tables import TRANSFERS_FORGET, TRANSFERS_VOID

log = logging.getLogger(__name__)

OPEN, RECEIVED, VOID = "open", "received", "void"
"""The states of an incoming transfer in the table's slot."""


@dataclass(frozen=True, slots=True)
class Claim:
    """An account's answer to a claim: ``status`` (``OK``, ``MINE``, ``REUSED``,
    ``INSUFFICIENT``, ``FINISHED``), the balance (after the chips were reserved, for OK
    and MINE), and the amount wanted (INSUFFICIENT)."""

    status: str
    balance: int
    needed: int = 0


@dataclass(frozen=True, slots=True)
class Pending:
    """What a table has under way: its incoming transfers (id -> state and transfer),
    the chips it sends and the game logs on their way (``log_entries``: each entry of
    the ``logs`` hash -> the transfer ids of the logs it holds)."""

    incoming: Mapping[str, tuple[str, Incoming]]
    out: Sequence[Delivery]
    logs: Sequence[Delivery]
    log_entries: Mapping[str, tuple[str, ...]] = field(default_factory=dict)

    def __bool__(self) -> bool:
        return bool(self.incoming or self.out or self.logs)


@dataclass(slots=True)
class Recovered:
    """What :meth:`Transfers.recover` did: transfers delivered, settled, refunded,
    and how many steps failed (left for the next time)."""

    delivered: int = 0
    settled: int = 0
    refunded: int = 0
    failed: int = 0
    errors: list[str] = field(default_factory=list)


def _made(item: Delivery) -> tuple[int, int]:
    """When a delivery was made: its commit's version and its place in the commit (from
    :func:`~server.store.tables.commit_args.transfer_id`), so that a player gets a table's
    game logs in the order of its rounds."""
    parts = item.transfer_id.split(".")  # a table id has no dot
    try:
        return int(parts[1]), int(parts[2])
    except (IndexError, ValueError):
        return 0, 0


class Transfers:
    """The chips between tables and accounts (``store.transfers`` of a
    :class:`~server.store.tables.store.TableStore`): the steps of the module docstring
    but the commit's own. Script calls share the commits' ``batch``.
    ``ledger_maxlen``: approximate bound of an account's ledger stream; ``log_cap``:
    game logs kept per player. Raises :class:`~server.store.errors.StoreUnavailable`
    where Redis failed."""

    def __init__(
        self,
        client: redis.asyncio.Redis,
        keys: Keys,
        batch: ScriptBatcher,
        *,
        ledger_maxlen: int,
        log_cap: int,
    ) -> None:
        self.redis = client
        self.keys = keys
        self.ledger_maxlen = ledger_maxlen
        self.log_cap = log_cap
        self._batch = batch
        self._void = client.register_script(TRANSFERS_VOID)
        self._forget = client.register_script(TRANSFERS_FORGET)
        self._claim = client.register_script(CLAIM)
        self._refund = client.register_script(REFUND)
        self._settle = client.register_script(SETTLE)
        self._deliver = client.register_script(DELIVER)
        self._deliver_many = client.register_script(DELIVER_MANY)

    # --- the table's side ------------------------------------------------------------

    @store_call
    async def void(self, table_id: str, ids: Sequence[str]) -> dict[str, str]:
        """Make the open transfers among ``ids`` void (no commit takes them after this);
        each one's state before (``''``: unknown to the table)."""
        if not ids:
            return {}
        raw = await self._batch.call(self._void, [self.keys.transfers_in(table_id)], list(ids))
        return {i: as_str(r).split(":", 1)[0] for i, r in zip(ids, raw, strict=True)}

    @store_call
    async def forget(
        self,
        table_id: str,
        incoming: Iterable[str] = (),
        out: Iterable[str] = (),
        logs: Iterable[str] = (),
    ) -> None:
        """Forget finished transfers and delivered logs (the entries of the ``logs``
        hash, see :attr:`Pending.log_entries`) in the table's slot."""
        ins, outs, logged = list(incoming), list(out), list(logs)
        if not (ins or outs or logged):
            return
        keys = self._under_way(table_id)
        await self._batch.call(self._forget, keys, [len(ins), len(outs), *ins, *outs, *logged])

    def _under_way(self, table_id: str) -> list[str]:
        """The table's three hashes of what it has under way (one slot)."""
        k = self.keys
        return [k.transfers_in(table_id), k.transfers_out(table_id), k.logs_out(table_id)]

    @store_call
    async def has_pending(self, table_id: str) -> bool:
        """Whether the table has anything under way at all: one command, where
        :meth:`pending` reads and parses it all."""
        return bool(await self.redis.exists(*self._under_way(table_id)))

    @store_call
    async def pending(self, table_id: str) -> Pending:
        """What the table has under way (read in one pipeline)."""
        k = self.keys
        async with self.redis.pipeline(transaction=False) as pipe:
            pipe.hgetall(k.transfers_in(table_id))
            pipe.hgetall(k.transfers_out(table_id))
            pipe.hgetall(k.logs_out(table_id))
            ins, outs, logs = await pipe.execute()
        entries = {as_str(name): read_logs(as_str(name), raw) for name, raw in logs.items()}
        return Pending(
            incoming={as_str(i): read_incoming(as_str(i), raw) for i, raw in ins.items()},
            out=[read_delivery(as_str(i), raw) for i, raw in outs.items()],
            logs=[d for items in entries.values() for d in items],
            log_entries={
                name: tuple(d.transfer_id for d in items) for name, items in entries.items()
            },
        )

    # --- the account's side ----------------------------------------------------------

    @store_call
    async def claim(
        self,
        table_id: str,
        player: str,
        request: ClientRequest | None,
        incoming: Incoming | None,
    ) -> Claim:
        """Claim ``request`` (its rid, once across tables) and reserve ``incoming`` from
        ``player``'s account, in one step of the account (either may be None)."""
        k = self.keys
        account = k.account(player)
        keys = [
            account,
            k.account_ledger(player),
            k.claim(player, request.rid) if request is not None else account,
            k.account_transfer(player, incoming.transfer_id) if incoming is not None else account,
        ]
        args: list[Any] = [
            player,
            table_id,
            request.fingerprint if request is not None else "",
            REQUEST_TTL_MS,
            incoming.transfer_id if incoming is not None else "",
            incoming.amount if incoming is not None else 0,
            incoming.key if incoming is not None else "",
            incoming.kind if incoming is not None else "",
            self.ledger_maxlen,
        ]
        reply = await self._batch.call(self._claim, keys, args)
        status = as_str(reply[0])
        needed = as_int(reply[2]) if status == "INSUFFICIENT" else 0
        return Claim(status, as_int(reply[1]), needed)

    @store_call
    async def claimed(self, player: str, rid: str) -> tuple[bytes, str] | None:
        """``(fingerprint, table id)`` of ``player``'s claimed request ``rid``, if any."""
        f, t = await self.redis.hmget(self.keys.claim(player, rid), ["f", "t"])
        return None if f is None else (as_bytes(f), as_str(t or b""))

    @store_call
    async def refund(self, table_id: str, transfer: Incoming) -> str:
        """Give back a void transfer's chips (or refuse it for good if never reserved);
        what the account's marker said before."""
        k = self.keys
        p = transfer.player
        keys = [k.account(p), k.account_ledger(p), k.account_transfer(p, transfer.transfer_id)]
        args = [p, transfer.transfer_id, transfer.amount, table_id, self.ledger_maxlen]
        reply = await self._batch.call(self._refund, keys, [*args, TRANSFER_TTL_MS])
        return as_str(reply[0])

    @store_call
    async def settle(self, transfer: Incoming) -> str:
        """End a transfer the table received; what the account's marker said before."""
        key = self.keys.account_transfer(transfer.player, transfer.transfer_id)
        return as_str(await self._batch.call(self._settle, [key], [TRANSFER_TTL_MS]))

    @store_call
    async def deliver(self, table_id: str, player: str, items: Sequence[Delivery]) -> list[int]:
        """Apply ``items`` (all ``player``'s) to the account, each once: the balance
        after each item that moves chips (0 for a log)."""
        if not items:
            return []
        keys, args = self._delivery(table_id, player, items)
        call = self._batch.call(self._deliver, keys, args)
        if any(not d.is_log for d in items):
            # An account that chips reach is listed (single-key command, any slot).
            await self.redis.sadd(self.keys.accounts(), player)
        return [as_int(b) for b in await call]

    @store_call
    async def deliver_all(
        self, table_id: str, by_player: Mapping[str, Sequence[Delivery]]
    ) -> dict[str, list[int] | Exception]:
        """:meth:`deliver` for each player, each one's balances or the error that
        stopped its delivery: in one script call on one Redis (a round's game logs go
        to six players at once; a failed call fails them all), one call a player on a
        Redis Cluster (their keys are in as many slots)."""
        players = [p for p, items in by_player.items() if items]
        if len(players) < 2 or is_cluster(self.redis):
            done = await asyncio.gather(
                *(self.deliver(table_id, p, by_player[p]) for p in players),
                return_exceptions=True,
            )
            for failure in done:
                if isinstance(failure, BaseException) and not isinstance(failure, Exception):
                    raise failure  # not a failed call: the caller is being stopped
            return dict(zip(players, done, strict=True))  # type: ignore[arg-type]
        keys: list[str] = []
        args: list[Any] = [len(players)]
        tails: list[Any] = []
        for p in players:
            k, a = self._delivery(table_id, p, by_player[p])
            keys += k
            args += [len(k), len(a)]
            tails += a
        try:
            # As deliver lists them: the accounts that chips reach.
            paid = [p for p in players if any(not d.is_log for d in by_player[p])]
            if paid:
                await self.redis.sadd(self.keys.accounts(), *paid)
            replies = await self._batch.call(self._deliver_many, keys, [*args, *tails])
        except Exception as exc:
            return dict.fromkeys(players, exc)
        return {p: [as_int(b) for b in r] for p, r in zip(players, replies, strict=True)}

    def _delivery(
        self, table_id: str, player: str, items: Sequence[Delivery]
    ) -> tuple[list[str], list[Any]]:
        """``DELIVER``'s keys and arguments for ``items``, all ``player``'s."""
        k = self.keys
        keys = [k.account(player), k.account_ledger(player), k.game_log(player)]
        keys += [keys[2] if d.is_log else k.account_transfer(player, d.transfer_id) for d in items]
        args: list[Any] = [
            player,
            table_id,
            self.ledger_maxlen,
            TRANSFER_TTL_MS,
            self.log_cap,
            LOG_WINDOW,
        ]
        for d in items:
            args += [d.transfer_id, d.kind, d.amount, d.key, d.record]
        return keys, args

    @store_call
    async def paid_balance(self, table_id: str, player: str, transfer_id: str) -> int | None:
        """``player``'s balance right after the table's transfer ``transfer_id`` paid
        them: as the account recorded it, or by delivering it now if it is still on its
        way (the table's holder only). None if neither side knows it."""
        marker = await self.redis.get(self.keys.account_transfer(player, transfer_id))
        if marker is not None and as_str(marker).startswith("applied:"):
            return int(as_str(marker).split(":", 1)[1])
        raw = await self.redis.hget(self.keys.transfers_out(table_id), transfer_id)
        if raw is None:
            return None
        return (await self.deliver(table_id, player, [read_delivery(transfer_id, raw)]))[0]

    # --- whole transfers -------------------------------------------------------------

    @store_call
    async def abort(self, table_id: str, incoming: Sequence[Incoming]) -> None:
        """Undo transfers from accounts that a commit did not take: void first, then
        refund (or settle, if the table did receive one after all), then forget."""
        if not incoming:
            return
        states = await self.void(table_id, [t.transfer_id for t in incoming])
        await asyncio.gather(
            *(self._finish_incoming(table_id, t, states[t.transfer_id]) for t in incoming)
        )
        await self.forget(table_id, incoming=[t.transfer_id for t in incoming])

    async def _finish_incoming(self, table_id: str, transfer: Incoming, state: str) -> None:
        if state == RECEIVED:
            await self.settle(transfer)
        elif state in (OPEN, VOID):  # OPEN: void now (the state it had)
            await self.refund(table_id, transfer)
        # '': the table never recorded it, so no account reserved it either.

    @store_call
    async def finish(
        self,
        table_id: str,
        received: Sequence[Incoming] = (),
        deliveries: Sequence[Delivery] = (),
        delivered: Sequence[Delivery] = (),
        log_entries: Sequence[str] = (),
    ) -> None:
        """After a commit: settle the transfers it ``received``, deliver
        ``deliveries``, then forget those and the ``delivered`` ones (chips: the
        game logs among them are forgotten by their entries, ``log_entries``)."""
        by_player: dict[str, list[Delivery]] = defaultdict(list)
        for d in deliveries:
            by_player[d.player].append(d)
        _, paid = await asyncio.gather(
            asyncio.gather(*(self.settle(t) for t in received)),
            self.deliver_all(table_id, by_player),
        )
        for failure in paid.values():
            if isinstance(failure, Exception):
                raise failure
        done = [*deliveries, *delivered]
        await self.forget(
            table_id,
            incoming=[t.transfer_id for t in received],
            out=[d.transfer_id for d in done if not d.is_log],
            logs=log_entries,
        )

    @store_call
    async def recover(self, table_id: str) -> Recovered:
        """Finish every transfer the table has under way (see the module docstring).

        Only the table's holder may run it, and only while none of its own commits is
        between its steps (the host runs it under the table's lock): an open transfer
        is taken for one whose commit will never come. A step that fails is counted
        and left for the next time; the others go on.
        """
        found = await self.pending(table_id)
        done = Recovered()
        if not found:
            return done
        forget_in: list[str] = []
        forget_out: list[str] = []
        logs_delivered: set[str] = set()

        by_player: dict[str, list[Delivery]] = defaultdict(list)
        for d in sorted([*found.out, *found.logs], key=_made):
            by_player[d.player].append(d)

        async def deliver(player: str, items: list[Delivery]) -> None:
            try:
                await self.deliver(table_id, player, items)
            except StoreUnavailable as exc:
                done.failed += len(items)
                done.errors.append(f"delivering to {player}: {exc}")
                return
            done.delivered += sum(not d.is_log for d in items)
            forget_out.extend(d.transfer_id for d in items if not d.is_log)
            logs_delivered.update(d.transfer_id for d in items if d.is_log)

        opened = [i for i, (state, _) in found.incoming.items() if state == OPEN]
        states = {i: state for i, (state, _) in found.incoming.items()}
        states.update(await self.void(table_id, opened))

        async def finish_incoming(transfer: Incoming) -> None:
            state = states[transfer.transfer_id]
            try:
                await self._finish_incoming(table_id, transfer, state)
            except StoreUnavailable as exc:
                done.failed += 1
                done.errors.append(f"transfer {transfer.transfer_id} of {transfer.player}: {exc}")
                return
            if state == RECEIVED:
                done.settled += 1
            elif state in (OPEN, VOID):
                done.refunded += 1
            forget_in.append(transfer.transfer_id)

        await asyncio.gather(
            *(deliver(p, items) for p, items in by_player.items()),
            *(finish_incoming(t) for _, t in found.incoming.values()),
        )
        forget_logs = [
            name for name, ids in found.log_entries.items() if logs_delivered.issuperset(ids)
        ]
        await self.forget(table_id, forget_in, forget_out, forget_logs)
        if done.delivered or done.settled or done.refunded or done.failed:
            log.info(
                "table %s: transfers recovered: %d delivered, %d settled, %d refunded, %d left",
                table_id,
                done.delivered,
                done.settled,
                done.refunded,
                done.failed,
            )
        return done
