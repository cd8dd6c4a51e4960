"""The progressive jackpots' meters, live, for the lobby and the tables' views.

One :class:`JackpotRelay` per node: it subscribes once to the channel of each jackpot
of the tables file (whatever the number of connections), keeps each meter as last
heard, and hands every change on to the connections that sent ``watch_jackpots``
(protocol/PROTOCOL.md, section 9, ``jackpot``) — at most one message a second per
jackpot, the latest value winning. A meter is changed by the table of any node (the
store publishes each change), so a lobby on one node sees the contributions of tables
held on another. After a lost subscription (Redis restarted, a failover) the listener
subscribes again and the relay reads the meters again: a change published meanwhile
was not heard (docs/DESIGN.md, "Jackpot meters, live").
"""

from __future__ import annotations

import asyncio
import contextlib
import functools
import logging
from collections.abc import Iterable, Sequence
from typing import TYPE_CHECKING

from protocol.codec import encode
from protocol.messages import JackpotChange
from protocol.structs import JackpotInfo, JackpotLine, JackpotMeter
from server.rules.bonus import BONUS_CLASS_CODES, BONUS_CLASS_NAMES, BonusClass
from server.rules.progressive import PROGRESSIVE, ProgressiveBetOptions, progressive_pay_table
from server.store import StoreFailure
from server.tasks import cancel_and_wait

if TYPE_CHECKING:
    from server.gateway.connection import Connection
    from server.rules.progressive import JackpotOptions
    from server.store import ChannelListener, JackpotStore
    from server.table.state import TableConfig

log = logging.getLogger(__name__)

EVERY_S = 1.0
"""The least time between two ``jackpot`` messages of one jackpot."""


