"""A buy-in's debit of the operator's wallet, and the chips' way back to it.

The exactly-once argument (docs/DESIGN.md, "The operator's wallet"):

- **A debit** is written as an intent in Redis *before* the wallet is asked
  (:meth:`Funding.debit`), under a transaction id that follows from the request
  (player, session, rid) and the attempt: a retry of the request, and the recovery of
  a crashed one, ask about the same id, and the wallet applies an id once. Its chips
  enter the player's account only by the intent's one step ``open -> applied``
  (:meth:`~server.store.WalletStore.apply`), so a duplicate or late answer finds it
  applied or void and changes nothing. Until the table's commit takes them the chips
  are *held* for the request; the request releases them either way.
- **An open intent** whose request is gone (the server crashed, or the wallet never
  answered) is resolved by :meth:`Funding.resolve`: the wallet's status of the id
  says applied (its chips come in, and go back as a credit: no table took them) or
  unknown, and then the id is cancelled: the wallet records it so a debit arriving
  late is refused, or answers that it was applied after all.
- **A credit** is queued in the player's outbox in the same step that takes the chips
  out of the account (:meth:`~server.store.WalletStore.sweep`), under an id of its
  own, and sent in order, the same id again until the wallet acknowledges it.

Whatever holds chips here (tables, accounts, transit, the outbox) and whatever the
wallet records therefore differ only by what is under way, which the audit and
``paigow-server wallet reconcile`` check.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import random
import time
from collections.abc import Callable
from dataclasses import dataclass, field

from protocol.errors import ErrorCode
from server.config import Settings
from server.store import OpenIntent, Stores, StoreUnavailable, WalletStore
from server.table.errors import TableError
from server.wallet.client import WalletClient, WalletRefused, WalletUnknown

log = logging.getLogger(__name__)

after_debit_answer: Callable[[], None] | None = None
"""A test's seam, between the wallet's answer to a debit and its intent applied in
Redis (a test kills the process there). Nothing in the server sets it."""


@dataclass(frozen=True, slots=True)
class Hold:
    """Chips debited from the wallet and held in the account for one request."""

    player: str
    base: str
    txid: str
    amount: int


def wallet_unavailable(why: str) -> TableError:
    """The error of a buy-in the wallet could not take now (retryable)."""
    return TableError(
        ErrorCode.WALLET_UNAVAILABLE,
        f"the wallet could not take the buy-in now ({why}); no chip moved; try again",
    )


@dataclass(slots=True)
class _Backoff:
    """When a player's outbox may be tried again, and the delay after a failure."""

    not_before: float = 0.0
    delay: float = 0.0


@dataclass(slots=True)
class Counters:
    """What the workers did (for the logs and the tests)."""

    debits: int = 0
    credits_sent: int = 0
    credit_failures: int = 0
    intents_resolved: int = 0
    swept: int = 0
    errors: list[str] = field(default_factory=list)


