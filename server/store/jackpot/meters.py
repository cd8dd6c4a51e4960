"""Progressive jackpots in Redis: a meter shared by every table that names it, on any node.

A jackpot ``j`` has its own slot (``{j}``, :mod:`server.store.keys`): its hash (the
meter and its totals), its ledger stream, a marker per contribution and hit, and the
hits on their way to their players. Chips move in three kinds of ledger entries, each
between two pots (docs/DESIGN.md, "Progressive jackpots"):

- ``seed``: house -> meter, when the meter starts and whenever a hit leaves it below
  its seed (the house funds the seed; the audit counts it as the house's result);
- ``contribution``: house -> meter, the share of a progressive wager that goes to the
  meter (the table took the whole wager as the house's; this entry passes the share on);
- ``hit``: meter -> account, a share of the meter paid to a player.

Every operation is one script in the jackpot's slot, applied once by its ledger key
(``jackpot:<name>:contribution:<table>:<round>:<seat>``, ``...:hit:...``): a retry, from
any node, after any failure, does nothing more and answers what the first did. A hit
is the one operation in steps, as chips from a table to an account are
(:mod:`server.store.chips.transfers`): (1) ``HIT`` pays from the meter into the jackpot's
out hash, (2) the account's ``DELIVER`` applies it once by its transfer id, (3)
``FORGET`` drops it from the out hash. A process killed after (1) leaves the payment in
the out hash, counted by the audit as in transit: a retry of the hit, or
:meth:`JackpotStore.deliver_pending` (any node), finishes it.

Two hits at once (two tables, two nodes) are serialized by Redis: each is paid from the
meter as the hits before it left it (docs/RULES.md, "Progressive jackpot").
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any

import redis.asyncio
from redis.commands.core import AsyncScript

from server.auth.tokens import check_player
from server.store.chips.account_ledgers import DEFAULT_LEDGER_MAXLEN, AccountLedgerStore
from server.store.client.batching import Replication, ScriptBatcher
from server.store.client.replies import as_int, as_str
from server.store.errors import StoreUnavailable, Unreplicated, store_call
from server.store.keys import (
    DEFAULT_KEYS,
    JACKPOT_CONTRIBUTION_TTL_MS,
    JACKPOT_HIT_TTL_MS,
    TRANSFER_TTL_MS,
    Keys,
)
from server.store.lua.accounts import DELIVER, LOG_WINDOW
from server.store.lua.jackpot import CONTRIBUTE, FORGET, HIT
from server.store.pubsub.channel import ChannelListener

JACKPOT_KIND = "jackpot"
"""The ``kind`` of a hit's entry in the player's account ledger."""

MAX_WAGER = 10**6
MAX_SEED = 10**12
FULL_BPS = 10_000


@dataclass(frozen=True, slots=True)
class Meter:
    """A jackpot as stored: ``meter`` chips on it now, ``seed`` the last seed used,
    ``frac`` contributions waiting to make a whole chip (in chip-basis-points: 10,000 is
    one chip), and its totals: ``seeded`` by the house, ``contributed`` by the wagers,
    ``paid`` to players (``meter == seeded + contributed - paid``), ``hits``, ``entries``
    appended to its ledger. ``started`` is False for a jackpot never started (all 0)."""

    name: str
    started: bool
    meter: int
    seed: int
    frac: int
    seeded: int
    contributed: int
    paid: int
    hits: int
    entries: int


@dataclass(frozen=True, slots=True)
class Contribution:
    """A contribution's outcome: ``chips`` put on the meter by it (0 while its share is
    below a chip), the ``meter`` after, ``applied`` False for a retry (nothing moved)."""

    applied: bool
    chips: int
    meter: int


@dataclass(frozen=True, slots=True)
class Hit:
    """A hit's payment: ``paid`` chips to ``player`` (for a retry, the first call's),
    the meter ``before`` and ``after``
    (reset to the seed when the hit emptied it), ``transfer_id`` joining the jackpot's
    entry and the account's, ``applied`` False for a retry (the same payment, not a
    second), ``balance`` the player's account right after it was paid (None: not yet
    delivered, finished later by :meth:`JackpotStore.deliver_pending`)."""

    applied: bool
    player: str
    paid: int
    before: int
    after: int
    transfer_id: str
    balance: int | None


@dataclass(frozen=True, slots=True)
class PendingHit:
    """A hit paid from the meter that its player's account may not have yet."""

    transfer_id: str
    player: str
    amount: int
    key: str