class JackpotRelay:
    """The meters of ``jackpots`` (those the node's tables offer), kept as last heard
    and sent to the watching connections. Which jackpot a table offers, its wager and
    pay table, are its settings' (:meth:`jackpot_of`, :meth:`info`), not the file's."""

    def __init__(
        self,
        store: JackpotStore,
        jackpots: Sequence[JackpotOptions],
        every_s: float = EVERY_S,
    ) -> None:
        self.store = store
        self.options = {o.name: o for o in jackpots}
        self.every_s = every_s
        self.meters: dict[str, int] = {o.name: o.seed for o in jackpots}
        """Each meter as last heard or read (the seed until then: a meter never started)."""
        self.watchers: dict[Connection, frozenset[str]] = {}
        """The connections that watch, each with the jackpots it was answered."""
        self.sent = 0
        """``jackpot`` messages sent so far (one per connection)."""
        self._listeners: list[ChannelListener] = []
        self._last_sent: dict[str, float] = {}
        self._sent_meter: dict[str, int] = {}
        self._timers: dict[str, asyncio.TimerHandle] = {}
        self._reads: set[asyncio.Task[None]] = set()
        self._heard_count: dict[str, int] = {}  # changes heard on each channel so far

    def start(self) -> None:
        """Subscribe to each jackpot's channel (read again after each subscription)."""
        for name in self.options:
            listener = self.store.meter_changes(
                name,
                functools.partial(self._heard, name),
                functools.partial(self._subscribed, name),
            )
            listener.start()
            self._listeners.append(listener)

    async def stop(self) -> None:
        """Stop listening; the watchers get nothing more."""
        for listener in self._listeners:
            await listener.stop()
        self._listeners.clear()
        for timer in self._timers.values():
            timer.cancel()
        self._timers.clear()
        for task in list(self._reads):
            await cancel_and_wait(task)
        self.watchers.clear()

    # --- what a connection asks -------------------------------------------------------

    def watch(self, conn: Connection, configs: Iterable[TableConfig]) -> tuple[JackpotMeter, ...]:
        """The meters of the jackpots the tables of settings ``configs`` offer now:
        ``conn`` gets their ``jackpot`` messages from now on."""
        names = {n for c in configs if (n := self.jackpot_of(c)) is not None}
        self.watchers[conn] = frozenset(names)
        return self.listed(sorted(names))

    def unwatch(self, conn: Connection) -> None:
        """``conn`` gets no more ``jackpot`` messages (safe for one that never asked)."""
        self.watchers.pop(conn, None)

    def listed(self, names: Sequence[str] | None = None) -> tuple[JackpotMeter, ...]:
        """The meters of ``names`` (None: every jackpot), by name."""
        chosen = sorted(self.meters if names is None else set(names) & set(self.meters))
        return tuple(JackpotMeter(name=n, meter=self.meters[n]) for n in chosen)

    def jackpot_of(self, config: TableConfig) -> str | None:
        """The jackpot a table of settings ``config`` offers (None: none, or one whose
        meter this relay does not follow)."""
        options = _offered(config)
        if options is None or options.jackpot not in self.meters:
            return None
        return options.jackpot

    def info(self, config: TableConfig) -> JackpotInfo | None:
        """``table_info.jackpot`` of a table of settings ``config`` (None: as
        :meth:`jackpot_of`): its wager and pay table as the table settles them."""
        name = self.jackpot_of(config)
        options = _offered(config)
        if name is None or options is None:
            return None
        awards = progressive_pay_table(options.pay_table).awards
        lines = tuple(
            JackpotLine(
                bonus_class=BONUS_CLASS_CODES[cls],
                label=BONUS_CLASS_NAMES[cls][:32],
                meter_bps=awards[cls].meter_bps,
                fixed=awards[cls].fixed,
            )
            for cls in BonusClass
            if cls in awards
        )
        return JackpotInfo(name=name, meter=self.meters[name], wager=options.wager, paytable=lines)

    # --- what Redis says --------------------------------------------------------------

    def _heard(self, name: str, meter: int) -> None:
        """A change published on the channel: the meter as it stands."""
        self._heard_count[name] = self._heard_count.get(name, 0) + 1
        self._changed(name, meter)

    def _changed(self, name: str, meter: int) -> None:
        self.meters[name] = meter
        if name in self._timers:
            return  # a message is due: it will carry this latest value
        loop = asyncio.get_running_loop()
        wait = self._last_sent.get(name, -self.every_s) + self.every_s - loop.time()
        if wait <= 0:
            self._send(name)
        else:
            self._timers[name] = loop.call_later(wait, self._send, name)

    def _subscribed(self, name: str) -> None:
        heard = self._heard_count.get(name, 0)
        task = asyncio.get_running_loop().create_task(
            self._read(name, heard), name=f"jackpot-read-{name}"
        )
        self._reads.add(task)
        task.add_done_callback(self._reads.discard)

    async def _read(self, name: str, heard: int) -> None:
        """The meter read again (after a subscription: changes may have been missed),
        unless a change was heard since the subscription (``heard``: the count then):
        every change publishes, so the last one heard since is at least as new as the
        read, which may have been answered before it (and would put an older meter back)."""
        try:
            meter = (await self.store.meters([name]))[name]
        except StoreFailure as exc:  # the next subscription reads again
            log.warning("jackpot %s: meter not read: %s", name, exc)
            return
        if self._heard_count.get(name, 0) != heard:
            return
        if meter is not None and meter != self.meters.get(name):
            self._changed(name, meter)

    def _send(self, name: str) -> None:
        self._timers.pop(name, None)
        meter = self.meters[name]
        if self._sent_meter.get(name) == meter:
            return  # told already (a read after a subscription found it unchanged)
        self._last_sent[name] = asyncio.get_running_loop().time()
        self._sent_meter[name] = meter
        frame = encode(JackpotChange(name=name, meter=meter))
        for conn, names in list(self.watchers.items()):
            if name not in names:
                continue
            with contextlib.suppress(Exception):
                conn.send_bytes(frame)
                self.sent += 1


def _offered(config: TableConfig) -> ProgressiveBetOptions | None:
    """The progressive wager's options of a table of settings ``config``, if it offers it."""
    if PROGRESSIVE not in config.side_kinds:
        return None
    options = config.side_options(PROGRESSIVE)
    assert isinstance(options, ProgressiveBetOptions)
    return options
