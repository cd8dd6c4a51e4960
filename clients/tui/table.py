"""The table screen: seats, dealer, phase and countdown, your cards, bets and results.

Everything is drawn from the table's :class:`~clients.model.TableModel`, which the
client keeps in step with the server; the screen only adds what is being built (the
chips of a bet, the two cards picked for the low hand) and the server's answers to
its requests.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from typing import Any, ClassVar

from rich.text import Text
from textual.app import ComposeResult
from textual.binding import Binding, BindingType
from textual.containers import Horizontal
from textual.screen import Screen
from textual.widgets import Footer, RichLog, Static

from clients import handrank
from clients.core import Client, ClientError
from clients.model import DEALER, TableModel
from clients.text import cards_label, money_line
from clients.tui.base import PaigowBase
from clients.tui.cards import CardWidget
from clients.tui.dialogs import AmountScreen
from protocol.structs import HandChoice, TableInfo


def _fmt_ms(ms: int) -> str:
    return f"{max(0, ms) / 1000:4.1f}s"


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
    def _app(self) -> PaigowBase:
        app = self.app
        assert isinstance(app, PaigowBase)
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
        return self._app.infos.get(self.table_id)

    def compose(self) -> ComposeResult:
        yield Static(id="status")
        yield Static(id="seats")
        with Horizontal(id="cards"):
            for i in range(7):
                yield CardWidget(i, self.action_card)
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
        link = self._app.link_state()
        if link is not None:
            text.append(f"  {link}", style="bold red")
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
        """Run a request in the app's workers (it outlives the screen) with :meth:`_attempt`."""
        self._app.run_worker(self._attempt(work, done))

    async def _attempt(self, work: Awaitable[Any], done: str | None = None) -> None:
        """Await a request; an error is shown plainly, never raised; ``done`` is logged
        on success; the screen is redrawn either way."""
        try:
            await work
        except ClientError as exc:
            self._app.say(str(exc), error=True)
        except TimeoutError:
            self._app.say("the server did not answer in time", error=True)
        else:
            if done:
                self.log_line(done)
        self.redraw()

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
        """Bet as last round; not connected, try to connect now."""
        if not self.client.connected:
            self._app.action_reconnect()
            return
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
        self._app.show_info(self.table_id)

    def action_lobby(self) -> None:
        """Back to the lobby (the seat is kept), its tables and balance read afresh."""
        self.app.pop_screen()
        self._app.refresh_lobby()