class Funding:
    """Wallet mode's money path (see the module docstring): the debits of buy-ins, the
    release of their chips, and the workers (started by :meth:`start`) that send the
    outboxes, resolve the intents left open and sweep the accounts.

    ``resolve_after_ms``: an intent untouched this long belongs to no request still
    under way (well above the wallet's timeout). ``tick_s``: how often the workers
    look; ``sweep_every_s``: how often every account is swept (chips a table paid out
    without a request: a seat freed, a table closed); ``backoff_s``: the first and the
    longest wait before a player's outbox is tried again after a failure.
    """

    def __init__(
        self,
        store: WalletStore,
        client: WalletClient,
        *,
        resolve_after_ms: int = 30_000,
        tick_s: float = 0.5,
        sweep_every_s: float = 5.0,
        backoff_s: tuple[float, float] = (0.2, 30.0),
    ) -> None:
        self.store = store
        self.client = client
        self.resolve_after_ms = resolve_after_ms
        self.tick_s = tick_s
        self.sweep_every_s = sweep_every_s
        self.backoff_s = backoff_s
        self.counters = Counters()
        self._backoff: dict[str, _Backoff] = {}
        self._flushing: dict[str, asyncio.Lock] = {}
        self._task: asyncio.Task[None] | None = None
        self._kicks: set[asyncio.Task[None]] = set()
        self._last_sweep = 0.0

    # --- the request path -------------------------------------------------------------

    async def debit(self, player: str, request_key: str, amount: int, reason: str) -> Hold | None:
        """Debit ``amount`` for ``player``'s request ``request_key`` (``<session>:<rid>``)
        and hold the chips in the account for it; None if a previous attempt of this
        request was taken by the table already (its repeat is the table's to answer), or
        for a guest's account (a guest plays with this server's own chips).

        Raises ``TableError``: ``insufficient_balance`` (the wallet refused),
        ``wallet_unavailable`` (no definitive answer, the wallet down or refusing for
        another reason: no chip moved here; the intent stays for a retry or for
        recovery), ``rid_reused`` (the request asked another amount before), or
        ``unavailable`` (Redis failed)."""
        try:
            intent = await self.store.open(player, request_key, amount)
        except StoreUnavailable as exc:
            raise TableError(ErrorCode.UNAVAILABLE, "storage unavailable; try again") from exc
        if intent.state == "other":
            raise TableError(
                ErrorCode.RID_REUSED,
                "this rid was used for another amount; a new request needs a new rid",
            )
        if intent.state in ("done", "guest"):
            return None
        hold = Hold(player, intent.base, intent.txid, intent.amount)
        if intent.state == "applied":
            return hold  # a duplicate of a request under way: the table tells them apart
        try:
            await self.client.debit(intent.txid, player, amount, reason)
        except WalletRefused as exc:
            await self._void_quietly(hold)
            if exc.code == "insufficient_funds":
                raise TableError(
                    ErrorCode.INSUFFICIENT_BALANCE,
                    f"your wallet cannot pay a buy-in of {amount}",
                ) from exc
            raise wallet_unavailable(f"refused: {exc.code}") from exc
        except WalletUnknown as exc:
            # Ask again: the status of the id, then cancel it if the wallet never had it.
            if not await self._settle_unknown(hold, hold_chips=True):
                raise wallet_unavailable("no answer") from exc
        else:
            if after_debit_answer is not None:
                after_debit_answer()
            try:
                await self.store.apply(player, hold.base, hold.txid, hold=True)
            except StoreUnavailable as exc:
                # Left open: the retry or the recovery applies it (the wallet has it).
                raise TableError(ErrorCode.UNAVAILABLE, "storage unavailable; try again") from exc
        self.counters.debits += 1
        return hold

    async def _settle_unknown(self, hold: Hold, *, hold_chips: bool) -> bool:
        """An intent whose debit got no answer: applied if the wallet has it (True), else
        cancelled at the wallet and made void (False); left open if the wallet does not
        answer (False)."""
        try:
            found = await self.client.status(hold.txid)
            if found is None or found.status != "applied":
                found = await self.client.cancel(hold.txid)  # None: cancelled for good
        except (WalletUnknown, WalletRefused) as exc:
            log.info("wallet: debit %s of %s still unknown (%s)", hold.txid, hold.player, exc)
            return False
        if found is None:
            await self._void_quietly(hold)
            return False
        await self.store.apply(hold.player, hold.base, hold.txid, hold=hold_chips)
        return True

    async def _void_quietly(self, hold: Hold) -> None:
        try:
            await self.store.void(hold.player, hold.base, hold.txid)
        except StoreUnavailable as exc:  # left open: recovery asks the wallet again
            log.warning("wallet: intent %s not made void (%s)", hold.txid, exc)

    async def release(self, hold: Hold | None, *, taken: bool) -> None:
        """The request that held ``hold`` is over (``taken``: the table took the
        chips); whatever the account keeps goes back to the wallet."""
        if hold is not None:
            try:
                await self.store.release(hold.player, hold.base, hold.txid, taken=taken)
            except StoreUnavailable as exc:  # the recovery releases it
                log.warning("wallet: hold %s not released (%s)", hold.txid, exc)
                return
            self.kick(hold.player)

    def kick(self, player: str) -> None:
        """Sweep ``player``'s account and send the outbox, in the background."""
        task = asyncio.get_running_loop().create_task(self._sweep_and_send(player))
        self._kicks.add(task)
        task.add_done_callback(self._kicks.discard)

    async def _sweep_and_send(self, player: str) -> None:
        try:
            amount, _ = await self.store.sweep(player)
            if amount:
                self.counters.swept += amount
            await self.send(player)
        except StoreUnavailable as exc:
            log.warning("wallet: sweeping %s failed (%s); left to the workers", player, exc)

    # --- the outbox ---------------------------------------------------------------------

    async def send(self, player: str, *, now: float | None = None) -> bool:
        """Send ``player``'s outbox, oldest first, each credit until acknowledged; stop
        at the first failure and wait (backing off) before the next try. Whether the
        outbox is empty."""
        clock = time.monotonic() if now is None else now
        back = self._backoff.setdefault(player, _Backoff())
        if clock < back.not_before:
            return False
        lock = self._flushing.setdefault(player, asyncio.Lock())
        async with lock:
            while True:
                head = await self.store.head(player)
                if head is None:
                    self._backoff.pop(player, None)
                    return True
                try:
                    await self.client.credit(head.txid, player, head.amount, "cash_out")
                except (WalletUnknown, WalletRefused) as exc:
                    # A refused credit stays too: chips are never dropped; an operator
                    # reads the log (and the reconciliation) to fix the wallet's side.
                    first, longest = self.backoff_s
                    back.delay = min(longest, max(first, back.delay * 2))
                    back.not_before = time.monotonic() + back.delay * random.uniform(0.8, 1.2)
                    self.counters.credit_failures += 1
                    level = logging.ERROR if isinstance(exc, WalletRefused) else logging.INFO
                    log.log(level, "wallet: credit %s of %s waits (%s)", head.txid, player, exc)
                    return False
                await self.store.ack(player, head.txid)
                self.counters.credits_sent += 1
                back.delay = 0.0

    # --- recovery -------------------------------------------------------------------------

    async def resolve(self, intent: OpenIntent) -> bool:
        """Finish an intent no request holds any more (whether it is finished)."""
        hold = Hold(intent.player, intent.base, intent.txid, intent.amount)
        raw = await self.store.open_intents(intent.player)
        state = next((i for i in raw if i.txid == intent.txid), None)
        if state is None:
            return True
        applied = await self._is_applied(intent)
        if applied:
            # Applied in Redis and held by a request that is gone: released (a retry of
            # it is a new attempt), and the chips no table took go back by the outbox.
            await self.store.release(hold.player, hold.base, hold.txid, taken=False)
            done = True
        else:
            done = await self._settle_unknown(hold, hold_chips=False) or await self._closed(intent)
        if done:
            self.counters.intents_resolved += 1
        return done

    async def _is_applied(self, intent: OpenIntent) -> bool:
        """Whether the intent is applied in Redis (held) rather than open."""
        found = await self.store.intent_state(intent.player, intent.base)
        return found == "applied"

    async def _closed(self, intent: OpenIntent) -> bool:
        found = await self.store.intent_state(intent.player, intent.base)
        return found not in ("open", "applied")

    async def work_once(self) -> None:
        """One pass of the workers: each player with work (intents to resolve, an outbox
        to send), then every account swept if it is time."""
        now_ms = int(time.time() * 1000)
        for player in await self.store.with_work():
            try:
                for intent in await self.store.open_intents(player):
                    if now_ms - intent.ms >= self.resolve_after_ms:
                        await self.resolve(intent)
                await self._sweep_and_send(player)
                await self.store.done_with(player)
            except StoreUnavailable as exc:
                log.warning("wallet: work of %s left for later (%s)", player, exc)
        if time.monotonic() - self._last_sweep >= self.sweep_every_s:
            self._last_sweep = time.monotonic()
            for player in await self.store.accounts():
                amount, _ = await self.store.sweep(player)
                if amount:
                    self.counters.swept += amount
                    await self.send(player)

    async def _loop(self) -> None:
        while True:
            try:
                await self.work_once()
            except StoreUnavailable as exc:
                log.warning("wallet: workers' pass failed (%s)", exc)
            except Exception:
                log.exception("wallet: workers' pass failed")
            await asyncio.sleep(self.tick_s)

    def start(self) -> None:
        """Start the workers (and the client)."""
        if self._task is None:
            self._task = asyncio.get_running_loop().create_task(self._loop(), name="wallet")

    async def stop(self) -> None:
        """Stop the workers, wait for the sends under way, close the client."""
        task, self._task = self._task, None
        if task is not None:
            task.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await task
        if self._kicks:
            await asyncio.wait(set(self._kicks), timeout=5)
        await self.client.close()


def wallet_client(settings: Settings) -> WalletClient:
    """The wallet of ``settings`` (wallet mode); ``ValueError`` without its secret."""
    if not settings.wallet_url:
        raise ValueError("no wallet: --wallet-url (PAIGOW_WALLET_URL) is not set")
    if not settings.wallet_secret:
        raise ValueError("wallet mode needs --wallet-secret (PAIGOW_WALLET_SECRET)")
    return WalletClient(
        settings.wallet_url, settings.wallet_secret, timeout_s=settings.wallet_timeout_ms / 1000
    )


def wallet_funding(settings: Settings, stores: Stores) -> Funding:
    """Wallet mode's money path for a server on ``stores``."""
    return Funding(
        WalletStore(stores.client),
        wallet_client(settings),
        resolve_after_ms=settings.wallet_resolve_after_ms,
    )
