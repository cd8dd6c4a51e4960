"""Simulation: a house way against a house way over many rounds dealt from one seed.

The deal of round ``n`` (n = 0, 1, ...) from a 32-byte master seed:

1. ``round_seed = SHA-256(b"paigow-sim-round-v1" + master_seed + n.to_bytes(8, "big"))``,
   a 32-byte seed of the protocol's shuffle (``protocol.fairness``, docs/CONVENTIONS.md).
2. The protocol's Fisher-Yates shuffle of that seed, same HMAC-SHA256 stream and same
   rejection sampling, run only for its first 14 steps (i = 52 down to 39): those
   steps alone fix ``deck[39:53]``, and the later steps never touch them. So the
   player's 7 cards are exactly ``shuffled_deck(round_seed)[46:53]`` and the dealer's
   ``shuffled_deck(round_seed)[39:46]``, a uniform pair of disjoint hands, at a
   quarter of the cost of the full shuffle (2 HMAC blocks instead of 7).

The player's hand is set by house way ``W`` and the dealer's by ``W2``; the bonus bet
rides on the player's seven cards. The rounds whose dealer's hand is a commission-free
table's barred hand (a queen-high pai gow; a nine-high low hand as ``W2`` sets it:
:mod:`server.rules.dealer_hands`) are counted apart, by the main bet's result had it
not pushed: the main bet's edge at such a table, and the Queen's Dragon's and the
Tiger 9's hit rates, come from the same rounds. The expected value uses the exact commission
percentage (as for a large bet), not the integer-chip rounding of
``server.rules.settlement``, which would depend on the bet size.

Pure: the only effect is the optional ``progress`` callback.
"""

from __future__ import annotations

import hashlib
import struct
from collections.abc import Callable
from dataclasses import dataclass, field

from protocol.fairness import SEED_BYTES, STREAM_LABEL, SeedError, stream_words
from server.rules.bonus import (
    BONUS_CLASS_NAMES,
    BonusClass,
    PayTable,
    classify_bonus_unchecked,
    pay_table,
)
from server.rules.dealer_hands import is_nine_high_low, is_queen_high_pai_gow
from server.rules.houseways import house_way
from server.rules.options import HouseWay, RuleOptions
from server.rules.values import high_value, low_value

ROUND_LABEL = b"paigow-sim-round-v1"
_DECK_TOP = 52
_DRAWS = 14  # 7 cards for the player, 7 for the dealer
_TWO32 = 1 << 32
# Rejection limit for step i (a uniform j in 0..i): the largest multiple of i + 1.
_LIMITS = tuple(_TWO32 - _TWO32 % (i + 1) if i else 0 for i in range(_DECK_TOP + 1))
_BLOCK0 = STREAM_LABEL + (0).to_bytes(8, "big")
_BLOCK1 = STREAM_LABEL + (1).to_bytes(8, "big")
_UNPACK16 = struct.Struct(">16I").unpack
# HMAC-SHA256 by its definition (RFC 2104): the key padded to 64 bytes, XORed with
# these pads; with one key for both blocks the pads are hashed once, not twice.
_IPAD = bytes(x ^ 0x36 for x in range(256))
_OPAD = bytes(x ^ 0x5C for x in range(256))
_KEY_PAD = bytes(64 - SEED_BYTES)
_FRESH_DECK = list(range(_DECK_TOP + 1))
# (i, i + 1, rejection limit) for the Fisher-Yates steps i = 52 down to 39.
_STEPS = tuple((i, i + 1, _LIMITS[i]) for i in range(_DECK_TOP, _DECK_TOP - _DRAWS, -1))


def round_seed(seed: bytes, round_number: int) -> bytes:
    """The protocol seed of round ``round_number`` of a simulation from ``seed``."""
    return hashlib.sha256(ROUND_LABEL + seed + round_number.to_bytes(8, "big")).digest()


