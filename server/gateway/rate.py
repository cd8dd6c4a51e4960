"""The message rate of one connection: a token bucket, with no clock of its own."""

from __future__ import annotations

import math

from protocol import limits as L


class RateLimiter:
    """A token bucket: ``rate`` messages a second, bursts up to ``burst``.

    :attr:`flooding` tells a client far over the rate: more than ``close_factor``
    times the rate within one second (protocol/PROTOCOL.md, section 12: close 4008).
    """

    __slots__ = ("burst", "close_at", "rate", "seen", "stamp", "tokens", "window")

    def __init__(
        self, rate: float, burst: float, now: float, close_factor: float = L.RATE_CLOSE_FACTOR
    ) -> None:
        self.rate = rate
        self.burst = burst
        self.tokens = burst
        self.stamp = now
        self.window = now  # start of the current one-second window
        self.seen = 0  # messages in the window
        self.close_at = close_factor * rate

    def take(self, now: float) -> bool:
        """Count a message arrived at ``now``; whether it is within the rate."""
        if now - self.window >= 1:
            self.window, self.seen = now, 0
        self.seen += 1
        self.tokens = min(self.burst, self.tokens + (now - self.stamp) * self.rate)
        self.stamp = now
        if self.tokens >= 1:
            self.tokens -= 1
            return True
        return False

    @property
    def flooding(self) -> bool:
        """Whether the client sent far more than the rate in the current second."""
        return self.seen > self.close_at

    def wait_ms(self) -> int:
        """Milliseconds until the next message is allowed."""
        return max(1, math.ceil((1 - self.tokens) / self.rate * 1000))
