"""The modal dialogs: the help, a page of text (rules, versions), an amount prompt; and
the text of the rules and versions pages.

Each is one key away and closes with Escape; none needs the app beyond showing itself.
"""

from __future__ import annotations

import itertools
from dataclasses import dataclass
from typing import ClassVar

from rich.console import Group, RenderableType
from rich.table import Table
from rich.text import Text
from textual import on
from textual.app import ComposeResult
from textual.binding import Binding, BindingType
from textual.containers import Vertical, VerticalScroll
from textual.screen import ModalScreen
from textual.widgets import Input, Label, Static

from clients.core import Client
from protocol.structs import JackpotLine, ServerInfo, SideBetInfo, TableInfo

HELP = """\
[b]Everywhere[/b]
  g      how to play, and the ranking of hands
  ?      these keys                 esc      back

[b]Lobby[/b]
  ↑ ↓    choose a table          enter/j  join (asks the buy-in)
  w      watch without a seat    r        refresh (not connected: retry)
  h      your history            i        server and protocol versions
  q      quit

[b]Table[/b]
  1-9    betting: add a chip of that key's value at this table (shown
         in the chip row); b moves the chips on to the bonus bet, then
         to each side bet the table offers; + - step that bet by the
         table's unit
         setting: pick / unpick card 1-7 for the low hand (or click it)
  enter  betting: place the bet built;  setting: set the hand
  x      clear the bet           r        rebet (last round's bet)
  p      sit this round out (betting again in this phase cancels it)
  s      house way suggestion    w        let the house way set it
  u      rebuy                   o        cash out (keeps the seat)
  l      leave the seat          i        rules, pay table, versions
  h      history                 esc      back to the lobby
  q      quit (your seat is kept for the table's grace time)
  Typed text is not play: x r p w u o l q act only pressed alone, and
  a key the table does not know drops the keys typed with it.
  Watching (no seat), the keys of a player are not there.

[b]History[/b]
  m      load older rounds       esc      back

The commitment (SHA-256 of the shuffle seed) is shown before the bets;
after the round the revealed seed is checked against it and re-deals
your cards and every revealed hand: ✓ verified, or ✗ with the reason.
A lost connection is retried by itself (r: now), with the session's
resume token. Each paigow-cli running is its own player.
"""


class HelpScreen(ModalScreen[None]):
    """The keys, one key away everywhere (``?``)."""

    BINDINGS: ClassVar[list[BindingType]] = [Binding("escape,q,question_mark", "dismiss", "Close")]

    def compose(self) -> ComposeResult:
        with VerticalScroll(id="dialog"):
            yield Static(HELP, id="help")

    def on_mount(self) -> None:
        # Focused, the keys scroll with the arrows and page keys where they do not fit.
        self.query_one("#dialog", VerticalScroll).focus()

    def action_dismiss(self) -> None:  # type: ignore[override]
        self.dismiss(None)


class TextScreen(ModalScreen[None]):
    """A scrollable page of text (rules, versions, the guide); the key that opened it
    closes it, as Escape does."""

    BINDINGS: ClassVar[list[BindingType]] = [Binding("escape,q,i,g", "close", "Close")]

    def __init__(self, title: str, body: RenderableType) -> None:
        super().__init__()
        self.title_text = title
        self.body = body

    def compose(self) -> ComposeResult:
        with VerticalScroll(id="dialog"):
            yield Label(Text(self.title_text, style="bold"), id="page-title")
            yield Static(self.body)

    def on_mount(self) -> None:
        # Focused, the page scrolls with the arrows and page keys when it is long.
        dialog = self.query_one("#dialog", VerticalScroll)
        dialog.focus()
        # Whenever the layout gives the page a scroll bar (or takes it away).
        self.watch(dialog, "show_vertical_scrollbar", self.hint)

    def hint(self, more: bool) -> None:
        """The title says when the page is longer than the dialog, and how to scroll:
        a scroll bar alone is easily missed at 80x24."""
        title = Text(self.title_text, style="bold")
        if more:
            title.append("  ↓ more: ↑↓ PgDn", style="reverse")
        self.query_one("#page-title", Label).update(title)

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
            yield Static(self.prompt)  # a Static wraps a long prompt; a Label would cut it
            value = "" if self.default is None else str(self.default)
            yield Input(value=value, type="integer", id="amount")

    @on(Input.Submitted)
    def submitted(self, event: Input.Submitted) -> None:
        """Return the amount typed (None when empty)."""
        text = event.value.strip()
        self.dismiss(int(text) if text else None)

    def action_cancel(self) -> None:
        self.dismiss(None)