def first_words(rseed: bytes) -> tuple[int, ...]:
    """Words 0..15 of the protocol's stream for the 32-byte seed ``rseed`` (blocks 0, 1).

    Equal to the first 16 words of ``protocol.fairness.stream_words(rseed)``.
    """
    key = rseed + _KEY_PAD
    inner = hashlib.sha256(key.translate(_IPAD))
    outer = hashlib.sha256(key.translate(_OPAD))
    inner0 = inner.copy()
    inner0.update(_BLOCK0)
    inner.update(_BLOCK1)
    outer0 = outer.copy()
    outer0.update(inner0.digest())
    outer.update(inner.digest())
    return _UNPACK16(outer0.digest() + outer.digest())


def _partial_deal_slow(rseed: bytes) -> list[int]:
    # The general path, taken only when a draw is rejected (about once in 10**7 rounds).
    deck = list(range(_DECK_TOP + 1))
    words = stream_words(rseed)
    for i, n, limit in _STEPS:
        w = next(words)
        while w >= limit:
            w = next(words)
        j = w % n
        deck[i], deck[j] = deck[j], deck[i]
    return deck


def _partial_deal(rseed: bytes) -> list[int]:
    """The deck after the first 14 Fisher-Yates steps of the protocol shuffle."""
    deck = _FRESH_DECK[:]
    for (i, n, limit), w in zip(_STEPS, first_words(rseed), strict=False):
        if w >= limit:
            return _partial_deal_slow(rseed)
        j = w % n
        deck[i], deck[j] = deck[j], deck[i]
    return deck


def round_hands(seed: bytes, round_number: int) -> tuple[tuple[int, ...], tuple[int, ...]]:
    """The player's and the dealer's seven cards in round ``round_number`` from ``seed``."""
    _check_seed(seed)
    deck = _partial_deal(round_seed(seed, round_number))
    return tuple(deck[46:53]), tuple(deck[39:46])


@dataclass(frozen=True, slots=True)
class SimResult:
    """Counts from a simulation and the figures derived from them.

    ``bonus_counts[c]`` is the number of rounds whose player hand is of
    ``BonusClass(c)``. ``queen_high`` and ``nine_low`` are the wins, pushes and losses
    (as at a table with a commission) of the rounds whose dealer's hand is a
    queen-high pai gow, and of those whose dealer's low hand is nine-high.
    """

    rounds: int
    wins: int
    pushes: int
    losses: int
    player_way: HouseWay
    dealer_way: HouseWay
    commission_pct: int
    pay_table: PayTable
    bonus_counts: tuple[int, ...] = field(default=())
    queen_high: tuple[int, int, int] = (0, 0, 0)
    nine_low: tuple[int, int, int] = (0, 0, 0)

    @property
    def win_rate(self) -> float:
        """Share of rounds the player won."""
        return self.wins / self.rounds if self.rounds else 0.0

    @property
    def push_rate(self) -> float:
        """Share of rounds that pushed."""
        return self.pushes / self.rounds if self.rounds else 0.0

    @property
    def loss_rate(self) -> float:
        """Share of rounds the player lost."""
        return self.losses / self.rounds if self.rounds else 0.0

    @property
    def ev(self) -> float:
        """The player's expected result per unit bet, commission included."""
        if not self.rounds:
            return 0.0
        gain = self.wins * (100 - self.commission_pct) / 100
        return (gain - self.losses) / self.rounds

    @property
    def bonus_ev(self) -> float:
        """The bonus bet's expected result per unit bet under :attr:`pay_table`."""
        if not self.rounds:
            return 0.0
        total = 0
        for cls, count in zip(BonusClass, self.bonus_counts, strict=True):
            odds = self.pay_table.odds_of(cls)
            total += count * odds if odds else -count
        return total / self.rounds

    @property
    def bonus_return(self) -> float:
        """Chips returned per chip bet on the bonus (1 + :attr:`bonus_ev`)."""
        return 1.0 + self.bonus_ev

    def as_dict(self) -> dict[str, object]:
        """A JSON-ready summary."""
        return {
            "rounds": self.rounds,
            "player_way": self.player_way.value,
            "dealer_way": self.dealer_way.value,
            "wins": self.wins,
            "pushes": self.pushes,
            "losses": self.losses,
            "win_rate": self.win_rate,
            "push_rate": self.push_rate,
            "loss_rate": self.loss_rate,
            "commission_pct": self.commission_pct,
            "ev": self.ev,
            "dealer_queen_high": dict(zip(_RESULTS, self.queen_high, strict=True)),
            "dealer_nine_low": dict(zip(_RESULTS, self.nine_low, strict=True)),
            "bonus": {
                "pay_table": self.pay_table.name,
                "ev": self.bonus_ev,
                "return": self.bonus_return,
                "counts": {
                    BONUS_CLASS_NAMES[cls]: count
                    for cls, count in zip(BonusClass, self.bonus_counts, strict=True)
                },
            },
        }


