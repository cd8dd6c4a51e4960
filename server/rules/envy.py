"""The Envy bonus: fixed amounts paid for the other players' best seven-card hands.

docs/RULES.md, "Envy bonus": a seat whose bonus bet is at least the table's qualifying
minimum (``min_bonus``) is paid, for every *other* seat in the round whose seven cards
hold a class of the Envy pay table (four of a kind or better on the common table), that
class's fixed amount; never for its own hand, never for the dealer's. Several such hands
pay several times. The Envy bonus has no stake of its own: it rides on the bonus bet
(:mod:`server.rules.wagers`), and a seat that does not qualify is paid nothing.

The classes are the bonus bet's (:class:`server.rules.bonus.BonusClass`), so a hand
holds exactly one, the best in pay order.
"""

from __future__ import annotations

from dataclasses import dataclass

from server.rules.bonus import (
    BONUS,
    BONUS_CLASS_CODES,
    BONUS_CLASS_NAMES,
    BonusClass,
    classify_bonus,
)
from server.rules.options import RuleOptions
from server.rules.wagers import PayLine, Settled, SideBet, SideDeal

ENVY = "envy"
"""The Envy bonus's kind."""

_CODES = {code: cls for cls, code in BONUS_CLASS_CODES.items()}

DEFAULT_ENVY_PAYS: tuple[tuple[str, int], ...] = (
    # The common Fortune Pai Gow Envy table (docs/RULES.md, "Envy bonus").
    (BONUS_CLASS_CODES[BonusClass.NATURAL_SEVEN_CARD_STRAIGHT_FLUSH], 5000),
    (BONUS_CLASS_CODES[BonusClass.ROYAL_FLUSH_WITH_ROYAL_MATCH], 1000),
    (BONUS_CLASS_CODES[BonusClass.SEVEN_CARD_STRAIGHT_FLUSH_WITH_JOKER], 500),
    (BONUS_CLASS_CODES[BonusClass.FIVE_ACES], 250),
    (BONUS_CLASS_CODES[BonusClass.ROYAL_FLUSH], 50),
    (BONUS_CLASS_CODES[BonusClass.STRAIGHT_FLUSH], 20),
    (BONUS_CLASS_CODES[BonusClass.FOUR_OF_A_KIND], 5),
)
DEFAULT_ENVY_MIN_BONUS = 5


@dataclass(frozen=True, slots=True)
class EnvyOptions:
    """A table's Envy bonus: the smallest bonus bet that qualifies, and the fixed amount
    (chips) paid per other hand of each class (bonus class codes; unlisted pay none)."""

    min_bonus: int = DEFAULT_ENVY_MIN_BONUS
    pays: tuple[tuple[str, int], ...] = DEFAULT_ENVY_PAYS

    def __post_init__(self) -> None:
        if isinstance(self.min_bonus, bool) or not isinstance(self.min_bonus, int):
            raise ValueError("envy min_bonus is a whole number of chips")
        if self.min_bonus < 1:
            raise ValueError("envy min_bonus is at least 1 chip")
        seen = set()
        for line in self.pays:
            if not (isinstance(line, tuple) and len(line) == 2):
                raise ValueError("envy pays are [class, chips] pairs")
            code, amount = line
            if code not in _CODES or code == BONUS_CLASS_CODES[BonusClass.NOTHING]:
                raise ValueError(f"envy pays: {code!r} is not a bonus class")
            if code in seen:
                raise ValueError(f"envy pays: {code!r} listed twice")
            seen.add(code)
            if isinstance(amount, bool) or not isinstance(amount, int) or amount < 0:
                raise ValueError("envy pays are whole numbers of chips >= 0")

    def amount(self, cls: BonusClass) -> int:
        """The chips paid for one other hand of ``cls`` (0: none)."""
        code = BONUS_CLASS_CODES[cls]
        return next((a for c, a in self.pays if c == code), 0)


def envy_payout(
    others: tuple[tuple[int, ...], ...], options: EnvyOptions
) -> tuple[int, str | None]:
    """(chips, the best class paid for) of a qualifying seat, the other seats' hands
    being ``others``; (0, None) when none of them pays."""
    total = 0
    best: BonusClass | None = None
    for cards in others:
        cls = classify_bonus(cards)
        amount = options.amount(cls)
        if amount:
            total += amount
            best = cls if best is None else min(best, cls)
    return total, None if best is None else BONUS_CLASS_CODES[best]


def _settle(deal: SideDeal, stake: int, options: EnvyOptions) -> Settled:
    if deal.stakes.get(BONUS, 0) < options.min_bonus:
        return Settled(None, 0)
    total, code = envy_payout(deal.others, options)
    return Settled(code, total)


def _limits(options: EnvyOptions) -> tuple[int, int]:
    return options.min_bonus, 0


def _lines(rules: RuleOptions, options: EnvyOptions) -> tuple[PayLine, ...]:
    return tuple(
        PayLine(code, BONUS_CLASS_NAMES[_CODES[code]], amount)
        for code, amount in sorted(options.pays, key=lambda line: _CODES[line[0]])
        if amount
    )


ENVY_BET = SideBet(
    kind=ENVY,
    label="Envy bonus",
    options=EnvyOptions,
    settle=_settle,
    limits=_limits,
    pay_lines=_lines,
    rides_on=BONUS,
)
"""The Envy bonus: rides on the bonus bet (``limits`` gives the qualifying bonus bet)."""
