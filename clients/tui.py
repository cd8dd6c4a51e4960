"""The full-screen table, built with Textual, on the same client core as the scripts.

Screens: the lobby (your account balance; tables with their limits, seats and
players; join with a buy-in, or watch), the table (seats, dealer, phase and a live
countdown, chips to build a bet, your seven cards to split, sitting a round out,
the reveal and results, the fairness mark), the history of your rounds (a page at
a time), the table's rules and pay table with the server and protocol versions,
and help (``?`` everywhere). It fits 80x24 and grows with the terminal. Hand names
come from the server (``set_hand``, ``house_way`` and the reveal); while two cards
are being chosen, :mod:`clients.handrank` previews them.
"""

from __future__ import annotations

import argparse
import contextlib
from collections.abc import Awaitable, Callable
from typing import Any, ClassVar

from rich.text import Text
from textual import on
from textual.app import App, ComposeResult
from textual.binding import Binding, BindingType
from textual.containers import Horizontal, Vertical, VerticalScroll
from textual.events import Click
from textual.screen import ModalScreen, Screen
from textual.widgets import DataTable, Footer, Input, Label, RichLog, Static

from clients import handrank
from clients.core import (
    Client,
    ClientError,
    ClientEvent,
    Connected,
    Disconnected,
    Notice,
    Verified,
)
from clients.model import DEALER, TableModel, verify_record
from clients.session_file import make_client, save_session
from clients.text import (
    card_label,
    cards_label,
    describe,
    hand_line,
    money_line,
    record_line,
    result_line,
)
from protocol import limits as L
from protocol.cards import JOKER
from protocol.messages import Results, Reveal
from protocol.structs import Balances, HandChoice, ServerInfo, TableInfo, TableSummary

HELP = """\
[b]Lobby[/b]
  ↑ ↓    choose a table          enter/j  join (asks the buy-in)
  w      watch without a seat    r        refresh
  h      your history            i        server and protocol versions
  q      quit

[b]Table[/b]
  1-9    betting: add a chip of that denomination (b: to the bonus bet)
         setting: pick / unpick card 1-7 for the low hand (or click it)
  enter  betting: place the bet built;  setting: set the hand
  x      clear the bet           r        rebet (last round's bet)
  p      sit this round out (betting again in this phase cancels it)
  s      house way suggestion    w        let the house way set it
  u      rebuy                   o        cash out (keeps the seat)
  l      leave the seat          i        rules, pay table, versions
  h      history                 esc      back to the lobby

[b]History[/b]
  m      load older rounds       esc      back

The commitment (SHA-256 of the shuffle seed) is shown before the bets;
after the round the revealed seed is checked against it and re-deals
your cards and every revealed hand: ✓ verified, or ✗ with the reason.
A lost connection is retried at once with the session's resume token.
"""


def _fmt_ms(ms: int) -> str:
    return f"{max(0, ms) / 1000:4.1f}s"


# --- small screens --------------------------------------------------------------------


class HelpScreen(ModalScreen[None]):
    """The keys, one key away everywhere (``?``)."""

    BINDINGS: ClassVar[list[BindingType]] = [Binding("escape,q,question_mark", "dismiss", "Close")]

    def compose(self) -> ComposeResult:
        with VerticalScroll(id="dialog"):
            yield Static(HELP, id="help")

    def action_dismiss(self) -> None:  # type: ignore[override]
        self.dismiss(None)


class TextScreen(ModalScreen[None]):
    """A scrollable page of text (rules, versions)."""

    BINDINGS: ClassVar[list[BindingType]] = [Binding("escape,q,i", "close", "Close")]

    def __init__(self, title: str, body: Text) -> None:
        super().__init__()
        self.title_text = title
        self.body = body

    def compose(self) -> ComposeResult:
        with VerticalScroll(id="dialog"):
            yield Label(Text(self.title_text, style="bold"))
            yield Static(self.body)

    def action_close(self) -> None:
        self.dismiss(None)


