"""Provably fair deals: the commitment, the shuffle stream, and the deal from a seed.

Anyone can re-derive a round's cards from its revealed seed with this module alone
(it is part of the protocol, so clients verify deals without the server's code):

- the commitment is ``SHA-256(seed)``, published before the round;
- block ``i`` of the random stream is
  ``HMAC-SHA256(key=seed, msg=b"paigow-shuffle-v1" + i.to_bytes(8, "big"))``, read as
  consecutive 4-byte big-endian unsigned integers;
- a Fisher-Yates shuffle of ``[0, 1, ..., 52]`` draws, for ``i`` from 52 down to 1, a
  uniform ``j`` in ``[0, i]`` by rejection sampling (no modulo bias) and swaps;
- hand ``k`` is ``deck[7k : 7k + 7]``: seats 0..5 get hands 0..5, the dealer hand 6.
"""

from __future__ import annotations

import hashlib
import hmac
from collections.abc import Iterator

from protocol.cards import DECK_SIZE

SEED_BYTES = 32
HAND_SIZE = 7
HANDS_PER_DEAL = 7
DEALER_HAND = 6
STREAM_LABEL = b"paigow-shuffle-v1"
_TWO32 = 1 << 32


class SeedError(ValueError):
    """A seed that is not exactly 32 bytes."""


def commitment(seed: bytes) -> str:
    """The public commitment to a seed: SHA-256 of it, in lowercase hex."""
    _check_seed(seed)
    return hashlib.sha256(seed).hexdigest()


def stream_words(seed: bytes) -> Iterator[int]:
    """The endless stream of 32-bit words derived from ``seed``."""
    _check_seed(seed)
    block = 0
    while True:
        digest = hmac.new(seed, STREAM_LABEL + block.to_bytes(8, "big"), hashlib.sha256).digest()
        for offset in range(0, 32, 4):
            yield int.from_bytes(digest[offset : offset + 4], "big")
        block += 1


def shuffled_deck(seed: bytes) -> list[int]:
    """The 53 card codes in the order the seed shuffles them."""
    deck = list(range(DECK_SIZE))
    words = stream_words(seed)
    for i in range(DECK_SIZE - 1, 0, -1):
        n = i + 1
        limit = _TWO32 - (_TWO32 % n)
        word = next(words)
        while word >= limit:
            word = next(words)
        j = word % n
        deck[i], deck[j] = deck[j], deck[i]
    return deck


def deal(seed: bytes) -> tuple[tuple[int, ...], ...]:
    """The seven 7-card hands a seed deals: seats 0..5, then the dealer (index 6)."""
    deck = shuffled_deck(seed)
    return tuple(
        tuple(deck[HAND_SIZE * k : HAND_SIZE * k + HAND_SIZE]) for k in range(HANDS_PER_DEAL)
    )


def verify(seed: bytes, published_commitment: str, hands: dict[int, tuple[int, ...]]) -> bool:
    """Whether ``seed`` matches the commitment and deals exactly ``hands`` (hand index -> cards)."""
    if len(seed) != SEED_BYTES or not hmac.compare_digest(
        commitment(seed), published_commitment.lower()
    ):
        return False
    dealt = deal(seed)
    return all(
        0 <= k < HANDS_PER_DEAL and tuple(dealt[k]) == tuple(cards) for k, cards in hands.items()
    )


def _check_seed(seed: bytes) -> None:
    if not isinstance(seed, bytes | bytearray) or len(seed) != SEED_BYTES:
        raise SeedError(f"a seed is {SEED_BYTES} bytes")
