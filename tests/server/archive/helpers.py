"""What the archive's tests share: a casino that plays rounds through the real store.

Its table's state is the tests' own (each money total a part, in decimal, as in
``tests/server/store/test_audit.py``): the audit reads it through :func:`table_money`.
Each round moves chips by ledger entries and pushes a game log per player, a msgpack
map with the fields the archive reads (``table_id``, ``ended_ms``).
"""

from __future__ import annotations

import time
from collections.abc import Sequence

import msgpack
import redis.asyncio

from server.archive import Archive
from server.archive.mover import Archiver
from server.store.archiving.source import ArchivingCalls
from server.store.audit.check import AuditReport, audit
from server.store.chips.ledgers import ledger_sources
from server.store.client.replies import as_bytes, as_int
from server.store.keys import Keys
from server.store.players.accounts import AccountStore
from server.store.players.guests import GuestLimits, GuestStore
from server.store.tables.commit_args import Write
from server.store.tables.store import StoredTable, TableStore
from server.table.ledger import Kind, LedgerEntry, Pot
from tests.server.store.helpers import ledger_len

T = "t1"
PLAYERS = ("ann", "bob")
HOUR_MS = 3_600_000


def table_money(stored: StoredTable) -> tuple[int, int, int]:
    parts = stored.parts
    return int(parts["table"]), int(parts["held"]), int(parts["house"])


def record(round_no: int, ended_ms: int, table_id: str = T) -> bytes:
    """A game log as the archive reads it."""
    packed: bytes = msgpack.packb({"table_id": table_id, "round": round_no, "ended_ms": ended_ms})
    return packed


def round_of(blob: bytes) -> int:
    value = msgpack.unpackb(blob)["round"]
    assert isinstance(value, int)
    return value


def wall_ms() -> int:
    return int(time.time() * 1000)


class Casino:
    """One table ``t1`` where ann and bob (credited, bought in) play rounds: ann wins
    her bet (less a commission), bob loses his."""

    def __init__(self, client: redis.asyncio.Redis) -> None:
        self.redis = client
        self.keys = Keys()
        self.tables = TableStore(client)
        self.accounts = AccountStore(client)
        self.guests = GuestStore(client)
        self.version = 0
        self.rounds = 0
        self.totals = {"table": 0, "held": 0, "house": 0}
        self.token = 0

    async def open(self, players: Sequence[str] = PLAYERS, buy_in: int = 500) -> None:
        """Credit and buy in ``players``."""
        token = await self.tables.leases.acquire(T, "tests", 600_000)
        assert token is not None
        self.token = token
        for player in players:
            await self.accounts.credit(player, 1000, f"op:{player}")
        await self.commit(
            [
                LedgerEntry(f"{T}:{p}:buyin", Kind.BUY_IN, p, buy_in, Pot.ACCOUNT, Pot.TABLE)
                for p in players
            ],
            table=buy_in * len(players),
        )

    async def commit(
        self,
        entries: Sequence[LedgerEntry],
        logs: Sequence[tuple[str, bytes]] = (),
        **change: int,
    ) -> None:
        for name, delta in change.items():
            self.totals[name] += delta
        parts = {name: b"%d" % total for name, total in self.totals.items()}
        result = await self.tables.commits.write(
            Write(
                T,
                token=self.token,
                expected_version=self.version,
                new_version=self.version + 1,
                parts=parts,
                entries=entries,
                logs=logs,
            )
        )
        assert result.ok, result
        await self.tables.drain()  # the chips and game logs delivered, the transfers done
        self.version += 1

    async def play(self, rounds: int = 1, players: Sequence[str] = ("ann", "bob")) -> None:
        """``rounds`` rounds: a bet of 50 each; the first player wins, the others lose."""
        for _ in range(rounds):
            self.rounds += 1
            r = self.rounds
            bets = [
                LedgerEntry(f"{T}:r{r}:{p}:bet", Kind.BET, p, 50, Pot.TABLE, Pot.HELD)
                for p in players
            ]
            await self.commit(bets, table=-50 * len(players), held=50 * len(players))
            winner, *losers = players
            settle = [
                LedgerEntry(
                    f"{T}:r{r}:{winner}:ret", Kind.BET_RETURNED, winner, 50, Pot.HELD, Pot.TABLE
                ),
                LedgerEntry(f"{T}:r{r}:{winner}:win", Kind.WIN, winner, 50, Pot.HOUSE, Pot.TABLE),
                LedgerEntry(
                    f"{T}:r{r}:{winner}:com", Kind.COMMISSION, winner, 2, Pot.TABLE, Pot.HOUSE
                ),
            ] + [
                LedgerEntry(f"{T}:r{r}:{p}:lost", Kind.BET_LOST, p, 50, Pot.HELD, Pot.HOUSE)
                for p in losers
            ]
            ended = wall_ms()
            logs = [(p, record(r, ended)) for p in players]
            await self.commit(
                settle,
                logs,
                table=98,
                held=-50 * len(players),
                house=-48 + 50 * len(losers),
            )

    async def guest(self, player: str, balance: int = 300) -> None:
        """A guest admitted now, with its starting balance."""
        await self.guests.admit(player, "203.0.113.7", GuestLimits(), wall_ms())
        await self.accounts.ensure_guest(player, balance)

    async def audit(self, archive: Archive | None) -> AuditReport:
        return await audit(self.redis, table_money, archive=archive)

    def archiver(
        self, archive: Archive, *, ahead_ms: int = HOUR_MS + 1000, **kwargs: object
    ) -> Archiver:
        """An archiver whose clock runs ``ahead_ms`` ahead, with a window of an hour: by
        default, everything stored until a second from now is old enough to move."""
        return Archiver(
            ArchivingCalls(self.redis, keys=self.keys),
            archive,
            table_money,
            after_ms=HOUR_MS,
            clock=lambda: wall_ms() + ahead_ms,
            **kwargs,  # type: ignore[arg-type]
        )

    @property
    def ledger(self) -> str:
        """The table's ledger stream."""
        return self.keys.table_ledger(T)

    async def ledger_len(self) -> int:
        """Entries in every ledger stream (the table's and each account's)."""
        return await ledger_len(self.redis)

    async def entries(self) -> int:
        """Ledger entries ever appended, to every stream (each owner's ``n``)."""
        total = 0
        for source in await ledger_sources(self.redis, self.keys):
            k = self.keys
            owner = k.table_state(source.owner) if source.table else k.account(source.owner)
            total += as_int(await self.redis.hget(owner, "n"))
        return total

    async def log_ordinals(self, player: str) -> list[int]:
        """The ordinals of ``player``'s game logs in Redis, newest first."""
        raw = await self.redis.lrange(self.keys.game_log(player), 0, -1)
        return [int.from_bytes(as_bytes(item)[:8], "big") for item in raw]
