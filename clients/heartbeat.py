"""When a client pings, and when it takes its connection for dead (protocol/PROTOCOL.md,
section 5: the client pings once it has sent nothing for ``heartbeat_ms``; the server
closes after two heartbeats without a frame).

The heartbeat is the client's only keepalive: it sends no WebSocket pings, since the
protocol's ping already puts a frame each way in every interval (10,000 clients with
websockets' own pings sent a server 500 frames a second more, for nothing).
"""

from __future__ import annotations

import time


class Heartbeat:
    """One connection's heartbeat, in ``time.monotonic()`` seconds.

    A ping is due once nothing was sent for a heartbeat, or nothing received for one.
    A ping that gets nothing at all back within :meth:`dead_after_s` means the
    connection died without a close: the caller drops it and resumes on a new one. A
    server busy with the connection's request answers its ping late (it reads a
    connection's next frame once its request is handled), but still sends its events
    and replies meanwhile, and so keeps the connection.
    """

    __slots__ = ("every_s", "last_received", "last_sent")

    def __init__(self, every_s: float = 1.0) -> None:
        self.restart(every_s)

    def restart(self, every_s: float) -> None:
        """A new connection, whose welcome said ``every_s``: both directions fresh."""
        self.every_s = every_s
        self.last_sent = self.last_received = time.monotonic()

    def sleep_s(self) -> float:
        """How long until a ping may be due: at least a second (10,000 clients waking
        every second found nothing to send), or a quarter of a short heartbeat."""
        quiet_since = min(self.last_sent, self.last_received)
        return max(min(1.0, self.every_s / 4), quiet_since + self.every_s - time.monotonic())

    def due(self) -> bool:
        """Whether a ping is due now."""
        return time.monotonic() - min(self.last_sent, self.last_received) >= self.every_s

    def dead_after_s(self, request_timeout_s: float) -> float:
        """How long a ping waits for anything to come back: two heartbeats (as the
        server waits for the client), or the request timeout if longer."""
        return max(request_timeout_s, 2 * self.every_s)

    def heard_since(self, when: float) -> bool:
        """Whether any frame came in since ``when``."""
        return self.last_received >= when
