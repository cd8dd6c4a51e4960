"""The app as its screens see it: the client, what is known of the tables and the
account, and the moves that open screens.

:class:`~clients.tui.app.PaigowApp` is the app; the screens reach it through this
class, so that no screen imports the module of the app, which imports every screen.
The moves that open a screen (join, watch, rules) are the app's to define.
"""

from __future__ import annotations

import contextlib

from rich.text import Text
from textual.app import App
from textual.widgets import RichLog

from clients.core import Client, ClientError
from protocol import limits as L
from protocol.structs import Balances, ServerInfo, TableInfo


class PaigowBase(App[int]):
    """The client's state on screen, shared by every screen.

    ``client`` is the session; ``history_page_size`` (1..50) is how many rounds the
    history screen asks per page.
    """

    def __init__(self, client: Client, *, history_page_size: int = L.MAX_HISTORY_PAGE) -> None:
        super().__init__()
        self.client = client
        self.history_page_size = history_page_size
        self.infos: dict[str, TableInfo] = {}
        self.server: ServerInfo | None = None
        self.connect_error: str | None = None  # why the first connection is not made yet
        self.ended: str | None = None  # why the connection ended for good, what to do
        self.connecting = False  # a first connection is being tried
        self.balances: Balances | None = None  # the last account balance read

    def link_state(self) -> str | None:
        """A few words on the connection when it is not up (None when it is)."""
        c = self.client
        if c.connected:
            return None
        if self.ended is not None:
            if "4005" in self.ended:
                return "taken over by another client (r: take it back)"
            return "disconnected (r: connect again)"
        if c.reconnecting:
            return "connection lost: reconnecting… (r: now)"
        if self.connect_error is not None:
            return self.connect_error
        return "connecting…" if self.connecting else "not connected (r: connect)"

    def connection_text(self) -> Text:
        """The lobby's status line: who, where, connected or not."""
        c = self.client
        state = self.link_state()
        if state is None and c.welcome is not None:
            w = c.welcome
            return Text.assemble(
                (" Pai Gow ", "bold reverse"),
                f" {w.name} at {c.url}  protocol {w.version}.{w.minor}",
                ("  connected", "green"),
            )
        return Text.assemble(
            (" Pai Gow ", "bold reverse"), f" {c.url}  ", (state or "", "bold red")
        )

    def account_text(self) -> Text:
        """The lobby's account line: the account balance, and the chips at each table."""
        text = Text(" Account ", style="bold")
        b = self.balances
        if b is None:
            return text.append("…", style="dim")
        text.append(str(b.account), style="bold green").append(" chips")
        if b.tables:
            at = ", ".join(f"{t.table_id} {t.balance}" for t in b.tables)
            text.append(f"   at the tables {sum(t.balance for t in b.tables)}: {at}")
        return text

    async def refresh_balance(self) -> None:
        """Read the balances again (``balance``); on failure the last ones stay shown."""
        if not self.client.connected:
            return
        with contextlib.suppress(ClientError, TimeoutError):
            self.show_balances(await self.client.balance())

    def say(self, text: str, *, error: bool = False, lobby: bool = False) -> None:
        """Show a line in the current screen's log (and a toast for errors); ``lobby``:
        in every open screen's log, the lobby's too (news of the connection)."""
        line = Text(text, style="bold red" if error else "")
        # The lobby and the table screens have a log; the others show the toast alone.
        for screen in self.screen_stack if lobby else [self.screen]:
            for log in screen.query("#log").results(RichLog):
                log.write(line)
        if error:
            self.notify(text, severity="error", timeout=6)

    # --- the app's own ------------------------------------------------------------------

    def show_balances(self, balances: Balances) -> None:
        """Keep balances just read (``balance``, or a rebuy's, cash out's or leave's reply)."""
        raise NotImplementedError

    async def join_table(self, table_id: str, buy_in: int) -> None:
        """Sit at ``table_id`` with ``buy_in`` chips and show it."""
        raise NotImplementedError

    async def watch_table(self, table_id: str) -> None:
        """Watch ``table_id`` and show it."""
        raise NotImplementedError

    def show_info(self, table_id: str) -> None:
        """Rules, pay table and versions of a table."""
        raise NotImplementedError

    def refresh_lobby(self) -> None:
        """Read the lobby's tables and balance afresh (on coming back to it)."""
        raise NotImplementedError

    def action_reconnect(self) -> None:
        """Not connected: try to connect now."""
        raise NotImplementedError
