"""Storing one state change of a table, and the chips it moves to and from accounts.

:meth:`Commits.write` is the whole of it, in named steps:

1. *Before* (only for a money request, or chips coming from an account): the table's
   holder opens the transfers from accounts in the table's slot, and each account
   reserves its chips (the requester's also claims the request's rid, once across
   tables). A refusal here writes nothing at the table, and gives back what was
   reserved.
2. *The commit*: one ``COMMIT`` script in the table's slot, which writes the new state
   only if the caller's token is the current lease's and the stored version is the one
   the caller started from, applies the change's ledger entries, takes the open
   transfers and records the chips and game logs going out, all in one step
   (docs/DESIGN.md, "The commit: one Lua script").
3. *After*: each account paid by the commit gets its chips, and each player their
   game logs (awaited, one call per player, all at once: the reply states the balance
   they leave, and a player who hears of a round's results finds it in their history);
   the transfers taken are settled and everything finished forgotten in the
   background.

A crash between two steps leaves the table's slot saying what is under way, and the
table's next holder finishes it (:meth:`~server.store.chips.transfers.Transfers.recover`).
"""

from __future__ import annotations

import asyncio
import itertools
import logging
import secrets
from collections import defaultdict
from collections.abc import Mapping, Sequence
from dataclasses import replace
from typing import Any

import redis.asyncio
from redis.exceptions import RedisError

from server.store.chips.records import ClientRequest, Delivery, now_ms, read_record
from server.store.chips.transfers import Transfers
from server.store.client.batching import ScriptBatcher
from server.store.client.replies import as_int, as_str
from server.store.errors import StoreError, StoreUnavailable, Unreplicated
from server.store.keys import Keys, applied_bucket, consults_previous
from server.store.lua.tables import COMMIT, TRANSFERS_OPEN
from server.store.tables.applied import Requests
from server.store.tables.commit_args import (
    CommitResult,
    CommitStatus,
    Plan,
    Write,
    check_arguments,
    plan_transfers,
    read_reply,
    script_args,
    script_keys,
)
from server.store.tables.leftovers import Leftovers

log = logging.getLogger(__name__)

_ID_PREFIX = secrets.token_hex(6)
_ID_COUNT = itertools.count()


def new_commit_id() -> str:
    """An id no other commit has: a random prefix drawn once per process, then a count.
    (A commit is also named by its table, version and fencing token, which no other
    process shares.) A fresh ``secrets.token_hex`` a commit was a system call each."""
    return f"{_ID_PREFIX}{next(_ID_COUNT):x}"


