"""Bots for load and soak tests: N guests joining tables, betting, setting by the house way.

Each bot is one :class:`~clients.core.Client` running
:func:`~clients.autoplay.play_rounds`, the same code path as ``paigow-cli play``.
Bots are spread over the tables (at most 6 to a table, one per seat), start a
little apart so the server sees a ramp rather than a wall, and each one verifies
every round's deal from its seed. :func:`run_bots` gathers what they did.
"""

from __future__ import annotations

import asyncio
import random
import time
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

from clients.autoplay import PlayStats, Strategy, play_rounds
from clients.core import Client, ClientError

SEATS_PER_TABLE = 6


@dataclass
class BotsReport:
    """The totals of a bot run."""

    bots: int = 0
    rounds: int = 0
    voids: int = 0
    verified: int = 0
    unverified: int = 0
    net: int = 0
    failures: list[str] = field(default_factory=list)
    reconnects: int = 0
    seconds: float = 0.0

    @property
    def ok(self) -> bool:
        """No bot failed and every round's deal was verified."""
        return not self.failures and not self.unverified

    def add(self, stats: PlayStats) -> None:
        """Add one bot's stats."""
        self.rounds += stats.rounds
        self.voids += stats.voids
        self.verified += stats.verified
        self.unverified += len(stats.unverified)
        self.net += stats.net

    def as_dict(self) -> dict[str, Any]:
        """JSON-ready totals."""
        return {
            "bots": self.bots,
            "rounds": self.rounds,
            "voids": self.voids,
            "verified": self.verified,
            "unverified": self.unverified,
            "net": self.net,
            "failures": self.failures,
            "reconnects": self.reconnects,
            "seconds": round(self.seconds, 3),
        }

    def summary(self) -> str:
        """One line for a person."""
        return (
            f"{self.bots} bots, {self.rounds} rounds ({self.voids} void) in {self.seconds:.1f}s: "
            f"{self.verified} verified, {self.unverified} not, {len(self.failures)} failed, "
            f"house net {-self.net:+d}"
        )


async def run_bot(
    url: str,
    table_id: str,
    *,
    name: str,
    rounds: int,
    bet: int,
    strategy: Strategy = "house-way",
    rng: random.Random | None = None,
) -> tuple[PlayStats, int]:
    """One bot: connect as a guest, play ``rounds`` rounds, leave; (stats, reconnects)."""
    async with Client(url, name=name) as client:
        stats = await play_rounds(
            client, table_id, bet=bet, rounds=rounds, strategy=strategy, rng=rng
        )
        try:
            await client.leave(table_id)
        except ClientError as exc:
            stats.errors.append(f"leave: {exc}")
        return stats, client.reconnects


async def run_bots(
    url: str,
    tables: Sequence[str],
    *,
    count: int,
    rounds: int,
    bet: int,
    strategy: Strategy = "house-way",
    seed: int | None = None,
    ramp_s: float = 0.05,
) -> BotsReport:
    """Run ``count`` bots over ``tables`` (filled in turn, 6 a table) and total them."""
    if count > SEATS_PER_TABLE * len(tables):
        raise ValueError(f"{count} bots need {-(-count // SEATS_PER_TABLE)} tables")
    rng = random.Random(seed)
    started = time.monotonic()

    async def one(i: int) -> tuple[PlayStats, int]:
        await asyncio.sleep(i * ramp_s)
        table = tables[i % len(tables)]
        bot_rng = random.Random(rng.random())
        return await run_bot(
            url, table, name=f"bot-{i}", rounds=rounds, bet=bet, strategy=strategy, rng=bot_rng
        )

    outcomes = await asyncio.gather(*(one(i) for i in range(count)), return_exceptions=True)
    report = BotsReport(bots=count, seconds=time.monotonic() - started)
    for i, outcome in enumerate(outcomes):
        if isinstance(outcome, BaseException):
            report.failures.append(f"bot-{i}: {type(outcome).__name__}: {outcome}")
        else:
            stats, reconnects = outcome
            report.add(stats)
            report.reconnects += reconnects
    return report
