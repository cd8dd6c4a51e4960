"""The progressive jackpot's calls a settled round owes, made by the table's holder.

The table's own commit settles a progressive wager as the table's chips: the wager
goes to the house, a fixed award comes from the house (server/table/settlement.py).
What the meter owes is in the jackpot's slot, not the table's, so it cannot be in that
commit: after it, the holder puts each wager's share on the meter (``contribute``) and
pays each share of the meter a hand won (``hit``), in the store, each applied once by
its key (table, round, seat). The round's results stay in the state while it settles
(``Phase.SETTLING``) and leave it with the round's end, which is a commit: so every
commit first makes the calls of the state it changes, and a commit whose calls fail is
not made (docs/DESIGN.md, "Progressive jackpots": exactly once). A holder that takes
over a table in its settling phase makes them again, which a call done already
answers without moving a chip.
"""

from __future__ import annotations

import logging
from dataclasses import dataclass

from server.rules.progressive import PROGRESSIVE, ProgressiveBetOptions, meter_share_of
from server.store import JackpotStore
from server.table.state import Phase, TableState

log = logging.getLogger(__name__)


@dataclass(frozen=True, slots=True)
class Owed:
    """One seat's progressive wager of a settled round: its ``stake`` (contributed)
    and the ``share_bps`` of the meter its hand won (0: none)."""

    seat: int
    player: str
    stake: int
    share_bps: int


def owed(state: TableState) -> tuple[ProgressiveBetOptions | None, list[Owed]]:
    """The jackpot calls ``state``'s round owes: none unless it is settling a round
    (not voided) with progressive wagers, in seat order; with the jackpot's settings
    the round's wagers were taken under (``state.settled_options``), not the table's
    settings now, which a change may have replaced as the round settled."""
    if state.phase is not Phase.SETTLING or state.voided is not None:
        return None, []
    wagers = [
        (result, wager)
        for result in state.results
        for wager in result.wagers
        if wager.kind == PROGRESSIVE and wager.stake
    ]
    if not wagers:
        return None, []
    options = dict(state.settled_options).get(PROGRESSIVE)
    if options is None:
        # A round stored by the code before settled options were kept: its settings
        # as that code read them, the table's (none if a change dropped the wager).
        if PROGRESSIVE not in state.config.side_kinds:
            return None, []
        options = state.config.side_options(PROGRESSIVE)
    assert isinstance(options, ProgressiveBetOptions)
    out = [
        Owed(result.seat, result.player, wager.stake, meter_share_of(options, wager.pay_class))
        for result, wager in wagers
    ]
    return options, out


class TableJackpots:
    """The jackpot calls of one table's settled rounds, through ``store`` (None: the
    process has no jackpot store, and a table offering a progressive refuses to go
    on: see :meth:`pay`)."""

    def __init__(self, table_id: str, store: JackpotStore | None) -> None:
        self.table_id = table_id
        self.store = store
        self.paid_round: int | None = None
        """The round whose calls all answered here, since the table was last taken
        (:meth:`taken`)."""

    def taken(self) -> None:
        """The table was taken (again): the calls of the round found settling are made
        again, whatever answered here before. Between losing the table and taking it
        back, Redis may have failed over to a replica that never had them (each is
        applied once, so one that stands answers without moving a chip)."""
        self.paid_round = None

    def due(self, state: TableState | None) -> bool:
        """Whether ``state`` owes calls not yet answered here."""
        return (
            state is not None
            and state.phase is Phase.SETTLING
            and state.round_no != self.paid_round
            and bool(owed(state)[1])
        )

    async def pay(self, state: TableState | None) -> None:
        """Make the calls ``state`` owes (each applied once in the store, whoever calls):
        every contribution in seat order, then every hit in seat order (two hands of
        one round taking the meter: the first seat's takes it first). Raises
        :class:`~server.store.StoreUnavailable` if one failed: call again."""
        if state is None or not self.due(state):
            return
        options, calls = owed(state)
        assert options is not None
        if self.store is None:
            raise RuntimeError(f"table {self.table_id} offers a jackpot and has no jackpot store")
        name, seed = options.jackpot, options.seed
        for call in calls:
            await self.store.contribute(
                name,
                seed=seed,
                contribution_bps=options.contribution_bps,
                table_id=self.table_id,
                round_no=state.round_no,
                seat=call.seat,
                player=call.player,
                wager=call.stake,
            )
        for call in calls:
            if not call.share_bps:
                continue
            hit = await self.store.hit(
                name,
                seed=seed,
                share_bps=call.share_bps,
                table_id=self.table_id,
                round_no=state.round_no,
                seat=call.seat,
                player=call.player,
            )
            log.info(
                "table %s: round %d seat %d: jackpot %s hit: %d chips to %s (meter %d -> %d)%s",
                self.table_id,
                state.round_no,
                call.seat,
                name,
                hit.paid,
                hit.player,
                hit.before,
                hit.after,
                "" if hit.applied else " (paid before)",
            )
        self.paid_round = state.round_no
