"""The progressive wager of Fortune Pai Gow: its pay tables, a hand's award, and its
return as a function of the jackpot meter (docs/RULES.md, "Progressive jackpot").

A fixed wager (the table's ``progressive wager``, in chips) on the player's seven
cards, whatever the main bet's outcome. The seven cards are classed as the bonus bet
classes them (:func:`server.rules.bonus.classify_bonus`); the pay table pays each top
class either a *share of the meter* (in basis points: 10,000 is all of it) or a *fixed
amount* (in wager units: the amount paid for a wager of one unit, times the wager).
The wager itself is never returned: the pay table's amounts are "for one" (the
casino's progressive takes the chip when the cards are dealt).

Pure: no I/O, no clock. The meter lives in the store (``server/store/jackpot``); this
module says what a hand wins, given the meter, and how much a wager returns on average.

Rounding: a share of the meter is rounded down to whole chips
(:meth:`ProgressivePayTable.award`); the chip left over stays on the meter.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from fractions import Fraction
from math import sqrt
from types import MappingProxyType

from server.rules.bonus import BONUS_CLASS_CODES, BONUS_CLASS_NAMES, BonusClass, classify_bonus
from server.rules.options import RuleOptions
from server.rules.wagers import PayLine, Settled, SideBet, SideDeal

FULL_METER_BPS = 10_000
"""A share of the whole meter, in basis points."""


class ProgressiveError(ValueError):
    """An unknown progressive pay table, or one that is not valid."""


@dataclass(frozen=True, slots=True)
class Award:
    """What one class pays: ``meter_bps`` basis points of the meter, or ``fixed`` wager
    units (exactly one of them is positive)."""

    meter_bps: int = 0
    fixed: int = 0

    def __post_init__(self) -> None:
        for name, value in (("meter_bps", self.meter_bps), ("fixed", self.fixed)):
            if isinstance(value, bool) or not isinstance(value, int) or value < 0:
                raise ProgressiveError(f"an award's {name} is a whole number >= 0")
        if (self.meter_bps > 0) == (self.fixed > 0):
            raise ProgressiveError("an award is a share of the meter or a fixed amount")
        if self.meter_bps > FULL_METER_BPS:
            raise ProgressiveError("an award's share of the meter is at most 10,000 bps")

    def describe(self) -> str:
        """``"100% of the meter"`` or ``"8000 for 1"``."""
        if self.meter_bps:
            return f"{Fraction(self.meter_bps, 100)}% of the meter"
        return f"{self.fixed} for 1"


@dataclass(frozen=True, slots=True)
class HandAward:
    """A hand's award: its class, and the chips it wins (``fixed``, paid by the house at
    the table) or the share of the meter it takes (``meter_bps``, paid by the jackpot's
    store); both zero for a hand that wins nothing."""

    cls: BonusClass
    fixed: int
    meter_bps: int

    @property
    def wins(self) -> bool:
        """Whether the hand wins anything."""
        return bool(self.fixed or self.meter_bps)


@dataclass(frozen=True, slots=True)
class ProgressivePayTable:
    """A progressive pay table: an :class:`Award` per paying bonus class (a class not
    listed wins nothing). ``NOTHING`` never pays."""

    name: str
    awards: Mapping[BonusClass, Award]

    def __post_init__(self) -> None:
        frozen = MappingProxyType(dict(self.awards))
        object.__setattr__(self, "awards", frozen)
        if BonusClass.NOTHING in frozen:
            raise ProgressiveError(f"progressive pay table {self.name!r}: 'nothing' cannot pay")
        if not any(a.meter_bps for a in frozen.values()):
            raise ProgressiveError(
                f"progressive pay table {self.name!r}: no class pays from the meter"
            )

    def award_of(self, cls: BonusClass) -> Award | None:
        """The award of ``cls``; None when it wins nothing."""
        return self.awards.get(cls)

    def hand(self, cards: Sequence[int], wager: int) -> HandAward:
        """The award of seven ``cards`` for a progressive wager of ``wager`` chips (one
        unit is one chip: fixed amounts are multiplied by the wager). Raises
        ``ValueError`` for cards that are not seven distinct cards of the deck or a
        wager that is not a positive whole number of chips."""
        if isinstance(wager, bool) or not isinstance(wager, int) or wager <= 0:
            raise ValueError(f"a progressive wager is a positive number of chips, not {wager!r}")
        cls = classify_bonus(cards)
        award = self.awards.get(cls)
        if award is None:
            return HandAward(cls, 0, 0)
        return HandAward(cls, award.fixed * wager, award.meter_bps)

    @staticmethod
    def meter_share(meter: int, meter_bps: int) -> int:
        """Chips a share of ``meter_bps`` takes from a meter of ``meter`` chips, rounded
        down (the store computes the same, in its script)."""
        if meter < 0 or not 0 <= meter_bps <= FULL_METER_BPS:
            raise ValueError("a meter is >= 0 chips and a share 0 to 10,000 bps")
        return meter * meter_bps // FULL_METER_BPS


def _table(name: str, awards: Mapping[BonusClass, Award]) -> ProgressivePayTable:
    return ProgressivePayTable(name, awards)


_C = BonusClass
PROGRESSIVE_PAY_TABLES: Mapping[str, ProgressivePayTable] = MappingProxyType(
    {
        # Fortune Pai Gow's progressive for a wager of one unit, as casinos commonly post
        # it (docs/RULES.md, "Progressive jackpot": the sources and what varies).
        "fortune": _table(
            "fortune",
            {
                _C.NATURAL_SEVEN_CARD_STRAIGHT_FLUSH: Award(meter_bps=10_000),
                _C.ROYAL_FLUSH_WITH_ROYAL_MATCH: Award(meter_bps=1_000),
                _C.SEVEN_CARD_STRAIGHT_FLUSH_WITH_JOKER: Award(fixed=8_000),
                _C.FIVE_ACES: Award(fixed=4_000),
                _C.ROYAL_FLUSH: Award(fixed=2_000),
                _C.STRAIGHT_FLUSH: Award(fixed=100),
                _C.FOUR_OF_A_KIND: Award(fixed=75),
                _C.FULL_HOUSE: Award(fixed=5),
            },
        ),
    }
)
DEFAULT_PROGRESSIVE_PAY_TABLE = "fortune"


def progressive_pay_table(name: str) -> ProgressivePayTable:
    """The progressive pay table called ``name``."""
    table = PROGRESSIVE_PAY_TABLES.get(name)
    if table is None:
        known = ", ".join(PROGRESSIVE_PAY_TABLES)
        raise ProgressiveError(f"{name!r} is not a progressive pay table (known: {known})")
    return table


# --- the return -------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class ProgressiveReturn:
    """The return of a progressive wager per chip wagered, exactly, as a function of the
    meter ``m`` (in chips, per chip of wager): ``fixed + per_meter_chip * m``.

    ``fixed``: what the fixed awards return per chip wagered; ``per_meter_chip``: the
    probability-weighted share of the meter the wager wins (the chance that a wager
    takes the whole meter, counting a 10 % award as a tenth of that); ``resets``: the
    chance that a hand takes the whole meter (the meter then starts again from its
    seed). The rounding of a share down to whole chips is left out (under one chip a
    win)."""

    fixed: Fraction
    per_meter_chip: Fraction
    resets: Fraction

    def at(self, meter: int | Fraction, wager: int = 1) -> Fraction:
        """The return per chip of a wager of ``wager`` chips when the meter shows
        ``meter`` chips."""
        return self.fixed + self.per_meter_chip * Fraction(meter) / wager

    def break_even(self, wager: int = 1) -> Fraction:
        """The meter (chips) at which a wager of ``wager`` chips returns exactly what it
        costs: above it, the wager favours the player."""
        return (1 - self.fixed) * wager / self.per_meter_chip

    def long_run(self, contribution_bps: int, seed: int, wager: int = 1) -> Fraction:
        """The return per chip over the life of the meter: the fixed awards, the share of
        each wager that goes to the meter (every chip on it is paid out one day), and the
        seeds the house adds after each hit of the whole meter. (A share below the whole
        that left the meter under its seed would add a little more; left out.)"""
        return self.fixed + Fraction(contribution_bps, FULL_METER_BPS) + self.resets * seed / wager


def progressive_return(
    census: Mapping[BonusClass, int], table: ProgressivePayTable
) -> ProgressiveReturn:
    """The return of ``table`` from a census of seven-card hands by bonus class
    (:func:`server.rules.bonus_census.bonus_census`)."""
    hands = sum(census.values())
    if not hands:
        raise ValueError("an empty census")
    fixed = Fraction(0)
    per_meter = Fraction(0)
    resets = Fraction(0)
    for cls, count in census.items():
        award = table.awards.get(cls)
        if award is None:
            continue
        p = Fraction(count, hands)
        fixed += p * award.fixed
        per_meter += p * Fraction(award.meter_bps, FULL_METER_BPS)
        if award.meter_bps == FULL_METER_BPS:
            resets += p
    return ProgressiveReturn(fixed, per_meter, resets)


@dataclass(frozen=True, slots=True)
class SampledReturn:
    """The progressive's return measured on a sample of hands (a simulation's counts by
    bonus class): ``fixed`` the fixed amounts' return per chip, ``half_width`` its 95 %
    confidence interval's, ``meter_hands`` the hands that took a share of the meter and
    ``hands`` the sample's size."""

    fixed: float
    half_width: float
    meter_hands: int
    hands: int


