"""The lobby: every table, to join with a buy-in or to watch; and the player's account."""

from __future__ import annotations

import contextlib
from collections.abc import Mapping, Sequence
from typing import ClassVar

from textual import events, on
from textual.app import ComposeResult
from textual.binding import Binding, BindingType
from textual.widgets import DataTable, Footer, RichLog, Static

from clients.core import ClientError
from clients.tui.base import LogScreen, PaigowBase
from clients.tui.dialogs import AmountScreen
from protocol.structs import TableSummary

HEADERS = ("Table", "Name", "Phase", "Seats", "Watch", "Bet", "Bonus", "Buy-in")
MIN_NAME = 12  # below this the table's id column gives its room to the name
EDGE = 2  # the list's vertical scrollbar, when its rows outgrow it
PAD = 2  # a cell's padding, one column each side


Columns = list[tuple[str, int]]
"""The lobby's columns: each header with its width."""


def lobby_rows(
    summaries: Sequence[TableSummary], width: int, meters: Mapping[str, int] | None = None
) -> tuple[Columns, list[list[str]]]:
    """The lobby's columns and rows, fitted to ``width`` columns: every column whole but
    the name, cut with "…"; too narrow for both, the table's id gives way (its name says
    which table it is). Nothing scrolls sideways, whatever the phase's word. Where a
    table offers a progressive jackpot, a last column shows its meter (``meters``, by
    jackpot name: as last told)."""
    meters = meters or {}
    headers: tuple[str, ...] = HEADERS
    jackpots = any(t.jackpot is not None for t in summaries)
    if jackpots:
        headers = (*HEADERS, "Jackpot")
    rows = [
        [
            t.table_id,
            t.name,
            t.phase,
            f"{t.players}/{t.seats}",
            str(t.watchers),
            f"{t.min_bet}-{t.max_bet}",
            str(t.max_bonus) if t.max_bonus else "-",
            f"{t.buy_in_min}-{t.buy_in_max}",
        ]
        for t in summaries
    ]
    if jackpots:
        for t, row in zip(summaries, rows, strict=True):
            meter = meters.get(t.jackpot) if t.jackpot is not None else None
            row.append(f"{meter:,}" if meter is not None else "-")
    widths = [max([len(h), *(len(r[i]) for r in rows)]) for i, h in enumerate(headers)]
    others = sum(w + PAD for i, w in enumerate(widths) if i != 1)
    room = width - EDGE - others - PAD  # for the name
    columns = list(zip(headers, widths, strict=True))
    if room < min(MIN_NAME, widths[1]):  # the id's room goes to the name
        room += widths[0] + PAD
        columns = columns[1:]
        rows = [r[1:] for r in rows]
    name = [header for header, _ in columns].index("Name")
    columns[name] = ("Name", max(1, min(widths[1], room)))
    for r in rows:
        if len(r[name]) > room:
            r[name] = r[name][: max(1, room - 1)] + "…"
    return columns, rows


def app_meters(app: object) -> Mapping[str, int]:
    """The jackpots' meters the app's client was last told."""
    return app.client.jackpots if isinstance(app, PaigowBase) else {}


