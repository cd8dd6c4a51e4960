"""The table screen: seats, dealer, phase and countdown, your cards, bets and results.

Everything is drawn from the table's :class:`~clients.model.TableModel`, which the
client keeps in step with the server; the screen only adds what is being built (the
chips of a bet, the two cards picked for the low hand) and the server's answers to
its requests.
"""

from __future__ import annotations

import time
from collections.abc import Awaitable, Callable
from typing import Any, ClassVar

from rich.text import Text
from textual.app import ComposeResult
from textual.binding import Binding, BindingType
from textual.containers import Horizontal
from textual.widgets import Footer, RichLog, Static

from clients import handrank
from clients.core import Client, ClientError
from clients.model import TableModel
from clients.tui.base import LogScreen, PaigowBase
from clients.tui.cards import CardWidget
from clients.tui.dialogs import AmountScreen, ConfirmScreen
from clients.tui.keys import KeyGuard, Kind, Verdict, find_binding, key_kind
from clients.tui.table_view import (
    chips_text,
    jackpot_text,
    preview_text,
    rebuy_prompt,
    seats_text,
    staked_sides,
    status_text,
)
from protocol.structs import HandChoice, TableInfo

RoundKey = tuple[int, str | None]
"""A round as the screen tells rounds apart: its number and its commitment."""