_DEFAULT_OPTIONS = RuleOptions()
_RESULTS = ("wins", "pushes", "losses")


def simulate(
    seed: bytes,
    rounds: int,
    player_way: HouseWay,
    dealer_way: HouseWay | None = None,
    *,
    options: RuleOptions = _DEFAULT_OPTIONS,
    progress: Callable[[int], None] | None = None,
    progress_every: int = 10_000,
) -> SimResult:
    """Play ``rounds`` rounds of ``player_way`` against ``dealer_way`` (default: the same).

    ``options`` give the wheel rank, the commission and the bonus pay table (by name).
    ``progress``, when given, is called with the number of rounds done every
    ``progress_every`` rounds and after the last round. Raises ``ValueError`` for a seed
    that is not 32 bytes, a negative ``rounds`` or an unknown pay table, and
    ``RuntimeError`` if a house way ever returns a foul (a bug in the house way).
    """
    _check_seed(seed)
    if rounds < 0:
        raise ValueError("rounds is not negative")
    if progress_every < 1:
        raise ValueError("progress_every is at least 1")
    table = pay_table(options.bonus_pay_table)
    dealer_way = player_way if dealer_way is None else dealer_way
    wheel = options.wheel
    results = [0, 0, 0]  # halves won by the player: 0 lose, 1 push, 2 win
    queen_high = [0, 0, 0]  # the same, of the rounds whose dealer's is a queen-high pai gow
    nine_low = [0, 0, 0]  # the same, of those whose dealer's low hand is nine-high
    queen_high_of, nine_low_of = is_queen_high_pai_gow, is_nine_high_low
    bonus = [0] * len(BonusClass)
    sha256 = hashlib.sha256
    prefix = ROUND_LABEL + seed
    deal = _partial_deal
    split = house_way
    hv, lv = high_value, low_value
    classify = classify_bonus_unchecked
    for n in range(rounds):
        deck = deal(sha256(prefix + n.to_bytes(8, "big")).digest())
        player = deck[46:53]
        mine = split(player, player_way, wheel)
        dealer = deck[39:46]
        theirs = split(dealer, dealer_way, wheel)
        ph, pl = hv(mine.high, wheel), lv(mine.low)
        if ph <= pl:
            raise RuntimeError(f"house way {player_way.value} fouled {player}")
        # settlement's rule: a half is won only when strictly better (copies go to
        # the dealer); two halves won is a win, one a push, none a loss.
        won = (ph > hv(theirs.high, wheel)) + (pl > lv(theirs.low))
        results[won] += 1
        if queen_high_of(dealer):
            queen_high[won] += 1
        if nine_low_of(theirs.low):
            nine_low[won] += 1
        bonus[classify(player)] += 1
        if progress is not None and (n + 1) % progress_every == 0:
            progress(n + 1)
    if progress is not None and rounds % progress_every:
        progress(rounds)
    return SimResult(
        rounds=rounds,
        wins=results[2],
        pushes=results[1],
        losses=results[0],
        player_way=player_way,
        dealer_way=dealer_way,
        commission_pct=options.commission_pct,
        pay_table=table,
        bonus_counts=tuple(bonus),
        queen_high=(queen_high[2], queen_high[1], queen_high[0]),
        nine_low=(nine_low[2], nine_low[1], nine_low[0]),
    )


def _check_seed(seed: object) -> None:
    if not isinstance(seed, bytes) or len(seed) != SEED_BYTES:
        raise SeedError(f"a seed is {SEED_BYTES} bytes")
