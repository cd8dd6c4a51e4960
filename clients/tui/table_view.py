"""What the table screen draws, as text fitted to its width: the status line, the seats,
your split, the chips; and the rebuy question.

Pure functions of the table's :class:`~clients.model.TableModel` and of what the player
is building on screen; no widget here. Every line fits the width it is given: the parts
that matter least give way first (the commitment's digest, then the table's name, then
the end of a hand's name), so nothing that matters is cut at 80 columns.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

from rich.text import Text

from clients import handrank
from clients.model import DEALER, TableModel
from clients.text import cards_label, money_line
from protocol.structs import Balances, HandChoice, SeatResult, SeatView, SideBetInfo, TableInfo

OUTCOME_STYLES = {"win": "green", "push": "yellow", "lose": "red"}
MIN_NAME = 8  # a table's name is not cut shorter than this (then "…")


def _fmt_ms(ms: int) -> str:
    return f"{max(0, ms) / 1000:4.1f}s"


def fit(text: Text, width: int) -> Text:
    """``text`` cut to ``width`` cells with an ellipsis when longer (one line)."""
    if text.cell_len > width:
        text = text.copy()
        text.truncate(width, overflow="ellipsis")
    return text


def status_text(
    m: TableModel, name: str, remaining_ms: int | None, link: str | None, width: int
) -> Text:
    """Table, round, phase, countdown, the connection when it is down, commitment and the
    fairness mark, in ``width`` cells: the digest goes first, then the name is shortened."""
    tail = Text(f" round {m.round} ")
    tail.append(f" {m.phase.upper()} ", style="bold yellow")
    if remaining_ms is not None:
        tail.append(_fmt_ms(remaining_ms))
    if link is not None:
        tail.append(f"  {link}", style="bold red")
    digest = Text(f"  commit {m.commitment[:12]}…", style="dim") if m.commitment else Text()
    mark = Text()
    v = m.verification
    if v is not None:
        mark.append(
            "  ✓ verified" if v.ok else "  ✗ NOT VERIFIED",
            style="bold green" if v.ok else "bold red",
        )
    label = f" {name} "
    if len(label) + tail.cell_len + digest.cell_len + mark.cell_len > width:
        digest = Text()
    room = width - tail.cell_len - mark.cell_len
    if len(label) > room:
        keep = max(MIN_NAME, room - 2)
        label = f" {name[: max(1, keep - 1)]}… " if keep < len(name) else label
    text = Text(label, style="bold reverse") + tail + digest + mark
    return fit(text, width)


def jackpot_text(name: str, meter: int, wager: int, width: int) -> Text:
    """A progressive jackpot's line: its name, its meter (live), and its wager."""
    text = Text(f" JACKPOT {name} ", style="bold reverse")
    text.append(f" {meter:,} chips ", style="bold")
    text.append(f"  progressive wager {wager}", style="dim")
    return fit(text, width)


def _seat_line(m: TableModel, seat: SeatView, width: int) -> Text:
    mine = seat.seat == m.your_seat
    out = Text("▶ " if mine else "  ", style="bold cyan")
    if seat.status == "empty":
        return out.append(f"{seat.seat + 1} (empty)", style="dim")
    name = (seat.name or seat.player_id or "?")[:10]
    status = {"playing": "", "sitting_out": "out", "away": "away"}[seat.status]
    # The main bet, then each side bet's stake (the bonus bet's from `bonus` for a server
    # of an earlier minor, which sends no `wagers`).
    sides = [w.amount for w in seat.wagers] or ([seat.bonus] if seat.bonus else [])
    bet = f"{seat.bet}" + "".join(f"+{a}" for a in sides) if seat.bet else "-"
    line = f"{seat.seat + 1} {name:<10} {status:<4} bal {seat.balance:>6}  bet {bet:<7}"
    out.append(line, style="bold" if mine else "")
    hand = m.hands.get(seat.seat)
    result = m.results.get(seat.seat)
    if result is not None:
        gain = result.payout + result.bonus_payout - result.bet - result.bonus_bet
        # Side bets beyond the bonus (the Envy bonus: stake 0) count in the gain too.
        gain += sum(w.payout - w.stake for w in result.wagers if w.kind != "bonus")
        envy = sum(w.payout for w in result.wagers if w.kind == "envy")
        outcome = result.outcome.upper() + (" foul" if hand is not None and hand.foul else "")
        out.append(f" {outcome:<4} {gain:+d}", style=f"bold {OUTCOME_STYLES[result.outcome]}")
        out.append(f" (H {result.high}, L {result.low})")
        if envy:
            out.append(f" envy +{envy}", style="bold magenta")
        if any(w.pay_class and not w.payout for w in result.wagers):
            # A share of a progressive's meter, paid into the account (not in the gain).
            out.append(" JACKPOT", style="bold reverse yellow")
    elif hand is not None:
        out.append(f" {hand.high_name} / {hand.low_name}", style="italic")
        if hand.foul:
            out.append(" FOUL", style="bold red")
    elif seat.hand_set:
        way = " (house)" if m.house_way.get(seat.seat) else ""
        out.append(f" set{way}", style="green")
    return fit(out, width)


def seats_text(m: TableModel, width: int) -> Text:
    """The dealer, then every seat: player, status, balance, bet, hand, result; each line
    cut to ``width`` (at its end: a hand's name) rather than wrapped out of sight."""
    dealer = m.hands.get(DEALER)
    head = Text("  Dealer ", style="bold")
    if dealer is not None:
        head.append(f"{cards_label(dealer.high)} / {cards_label(dealer.low)}  ")
        head.append(f"{dealer.high_name} / {dealer.low_name}", style="italic")
    else:
        head.append("…" if m.phase in ("dealing", "setting") else "")
    lines = [fit(head, width)] + [_seat_line(m, seat, width) for seat in m.seats]
    return Text("\n").join(lines)