def contribution_key(name: str, table_id: str, round_no: int, seat: int) -> str:
    """The ledger key of the contribution of ``seat``'s wager at ``table_id``'s round."""
    return f"jackpot:{name}:contribution:{table_id}:{round_no}:{seat}"


def hit_key(name: str, table_id: str, round_no: int, seat: int) -> str:
    """The ledger key of ``seat``'s hit at ``table_id``'s round."""
    return f"jackpot:{name}:hit:{table_id}:{round_no}:{seat}"


def _check_name(name: str) -> None:
    if not isinstance(name, str) or not 1 <= len(name) <= 32:
        raise ValueError("a jackpot's name is a string of 1 to 32 characters")
    if not all(c.isalnum() or c in "-_" for c in name):
        raise ValueError(f"a jackpot's name uses letters, digits, '-' and '_' only: {name!r}")


def _check_whole(what: str, value: int, low: int, high: int) -> None:
    if isinstance(value, bool) or not isinstance(value, int) or not low <= value <= high:
        raise ValueError(f"{what} is a whole number {low}..{high}, not {value!r}")


def _check_place(table_id: str, round_no: int, seat: int) -> None:
    if not table_id or not all(c.isalnum() or c in "-_" for c in table_id):
        raise ValueError(f"not a table id: {table_id!r}")
    _check_whole("a round", round_no, 0, 2**53)
    _check_whole("a seat", seat, 0, 1000)


def read_pending(raw: Mapping[Any, Any]) -> list[PendingHit]:
    """The out hash of a jackpot, read."""
    out = []
    for xfer, value in sorted(raw.items()):
        player, amount, key = as_str(value).split("|", 2)
        out.append(PendingHit(as_str(xfer), player, int(amount), key))
    return out


def read_meter(name: str, raw: Mapping[Any, Any]) -> Meter:
    """A jackpot's hash, read (empty: never started)."""
    fields = {as_str(k): as_int(v) for k, v in raw.items()}
    return Meter(
        name=name,
        started="meter" in fields,
        meter=fields.get("meter", 0),
        seed=fields.get("seed", 0),
        frac=fields.get("frac", 0),
        seeded=fields.get("seeded", 0),
        contributed=fields.get("contributed", 0),
        paid=fields.get("paid", 0),
        hits=fields.get("hits", 0),
        entries=fields.get("n", 0),
    )


