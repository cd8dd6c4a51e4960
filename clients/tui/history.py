"""The history screen: the player's past rounds, a page at a time, each checked."""

from __future__ import annotations

from typing import ClassVar

from rich.text import Text
from textual.app import ComposeResult
from textual.binding import Binding, BindingType
from textual.screen import Screen
from textual.widgets import Footer, Label, RichLog

from clients.core import ClientError
from clients.model import verify_record
from clients.text import record_line
from clients.tui.base import PaigowBase
from protocol import limits as L


class HistoryScreen(Screen[None]):
    """The player's past rounds, newest first, each with its fairness check.

    Rounds come ``page_size`` at a time (1..50): the newest page on opening, then each
    ``m`` appends the next older page, following the server's ``next_cursor`` until it
    has none. The title says how many rounds are shown and whether older ones remain.
    """

    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("m", "more", "Older rounds"),
        Binding("escape,q,h", "close", "Back"),
        Binding("question_mark", "app.help", "Help"),
    ]

    def __init__(self, page_size: int = L.MAX_HISTORY_PAGE) -> None:
        super().__init__()
        self.page_size = page_size
        self.shown = 0
        self.cursor: str | None = None  # next_cursor of the last page read
        self.complete = False  # the server has no older page
        self.loading = False

    def compose(self) -> ComposeResult:
        yield Label(id="status")
        yield RichLog(id="history", wrap=True, markup=False)
        yield Footer()

    def on_mount(self) -> None:
        self.action_more()

    def title_text(self) -> Text:
        """How many rounds are shown, and what ``m`` would do."""
        text = Text("History: ", style="bold")
        if not self.shown:
            if self.loading:
                return text.append("loading…")
            if self.complete:
                return text.append("no rounds played yet")
            return text.append("not loaded").append("  m: try again", "cyan")
        if self.complete:
            return text.append(f"all {self.shown} rounds, newest first")
        text.append(f"the newest {self.shown} rounds")
        return text.append("  loading older…" if self.loading else "  m: older rounds", "cyan")

    def check_action(self, action: str, parameters: tuple[object, ...]) -> bool | None:
        """Hide ``m`` from the footer once every round is shown."""
        return not (action == "more" and self.complete)

    def action_more(self) -> None:
        """Load the next older page (nothing when one is loading or none is left)."""
        if self.loading or self.complete:
            return
        # The flag, not an exclusive worker, keeps one request in flight: cancelling
        # a request whose page arrives anyway would make the next one ask it again.
        self.loading = True
        self.query_one("#status", Label).update(self.title_text())
        self.run_worker(self._load_page(), group="history")

    async def _load_page(self) -> None:
        app = self.app
        assert isinstance(app, PaigowBase)
        log = self.query_one("#history", RichLog)
        try:
            page = await app.client.history(cursor=self.cursor, limit=self.page_size)
        except (ClientError, TimeoutError) as exc:
            log.write(Text(f"history unavailable: {exc or 'no answer'} (m: try again)", "red"))
            return
        else:
            for record in page.rounds:
                v = verify_record(record)
                ok = (" ✓ verified", "green") if v.ok else (f" ✗ {v.detail}", "red")
                log.write(Text.assemble(record_line(record), ok))
            self.shown += len(page.rounds)
            self.cursor = page.next_cursor
            self.complete = page.next_cursor is None
        finally:
            self.loading = False
            self.query_one("#status", Label).update(self.title_text())
            self.refresh_bindings()

    def action_close(self) -> None:
        self.app.pop_screen()