class AmountScreen(ModalScreen[int | None]):
    """Asks for an amount of chips; Enter confirms, Escape cancels."""

    BINDINGS: ClassVar[list[BindingType]] = [Binding("escape", "cancel", "Cancel")]

    def __init__(self, prompt: str, default: int | None = None) -> None:
        super().__init__()
        self.prompt = prompt
        self.default = default

    def compose(self) -> ComposeResult:
        with Vertical(id="dialog"):
            yield Label(self.prompt)
            value = "" if self.default is None else str(self.default)
            yield Input(value=value, type="integer", id="amount")

    @on(Input.Submitted)
    def submitted(self, event: Input.Submitted) -> None:
        """Return the amount typed (None when empty)."""
        text = event.value.strip()
        self.dismiss(int(text) if text else None)

    def action_cancel(self) -> None:
        self.dismiss(None)


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
        assert isinstance(app, PaigowApp)
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


# --- the lobby --------------------------------------------------------------------------


class LobbyScreen(Screen[None]):
    """Every table: join one with a buy-in, or watch it; and the player's account.

    The table list and the account balance are read again every ``REFRESH_S``
    seconds, on reconnecting and on coming back from a table; money moves (join,
    rebuy, cash out, leave) update the balance as soon as they are answered.
    """

    REFRESH_S: ClassVar[float] = 3.0

    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("j", "join", "Join"),
        Binding("w", "watch", "Watch"),
        Binding("r", "refresh", "Refresh"),
        Binding("h", "app.history", "History"),
        Binding("i", "app.server_info", "Versions"),
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
        table = self.query_one("#tables", DataTable)
        table.add_columns("Table", "Name", "Phase", "Seats", "Watch", "Bet", "Bonus", "Buy-in")
        self.set_interval(self.REFRESH_S, self.action_refresh)
        self.update_status()
        self.update_account()

    def update_status(self) -> None:
        """The connection line."""
        app = self.app
        assert isinstance(app, PaigowApp)
        self.query_one("#status", Static).update(app.connection_text())

    def update_account(self) -> None:
        """The account line, from the app's last known balances."""
        app = self.app
        assert isinstance(app, PaigowApp)
        self.query_one("#account", Static).update(app.account_text())

    def action_refresh(self) -> None:
        """Reload the table list and the balances."""
        app = self.app
        assert isinstance(app, PaigowApp)
        if app.client.connected:
            self.run_worker(self._refresh(), exclusive=True, group="lobby")

    async def _refresh(self) -> None:
        app = self.app
        assert isinstance(app, PaigowApp)
        with contextlib.suppress(ClientError, TimeoutError):
            self.summaries = list(await app.client.list_tables())
        await app.refresh_balance()
        table = self.query_one("#tables", DataTable)
        row = table.cursor_row
        table.clear()
        for t in self.summaries:
            table.add_row(
                t.table_id,
                t.name,
                t.phase,
                f"{t.players}/{t.seats}",
                str(t.watchers),
                f"{t.min_bet}-{t.max_bet}",
                str(t.max_bonus) if t.max_bonus else "-",
                f"{t.buy_in_min}-{t.buy_in_max}",
                key=t.table_id,
            )
        if self.summaries:
            table.move_cursor(row=min(row, len(self.summaries) - 1))
        self.update_status()

    def selected(self) -> TableSummary | None:
        """The table under the cursor."""
        table = self.query_one("#tables", DataTable)
        if not self.summaries or table.cursor_row >= len(self.summaries):
            return None
        return self.summaries[table.cursor_row]

    @on(DataTable.RowSelected)
    def row_selected(self) -> None:
        """Enter on a row joins that table."""
        self.action_join()

    def action_join(self) -> None:
        """Ask the buy-in, then sit at the selected table."""
        summary = self.selected()
        if summary is None:
            return
        app = self.app
        assert isinstance(app, PaigowApp)
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
        assert isinstance(app, PaigowApp)
        if summary is not None:
            app.run_worker(app.watch_table(summary.table_id))


