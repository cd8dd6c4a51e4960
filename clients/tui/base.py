"""The app as its screens see it: the client, what is known of the tables and the
account, and the moves that open screens.

:class:`~clients.tui.app.PaigowApp` is the app; the screens reach it through this
class, so that no screen imports the module of the app, which imports every screen.
The moves that open a screen (join, watch, rules) are the app's to define.
"""

from __future__ import annotations

import contextlib
from collections import deque

from rich.text import Text
from textual.app import App
from textual.screen import Screen
from textual.widgets import RichLog

from clients.core import Client, ClientError
from clients.tui.table_view import fit
from protocol import limits as L
from protocol.structs import Balances, ServerInfo, TableInfo


class LogScreen(Screen[None]):
    """A screen with a log (a ``RichLog`` of id ``log``) that keeps what it is told
    before its widgets exist.

    A screen is pushed without waiting for its compose, and the connection's news
    (a refused connection, the first notes) can come first: a line written then had no
    log to go to and was lost. :meth:`log_line` keeps such lines, at most
    :attr:`KEPT_LINES` of them, and the screen's ``on_mount`` shows them, oldest first,
    by calling :meth:`draw_kept`.
    """

    KEPT_LINES = 200  # as many as the log shows

    def __init__(self) -> None:
        super().__init__()
        self._kept: deque[Text] = deque(maxlen=self.KEPT_LINES)

    def log_line(self, text: str | Text) -> None:
        """Add a line to the log, or keep it for :meth:`draw_kept` while there is none."""
        line = Text(text) if isinstance(text, str) else text
        logs = list(self.query("#log").results(RichLog))
        if not logs:
            self._kept.append(line)
        for log in logs:
            log.write(line)

    def draw_kept(self) -> None:
        """Write the lines kept while the log was missing (the log must exist now)."""
        log = self.query_one("#log", RichLog)
        while self._kept:
            log.write(self._kept.popleft())


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
        """The lobby's status line: who, where, connected or not; when not, the state
        comes before the address, which is cut first at a narrow width."""
        c = self.client
        state = self.link_state()
        if state is None and c.welcome is not None:
            w = c.welcome
            text = Text.assemble(
                (" Pai Gow ", "bold reverse"),
                f" {w.name} at {c.url}  protocol {w.version}.{w.minor}",
                ("  connected", "green"),
            )
        else:
            text = Text.assemble(
                (" Pai Gow ", "bold reverse"), (f"  {state or ''} ", "bold red"), f" {c.url}"
            )
        return fit(text, self.size.width)

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

    def seated_at(self, table_id: str) -> int | None:
        """The chips the player holds at ``table_id`` when seated there (None: not seated),
        from the table's model, else from the last balances read."""
        model = self.client.tables.get(table_id)
        if model is not None and model.synced:
            seat = model.my_seat
            return seat.balance if seat is not None and seat.status != "empty" else None
        if self.balances is not None:
            for held in self.balances.tables:
                if held.table_id == table_id:
                    return held.balance
        return None

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
        # The lobby and the table screens have a log, kept until they are drawn; the
        # others show the toast alone.
        for screen in self.screen_stack if lobby else [self.screen]:
            if isinstance(screen, LogScreen):
                screen.log_line(line)
        if error:
            self.notify(text, severity="error", timeout=6)

    # --- the app's own ------------------------------------------------------------------

    def show_balances(self, balances: Balances) -> None:
        """Keep balances just read (``balance``, or a rebuy's, cash out's or leave's reply)."""
        raise NotImplementedError

    async def join_table(self, table_id: str, buy_in: int) -> None:
        """Sit at ``table_id`` with ``buy_in`` chips and show it."""
        raise NotImplementedError

    async def watch_table(self, table_id: str, note: str | None = None) -> None:
        """Watch ``table_id`` and show it (``note``: a first line in its log)."""
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