def sampled_return(counts: Mapping[BonusClass, int], table: ProgressivePayTable) -> SampledReturn:
    """The fixed part of the return on a sample of hands by class, with its 95 % interval
    (the meter's part rests on hands too rare for any simulation: they are counted)."""
    hands = sum(counts.values())
    if hands < 2:
        raise ValueError("an estimate needs at least two hands")
    total = 0
    square = 0
    meter_hands = 0
    for cls, n in counts.items():
        award = table.awards.get(cls)
        if award is None:
            continue
        total += n * award.fixed
        square += n * award.fixed * award.fixed
        meter_hands += n if award.meter_bps else 0
    mean = total / hands
    variance = max(0.0, square / hands - mean * mean) * hands / (hands - 1)
    return SampledReturn(mean, _Z_95 * sqrt(variance / hands), meter_hands, hands)


_Z_95 = 1.959963984540054


def describe_pay_table(table: ProgressivePayTable) -> list[tuple[str, str]]:
    """``(class name, award)`` of each paying class, best class first."""
    return [
        (BONUS_CLASS_NAMES[cls], table.awards[cls].describe())
        for cls in BonusClass
        if cls in table.awards
    ]


# --- a jackpot's settings -------------------------------------------------------------

MAX_SEED = 10**12
"""The largest seed a jackpot takes (chips stay below 2**53 in the store's scripts)."""