# --- the table --------------------------------------------------------------------------


class CardWidget(Static):
    """One of your seven cards; click it (or press its number) to pick it for the low hand."""

    def __init__(self, index: int) -> None:
        super().__init__("", classes="card", id=f"card-{index + 1}")
        self.index = index
        self.card: int | None = None
        self.border_title = str(index + 1)

    def show(self, card: int | None, selected: bool) -> None:
        """Draw ``card`` (None: an empty slot), lifted when selected."""
        self.card = card
        self.set_class(selected, "selected")
        self.set_class(card is None, "empty")
        self.remove_class("red", "black", "joker")
        if card is None:
            self.update("")
            return
        kind = "joker" if card == JOKER else "red" if card & 3 in (1, 2) else "black"
        self.add_class(kind)
        self.update(card_label(card))

    def on_click(self, event: Click) -> None:
        """Toggle this card in the low hand."""
        screen = self.screen
        if isinstance(screen, TableScreen):
            screen.action_card(self.index + 1)


class TableScreen(Screen[None]):
    """One table: seats, dealer, phase and countdown, your cards, bets and results."""

    BINDINGS: ClassVar[list[BindingType]] = [
        *[Binding(str(d), f"digit({d})", show=False) for d in range(1, 10)],
        Binding("enter", "confirm", "Bet/Set", priority=True),
        Binding("b", "bonus_mode", "Bonus"),
        Binding("x", "clear", "Clear"),
        Binding("r", "rebet", "Rebet"),
        # Not in the footer: it is full at 80 columns; the help (?) lists it.
        Binding("p", "sit_out", "Sit out", show=False),
        Binding("s", "suggest", "Suggest"),
        Binding("w", "house_set", "House way", show=False),
        Binding("u", "rebuy", "Rebuy", show=False),
        Binding("o", "cash_out", "Cash out", show=False),
        Binding("l", "leave", "Leave", show=False),
        Binding("i", "info", "Rules"),
        Binding("h", "app.history", "History", show=False),
        Binding("question_mark", "app.help", "Help"),
        Binding("escape", "lobby", "Lobby"),
    ]

    def __init__(self, table_id: str) -> None:
        super().__init__()
        self.table_id = table_id
        self.pending_bet = 0
        self.pending_bonus = 0
        self.bonus_mode = False
        self.selected: list[int] = []
        self.suggestion: HandChoice | None = None
        self.choice: HandChoice | None = None
        self.choice_key: tuple[int, str | None] | None = None

    @property
    def _app(self) -> PaigowApp:
        app = self.app
        assert isinstance(app, PaigowApp)
        return app

    @property
    def client(self) -> Client:
        """The app's client."""
        return self._app.client

    @property
    def model(self) -> TableModel:
        """This table's model."""
        return self.client.model(self.table_id)

    @property
    def info(self) -> TableInfo | None:
        """The table's rules and limits, once fetched."""
        app = self.app
        assert isinstance(app, PaigowApp)
        return app.infos.get(self.table_id)

    def compose(self) -> ComposeResult:
        yield Static(id="status")
        yield Static(id="seats")
        with Horizontal(id="cards"):
            for i in range(7):
                yield CardWidget(i)
        yield Static(id="preview")
        yield Static(id="chips")
        yield RichLog(id="log", wrap=True, markup=False, max_lines=500)
        yield Footer()

    def on_mount(self) -> None:
        self.query_one("#log", RichLog).can_focus = False
        self.set_interval(0.2, self.tick)
        self.redraw()

    def drawn(self) -> bool:
        """Whether the widgets are there: not before compose, nor while the screen or
        the app is torn down. Events keep arriving then; they update only the model,
        which the next redraw shows (an event drawn then crashed the client)."""
        return bool(self.query("#log"))

    def tick(self) -> None:
        """Update the countdown."""
        if self.drawn():
            self.query_one("#status", Static).update(self.status_text())

    def log_line(self, text: str | Text) -> None:
        """Add a line to the table's log (dropped while not :meth:`drawn`)."""
        if self.drawn():
            self.query_one("#log", RichLog).write(Text(text) if isinstance(text, str) else text)

    # --- drawing --------------------------------------------------------------------

    def status_text(self) -> Text:
        """Table, round, phase, countdown, commitment and the fairness mark."""
        m = self.model
        info = self.info
        name = info.name if info is not None else self.table_id
        text = Text.assemble((f" {name} ", "bold reverse"), f" round {m.round} ")
        text.append(f" {m.phase.upper()} ", style="bold yellow")
        if m.deadline_ms is not None:
            text.append(_fmt_ms(m.deadline_ms - self.client.server_now_ms()))
        if not self.client.connected:
            text.append("  reconnecting…", style="bold red")
        if m.commitment:
            text.append(f"  commit {m.commitment[:12]}…", style="dim")
        v = m.verification
        if v is not None:
            text.append(
                "  ✓ verified" if v.ok else "  ✗ NOT VERIFIED",
                style="bold green" if v.ok else "bold red",
            )
        return text

    def seats_text(self) -> Text:
        """The dealer, then every seat: player, status, balance, bet, hand, result."""
        m = self.model
        out = Text()
        dealer = m.hands.get(DEALER)
        out.append("  Dealer ", style="bold")
        if dealer is not None:
            out.append(f"{cards_label(dealer.high)} / {cards_label(dealer.low)}  ")
            out.append(f"{dealer.high_name} / {dealer.low_name}", style="italic")
        else:
            out.append("…" if m.phase in ("dealing", "setting") else "")
        for seat in m.seats:
            out.append("\n")
            mine = seat.seat == m.your_seat
            out.append("▶ " if mine else "  ", style="bold cyan")
            if seat.status == "empty":
                out.append(f"{seat.seat + 1} (empty)", style="dim")
                continue
            name = (seat.name or seat.player_id or "?")[:10]
            status = {"playing": "", "sitting_out": "out", "away": "away"}[seat.status]
            bet = f"{seat.bet}" + (f"+{seat.bonus}" if seat.bonus else "") if seat.bet else "-"
            line = f"{seat.seat + 1} {name:<10} {status:<4} bal {seat.balance:>6}  bet {bet:<7}"
            out.append(line, style="bold" if mine else "")
            hand = m.hands.get(seat.seat)
            result = m.results.get(seat.seat)
            if result is not None:
                style = {"win": "green", "push": "yellow", "lose": "red"}[result.outcome]
                gain = result.payout + result.bonus_payout - result.bet - result.bonus_bet
                out.append(f" {result.outcome.upper():<4} {gain:+d}", style=f"bold {style}")
                out.append(f" (H {result.high}, L {result.low})")
            elif hand is not None:
                out.append(f" {hand.high_name} / {hand.low_name}"[:34], style="italic")
            elif seat.hand_set:
                way = " (house)" if m.house_way.get(seat.seat) else ""
                out.append(f" set{way}", style="green")
        return out

    def preview_text(self) -> Text:
        """Your split: the live preview, the server's names, or your result."""
        m = self.model
        result = m.my_result
        if result is not None:
            style = {"win": "bold green", "push": "bold yellow", "lose": "bold red"}
            text = Text(f" {result.outcome.upper()} ", style=f"reverse {style[result.outcome]}")
            text.append(f" {money_line(result)}")
            return text
        if m.void is not None:
            return Text(f" round void: {m.void.message}; bets returned", style="yellow")
        if not m.your_cards:
            if m.your_seat is None:
                return Text(" watching: press esc for the lobby and join to play", style="dim")
            return Text(" waiting for the cards…" if m.phase == "dealing" else "", style="dim")
        key = (m.round, m.commitment)
        if self.choice is not None and self.choice_key == key and self.choice.applied:
            return Text.assemble(
                (" SET ", "reverse bold green"),
                f" high {self.choice.high_name}  |  low {self.choice.low_name}",
            )
        if m.your_low:
            return Text(f" set: low {cards_label(m.your_low)}", style="green")
        if len(self.selected) == 2:
            high, low, foul = handrank.preview(m.your_cards, self.selected)
            text = Text(f" high {high}  |  low {low}")
            if foul:
                text.append("  FOUL: the high hand must outrank the low", style="bold red")
            else:
                text.append("  enter to set", style="green")
            return text
        hint = " pick 2 cards for the low hand (1-7 or click); s: house way suggestion"
        if self.suggestion is not None and self.choice_key == key:
            s = self.suggestion
            hint = f" house way: low {cards_label(s.low)} ({s.high_name} / {s.low_name})"
        return Text(hint, style="dim" if self.suggestion is None else "cyan")

    def chips_text(self) -> Text:
        """The chip denominations and the bet being built."""
        info = self.info
        m = self.model
        seat = m.my_seat
        text = Text(" ")
        if info is not None:
            for i, d in enumerate(info.denominations[:9]):
                text.append(f"[{i + 1}]", style="bold")
                text.append(f" {d} ", style="black on yellow")
                text.append(" ")
        target = "bonus" if self.bonus_mode else "bet"
        text.append(f" adding to {target}", style="magenta" if self.bonus_mode else "")
        text.append(f"  building {self.pending_bet}")
        if self.pending_bonus:
            text.append(f"+{self.pending_bonus}")
        if seat is not None:
            text.append(f"  balance {seat.balance}", style="bold")
        return text

    def redraw(self) -> None:
        """Redraw everything from the model (nothing while not :meth:`drawn`)."""
        if not self.drawn():
            return
        m = self.model
        if m.your_cards and any(c not in m.your_cards for c in self.selected):
            self.selected = []
        if not m.your_cards:
            self.selected = []
        self.query_one("#status", Static).update(self.status_text())
        self.query_one("#seats", Static).update(self.seats_text())
        low = set(m.your_low) or set(self.selected)
        for widget in self.query(CardWidget):
            cards = m.your_cards
            card = cards[widget.index] if widget.index < len(cards) else None
            widget.show(card, card is not None and card in low)
        self.query_one("#preview", Static).update(self.preview_text())
        self.query_one("#chips", Static).update(self.chips_text())

    # --- actions --------------------------------------------------------------------

    def _run(self, work: Awaitable[Any], done: str | None = None) -> None:
        app = self.app
        assert isinstance(app, PaigowApp)
        app.run_worker(app.attempt(work, done, self))

    def action_digit(self, n: int) -> None:
        """A chip in betting, a card in setting."""
        m = self.model
        if m.phase == "setting" and m.your_cards:
            self.action_card(n)
            return
        info = self.info
        if info is None or n > len(info.denominations):
            return
        chip = info.denominations[n - 1]
        if self.bonus_mode:
            self.pending_bonus += chip
        else:
            self.pending_bet += chip
        self.redraw()

    def action_card(self, n: int) -> None:
        """Pick or unpick card ``n`` (1..7) for the low hand."""
        m = self.model
        if m.phase != "setting" or not 1 <= n <= len(m.your_cards) or m.your_low:
            return
        card = m.your_cards[n - 1]
        if card in self.selected:
            self.selected.remove(card)
        elif len(self.selected) < 2:
            self.selected.append(card)
        else:
            self.selected = [self.selected[1], card]
        self.redraw()

    def action_bonus_mode(self) -> None:
        """Switch the chips between the main bet and the bonus bet."""
        self.bonus_mode = not self.bonus_mode
        self.redraw()

    def action_confirm(self) -> None:
        """Place the bet built, or set the hand picked."""
        m = self.model
        if m.phase == "setting" and len(self.selected) == 2:
            low = (self.selected[0], self.selected[1])
            self._run(self._set(low))
        elif m.phase in ("idle", "betting") and self.pending_bet:
            amount, bonus = self.pending_bet, self.pending_bonus
            self.pending_bet = self.pending_bonus = 0
            self._run(
                self.client.bet(self.table_id, amount, bonus),
                f"bet {amount}" + (f" + bonus {bonus}" if bonus else ""),
            )
        self.redraw()

    async def _set(self, low: tuple[int, int]) -> None:
        choice = await self.client.set_hand(self.table_id, low)
        self.choice, self.choice_key = choice, (self.model.round, self.model.commitment)
        self.log_line(f"you set: {choice.high_name} / {choice.low_name}")
        self.redraw()

    def action_clear(self) -> None:
        """Forget the bet being built, and remove the bet placed."""
        self.pending_bet = self.pending_bonus = 0
        seat = self.model.my_seat
        if seat is not None and seat.bet and self.model.phase in ("idle", "betting"):
            self._run(self.client.clear(self.table_id), "bet cleared")
        self.redraw()

    def action_rebet(self) -> None:
        """Bet as last round."""
        self._run(self.client.rebet(self.table_id), "rebet")

    def action_sit_out(self) -> None:
        """Sit this round out: the server removes any bet and the seat shows ``out``."""
        self.pending_bet = self.pending_bonus = 0
        self._run(self.client.sit_out(self.table_id), "sitting this round out")
        self.redraw()

    def action_suggest(self) -> None:
        """Ask the house way's split, and pick its low cards."""
        self._run(self._suggest())

    async def _suggest(self) -> None:
        choice = await self.client.house_way(self.table_id)
        self.suggestion, self.choice_key = choice, (self.model.round, self.model.commitment)
        self.selected = list(choice.low)
        self.log_line(f"house way: {choice.high_name} / {choice.low_name}")
        self.redraw()

    def action_house_set(self) -> None:
        """Let the house way set the hand."""
        self._run(self._house_set())

    async def _house_set(self) -> None:
        choice = await self.client.house_way(self.table_id, apply=True)
        self.choice, self.choice_key = choice, (self.model.round, self.model.commitment)
        self.log_line(f"set by the house way: {choice.high_name} / {choice.low_name}")
        self.redraw()

    def _ask_amount(self, prompt: str, then: Callable[[int], Awaitable[Any]]) -> None:
        def chosen(amount: int | None) -> None:
            if amount is not None:
                self._run(then(amount))

        self.app.push_screen(AmountScreen(prompt), chosen)

    def action_rebuy(self) -> None:
        """Move chips from the account to the table (between rounds)."""

        async def rebuy(amount: int) -> None:
            b = await self.client.rebuy(self.table_id, amount)
            self.log_line(f"rebuy {amount}: account {b.account}")
            self._app.show_balances(b)

        self._ask_amount("Rebuy: chips to bring to the table", rebuy)

    def action_cash_out(self) -> None:
        """Move chips back to the account, keeping the seat (empty: all)."""

        async def cash_out(amount: int) -> None:
            b = await self.client.cash_out(self.table_id, amount)
            self.log_line(f"cashed out: account {b.account}")
            self._app.show_balances(b)

        self._ask_amount("Cash out: chips to take back (0: all)", cash_out)

    def action_leave(self) -> None:
        """Leave the seat (the table balance returns to the account)."""

        async def leave() -> None:
            b = await self.client.leave(self.table_id)
            self.log_line(f"left the table: account {b.account}")
            self._app.show_balances(b)

        self._run(leave())

    def action_info(self) -> None:
        """The rules, the pay table and the versions."""
        app = self.app
        assert isinstance(app, PaigowApp)
        app.show_info(self.table_id)

    def action_lobby(self) -> None:
        """Back to the lobby (the seat is kept), its tables and balance read afresh."""
        self.app.pop_screen()
        self._app.lobby.action_refresh()


