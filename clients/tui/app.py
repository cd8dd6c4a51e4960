"""The full-screen app: the screens' host, the router of the client's events, and
``run_tui``, the entry point of ``paigow-cli``'s table.

The app connects the client, shows the lobby, and routes every event of the session
to the screen it concerns (the table's, the lobby's status line); the screens ask it
to open tables, rules and history. Its look is the stylesheet ``paigow.tcss``.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
from collections.abc import Callable, Sequence
from dataclasses import replace
from typing import ClassVar

from rich.text import Text
from textual import events
from textual.binding import Binding, BindingType

from clients.backoff import Backoff
from clients.core import (
    Client,
    ClientError,
    ClientEvent,
    Connected,
    Disconnected,
    Notice,
    SessionEnded,
    Verified,
)
from clients.errors import TryLater
from clients.session_file import make_client, save_session
from clients.text import describe, hand_line, result_line
from clients.tui.base import PaigowBase
from clients.tui.dialogs import HelpScreen, TextScreen, info_text, versions_text
from clients.tui.guide import GUIDE
from clients.tui.history import HistoryScreen
from clients.tui.lobby import LobbyScreen
from clients.tui.table import TableScreen
from protocol import limits as L
from protocol.errors import CloseCode
from protocol.messages import JackpotChange, Results, Reveal
from protocol.structs import Balances

GUIDE_TITLE = "How to play (↑ ↓ to scroll, esc to close)"


class PaigowApp(PaigowBase):
    """The interactive client: a lobby, tables, history, rules and help.

    ``client`` is connected on mount unless ``connect`` is false, retried with the
    client's backoff while no server answers (``r`` tries at once); ``on_connect`` is
    called once it is. ``history_page_size`` (1..50) is how many rounds the history
    screen asks per page; ``notes`` are lines shown in the lobby's log at the start.
    """

    TITLE = "Pai Gow"
    ENABLE_COMMAND_PALETTE = False  # its footer key would crowd 80 columns
    CSS_PATH = "paigow.tcss"
    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("ctrl+q", "quit", "Quit", show=False),
        Binding("g", "guide", "How to play", show=False),
    ]

    def __init__(
        self,
        client: Client,
        *,
        on_connect: Callable[[Client], None] | None = None,
        connect: bool = True,
        history_page_size: int = L.MAX_HISTORY_PAGE,
        notes: Sequence[str] = (),
    ) -> None:
        super().__init__(client, history_page_size=history_page_size)
        self.on_connect = on_connect
        self.auto_connect = connect
        self.notes = tuple(notes)
        self.lobby = LobbyScreen()
        self._backoff: Backoff | None = None  # while the first connection is being tried

    async def on_event(self, event: events.Event) -> None:
        """A key at a table goes to its binding only if the table's rule for typed keys
        lets it (:meth:`TableScreen.admit_key`); every other event as Textual routes it."""
        if isinstance(event, events.Key) and not event.is_forwarded:
            screen = self.screen
            if isinstance(screen, TableScreen) and not screen.admit_key(
                event.key, event.is_printable
            ):
                return
        await super().on_event(event)

    def on_mount(self) -> None:
        self.push_screen(self.lobby)
        for note in self.notes:
            self.say(note)
        self.run_worker(self._pump(self.client.listen()), group="pump")
        if self.auto_connect:
            self.start_connecting()

    def start_connecting(self) -> None:
        """Connect (again), trying until a server answers; see :meth:`action_reconnect`."""
        self.ended = None
        self.run_worker(self._connect(), exclusive=True, group="connect")

    async def _connect(self) -> None:
        c = self.client
        backoff = self._backoff = Backoff(c.backoff_s, c.backoff_max_s, now=True)
        self.connecting = True
        said: str | None = None
        try:
            while True:
                await backoff.wait(backoff.next())
                try:
                    await c.connect()
                except SessionEnded as exc:  # refused: trying again would not help
                    self.connect_error = f"refused: {exc} (r: try again)"
                    self.say(f"the server refused this client: {exc}", error=True, lobby=True)
                    return
                except ClientError as exc:
                    self.connect_error = "no server: retrying (r: now)"
                    if str(exc) != said:  # once, not at every try
                        said = str(exc)
                        self.say(no_server_text(c.url, exc), error=True, lobby=True)
                    continue
                finally:
                    self.lobby.update_status()
                break
        finally:
            self._backoff = None
            self.connecting = False
        self.connect_error = None
        self.lobby.update_status()
        if self.on_connect is not None:
            self.on_connect(c)
        with contextlib.suppress(ClientError, TimeoutError):
            self.server = await c.server_info()

    def action_reconnect(self) -> None:
        """Not connected: try at once (the first connection, a reconnection in its
        backoff), or connect again after the connection ended for good."""
        if self.client.connected:
            return
        if self._backoff is not None:
            self._backoff.retry_now()
        elif self.client.reconnecting:
            self.client.retry_now()
        else:
            self.say("connecting again…")
            self.start_connecting()

    async def _pump(self, queue: asyncio.Queue[ClientEvent]) -> None:
        while True:
            event = await queue.get()
            self.on_client_event(event)

    def show_balances(self, balances: Balances) -> None:
        """Keep balances just read (``balance``, or a rebuy's, cash out's or leave's reply)."""
        self.balances = balances
        self.lobby.update_account()

    def table_screen(self, table_id: str) -> TableScreen | None:
        """The screen of ``table_id`` if it is on the stack."""
        for screen in self.screen_stack:
            if isinstance(screen, TableScreen) and screen.table_id == table_id:
                return screen
        return None

    def on_client_event(self, event: ClientEvent) -> None:
        """Route one event: log it, redraw the screens it concerns."""
        table_id = getattr(event, "table_id", None)
        if isinstance(event, Verified):
            table_id = event.verification.table_id
        line = describe(event)
        target = self.table_screen(table_id) if table_id is not None else None
        if isinstance(event, Connected | Disconnected):
            if isinstance(event, Disconnected) and not event.retrying:
                self.ended = ended_text(event)
                self.say(self.ended, error=True, lobby=True)
            elif isinstance(event, Connected):
                self.ended = None
            self.lobby.update_status()
            if isinstance(event, Connected):
                self.lobby.action_refresh()
                # A subscription lasts as long as its connection: asked on each one.
                self.run_worker(self._watch_jackpots(), exclusive=True, group="jackpots")
            for screen in self.screen_stack:
                if isinstance(screen, TableScreen):
                    screen.log_line(Text(line or "", style="yellow"))
                    screen.redraw()
            return
        if isinstance(event, Notice):
            self.say(line or "", error=True)
            return
        if isinstance(event, JackpotChange):
            self.show_meters()
            return
        if target is None:
            return
        if isinstance(event, Reveal):
            for hand in event.hands:
                target.log_line(Text(hand_line(hand), style="italic"))
        elif isinstance(event, Results):
            fouls = {h.hand for h in target.model.hands.values() if h.foul}
            for result in event.results:
                foul = result.seat in fouls
                target.log_line(Text(result_line(result, foul), style="italic"))
        elif isinstance(event, Verified):
            target.log_line(Text(line or "", style="green" if event.verification.ok else "red"))
        elif line:
            target.log_line(line)
        target.redraw()

    async def _watch_jackpots(self) -> None:
        """The jackpots' meters live (a server of an earlier minor refuses: the lobby's
        and the tables' meters are then the ones their refreshes read)."""
        with contextlib.suppress(ClientError, TimeoutError):
            await self.client.watch_jackpots()
            self.show_meters()

    def show_meters(self) -> None:
        """Redraw the meters: the lobby's column and each table's jackpot line."""
        self.lobby.draw_tables()
        for screen in self.screen_stack:
            if isinstance(screen, TableScreen):
                screen.draw_jackpot()

    def refresh_lobby(self) -> None:
        """Read the lobby's tables and balance afresh (on coming back to it)."""
        self.lobby.action_refresh()

    async def _open_table(self, table_id: str) -> TableScreen:
        with contextlib.suppress(ClientError, TimeoutError):
            self.infos[table_id] = await self.client.table_info(table_id)
        screen = self.table_screen(table_id)
        if screen is None:
            screen = TableScreen(table_id)
            await self.push_screen(screen)
            info = self.infos.get(table_id)
            # The keys' values change from table to table: say them, to a player.
            if info is not None and self.seated_at(table_id) is not None:
                keys = "  ".join(f"{i}={d}" for i, d in enumerate(info.denominations[:9], 1))
                screen.log_line(f"chip keys at this table: {keys}")
        return screen

    async def join_table(self, table_id: str, buy_in: int) -> None:
        """Sit at ``table_id`` with ``buy_in`` chips and show it."""
        try:
            joined = await self.client.join(table_id, buy_in)
        except ClientError as exc:
            if getattr(exc, "code", None) != "already_seated":
                self.say(str(exc), error=True)
                return
            await self.client.watch(table_id)
            joined = None
        else:
            # The joined reply has the account but not the table balances: read both.
            await self.refresh_balance()
        screen = await self._open_table(table_id)
        if joined is not None:
            screen.log_line(f"seated at {joined.seat + 1} with {joined.table_balance} chips")
        screen.redraw()

    async def watch_table(self, table_id: str, note: str | None = None) -> None:
        """Watch ``table_id`` and show it (``note``: a first line in its log)."""
        try:
            await self.client.watch(table_id)
        except ClientError as exc:
            self.say(str(exc), error=True)
            return
        screen = await self._open_table(table_id)
        if note is not None:
            screen.log_line(note)
        screen.redraw()

    def show_info(self, table_id: str) -> None:
        """Rules, pay table and versions of a table."""
        self.run_worker(self._show_info(table_id))

    async def _show_info(self, table_id: str) -> None:
        try:
            info = self.infos.get(table_id) or await self.client.table_info(table_id)
            self.infos[table_id] = info
            self.server = self.server or await self.client.server_info()
        except ClientError as exc:
            self.say(str(exc), error=True)
            return
        if info.jackpot is not None:  # its meter as last told, not as the info was read
            meter = self.client.jackpots.get(info.jackpot.name, info.jackpot.meter)
            info = replace(info, jackpot=replace(info.jackpot, meter=meter))
        self.push_screen(
            TextScreen(f"{info.name}: rules and pay table", info_text(info, self.server))
        )

    def action_help(self) -> None:
        """Show the keys."""
        self.push_screen(HelpScreen())

    def action_guide(self) -> None:
        """Show how to play and the ranking of hands (``g`` again closes it)."""
        self.push_screen(TextScreen(GUIDE_TITLE, Text.from_markup(GUIDE)))

    def action_history(self) -> None:
        """Show the player's past rounds."""
        self.push_screen(HistoryScreen(self.history_page_size))

    def action_server_info(self) -> None:
        """Show the server and protocol versions."""
        self.run_worker(self._server_info())

    async def _server_info(self) -> None:
        try:
            self.server = await self.client.server_info()
        except ClientError as exc:
            self.say(str(exc), error=True)
            return
        self.push_screen(TextScreen("Server", versions_text(self.server, self.client)))

    async def action_quit(self) -> None:
        """Close the session and exit."""
        with contextlib.suppress(Exception):
            await self.client.close()
        self.exit(0)


def no_server_text(url: str, exc: ClientError) -> str:
    """What to do when no server answers at ``url`` (or one says to try later)."""
    if isinstance(exc, TryLater):
        return f"The server is busy ({exc.reason}); this client keeps trying, r tries now."
    return (
        f"{exc}. Is the server running? Start one in another terminal with `make run` "
        "(or .venv/bin/paigow-server); this client keeps trying, r tries now."
    )


def ended_text(event: Disconnected) -> str:
    """Why the connection ended for good, and what to do."""
    if event.code == CloseCode.SESSION_REPLACED:
        return (
            "Another client took this player over (4005: it resumed the same session, "
            "e.g. started with the same --session). This window is disconnected: r takes "
            "the player back here. For two players on one machine, start each paigow-cli "
            "without --session (each is then its own player) or with its own --session NAME."
        )
    code = f" ({event.code})" if event.code is not None else ""
    return f"Disconnected{code}: {event.reason}. r: connect again."


def run_tui(args: argparse.Namespace) -> int:
    """Run the interactive table for the command line's options (see ``paigow-cli``)."""
    # The screen's own loop tries again (and says so), a 1013 at start too.
    client = make_client(args, start_wait_s=0)
    claim = getattr(args, "claim", None)
    notes = [claim.note] if claim is not None and claim.note else []
    app = PaigowApp(client, on_connect=lambda c: save_session(args.session, c), notes=notes)
    code = app.run()
    return code or 0