class JackpotStore(AccountLedgerStore):
    """The progressive jackpots' meters (see the module docstring). Every method raises
    :class:`~server.store.errors.StoreUnavailable` where Redis failed (a write may have
    happened: call it again, it is applied once) and ``ValueError`` for bad arguments
    (nothing written).

    ``replication``: as the tables' commits (:class:`~server.store.tables.store.TableStore`),
    a contribution and a hit's payment from the meter are answered once that many
    replicas hold them (one ``WAIT`` per round trip,
    :mod:`~server.store.client.batching`); one no replica acknowledged in time, while
    the primary has replicas, raises ``StoreUnavailable``: a failover now could lose
    it, so the table's holder makes the call again (applied once) before the round
    may end. None: a Redis without replicas."""

    def __init__(
        self,
        client: redis.asyncio.Redis,
        *,
        keys: Keys = DEFAULT_KEYS,
        ledger_maxlen: int = DEFAULT_LEDGER_MAXLEN,
        replication: Replication | None = None,
    ) -> None:
        super().__init__(client, keys=keys, ledger_maxlen=ledger_maxlen)
        self.replication = replication
        # The calls that move chips for a table's round, sent as the tables' commits are.
        self._batch = ScriptBatcher(client, replication=replication)

    async def _durably(self, script: AsyncScript, keys: list[Any], args: list[Any]) -> Any:
        """``script``'s reply, once the replicas asked for hold its writes."""
        try:
            return await self._batch.call(script, keys, args, durable=True)
        except Unreplicated:
            # Written on the primary only: a failover could lose it. Not answered, so
            # the round that owes it does not end; its retry is applied once.
            raise StoreUnavailable("no replica acknowledged the jackpot's write in time") from None

    def register_scripts(self, client: redis.asyncio.Redis) -> None:
        # Jackpots this store listed in the jackpots' set already (one SADD a process,
        # not one a contribution: the set only has to name a jackpot before its first chip).
        self._listed: set[str] = set()
        self._contribute = client.register_script(CONTRIBUTE)
        self._hit = client.register_script(HIT)
        self._forget = client.register_script(FORGET)
        self._deliver = client.register_script(DELIVER)

    @store_call
    async def read(self, name: str) -> Meter:
        """Jackpot ``name`` as stored now."""
        _check_name(name)
        return read_meter(name, await self.redis.hgetall(self.keys.jackpot(name)))

    @store_call
    async def meters(self, names: list[str]) -> dict[str, int | None]:
        """The meter of each of ``names`` in one round trip (for the lobby and the
        tables' views): chips, or None for a jackpot never started (its seed is what
        it will show)."""
        for name in names:
            _check_name(name)
        async with self.redis.pipeline(transaction=False) as pipe:
            for name in names:
                pipe.hget(self.keys.jackpot(name), "meter")
            raw = await pipe.execute()
        return {n: None if v is None else as_int(v) for n, v in zip(names, raw, strict=True)}

    def meter_changes(
        self, name: str, heard: Callable[[int], None], subscribed: Callable[[], None]
    ) -> ChannelListener:
        """A listener (not started) that calls ``heard(meter)`` each time jackpot
        ``name``'s meter changes from now on (a contribution or a hit, from any node),
        and ``subscribed()`` each time it (re)subscribed: the changes published while it
        was not subscribed are lost, so the caller reads the meter again then."""
        _check_name(name)
        return ChannelListener(
            self.redis,
            self.keys.jackpot_channel(name),
            lambda data: heard(as_int(data)),
            f"jackpot-{name}",
            subscribed,
        )

    @store_call
    async def names(self) -> list[str]:
        """Every jackpot ever started, sorted."""
        return sorted(as_str(m) for m in await self.redis.smembers(self.keys.jackpots()))

    @store_call
    async def contribute(
        self,
        name: str,
        *,
        seed: int,
        contribution_bps: int,
        table_id: str,
        round_no: int,
        seat: int,
        player: str,
        wager: int,
    ) -> Contribution:
        """Put ``contribution_bps`` of ``player``'s progressive ``wager`` at ``seat`` of
        ``table_id``'s round ``round_no`` on jackpot ``name``'s meter, once (the whole
        chips of it; the part of a chip waits for the next wagers). The meter starts at
        ``seed`` if it never started."""
        _check_name(name)
        _check_place(table_id, round_no, seat)
        check_player(player)
        _check_whole("a seed", seed, 0, MAX_SEED)
        _check_whole("a contribution", contribution_bps, 0, FULL_BPS)
        _check_whole("a wager", wager, 1, MAX_WAGER)
        key = contribution_key(name, table_id, round_no, seat)
        await self._list(name)
        k = self.keys
        applied, chips, meter = await self._durably(
            self._contribute,
            [k.jackpot(name), k.jackpot_ledger(name), k.jackpot_done(name, key)],
            [
                name,
                key,
                wager,
                contribution_bps,
                seed,
                self.ledger_maxlen,
                JACKPOT_CONTRIBUTION_TTL_MS,
                table_id,
                player,
                k.jackpot_channel(name),
            ],
        )
        return Contribution(bool(applied), int(chips), int(meter))

    @store_call
    async def hit(
        self,
        name: str,
        *,
        seed: int,
        share_bps: int,
        table_id: str,
        round_no: int,
        seat: int,
        player: str,
    ) -> Hit:
        """Pay ``share_bps`` of jackpot ``name``'s meter to ``player`` (seated at ``seat``
        of ``table_id``, round ``round_no``), once: the meter is lowered by the payment
        and topped up to ``seed`` by the house if it fell below, and the chips go to the
        player's account. A retry answers the same payment and moves nothing more (and
        finishes a delivery an earlier call left undone)."""
        hit = await self.hit_step(
            name,
            seed=seed,
            share_bps=share_bps,
            table_id=table_id,
            round_no=round_no,
            seat=seat,
            player=player,
        )
        if not hit.paid:
            return hit
        # What the out hash holds of it (its player, amount and key as the payment made
        # them, whoever retries); nothing: delivered and forgotten before, and the
        # account's marker of it may be gone by now (it outlives the forgetting by a
        # day), so it is not delivered again.
        raw = await self.redis.hget(self.keys.jackpot_out(name), hit.transfer_id)
        if raw is None:
            return hit
        (pending,) = read_pending({hit.transfer_id.encode(): raw})
        balance = await self._deliver_one(name, pending)
        return Hit(
            hit.applied, hit.player, hit.paid, hit.before, hit.after, hit.transfer_id, balance
        )

    @store_call
    async def hit_step(
        self,
        name: str,
        *,
        seed: int,
        share_bps: int,
        table_id: str,
        round_no: int,
        seat: int,
        player: str,
    ) -> Hit:
        """Step (1) of :meth:`hit` alone: the payment leaves the meter for the out hash
        (``balance`` None). :meth:`hit` calls it; a test stops here to play a crash."""
        _check_name(name)
        _check_place(table_id, round_no, seat)
        check_player(player)
        _check_whole("a seed", seed, 0, MAX_SEED)
        _check_whole("a share", share_bps, 1, FULL_BPS)
        key = hit_key(name, table_id, round_no, seat)
        transfer_id = f"{key}.x"
        # Listed before any chip can reach it (single-key commands, slots of their own).
        await self._list(name)
        await self.redis.sadd(self.keys.accounts(), player)
        k = self.keys
        applied, paid, before, after, xfer, paid_to = await self._durably(
            self._hit,
            [
                k.jackpot(name),
                k.jackpot_ledger(name),
                k.jackpot_done(name, key),
                k.jackpot_out(name),
            ],
            [
                name,
                key,
                share_bps,
                seed,
                self.ledger_maxlen,
                JACKPOT_HIT_TTL_MS,
                table_id,
                player,
                transfer_id,
                k.jackpot_channel(name),
            ],
        )
        return Hit(
            bool(applied), as_str(paid_to), int(paid), int(before), int(after), as_str(xfer), None
        )

    @store_call
    async def pending(self, name: str) -> list[PendingHit]:
        """The hits of ``name`` paid from the meter and not yet forgotten (their account
        may have them already)."""
        _check_name(name)
        return read_pending(await self.redis.hgetall(self.keys.jackpot_out(name)))

    @store_call
    async def deliver_pending(self, name: str | None = None) -> int:
        """Finish every hit of jackpot ``name`` (None: of every jackpot) left between its
        steps: deliver it to its account (once) and forget it. Returns how many."""
        names = [name] if name is not None else await self.names()
        done = 0
        for n in names:
            for item in await self.pending(n):
                await self._deliver_one(n, item)
                done += 1
        return done

    async def _list(self, name: str) -> None:
        """Name the jackpot in the jackpots' set (the audit's list) before it moves a chip."""
        if name not in self._listed:
            await self.redis.sadd(self.keys.jackpots(), name)
            self._listed.add(name)

    async def _deliver_one(self, name: str, item: PendingHit) -> int:
        """Steps (2) and (3) of a hit: the account's balance after it."""
        k = self.keys
        p = item.player
        balance = await self._deliver(
            keys=[
                k.account(p),
                k.account_ledger(p),
                k.game_log(p),
                k.account_transfer(p, item.transfer_id),
            ],
            args=[
                p,
                f"jackpot:{name}",
                self.ledger_maxlen,
                TRANSFER_TTL_MS,
                1,
                LOG_WINDOW,
                item.transfer_id,
                JACKPOT_KIND,
                item.amount,
                item.key,
                b"",
            ],
        )
        await self._forget(keys=[k.jackpot_out(name)], args=[item.transfer_id])
        return as_int(balance[0])