# --- the app ----------------------------------------------------------------------------


class PaigowApp(App[int]):
    """The interactive client: a lobby, tables, history, rules and help.

    ``client`` is connected on mount unless ``connect`` is false; ``on_connect`` is
    called once it is. ``history_page_size`` (1..50) is how many rounds the history
    screen asks per page.
    """

    TITLE = "Pai Gow"
    ENABLE_COMMAND_PALETTE = False  # its footer key would crowd 80 columns
    CSS = """
    #status { height: 1; background: $boost; }
    #account { height: 1; }
    #seats { height: 7; }
    #cards { height: 3; }
    .card {
        width: 8; height: 3; border: round $foreground 50%; content-align: center middle;
        text-style: bold; margin: 0 1 0 0;
    }
    .card.empty { border: round $foreground 15%; }
    .card.red { color: red; }
    .card.black { color: $text; }
    .card.joker { color: magenta; border: double magenta; }
    .card.selected { border: heavy yellow; background: $boost; }
    #preview { height: 1; }
    #chips { height: 1; }
    #log { height: 1fr; min-height: 2; background: $surface; }
    #tables { height: 1fr; }
    LobbyScreen #log { height: 5; }
    #history { height: 1fr; }
    #dialog {
        width: 78; max-height: 22; height: auto; border: round $accent;
        background: $panel; padding: 0 1;
    }
    ModalScreen { align: center middle; }
    """
    BINDINGS: ClassVar[list[BindingType]] = [Binding("ctrl+q", "quit", "Quit", show=False)]

    def __init__(
        self,
        client: Client,
        *,
        on_connect: Callable[[Client], None] | None = None,
        connect: bool = True,
        history_page_size: int = L.MAX_HISTORY_PAGE,
    ) -> None:
        super().__init__()
        self.client = client
        self.history_page_size = history_page_size
        self.on_connect = on_connect
        self.auto_connect = connect
        self.infos: dict[str, TableInfo] = {}
        self.server: ServerInfo | None = None
        self.lobby = LobbyScreen()
        self.connect_error: str | None = None
        self.balances: Balances | None = None  # the last account balance read

    def on_mount(self) -> None:
        self.push_screen(self.lobby)
        self.run_worker(self._pump(self.client.listen()), group="pump")
        if self.auto_connect:
            self.run_worker(self._connect(), exclusive=True, group="connect")

    async def _connect(self) -> None:
        try:
            await self.client.connect()
        except ClientError as exc:
            self.connect_error = str(exc)
            self.say(f"cannot connect: {exc}", error=True)
            self.lobby.update_status()
            return
        if self.on_connect is not None:
            self.on_connect(self.client)
        with contextlib.suppress(ClientError, TimeoutError):
            self.server = await self.client.server_info()

    async def _pump(self, queue: Any) -> None:
        while True:
            event = await queue.get()
            self.on_client_event(event)

    def connection_text(self) -> Text:
        """The lobby's status line: who, where, connected or not."""
        c = self.client
        if c.connected and c.welcome is not None:
            w = c.welcome
            return Text.assemble(
                (" Pai Gow ", "bold reverse"),
                f" {w.name} at {c.url}  protocol {w.version}.{w.minor}",
                ("  connected", "green"),
            )
        state = self.connect_error or "connecting…"
        return Text.assemble((" Pai Gow ", "bold reverse"), f" {c.url}  ", (state, "bold red"))

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

    def show_balances(self, balances: Balances) -> None:
        """Keep balances just read (``balance``, or a rebuy's, cash out's or leave's reply)."""
        self.balances = balances
        self.lobby.update_account()

    def say(self, text: str, *, error: bool = False) -> None:
        """Show a line in the current screen's log (and a toast for errors)."""
        line = Text(text, style="bold red" if error else "")
        screen = self.screen
        if isinstance(screen, TableScreen | LobbyScreen):
            with contextlib.suppress(Exception):
                screen.query_one("#log", RichLog).write(line)
        if error:
            self.notify(text, severity="error", timeout=6)

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
                self.notify(line or "disconnected", severity="error", timeout=10)
            self.lobby.update_status()
            if isinstance(event, Connected):
                self.lobby.action_refresh()
            for screen in self.screen_stack:
                if isinstance(screen, TableScreen):
                    screen.log_line(Text(line or "", style="yellow"))
                    screen.redraw()
            return
        if isinstance(event, Notice):
            self.say(line or "", error=True)
            return
        if target is None:
            return
        if isinstance(event, Reveal):
            for hand in event.hands:
                target.log_line(Text(hand_line(hand), style="italic"))
        elif isinstance(event, Results):
            for result in event.results:
                target.log_line(Text(result_line(result), style="italic"))
        elif isinstance(event, Verified):
            target.log_line(Text(line or "", style="green" if event.verification.ok else "red"))
        elif line:
            target.log_line(line)
        target.redraw()

    async def attempt(
        self, work: Awaitable[Any], done: str | None = None, screen: TableScreen | None = None
    ) -> None:
        """Await a request; a server error is shown plainly, never raised."""
        try:
            await work
        except ClientError as exc:
            self.say(str(exc), error=True)
        except TimeoutError:
            self.say("the server did not answer in time", error=True)
        else:
            if done and screen is not None:
                screen.log_line(done)
        if screen is not None:
            screen.redraw()

    async def _open_table(self, table_id: str) -> TableScreen:
        with contextlib.suppress(ClientError, TimeoutError):
            self.infos[table_id] = await self.client.table_info(table_id)
        screen = self.table_screen(table_id)
        if screen is None:
            screen = TableScreen(table_id)
            await self.push_screen(screen)
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

    async def watch_table(self, table_id: str) -> None:
        """Watch ``table_id`` and show it."""
        try:
            await self.client.watch(table_id)
        except ClientError as exc:
            self.say(str(exc), error=True)
            return
        screen = await self._open_table(table_id)
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
        self.push_screen(
            TextScreen(f"{info.name}: rules and pay table", info_text(info, self.server))
        )

    def action_help(self) -> None:
        """Show the keys."""
        self.push_screen(HelpScreen())

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