class Commits:
    """The commit path of a :class:`~server.store.tables.store.TableStore` (its
    ``commits``): each change written in the steps of the module docstring, the
    transfers' steps by ``transfers``, the script calls sharing ``batch``; a step that
    fails is told to ``leftovers``.
    ``events_cap``: commits whose events are kept per table; ``ledger_maxlen``:
    approximate bound of the ledger streams."""

    def __init__(
        self,
        client: redis.asyncio.Redis,
        keys: Keys,
        batch: ScriptBatcher,
        transfers: Transfers,
        requests: Requests,
        leftovers: Leftovers,
        *,
        events_cap: int,
        ledger_maxlen: int,
    ) -> None:
        self.redis = client
        self.keys = keys
        self.transfers = transfers
        self.requests = requests
        self.leftovers = leftovers
        self.caps = (events_cap, ledger_maxlen)
        self._batch = batch
        self._commit = client.register_script(COMMIT)
        self._open = client.register_script(TRANSFERS_OPEN)
        # Steps after a commit that nobody waits for (settling, forgetting).
        self._background: set[asyncio.Task[None]] = set()

    async def drain(self, within: float = 10.0) -> None:
        """Wait (at most ``within`` seconds) for the steps running in the background."""
        if self._background:
            done, _ = await asyncio.wait(set(self._background), timeout=within)
            for task in done:  # a step stopped by anything but Redis: seen, not reraised
                if not task.cancelled():
                    task.exception()

    async def write(self, w: Write) -> CommitResult:
        """Store one state change atomically, or nothing; move its chips to and from
        accounts in the steps of the module docstring.

        ``w.parts``: the parts of the new state that differ from those stored (at
        least one; a name is any non-empty text), written over them: the stored
        parts then add up to the new state. The first commit over a table stored
        whole (:attr:`~server.store.tables.store.StoredTable.whole`) gives every part: it
        deletes the whole.

        ``w.commit_id`` names this commit; None draws a new one, so each call is a
        commit of its own. A commit made again with the same id and token (its reply
        was lost) is DUPLICATE, and makes every step after it again, each changing
        nothing the first time did.

        In order: DUPLICATE if this very commit is stored. Else STALE_LEASE unless
        ``token`` is the current lease's; STALE_VERSION unless the stored version (0
        for a new table) is ``expected_version``. With a ``request``: REPEATED with its
        record if this table applied it (within
        :data:`~server.store.keys.REQUEST_TTL_MS`), REUSED if its rid was claimed by
        another request (at any table). INSUFFICIENT if an account cannot pay its
        entries from the account (each is reserved on its own: a commit that also
        pays the account does not count). Then the ``entries`` whose key was not
        applied yet (within the last :data:`~server.store.keys.APPLIED_WINDOW` versions
        at least) are applied and go to the table's ledger, the parts and version are
        written, ``events`` (seq numbers following the stored last seq without a gap)
        are appended to the replay buffer and published on ``publish_channel`` (see
        :func:`~server.store.tables.replay.encode_published`), ``request`` is recorded; then
        the chips reach the accounts, and each ``(player, record)`` of ``logs`` reaches
        the player's capped game log.

        Raises ``ValueError`` for arguments that break this contract, Redis's own
        errors where Redis failed (a :class:`~server.store.errors.WritesRefused` if it
        refused the write; :meth:`TableStore.commit
        <server.store.tables.store.TableStore.commit>` raises the store's instead),
        :class:`~server.store.errors.StoreError` if the event numbers do not follow
        the stored ones, and :class:`~server.store.errors.Unreplicated` (its ``reply``
        the OK or DUPLICATE result) if the store waits for replicas and none
        acknowledged the commit in time: it is stored on the primary, not safe from a
        failover, and must not be acknowledged (its transfers are left to the table's
        next holder). A Redis error after the commit was stored is not raised: the
        result says ``pending``.
        """
        check_arguments(w)
        commit_id = w.commit_id if w.commit_id is not None else new_commit_id()
        plan = plan_transfers(w, commit_id)
        request = w.request
        balances: dict[str, int] = {}
        duplicate = False
        if request is not None or plan.incoming:
            before = await self._before(w, commit_id, plan)
            if isinstance(before, CommitResult):
                if before.status is not CommitStatus.DUPLICATE:
                    return before
                duplicate = True
            else:
                balances = before
        # The requester's balance after the request, when the claim knows it (not when
        # the commit pays the requester out: the account's marker will know it then).
        account = balances.get(request.player) if request and not plan.payout else None
        if duplicate:
            result = CommitResult(CommitStatus.DUPLICATE, stored_version=w.new_version)
        else:
            result = await self._store_change(w, commit_id, plan, account)
            if not result.ok:
                await self._abort_quietly(w.table_id, plan)
                return result
        if request is None and not (plan.incoming or plan.out or plan.logs):
            # Nothing for the accounts (a bet, a hand set): no step after the commit,
            # no task in the background, which were a fifth of a bet's time in the store.
            return result
        return await self._after(w.table_id, plan, result, request, balances)

    # --- 1. before ------------------------------------------------------------------

    async def _before(self, w: Write, commit_id: str, plan: Plan) -> CommitResult | dict[str, int]:
        """Open and reserve the chips from accounts, and claim ``w.request``: each
        claiming account's balance once done, or the refusal."""
        table_id, request = w.table_id, w.request
        skip: set[str] = set()
        if plan.incoming:
            opened = await self._open_all(w, commit_id, plan)
            if isinstance(opened, CommitResult):
                return opened
            skip = opened
        incoming = [t for t in plan.incoming if t.transfer_id not in skip]
        by_player: dict[str, list[Any]] = defaultdict(list)
        for t in incoming:
            by_player[t.player].append(t)
        if request is not None:
            by_player.setdefault(request.player, [])
        calls = []
        for player, mine in by_player.items():
            claimed = request if request is not None and player == request.player else None
            calls.append(self._claim_all(table_id, player, claimed, mine))
        try:
            claims = await asyncio.gather(*calls)
        except StoreUnavailable:
            await self._abort_quietly(table_id, plan)
            raise
        refusal: CommitResult | None = None
        finished = False
        balances: dict[str, int] = {}
        for player, (status, value, needed) in zip(by_player, claims, strict=True):
            if status == "REUSED":
                refusal = CommitResult(CommitStatus.REUSED, player=player, balance=value)
            elif status == "INSUFFICIENT" and refusal is None:
                refusal = CommitResult(
                    CommitStatus.INSUFFICIENT, player=player, balance=value, needed=needed
                )
            elif status == "FINISHED":
                # The account settled, refunded or refused this commit's transfer
                # already: the commit was made and finished long ago, or refused.
                finished = True
            else:
                balances[player] = value
                if (
                    request is not None
                    and player == request.player
                    and status == "MINE"
                    and not plan.incoming
                ):
                    # Claimed before by an attempt that may have been applied here.
                    record = await self.requests.record(table_id, request.player, request.rid)
                    if record is not None:
                        return CommitResult(CommitStatus.REPEATED, request=record)
        if refusal is not None or finished:
            await self._abort_quietly(table_id, plan)
        if finished:
            raise StoreError(f"table {table_id}: a transfer of this commit is finished")
        return refusal if refusal is not None else balances

    async def _open_all(self, w: Write, commit_id: str, plan: Plan) -> CommitResult | set[str]:
        """``TRANSFERS_OPEN``: the transfers not opened (their entry is applied), or
        the refusal."""
        table_id, new_version, request = w.table_id, w.new_version, w.request
        k = self.keys
        bucket = applied_bucket(new_version)
        inbound = k.transfers_in(table_id)
        keys = [
            k.table_lease(table_id),
            inbound,
            k.table_request(table_id, request.player, request.rid) if request else inbound,
            k.table_state(table_id),
            k.applied(table_id, bucket),
            k.applied(table_id, bucket - 1),
        ]
        ms = now_ms()
        args: list[Any] = [
            w.token,
            "1" if request else "0",
            new_version,
            commit_id,
            "1" if consults_previous(new_version) else "",
        ]
        for t in plan.incoming:
            args += [t.transfer_id, t.record("open", ms), t.key]
        reply = await self._batch.call(self._open, keys, args)
        status = as_str(reply[0])
        if status == "OK":
            return {as_str(x) for x in reply[1:]}
        if status == "REPEATED":
            return CommitResult(CommitStatus.REPEATED, request=read_record(table_id, reply[1:]))
        if status == "DUPLICATE":
            return CommitResult(CommitStatus.DUPLICATE, stored_version=new_version)
        lease = await self.redis.get(k.table_lease(table_id))
        current = as_str(lease).partition(":")[0] if lease is not None else ""
        return CommitResult(CommitStatus.STALE_LEASE, lease_token=int(current) if current else None)

    async def _claim_all(
        self, table_id: str, player: str, request: ClientRequest | None, incoming: list[Any]
    ) -> tuple[str, int, int]:
        """One account's claims, one per transfer (the request's with the first):
        ``(status, balance, needed)`` of the last, or of the first refusal."""
        result = ("OK", 0, 0)
        for i, t in enumerate(incoming or [None]):
            claim = await self.transfers.claim(table_id, player, request if i == 0 else None, t)
            result = (claim.status, claim.balance, claim.needed)
            if claim.status not in ("OK", "MINE"):
                break
        return result

    # --- 2. the commit ----------------------------------------------------------------

    async def _store_change(
        self, w: Write, commit_id: str, plan: Plan, account: int | None
    ) -> CommitResult:
        """The ``COMMIT`` script; a lost reply is told from the stored table."""
        table_id = w.table_id
        keys = script_keys(self.keys, table_id, w.new_version, w.request)
        args = script_args(
            w, plan, account=account, caps=self.caps, commit_id=commit_id, now_ms=now_ms()
        )
        try:
            reply = await self._batch.call(self._commit, keys, args, durable=True)
        except Unreplicated as exc:
            result = read_reply(table_id, exc.reply)
            if result.ok:
                self.leftovers.left(table_id)
                raise Unreplicated(result) from None
            return result  # a refusal wrote nothing
        except (RedisError, OSError):
            # The reply was lost: was the change stored? (If Redis cannot say either,
            # the error stands, and the table's next recovery finishes its transfers.)
            self.leftovers.left(table_id)
            if not await self._is_stored(table_id, w.token, w.new_version, commit_id):
                await self._abort_quietly(table_id, plan)
                raise
            log.warning("table %s: commit stored, its reply lost", table_id)
            return CommitResult(CommitStatus.DUPLICATE, stored_version=w.new_version)
        try:
            return read_reply(table_id, reply)
        except StoreError:
            await self._abort_quietly(table_id, plan)
            raise

    async def _is_stored(self, table_id: str, token: int, version: int, commit_id: str) -> bool:
        """Whether version ``version`` of the table is this commit's."""
        stored = await self.redis.hmget(self.keys.table_state(table_id), ["v", "tok", "cid"])
        v, tok, cid = stored
        return as_int(v) == version and as_int(tok) == token and as_str(cid or b"") == commit_id

    # --- 3. after -----------------------------------------------------------------------

    async def _after(
        self,
        table_id: str,
        plan: Plan,
        result: CommitResult,
        request: ClientRequest | None,
        claimed: Mapping[str, int],
    ) -> CommitResult:
        """Pay the accounts and deliver the game logs (awaited: a reply states the
        balance, and a player who sees the round's results finds it in their history),
        then settle and forget (in the background); ``result`` with the balances
        (``claimed``: the claiming accounts' after their claim)."""
        accounts = dict(claimed)
        pending = False
        by_player: dict[str, list[Delivery]] = defaultdict(list)
        for d in [*plan.out, *plan.logs]:
            by_player[d.player].append(d)
        paid = await self.transfers.deliver_all(table_id, by_player)
        delivered: list[Delivery] = []
        for player, items in by_player.items():
            balances = paid[player]
            if isinstance(balances, Exception):
                log.warning("table %s: delivering to %s failed (%s)", table_id, player, balances)
                pending = True
                accounts.pop(player, None)  # its balance after the payout is not known
                continue
            chips = [b for d, b in zip(items, balances, strict=True) if not d.is_log]
            if chips:
                accounts[player] = chips[-1]
            delivered += items
        # The commit's game logs are one entry of the table's slot: forgotten once each
        # of them is delivered (else recovery delivers them all again, each once).
        logs_done = [plan.log_entry] if plan.logs and not pending else []
        if result.status is CommitStatus.DUPLICATE:
            # Which transfers from accounts it took is known to the table only: void
            # settles those it took and refunds the others.
            finishing = self._finish_quietly(table_id, [], delivered, logs_done, plan.incoming)
        else:
            taken = [t for t in plan.incoming if t.transfer_id in result.taken]
            left = [t for t in plan.incoming if t.transfer_id not in result.taken]
            finishing = self._finish_quietly(table_id, taken, delivered, logs_done, left)
        for t in plan.incoming:  # as they are now, for an entry applied before
            if t.player not in accounts:
                raw = await self.redis.hget(self.keys.account(t.player), "balance")
                accounts[t.player] = as_int(raw)
        self._in_background(table_id, finishing)
        if request is not None and request.player not in accounts:
            pending = True
        if pending:
            self.leftovers.left(table_id)
        return replace(result, accounts=accounts, pending=pending)

    async def _finish_quietly(
        self,
        table_id: str,
        taken: Sequence[Any],
        delivered: Sequence[Delivery],
        log_entries: Sequence[str],
        left: Sequence[Any],
    ) -> None:
        await self.transfers.finish(
            table_id, received=taken, delivered=delivered, log_entries=log_entries
        )
        if left:
            await self.transfers.abort(table_id, left)

    async def _abort_quietly(self, table_id: str, plan: Plan) -> None:
        """Undo the plan's transfers from accounts; a failure is left to recovery."""
        try:
            await self.transfers.abort(table_id, plan.incoming)
        except StoreUnavailable as exc:
            log.warning("table %s: transfers not undone (%s); left to recovery", table_id, exc)
            self.leftovers.left(table_id)

    def _in_background(self, table_id: str, work: Any) -> None:
        """Run ``work`` (a coroutine) beside the caller; a failure is left to recovery."""

        async def run() -> None:
            try:
                await work
            except StoreUnavailable as exc:
                log.warning(
                    "table %s: transfers not finished (%s); left to recovery", table_id, exc
                )
                self.leftovers.left(table_id)

        task = asyncio.get_running_loop().create_task(run())
        self._background.add(task)
        task.add_done_callback(self._background.discard)