def result_text(result: SeatResult, foul: bool) -> Text:
    """Your result: the outcome (saying when it is a foul's), and the money."""
    style = {"win": "bold green", "push": "bold yellow", "lose": "bold red"}[result.outcome]
    text = Text(f" {result.outcome.upper()} ", style=f"reverse {style}")
    if foul:
        text.append(" FOUL: the low hand outranked the high hand ", style="bold red")
    return text.append(f" {money_line(result)}")


def preview_text(
    m: TableModel,
    selected: Sequence[int],
    suggestion: HandChoice | None,
    choice: HandChoice | None,
    foul_loses: bool,
) -> Text:
    """Your split (two lines): the live preview, the server's names, or your result.

    ``suggestion`` and ``choice`` are this round's house-way suggestion and the split
    the server took, or None (never an earlier round's); ``foul_loses``: the table's
    foul rule is ``lose`` (a foul is then set, and loses the bet)."""
    result = m.my_result
    if result is not None:
        mine = m.hands.get(m.your_seat) if m.your_seat is not None else None
        return result_text(result, foul=mine is not None and mine.foul)
    if m.void is not None:
        return Text(f" round void: {m.void.message}; bets returned", style="yellow")
    if not m.your_cards:
        if m.your_seat is None:
            return Text(" watching: press esc for the lobby and join to play", style="dim")
        return Text(" waiting for the cards…" if m.phase == "dealing" else "", style="dim")
    if choice is not None and choice.applied:
        return Text.assemble(
            (" SET ", "reverse bold green"), f" high {choice.high_name}  |  low {choice.low_name}"
        )
    if m.your_low:
        return Text(f" set: low {cards_label(m.your_low)}", style="green")
    if len(selected) == 2:
        high, low, foul = handrank.preview(m.your_cards, selected)
        text = Text(f" high {high}  |  low {low}\n")
        if foul and foul_loses:
            text.append(
                " FOUL: the low hand outranks the high; here a foul LOSES the bet", "bold red"
            )
        elif foul:
            text.append(" FOUL: the high hand must outrank the low; pick again", "bold red")
        else:
            text.append(" enter to set", style="green")
        return text
    if suggestion is not None:
        return Text(
            f" house way: low {cards_label(suggestion.low)}\n"
            f" ({suggestion.high_name} / {suggestion.low_name})",
            style="cyan",
        )
    return Text(
        " pick 2 cards for the low hand (1-7 or click), enter to set;\n"
        " s: the house way's suggestion, w: let the house way set it",
        style="dim",
    )


def staked_sides(info: TableInfo | None) -> list[SideBetInfo]:
    """The staked side bets the table offers beyond the bonus bet (``b`` moves the chips
    on to each): a riding one, the Envy bonus, has no stake of its own."""
    if info is None:
        return []
    return [b for b in info.side_bets if b.kind != "bonus" and b.rides_on is None]


SIDE_LABEL_WIDTH = 10
"""The most of a side bet's label the one-line chip row shows."""


def chips_text(
    info: TableInfo | None,
    bet: int,
    bonus: int,
    bonus_mode: bool,
    seat: SeatView | None,
    side: Mapping[str, int] | None = None,
    target: str | None = None,
) -> Text:
    """The chip keys with their values at this table, and the bet being built: the part
    the chips go to (``b`` moves them on; ``target``, "amount", "bonus" or a side bet's
    kind, else the bonus when ``bonus_mode``) is highlighted. A side bet beyond the bonus
    is shown while it is the target or holds a stake (``side``)."""
    target = target or ("bonus" if bonus_mode else "amount")
    side = side or {}
    text = Text(" ")
    if info is not None:
        for i, d in enumerate(info.denominations[:9]):
            text.append(f"[{i + 1}]", style="bold")
            text.append(f" {d} ", style="black on yellow")
            text.append(" ")
    text.append(" ")
    text.append(" bet ", style="reverse bold" if target == "amount" else "")
    text.append(f" {bet} ")
    text.append(" bonus ", style="reverse bold magenta" if target == "bonus" else "")
    text.append(f" {bonus}")
    for b in staked_sides(info):
        if target != b.kind and not side.get(b.kind):
            continue
        label = b.label
        if len(label) > SIDE_LABEL_WIDTH:
            label = label[: SIDE_LABEL_WIDTH - 1] + "…"
        text.append(" ")
        text.append(f" {label} ", style="reverse bold cyan" if target == b.kind else "")
        text.append(f" {side.get(b.kind, 0)}")
    if seat is not None:
        text.append(f"   balance {seat.balance}", style="bold")
    return text


def rebuy_prompt(info: TableInfo | None, seat: SeatView | None, balances: Balances | None) -> str:
    """The rebuy question, with the amounts allowed: the table's buy-in maximum less the
    chips held here, and no more than the account holds."""
    if info is None or seat is None:
        return "Rebuy: chips to bring to the table"
    most = info.buy_in_max - seat.balance
    if balances is not None:
        most = min(most, balances.account)
    if most < 1:
        return (
            f"Rebuy: none allowed now (you hold {seat.balance} here, the table's most is "
            f"{info.buy_in_max}); Esc to go back"
        )
    account = f", {balances.account} in your account" if balances is not None else ""
    return (
        f"Rebuy: chips to bring to the table, 1..{most} (you hold {seat.balance} here{account};"
        f" the table's most is {info.buy_in_max})"
    )