def versions_text(server: ServerInfo, client: Client) -> Text:
    """Server name and version, and the protocol versions of both sides."""
    w = client.welcome
    return Text(
        f"server       {server.server_name} {server.server_version}\n"
        f"protocol     {server.protocol_version}.{server.protocol_minor} "
        f"(server speaks {server.protocol_min}..{server.protocol_max})\n"
        f"client       {client.client_name}\n"
        + (f"session      {w.player_id} ({'guest' if w.guest else 'account'})\n" if w else "")
    )


def info_text(info: TableInfo, server: ServerInfo | None) -> Text:
    """A table's limits, options, timings and bonus pay table."""
    lines = [
        f"bets         {info.min_bet}..{info.max_bet} in multiples of {info.bet_unit}",
        f"chips        {' '.join(str(d) for d in info.denominations)}",
        f"buy-in       {info.buy_in_min}..{info.buy_in_max}",
        f"bonus        up to {info.max_bonus}" if info.max_bonus else "bonus        none",
        f"commission   {info.commission_pct}% of a win, rounded down",
        f"foul         {'refused: set again' if info.foul == 'reject' else 'loses the bet'}",
        f"timing       betting {info.betting_ms / 1000:g}s, setting {info.setting_ms / 1000:g}s,"
        f" reveal {info.revealing_ms / 1000:g}s, settle {info.settling_ms / 1000:g}s",
        f"away grace   {info.grace_ms / 1000:g}s",
        f"rules        version {info.rules_version}",
        "",
        "bonus pay table (to 1):",
    ]
    lines += [f"  {line.label:<34} {line.pays:>7}" for line in info.paytable] or ["  (none)"]
    if server is not None:
        lines += [
            "",
            f"server {server.server_name} {server.server_version}, protocol "
            f"{server.protocol_version}.{server.protocol_minor}",
        ]
    return Text("\n".join(lines))


def run_tui(args: argparse.Namespace) -> int:
    """Run the interactive table for the command line's options."""
    client = make_client(args)
    app = PaigowApp(client, on_connect=lambda c: save_session(args.session, c))
    code = app.run()
    return code or 0