@dataclass(frozen=True, slots=True)
class JackpotOptions:
    """One jackpot's settings (the tables file's ``[jackpot.<name>]``, docs/RULES.md,
    "Progressive jackpot"): its ``name`` (the meter every table that names it shares),
    the ``seed`` the house puts on the meter when it starts and after each hit that
    empties it, the ``contribution_bps`` of each wager that goes to the meter (the rest
    is the house's), the ``wager`` in chips and the ``pay_table``'s name."""

    name: str
    seed: int
    contribution_bps: int
    wager: int = 1
    pay_table: str = DEFAULT_PROGRESSIVE_PAY_TABLE

    def __post_init__(self) -> None:
        if not isinstance(self.name, str) or not 1 <= len(self.name) <= 32:
            raise ProgressiveError("a jackpot's name is a string of 1 to 32 characters")
        if not all(c.isalnum() or c in "-_" for c in self.name):
            raise ProgressiveError("a jackpot's name uses letters, digits, '-' and '_' only")
        for key, value, low, high in (
            ("seed", self.seed, 0, MAX_SEED),
            ("contribution_bps", self.contribution_bps, 0, FULL_METER_BPS),
            ("wager", self.wager, 1, 10**6),
        ):
            if isinstance(value, bool) or not isinstance(value, int) or not low <= value <= high:
                raise ProgressiveError(
                    f"jackpot {self.name}: {key} is a whole number {low}..{high}"
                )
        progressive_pay_table(self.pay_table)

    @property
    def table(self) -> ProgressivePayTable:
        """The pay table."""
        return progressive_pay_table(self.pay_table)