class LobbyScreen(LogScreen):
    """Every table: join one with a buy-in, or watch it; and the player's account.

    The table list and the account balance are read again every ``REFRESH_S``
    seconds, on reconnecting and on coming back from a table; money moves (join,
    rebuy, cash out, leave) update the balance as soon as they are answered. What
    arrives before the widgets exist (the list, the balance, the connection's news,
    log lines) is kept and drawn when they do.
    """

    REFRESH_S: ClassVar[float] = 3.0

    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("j", "join", "Join"),
        Binding("w", "watch", "Watch"),
        Binding("r", "refresh_or_reconnect", "Refresh"),
        Binding("h", "app.history", "History"),
        Binding("i", "app.server_info", "Versions"),
        Binding("g", "app.guide", "Guide"),
        Binding("question_mark", "app.help", "Help"),
        Binding("q", "app.quit", "Quit"),
    ]

    def __init__(self) -> None:
        super().__init__()
        self.summaries: list[TableSummary] = []

    def compose(self) -> ComposeResult:
        yield Static(id="status")
        yield Static(id="account")
        yield DataTable(id="tables", cursor_type="row")
        yield RichLog(id="log", wrap=True, markup=False, max_lines=200)
        yield Footer()

    def on_mount(self) -> None:
        self.set_interval(self.REFRESH_S, self.action_refresh)
        # Whatever came before the widgets did: a list read as the lobby was pushed
        # waited for the next refresh, and early log lines were lost.
        self.update_status()
        self.update_account()
        self.draw_tables()
        self.draw_kept()

    def drawn(self) -> bool:
        """Whether the widgets are there: not before compose, nor while the app is torn
        down. Balances and the connection's news keep coming then (a balance read as
        the app shut down crashed the client); the next drawing shows them."""
        return bool(self.query("#tables"))

    def update_status(self) -> None:
        """The connection line (nothing while not :meth:`drawn`)."""
        app = self.app
        assert isinstance(app, PaigowBase)
        if self.drawn():
            self.query_one("#status", Static).update(app.connection_text())

    def update_account(self) -> None:
        """The account line, from the app's last known balances (nothing while not
        :meth:`drawn`)."""
        app = self.app
        assert isinstance(app, PaigowBase)
        if self.drawn():
            self.query_one("#account", Static).update(app.account_text())

    def action_refresh(self) -> None:
        """Reload the table list and the balances."""
        app = self.app
        assert isinstance(app, PaigowBase)
        if app.client.connected:
            self.run_worker(self._refresh(), exclusive=True, group="lobby")

    def action_refresh_or_reconnect(self) -> None:
        """``r``: reload the lobby; not connected, try to connect now."""
        app = self.app
        assert isinstance(app, PaigowBase)
        if app.client.connected:
            self.action_refresh()
        else:
            app.action_reconnect()

    async def _refresh(self) -> None:
        app = self.app
        assert isinstance(app, PaigowBase)
        with contextlib.suppress(ClientError, TimeoutError):
            self.summaries = list((await app.client.lobby()).tables)
        await app.refresh_balance()
        self.draw_tables()

    def draw_tables(self) -> None:
        """The table list from :attr:`summaries`, the cursor kept on its row (nothing
        while not :meth:`drawn`: ``on_mount`` draws them)."""
        if not self.drawn():
            return
        table = self.query_one("#tables", DataTable)
        row = table.cursor_row
        table.clear(columns=True)  # the columns depend on the width and the rows
        width = self.size.width or self.app.size.width
        columns, rows = lobby_rows(self.summaries, width, app_meters(self.app))
        for header, width in columns:  # widths given: cleared columns kept their old ones
            table.add_column(header, width=width)
        for t, cells in zip(self.summaries, rows, strict=True):
            table.add_row(*cells, key=t.table_id)
        if self.summaries:
            table.move_cursor(row=min(row, len(self.summaries) - 1))
        self.update_status()

    def on_resize(self, event: events.Resize) -> None:
        """The columns fitted to the new width."""
        self.draw_tables()

    def selected(self) -> TableSummary | None:
        """The table under the cursor."""
        if not self.drawn():
            return None
        table = self.query_one("#tables", DataTable)
        if not self.summaries or table.cursor_row >= len(self.summaries):
            return None
        return self.summaries[table.cursor_row]

    @on(DataTable.RowSelected)
    def row_selected(self) -> None:
        """Enter on a row joins that table."""
        self.action_join()

    def action_join(self) -> None:
        """Ask the buy-in, then sit at the selected table; back to the seat (no buy-in
        asked, none taken) where the player still sits."""
        summary = self.selected()
        if summary is None:
            return
        app = self.app
        assert isinstance(app, PaigowBase)
        held = app.seated_at(summary.table_id)
        if held is not None:
            note = (
                f"you still sit at {summary.name} with {held} chips: back to your seat "
                "(no buy-in taken; u rebuys)"
            )
            app.run_worker(app.watch_table(summary.table_id, note))
            return
        default = min(summary.buy_in_max, max(summary.buy_in_min, summary.min_bet * 20))
        prompt = (
            f"Buy-in at {summary.name} ({summary.buy_in_min}..{summary.buy_in_max}), "
            "Enter to sit, Esc to cancel:"
        )

        def chosen(amount: int | None) -> None:
            if amount is not None:
                app.run_worker(app.join_table(summary.table_id, amount))

        app.push_screen(AmountScreen(prompt, default), chosen)

    def action_watch(self) -> None:
        """Watch the selected table without a seat."""
        summary = self.selected()
        app = self.app
        assert isinstance(app, PaigowBase)
        if summary is not None:
            app.run_worker(app.watch_table(summary.table_id))
