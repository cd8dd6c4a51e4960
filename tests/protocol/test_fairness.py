"""The seeded shuffle (protocol.fairness; docs/CONVENTIONS.md, "The shuffle"): the rules use it."""

from __future__ import annotations

import hashlib
import hmac
import math
from collections.abc import Iterable, Iterator

import pytest
from hypothesis import given
from hypothesis import strategies as st

from protocol.fairness import (
    SeedError,
    commitment,
    deal,
    shuffled_deck,
    stream_words,
    verify,
)
from server.rules.cards import DECK_SIZE, cards_text

seeds = st.binary(min_size=32, max_size=32)


def spec_deck(seed: bytes) -> list[int]:
    """docs/CONVENTIONS.md's shuffle, written again from the text alone."""

    def words() -> Iterator[int]:
        block = 0
        while True:
            msg = b"paigow-shuffle-v1" + block.to_bytes(8, "big")
            digest = hmac.new(seed, msg, hashlib.sha256).digest()
            for k in range(8):
                yield int.from_bytes(digest[4 * k : 4 * k + 4], "big")
            block += 1

    stream = words()
    deck = list(range(53))
    for i in range(52, 0, -1):
        n = i + 1
        limit = 2**32 - (2**32 % n)
        w = next(stream)
        while w >= limit:
            w = next(stream)
        j = w % n
        deck[i], deck[j] = deck[j], deck[i]
    return deck


@given(seeds)
def test_a_deal_is_a_permutation_and_deterministic(seed: bytes) -> None:
    deck = shuffled_deck(seed)
    assert sorted(deck) == list(range(DECK_SIZE))
    assert shuffled_deck(seed) == deck
    hands = deal(seed)
    assert len(hands) == 7
    assert all(len(h) == 7 for h in hands)
    assert [c for h in hands for c in h] == deck[:49]  # deck[49:53] is not used


@given(seeds)
def test_shuffle_follows_the_written_convention(seed: bytes) -> None:
    assert shuffled_deck(seed) == spec_deck(seed)


def test_known_deal() -> None:
    # A fixed vector: anyone re-deriving the deal from the seed must get these cards.
    seed = bytes(range(32))
    hands = deal(seed)
    assert cards_text(hands[0]) == "3c As Th 2h 5c 6h 4s"
    assert cards_text(hands[6]) == "JK 8c Jh Jd 5h 4c 2s"


@given(seeds)
def test_commitment_is_sha256(seed: bytes) -> None:
    assert commitment(seed) == hashlib.sha256(seed).hexdigest()
    hands = deal(seed)
    assert verify(seed, commitment(seed), {0: hands[0], 6: hands[6]})
    assert not verify(seed, commitment(seed), {0: hands[1]})
    assert not verify(seed, "00" * 32, {0: hands[0]})


def test_stream_is_hmac_sha256() -> None:
    seed = b"\x07" * 32
    words = stream_words(seed)
    block1 = hmac.new(seed, b"paigow-shuffle-v1" + (1).to_bytes(8, "big"), "sha256").digest()
    first16 = [next(words) for _ in range(16)]
    assert first16[8] == int.from_bytes(block1[:4], "big")


@pytest.mark.parametrize("bad", [b"", b"\x00" * 31, b"\x00" * 33])
def test_seed_must_be_32_bytes(bad: bytes) -> None:
    with pytest.raises(SeedError):
        shuffled_deck(bad)
    with pytest.raises(SeedError):
        commitment(bad)


# --- uniformity -------------------------------------------------------------------------
#
# 20,000 decks from fixed seeds; counts[position][card] over the 53 x 53 table. Under a
# uniform shuffle each cell expects 20,000 / 53. Every row and every column sums to
# 20,000 (each deck is a permutation), so the statistic has (53 - 1)^2 = 2704 degrees
# of freedom. Both tails are tested at p = 1e-6, the quantiles taken from the
# Wilson-Hilferty approximation of the chi-square distribution (accurate to well under
# 1% at this many degrees of freedom): too large means bias, too small means a
# shuffle too regular to be random (a rotation, say). The seeds are fixed, so the
# test is deterministic; the statistic for them is about 2,700.

DECKS = 20_000
DOF = (DECK_SIZE - 1) ** 2
Z_1E6 = 4.753424  # the standard normal quantile at 1 - 1e-6


def chi2_quantile(dof: int, z: float) -> float:
    """Wilson-Hilferty: the chi-square quantile whose normal score is ``z``."""
    a = 2 / (9 * dof)
    return dof * (1 - a + z * math.sqrt(a)) ** 3


def chi2_statistic(decks: Iterable[list[int]]) -> float:
    """The chi-square statistic of the position x card counts of ``decks``."""
    counts = [[0] * DECK_SIZE for _ in range(DECK_SIZE)]
    total = 0
    for deck in decks:
        total += 1
        for position, card in enumerate(deck):
            counts[position][card] += 1
    expected = total / DECK_SIZE
    return sum((n - expected) ** 2 for row in counts for n in row) / expected


def fixed_seeds() -> Iterator[bytes]:
    for k in range(DECKS):
        yield hashlib.sha256(b"chi-square seed " + k.to_bytes(4, "big")).digest()


def naive_shuffle(seed: bytes) -> list[int]:
    """The classic biased shuffle: j drawn from the whole deck at every step."""
    deck = list(range(DECK_SIZE))
    words = stream_words(seed)
    for i in range(DECK_SIZE - 1, 0, -1):
        j = next(words) % DECK_SIZE
        deck[i], deck[j] = deck[j], deck[i]
    return deck


LOW, HIGH = chi2_quantile(DOF, -Z_1E6), chi2_quantile(DOF, Z_1E6)


def test_quantiles() -> None:
    # Table values of the chi-square distribution at 0.999 (normal score 3.090232).
    assert chi2_quantile(100, 3.090232) == pytest.approx(149.449, abs=0.2)
    assert chi2_quantile(1000, 3.090232) == pytest.approx(1143.917, abs=0.5)


@pytest.mark.slow
def test_shuffle_is_uniform_by_card_and_position() -> None:
    statistic = chi2_statistic(map(shuffled_deck, fixed_seeds()))
    assert LOW < statistic < HIGH, statistic


@pytest.mark.slow
def test_the_chi_square_test_catches_a_biased_shuffle() -> None:
    assert chi2_statistic(map(naive_shuffle, fixed_seeds())) > HIGH


def test_the_chi_square_test_catches_a_too_regular_shuffle() -> None:
    # Deck k is the fresh deck rotated by k: counts as even as they can be.
    rotations = ([(c + k) % DECK_SIZE for c in range(DECK_SIZE)] for k in range(DECKS))
    assert chi2_statistic(rotations) < LOW