# --- the progressive wager as a side bet (server/rules/wagers.py) --------------------

PROGRESSIVE = "progressive"
"""The progressive wager's kind."""


@dataclass(frozen=True, slots=True)
class ProgressiveBetOptions:
    """What a table that offers a jackpot sets for its progressive wager: the jackpot's
    settings (:class:`JackpotOptions`, from the tables file's ``[jackpot.<name>]``),
    copied into the table's config so that the pure table settles the wager without
    the file. ``jackpot`` is the jackpot's name (the meter in the store)."""

    jackpot: str = "progressive"
    seed: int = 0
    contribution_bps: int = 0
    wager: int = 1
    pay_table: str = DEFAULT_PROGRESSIVE_PAY_TABLE

    def __post_init__(self) -> None:
        self.jackpot_options()  # raises ProgressiveError for a bad setting

    def jackpot_options(self) -> JackpotOptions:
        """The jackpot these options name, as :class:`JackpotOptions`."""
        return JackpotOptions(
            self.jackpot, self.seed, self.contribution_bps, self.wager, self.pay_table
        )

    @staticmethod
    def of(jackpot: JackpotOptions) -> ProgressiveBetOptions:
        """The wager's options at a table offering ``jackpot``."""
        return ProgressiveBetOptions(
            jackpot.name, jackpot.seed, jackpot.contribution_bps, jackpot.wager, jackpot.pay_table
        )


def meter_share_of(options: ProgressiveBetOptions, pay_class: str | None) -> int:
    """The share of the meter (bps) a settled wager's ``pay_class`` takes; 0 when the
    class pays a fixed amount, or nothing. The host pays it from the store after the
    table's commit (docs/DESIGN.md, "Progressive jackpots")."""
    if pay_class is None:
        return 0
    cls = next((c for c, code in BONUS_CLASS_CODES.items() if code == pay_class), None)
    if cls is None:
        return 0
    award = progressive_pay_table(options.pay_table).award_of(cls)
    return 0 if award is None else award.meter_bps


def _settle_progressive(deal: SideDeal, stake: int, options: ProgressiveBetOptions) -> Settled:
    """A class paid a fixed amount: its chips at the table (the wager not returned: "for
    one"); a class paid from the meter: its code and no chips here (the store pays the
    share into the account); else lost."""
    award = progressive_pay_table(options.pay_table).hand(deal.cards, stake)
    if not award.wins:
        return Settled(None, 0)
    return Settled(BONUS_CLASS_CODES[award.cls], award.fixed)


def _progressive_limits(options: ProgressiveBetOptions) -> tuple[int, int]:
    return options.wager, options.wager  # a fixed amount per round


def _progressive_lines(rules: RuleOptions, options: ProgressiveBetOptions) -> tuple[PayLine, ...]:
    table = progressive_pay_table(options.pay_table)
    # A staked bet's ``pays`` are odds to 1 (the protocol's SideBetInfo): an award "for
    # one" is one less to 1. The classes paid from the meter are the meter's view's to
    # show (with the meter), not odds.
    return tuple(
        PayLine(BONUS_CLASS_CODES[cls], BONUS_CLASS_NAMES[cls], table.awards[cls].fixed - 1)
        for cls in BonusClass
        if cls in table.awards and table.awards[cls].fixed
    )


PROGRESSIVE_BET = SideBet(
    kind=PROGRESSIVE,
    label="Progressive",
    options=ProgressiveBetOptions,
    settle=_settle_progressive,
    limits=_progressive_limits,
    pay_lines=_progressive_lines,
    past_commit=True,  # the meter's calls follow the table's commit (server/host/jackpots.py)
)
"""The progressive wager (docs/RULES.md, "Progressive jackpot")."""