class ConfirmScreen(ModalScreen[bool]):
    """Asks a yes-or-no question: ``y`` or Enter says yes, ``n`` or Escape no."""

    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("y,enter", "answer(True)", "Yes"),
        Binding("n,escape", "answer(False)", "No"),
    ]

    def __init__(self, question: str) -> None:
        super().__init__()
        self.question = question

    def compose(self) -> ComposeResult:
        with Vertical(id="dialog"):
            yield Static(self.question)
            yield Label(Text("y/Enter: yes    n/Esc: no", style="bold"))

    def action_answer(self, yes: bool) -> None:
        self.dismiss(yes)


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


# The commission's rounding (table_info.commission_rounding), after its percentage.
_ROUNDING = {"down": "rounded down", "up": "rounded up", "whole": "exact: whole-chip bets"}

# A commission-free table (table_info.commission_free, minor 5): the dealer's hand that
# pushes every main bet instead.
_BARRED = {"ez": "if dealer: Q-high pai gow", "nine_low": "if dealer's low is 9-high"}

# The progressive wager's side bet kind (protocol/PROTOCOL.md, `SideBetInfo`): where the
# table offers a jackpot, its pay lines are the jackpot's, shown there once.
_PROGRESSIVE = "progressive"


def _commission(info: TableInfo) -> str:
    barred = _BARRED.get(info.commission_free)
    if barred is not None:
        return f"none; every bet pushes\n{barred}"  # two lines of its cell
    rounding = _ROUNDING.get(info.commission_rounding, "")
    return f"{info.commission_pct}% of a win, {rounding}".rstrip(", ")


def _award(line: JackpotLine) -> str:
    """``100%`` (of the meter) or ``8000`` (chips for each chip of the wager)."""
    if line.meter_bps:
        return f"{line.meter_bps / 100:g}%"
    return str(line.fixed)


@dataclass(frozen=True, slots=True)
class _Column:
    """One bet's column of the pay table: its heading and what each hand pays."""

    head: str  # its name and unit: "bonus to 1", "envy chips", "jackpot for 1"
    pays: dict[str, str]  # bonus class -> what it pays


def _merge(order: list[str], best_first: list[str]) -> None:
    """Add to ``order`` (hand classes, best first) those of another pay table, also best
    first: each new one goes right after the class it follows there (first, if none)."""
    for i, code in enumerate(best_first):
        if code in order:
            continue
        before = next((c for c in reversed(best_first[:i]) if c in order), None)
        order.insert(0 if before is None else order.index(before) + 1, code)


def _shown_side_bets(info: TableInfo) -> list[SideBetInfo]:
    """The side bets beyond the bonus bet, the progressive left out where the jackpot
    lists its lines."""
    return [
        b
        for b in info.side_bets
        if b.kind != "bonus" and not (b.kind == _PROGRESSIVE and info.jackpot is not None)
    ]


