"""The modal dialogs: the help, a page of text (rules, versions), an amount prompt; and
the text of the rules and versions pages.

Each is one key away and closes with Escape; none needs the app beyond showing itself.
"""

from __future__ import annotations

from typing import ClassVar

from rich.console import RenderableType
from rich.table import Table
from rich.text import Text
from textual import on
from textual.app import ComposeResult
from textual.binding import Binding, BindingType
from textual.containers import Vertical, VerticalScroll
from textual.screen import ModalScreen
from textual.widgets import Input, Label, Static

from clients.core import Client
from protocol.structs import JackpotLine, ServerInfo, TableInfo

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
            yield Label(Text(self.title_text, style="bold"))
            yield Static(self.body)

    def on_mount(self) -> None:
        # Focused, the page scrolls with the arrows and page keys when it is long.
        self.query_one("#dialog", VerticalScroll).focus()

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


# The commission's rounding (table_info.commission_rounding), under its percentage.
_ROUNDING = {
    "down": "           rounded down",
    "up": "           rounded up",
    "whole": "           exact: whole-chip bets",
}


# A commission-free table (table_info.commission_free, minor 5): the dealer's hand that
# pushes every main bet instead.
_BARRED = {
    "ez": "           if dealer: Q-high pai gow",
    "nine_low": "           if dealer's low is 9-high",
}


def _commission_lines(info: TableInfo) -> list[str]:
    barred = _BARRED.get(info.commission_free)
    if barred is not None:
        return ["commission none; every bet pushes", barred]
    rounding = _ROUNDING.get(info.commission_rounding, "")
    return [f"commission {info.commission_pct}% of a win,", rounding]


def _award(line: JackpotLine) -> str:
    """``100%`` (of the meter) or ``8000`` (to 1)."""
    if line.meter_bps:
        return f"{line.meter_bps / 100:g}%"
    return str(line.fixed)


def info_text(info: TableInfo, server: ServerInfo | None) -> Table:
    """A table's limits, options and timings beside its bonus pay table: two columns,
    so that the whole page fits 80x24."""
    rules = [
        f"bets       {info.min_bet}..{info.max_bet}",
        f"           in multiples of {info.main_bet_unit or info.bet_unit}",
        f"chips      {' '.join(str(d) for d in info.denominations)}",
        f"buy-in     {info.buy_in_min}..{info.buy_in_max}",
        f"bonus      up to {info.max_bonus}" if info.max_bonus else "bonus      none",
        *_commission_lines(info),
        f"foul       {'refused: set again' if info.foul == 'reject' else 'loses the bet'}",
        f"betting    {info.betting_ms / 1000:g}s, setting {info.setting_ms / 1000:g}s",
        f"reveal     {info.revealing_ms / 1000:g}s, settle {info.settling_ms / 1000:g}s",
        f"away grace {info.grace_ms / 1000:g}s",
        f"rules      version {info.rules_version}",
    ]
    pays = ["bonus pays (to 1)"]
    pays += [f"{line.label:<32} {line.pays:>4}" for line in info.paytable] or ["  (none)"]
    # The other side bets (protocol minor 6): each with its limits and pay table.
    for side in info.side_bets:
        if side.kind == "bonus":
            continue
        if side.rides_on:
            rules.append(f"{side.label[:10]:<10} on a {side.rides_on} of {side.min}+")
        else:
            rules.append(f"{side.label[:10]:<10} {side.min}..{side.max}")
        unit = "chips" if side.fixed else "to 1"
        pays += ["", f"{side.label.lower()} pays ({unit})"]
        pays += [f"{line.label:<32} {line.pays:>4}" for line in side.paytable]
    # The progressive jackpot (protocol minor 7): its meter as of the page, and what
    # its wager wins: a share of the meter, or chips for each chip of the wager.
    j = info.jackpot
    if j is not None:
        rules.append(f"jackpot    {j.name[:14]}, wager {j.wager}")
        rules.append(f"           meter {j.meter:,}")
        pays += ["", "jackpot pays (% of meter, or to 1)"]
        pays += [f"{line.label[:31]:<31} {_award(line):>5}" for line in j.paytable]
    grid = Table.grid(padding=(0, 2))
    grid.add_column(no_wrap=True)
    grid.add_column(no_wrap=True)
    grid.add_row(Text("\n".join(rules)), Text("\n".join(pays)))
    if server is not None:
        versions = (
            f"server {server.server_name} {server.server_version}, protocol "
            f"{server.protocol_version}.{server.protocol_minor}"
        )
        grid.add_row(Text(""), Text(""))
        grid.add_row(Text(versions, style="dim"), Text(""))
    return grid
