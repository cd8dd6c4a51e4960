"""What a table tells every client who asks: ``table_info`` (its rules, limits, timers and
pay tables) and the side bets it offers (minor 6), from the table's settings."""

from __future__ import annotations

from protocol import limits as L
from protocol.structs import PayLine, SideBetInfo, TableInfo
from server.host import TableHost
from server.rules import bonus as bonus_rules
from server.rules.options import CommissionFree
from server.rules.side_bets import SIDE_BETS
from server.table.state import TableConfig


def table_info(host: TableHost) -> TableInfo:
    """``host``'s table as ``table_info`` describes it."""
    c = host.config
    free = c.rules.commission_free is not CommissionFree.NONE
    table = bonus_rules.pay_table(c.rules.bonus_pay_table)
    lines = tuple(
        PayLine(
            bonus_class=bonus_rules.BONUS_CLASS_CODES[cls],  # the wire's ids (<= 32 chars)
            label=bonus_rules.BONUS_CLASS_NAMES[cls][: L.MAX_NAME_LEN],
            pays=odds,
        )
        for cls, odds in table.odds.items()
        if odds
    )
    return TableInfo(
        table_id=c.table_id,
        name=c.name[: L.MAX_NAME_LEN],
        seats=c.seats,
        min_bet=c.min_bet,
        max_bet=c.max_bet,
        bet_unit=c.bet_unit,
        denominations=c.denominations,
        max_bonus=c.bonus_max,
        buy_in_min=c.min_buy_in,
        buy_in_max=c.max_buy_in,
        # A commission-free table takes none: a client of minor 4 or older shows that.
        commission_pct=0 if free else c.rules.commission_pct,
        foul=c.rules.foul.value,
        betting_ms=c.betting_ms,
        setting_ms=c.setting_ms,
        revealing_ms=c.revealing_ms,
        settling_ms=c.settling_ms,
        grace_ms=c.grace_ms,
        paytable=lines,
        rules_version=1,
        min_bonus=c.bonus_min,
        commission_rounding=c.rules.commission_rounding.value,
        main_bet_unit=c.main_bet_unit,
        commission_free=c.rules.commission_free.value,
        side_bets=side_bets_info(c),
    )


def side_bets_info(c: TableConfig) -> tuple[SideBetInfo, ...]:
    """Every side bet ``c`` offers, as ``table_info.side_bets`` gives it (minor 6)."""
    out = []
    for kind in c.side_kinds:
        bet = SIDE_BETS[kind]
        low, high = c.limits(kind)
        lines = bet.pay_lines(c.rules, c.side_options(kind))
        out.append(
            SideBetInfo(
                kind=kind,
                label=bet.label[: L.MAX_NAME_LEN],
                min=low,
                max=high,
                paytable=tuple(
                    PayLine(bonus_class=p.code, label=p.label[: L.MAX_NAME_LEN], pays=p.pays)
                    for p in lines
                ),
                rides_on=bet.rides_on,
                fixed=not bet.staked,
            )
        )
    return tuple(out)