def info_text(info: TableInfo, server: ServerInfo | None) -> RenderableType:
    """A table's rules page: the jackpot's meter first (where it has one), its limits,
    options and timings in two columns, then one pay table with a column per bet, each
    hand on one line (the bonus, Envy and jackpot pay on the same hands), so that a
    Fortune table's page is read at 80x24 with at most a few lines to scroll. A side bet
    on other hands (the Queen's Dragon, the Tiger 9) says its lines under it."""
    parts: list[RenderableType] = []
    j = info.jackpot
    if j is not None:
        # The progressive jackpot (protocol minor 7): its meter as of the page.
        parts.append(
            Text.assemble(
                ("JACKPOT ", "bold"),
                (f"{j.name}  meter {j.meter:,}", "bold yellow"),
                f"  wager {j.wager} a round",
            )
        )
    items = [
        (
            "bets",
            f"{info.min_bet}..{info.max_bet} in multiples of {info.main_bet_unit or info.bet_unit}",
        ),
        ("chips", " ".join(str(d) for d in info.denominations)),
        ("buy-in", f"{info.buy_in_min}..{info.buy_in_max}"),
        ("bonus", f"{info.min_bonus or 1}..{info.max_bonus}" if info.max_bonus else "none"),
        ("commission", _commission(info)),
        ("foul", "refused: set again" if info.foul == "reject" else "loses the bet"),
        ("betting", f"{info.betting_ms / 1000:g}s, setting {info.setting_ms / 1000:g}s"),
        ("reveal", f"{info.revealing_ms / 1000:g}s, settle {info.settling_ms / 1000:g}s"),
        ("away grace", f"{info.grace_ms / 1000:g}s"),
        ("rules", f"version {info.rules_version}"),
    ]
    if server is not None:  # the server's own name is on the versions page (i, lobby)
        items.append(
            (
                "server",
                f"{server.server_version}, protocol "
                f"{server.protocol_version}.{server.protocol_minor}",
            )
        )
    bonus_classes = {line.bonus_class for line in info.paytable}
    columns: list[_Column] = []
    if info.paytable:
        columns.append(_Column("bonus to 1", {p.bonus_class: str(p.pays) for p in info.paytable}))
    apart: list[SideBetInfo] = []  # side bets on other hands than the bonus's
    for side in _shown_side_bets(info):
        name = side.label.lower()
        if side.rides_on:
            items.append((name[:10], f"on a {side.rides_on} bet of {side.min}+"))
        elif side.paytable and not bonus_classes & {p.bonus_class for p in side.paytable}:
            apart.append(side)
            continue
        else:
            items.append((name[:10], f"{side.min}..{side.max}"))
        unit = "chips" if side.fixed else "to 1"
        columns.append(
            _Column(
                f"{name.split()[0]} {unit}", {p.bonus_class: str(p.pays) for p in side.paytable}
            )
        )
    if j is not None:
        columns.append(_Column("jackpot for 1", {p.bonus_class: _award(p) for p in j.paytable}))
    # Two columns of rules, read down the left one first.
    rules = Table.grid(padding=(0, 1))
    for _ in range(2):
        rules.add_column(style="bold", no_wrap=True)
        rules.add_column(overflow="fold")
    half = (len(items) + 1) // 2
    for left, right in itertools.zip_longest(items[:half], items[half:], fillvalue=("", "")):
        rules.add_row(left[0], left[1], f" {right[0]}" if right[0] else "", right[1])
    parts.append(rules)
    if columns:
        labels: dict[str, str] = {}
        order: list[str] = []
        named: list[tuple[tuple[str, str], ...]] = [
            tuple((p.bonus_class, p.label) for p in table)
            for table in [info.paytable, *(s.paytable for s in _shown_side_bets(info))]
        ]
        if j is not None:
            named.append(tuple((p.bonus_class, p.label) for p in j.paytable))
        for table in named:
            _merge(order, [code for code, _ in table])
            for code, label in table:
                labels.setdefault(code, label)
        pays = Table.grid(padding=(0, 2))
        pays.add_column(no_wrap=True, overflow="ellipsis", max_width=32)
        for _ in columns:
            pays.add_column(justify="right", no_wrap=True)
        pays.add_row(
            Text("pays on your seven cards", style="bold"),
            *(Text(c.head, style="bold") for c in columns),
        )
        for code in order:
            if any(code in c.pays for c in columns):
                pays.add_row(labels[code], *(c.pays.get(code, "-") for c in columns))
        parts.append(pays)
    else:
        parts.append(Text("no bonus bet and no side bet at this table"))
    parts.extend(
        Text(f"{side.label} {side.min}..{side.max}: {line.label} pays {line.pays} to 1")
        for side in apart
        for line in side.paytable
    )
    return Group(*parts)