class TableScreen(LogScreen):
    """One table: seats, dealer, phase and countdown, your cards, bets and results."""

    BINDINGS: ClassVar[list[BindingType]] = [
        *[Binding(str(d), f"digit({d})", show=False) for d in range(1, 10)],
        Binding("enter", "confirm", "Bet/Set", priority=True),
        Binding("b", "bonus_mode", "Bonus"),
        # Not in the footer either: +/- step the bet the chips go to by the table's unit.
        Binding("plus,equals_sign", "step(1)", "Step up", show=False),
        Binding("minus", "step(-1)", "Step down", show=False),
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
        Binding("q", "quit_table", "Quit", show=False),
    ]

    DRAWN: ClassVar[tuple[str, ...]] = ("status", "seats", "cards", "preview", "chips", "log")
    KEY_GAP_S: ClassVar[float] = 0.3
    """Keys closer than this are typed together (:mod:`clients.tui.keys`)."""

    # The keys that change the seat, the round or the session act only pressed alone; a
    # watcher has no key (nor footer entry) of a player's; Escape, ? and ctrl+q always act.
    ALONE_ACTIONS: ClassVar[set[str]] = {"leave", "cash_out", "rebuy", "sit_out", "rebet", "clear"}
    ALONE_ACTIONS |= {"house_set", "quit_table"}
    PLAYER_ACTIONS: ClassVar[set[str]] = ALONE_ACTIONS - {"quit_table"}
    PLAYER_ACTIONS |= {"digit", "card", "confirm", "bonus_mode", "suggest", "step"}
    FREE_ACTIONS: ClassVar[set[str]] = {"lobby", "app.help", "quit"}

    def __init__(self, table_id: str) -> None:
        super().__init__()
        self.table_id = table_id
        self.pending_bet = 0
        self.pending_bonus = 0
        self.pending_side: dict[str, int] = {}  # stakes on side bets beyond the bonus
        self.target = "amount"  # where chips go: "amount" (the main bet), "bonus", a kind
        self.selected: list[int] = []
        self.suggestion: HandChoice | None = None
        self.suggestion_key: RoundKey | None = None  # the round the suggestion is for
        self.choice: HandChoice | None = None
        self.choice_key: RoundKey | None = None  # the round the choice is for
        self.building_round: int | None = None  # the round the bonus toggle was set in
        self.keys = KeyGuard(self.KEY_GAP_S)
        self._watching: bool | None = None  # as last drawn (None: not drawn yet)

    @property
    def bonus_mode(self) -> bool:
        """Whether the chips go to the bonus bet."""
        return self.target == "bonus"

    @bonus_mode.setter
    def bonus_mode(self, on: bool) -> None:
        self.target = "bonus" if on else "amount"

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
        yield Static(id="jackpot")
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
        self.draw_kept()
        self.redraw()

    def drawn(self) -> bool:
        """Whether the widgets are there: not before compose, nor while the screen or
        the app is torn down. Events keep arriving then; they update only the model,
        which the next redraw shows (an event drawn then crashed the client), and
        their log lines are kept (:meth:`~clients.tui.base.LogScreen.log_line`). Every
        widget drawn is asked for: torn down, they go one by one."""
        return all(self.query(f"#{name}") for name in self.DRAWN)

    def tick(self) -> None:
        """Update the countdown."""
        if self.drawn():
            self.query_one("#status", Static).update(self.status_text())

    # --- keys ---------------------------------------------------------------------

    def watching(self) -> bool:
        """Whether the player has no seat here (only watches)."""
        return self.model.your_seat is None

    def check_action(self, action: str, parameters: tuple[object, ...]) -> bool | None:
        """A watcher's keys and footer have none of a player's actions."""
        return not (action in self.PLAYER_ACTIONS and self.watching())

    def admit_key(self, key: str, printable: bool) -> bool:
        """Whether a key pressed at this screen goes on to its binding now, by the rule of
        :mod:`clients.tui.keys`; a key held to see that it was pressed alone comes back
        acts from :meth:`_release`."""
        now = time.monotonic()
        binding = find_binding(key, [*self.BINDINGS, *self.app.BINDINGS])
        if binding is not None and not self._allowed(binding.action):
            # Not a key of a watcher's: said once a burst, not for each key of typed text.
            if self.keys.press(key, Kind.UNKNOWN, now).hint is not None:
                self._app.say("you are watching this table: esc, then j, to sit down and play")
            return False
        kind = key_kind(binding, printable, self.ALONE_ACTIONS, self.FREE_ACTIONS, "confirm")
        does = (binding.description or binding.action).lower() if binding is not None else ""
        decision = self.keys.press(key, kind, now, does)
        if decision.hint is not None:
            self._app.say(decision.hint)
            self.notify(decision.hint, severity="warning", timeout=4)
        if decision.verdict is Verdict.HOLD:
            self.set_timer(self.KEY_GAP_S * 1.05 + 0.01, self._release)
        return decision.verdict is Verdict.ACT

    def _allowed(self, action: str) -> bool:
        name = action.partition("(")[0]  # "digit(3)": the action digit
        return name.startswith("app.") or bool(self.check_action(name, ()))

    async def _release(self) -> None:
        """The gap after a held key has passed: its action, if no key came meanwhile."""
        key = self.keys.due(time.monotonic())
        binding = find_binding(key, self.BINDINGS) if key is not None else None
        if binding is not None and self.app.screen is self:
            await self.run_action(binding.action)

    # --- drawing --------------------------------------------------------------------

    def _width(self) -> int:
        return self.size.width or self.app.size.width

    def _this_round(self, key: RoundKey | None) -> bool:
        return key is not None and key == (self.model.round, self.model.commitment)

    def status_text(self) -> Text:
        """Table, round, phase, countdown, commitment and the fairness mark."""
        m = self.model
        name = self.info.name if self.info is not None else self.table_id
        left = None if m.deadline_ms is None else m.deadline_ms - self.client.server_now_ms()
        return status_text(m, name, left, self._app.link_state(), self._width())

    def seats_text(self) -> Text:
        """The dealer, then every seat: player, status, balance, bet, hand, result."""
        return seats_text(self.model, self._width())

    def preview_text(self) -> Text:
        """Your split: the live preview, the server's names, or your result."""
        suggestion = self.suggestion if self._this_round(self.suggestion_key) else None
        choice = self.choice if self._this_round(self.choice_key) else None
        info = self.info
        foul_loses = info is not None and info.foul == "lose"
        return preview_text(self.model, self.selected, suggestion, choice, foul_loses)

    def chips_text(self) -> Text:
        """The chip denominations and the bet being built."""
        return chips_text(
            self.info,
            self.pending_bet,
            self.pending_bonus,
            self.bonus_mode,
            self.model.my_seat,
            self.pending_side,
            self.target,
        )

    def jackpot_line(self) -> Text | None:
        """The table's progressive jackpot and its meter as last told (None: none)."""
        info = self.info
        if info is None or info.jackpot is None:
            return None
        j = info.jackpot
        meter = self.client.jackpots.get(j.name, j.meter)
        return jackpot_text(j.name, meter, j.wager, self._width())

    def draw_jackpot(self) -> None:
        """The jackpot line, shown only at a table that offers one."""
        if not self.drawn():
            return
        line = self.query_one("#jackpot", Static)
        text = self.jackpot_line()
        line.display = text is not None
        if text is not None:
            line.update(text)

    def redraw(self) -> None:
        """Redraw everything from the model (nothing while not :meth:`drawn`)."""
        if not self.drawn():
            return
        self.draw_jackpot()
        m = self.model
        watching = self.watching()
        if watching != self._watching:
            # What a watcher cannot do is not shown: the chips, the cards, their keys.
            self._watching = watching
            self.query_one("#chips", Static).display = not watching
            self.query_one("#cards", Horizontal).display = not watching
            self.refresh_bindings()
        if m.round != self.building_round:
            # A new round: chips go to the main bet again (the toggle was for the last).
            self.building_round = m.round
            self.bonus_mode = False
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
        """A chip in betting, a card in setting. A chip that would take the bet past the
        table's maximum, or past the chips you hold here, is refused with a word."""
        m = self.model
        if m.phase in ("dealing", "setting") and m.your_cards:
            self.action_card(n)
            return
        info = self.info
        if info is None or n > len(info.denominations):
            return
        self._put(self._pending(self.target) + info.denominations[n - 1], "chip")

    def _pending(self, target: str) -> int:
        if target == "amount":
            return self.pending_bet
        if target == "bonus":
            return self.pending_bonus
        return self.pending_side.get(target, 0)

    def _put(self, stake: int, what: str) -> None:
        """Make the target's stake ``stake``: refused with a word past its limit or past
        the chips you hold here (``what``: the chip or the step that made it)."""
        info = self.info
        if info is None:
            return
        target = self.target
        seat = self.model.my_seat
        held = None
        if seat is not None:
            placed = sum(w.amount for w in seat.wagers) if seat.wagers else seat.bonus
            held = seat.balance + seat.bet + placed
        total = self.pending_bet + self.pending_bonus + sum(self.pending_side.values())
        total += stake - self._pending(target)
        side = next((b for b in staked_sides(info) if b.kind == target), None)
        if target == "amount" and stake > info.max_bet:
            self._app.say(f"the most you can bet here is {info.max_bet}", error=True)
        elif target == "bonus" and stake > info.max_bonus:
            self._app.say(f"the most you can put on the bonus here is {info.max_bonus}", error=True)
        elif side is not None and stake > side.max:
            self._app.say(
                f"the most you can put on the {side.label} here is {side.max}", error=True
            )
        elif held is not None and total > held:
            self._app.say(
                f"that {what} makes {total}, and you hold {held} here (u: rebuy)", error=True
            )
        elif target == "amount":
            self.pending_bet = stake
        elif target == "bonus":
            self.pending_bonus = stake
        else:
            self.pending_side = {**self.pending_side, target: stake}
        self.redraw()

    def action_step(self, direction: int) -> None:
        """+ or -: the bet the chips go to, one step up or down: the main bet by the
        table's main bet unit, a side bet by its chip unit; a stake between steps moves
        to the step next to it."""
        info = self.info
        if info is None or self.model.phase not in ("idle", "betting"):
            return
        unit = info.bet_unit or 1
        if self.target == "amount":
            unit = info.main_bet_unit or unit
        now = self._pending(self.target)
        up, down = (now // unit + 1) * unit, max(0, (-(-now // unit) - 1) * unit)
        self._put(up if direction > 0 else down, "step")

    def action_card(self, n: int) -> None:
        """Pick or unpick card ``n`` (1..7) for the low hand."""
        m = self.model
        if m.phase not in ("dealing", "setting") or not 1 <= n <= len(m.your_cards) or m.your_low:
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
        """b: the chips go on to the next bet: the main bet, the bonus bet, then each
        staked side bet the table offers, and round to the main bet again."""
        order = ["amount", "bonus", *(b.kind for b in staked_sides(self.info))]
        at = order.index(self.target) if self.target in order else 0
        self.target = order[(at + 1) % len(order)]
        side = next((b for b in staked_sides(self.info) if b.kind == self.target), None)
        if side is not None:
            self._app.say(f"chips go on the {side.label} ({side.min}-{side.max}); b: next")
        self.redraw()

    def action_confirm(self) -> None:
        """Enter: place the bet built, or set the hand picked; asks first before a bet of
        every chip held here, or a split that fouls where a foul loses the bet."""
        m = self.model
        if m.phase in ("dealing", "setting") and m.your_cards:
            self._confirm_split()
        elif m.phase in ("idle", "betting"):
            self._confirm_bet()
        elif self.pending_bet or self.pending_bonus or any(self.pending_side.values()):
            self._app.say("not now: bets open in the next betting phase")
        self.redraw()

    def _confirm_split(self) -> None:
        m = self.model
        if len(self.selected) != 2:
            if not m.your_low:
                self._app.say("pick the two cards of the low hand first (1-7), or w: house way")
            return
        low = (self.selected[0], self.selected[1])
        info = self.info
        if info is not None and info.foul == "lose" and handrank.preview(m.your_cards, low)[2]:
            question = (
                "This split fouls: the low hand outranks the high hand, and at this "
                "table a foul loses the bet. Set it anyway?"
            )
            self._ask(question, lambda: self._run(self._set(low)))
            return
        self._run(self._set(low))

    def _confirm_bet(self) -> None:
        m = self.model
        seat = m.my_seat
        amount, bonus = self.pending_bet, self.pending_bonus
        side = tuple((k, v) for k, v in self.pending_side.items() if v)
        if not amount and (bonus or side):
            if seat is None or not seat.bet:
                self._app.say(
                    "the bonus bet goes with a main bet: b, then chips for the main bet", error=True
                )
                return
            amount = seat.bet  # a bonus added to the bet already placed
        if not amount:
            count = len(self.info.denominations) if self.info is not None else 1
            self._app.say(f"build a bet first with the chip keys 1-{count} (r: last bet)")
            return
        held = 0
        if seat is not None:
            placed = sum(w.amount for w in seat.wagers) if seat.wagers else seat.bonus
            held = seat.balance + seat.bet + placed
        total = amount + bonus + sum(v for _, v in side)
        if held and total >= held:
            question = f"Bet {total}: every chip you hold at this table?"
            self._ask(question, lambda: self._place(amount, bonus, side))
            return
        self._place(amount, bonus, side)

    def _place(self, amount: int, bonus: int, side: tuple[tuple[str, int], ...] = ()) -> None:
        self.pending_bet = self.pending_bonus = 0
        self.pending_side = {}
        self.bonus_mode = False  # the next chips go to the main bet again
        labels = {b.kind: b.label for b in staked_sides(self.info)}
        words = "".join(f" + {labels.get(k, k)} {v}" for k, v in side)
        self._run(
            self.client.bet(self.table_id, amount, bonus, side),
            f"bet {amount}" + (f" + bonus {bonus}" if bonus else "") + words + " placed",
        )
        self.redraw()

    def _ask(self, question: str, then: Callable[[], None]) -> None:
        def answered(yes: bool | None) -> None:
            if yes:
                then()

        self.app.push_screen(ConfirmScreen(question), answered)

    async def _set(self, low: tuple[int, int]) -> None:
        choice = await self.client.set_hand(self.table_id, low)
        self.choice, self.choice_key = choice, (self.model.round, self.model.commitment)
        self.log_line(f"you set: {choice.high_name} / {choice.low_name}")
        self.redraw()

    def action_clear(self) -> None:
        """Forget the bet being built, and remove the bet placed."""
        self.pending_bet = self.pending_bonus = 0
        self.pending_side = {}
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
        self.pending_side = {}
        self._run(self.client.sit_out(self.table_id), "sitting this round out")
        self.redraw()

    def action_suggest(self) -> None:
        """Ask the house way's split, and pick its low cards."""
        self._run(self._suggest())

    async def _suggest(self) -> None:
        choice = await self.client.house_way(self.table_id)
        self.suggestion = choice
        self.suggestion_key = (self.model.round, self.model.commitment)
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

        self._ask_amount(rebuy_prompt(self.info, self.model.my_seat, self._app.balances), rebuy)

    def action_cash_out(self) -> None:
        """Move chips back to the account, keeping the seat (empty: all)."""

        async def cash_out(amount: int) -> None:
            b = await self.client.cash_out(self.table_id, amount)
            self.log_line(f"cashed out: account {b.account}")
            self._app.show_balances(b)

        seat = self.model.my_seat
        held = f", up to the {seat.balance} you hold here" if seat is not None else ""
        self._ask_amount(f"Cash out: chips to take back (0: all{held})", cash_out)

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
        self.keys.forget()
        self.app.pop_screen()
        self._app.refresh_lobby()

    def action_quit_table(self) -> None:
        """Quit the client, as ``q`` does in the lobby; with a bet in the round being
        played, asks first. The seat is kept for the table's grace time."""
        seat = self.model.my_seat
        if seat is not None and seat.bet and self.model.phase not in ("idle", "betting"):
            question = (
                f"Your bet of {seat.bet} is in this round, which goes on without you (the "
                "house way sets your hand if you have not). Quit anyway?"
            )
            self._ask(question, self._quit)
            return
        self._quit()

    def _quit(self) -> None:
        self.app.run_worker(self.app.action_quit())
