"""The fan-out of one table's events in a process: once each, in order, held back when
asked, gaps reported and filled; no sockets needed."""

from __future__ import annotations

from server.host.fanout import FanOut, Frames


class Sub:
    """A subscriber that keeps what it is sent."""

    def __init__(self, player: str | None) -> None:
        self.player_id = player
        self.got: list[bytes] = []

    def send_bytes(self, data: bytes) -> None:
        self.got.append(data)


def event(seq: int, **private: bytes) -> Frames:
    return f"public {seq}".encode(), dict(private)


def test_each_subscriber_gets_each_event_once_in_its_own_version() -> None:
    fan = FanOut("t")
    ann, bob, eve = Sub("ann"), Sub("bob"), Sub(None)
    for sub in (ann, bob, eve):
        fan.add(sub, 0)
    fan.send(event(1), 1)
    fan.send(event(2, ann=b"ann's cards"), 2)
    fan.send(event(2, ann=b"ann's cards"), 2)  # relayed again: a duplicate
    assert ann.got == [b"public 1", b"ann's cards"]
    assert bob.got == eve.got == [b"public 1", b"public 2"]
    assert fan.seq == 2


def test_a_subscriber_added_after_an_event_does_not_get_it_again() -> None:
    fan = FanOut("t")
    late = Sub("late")
    fan.add(late, 5)  # its snapshot reflects event 5
    fan.send(event(5), 5)
    fan.send(event(6), 6)
    assert late.got == [b"public 6"]


def test_held_events_follow_the_reply() -> None:
    """A request answered elsewhere: the events come first, the reply is sent first."""
    fan = FanOut("t")
    sub = Sub("ann")
    fan.add(sub, 3)
    assert fan.hold(sub)
    fan.send(event(4), 4)
    fan.send(event(5), 5)
    assert sub.got == []
    fan.release(sub, [b"ok"])
    assert sub.got == [b"ok", b"public 4", b"public 5"]
    fan.send(event(6), 6)
    assert sub.got[-1] == b"public 6"


def test_an_attach_releases_from_its_snapshot_on() -> None:
    fan = FanOut("t")
    sub = Sub("ann")
    fan.add(sub, 0, held=True)
    fan.send(event(7), 7)  # came before the snapshot, which reflects it
    fan.send(event(8), 8)
    fan.release(sub, [b"snapshot at 7"], upto=7)
    assert sub.got == [b"snapshot at 7", b"public 8"]


def test_a_gap_is_reported_and_filled_in_order() -> None:
    fan = FanOut("t")
    gaps: list[Sub] = []
    fan.on_gap = gaps.append  # type: ignore[assignment]
    sub = Sub("ann")
    fan.add(sub, 1)
    fan.send(event(3), 3)
    fan.send(event(4), 4)
    assert gaps == [sub]
    assert sub.got == []
    fan.fill(sub, [(2, b"from the buffer 2"), (3, b"from the buffer 3")])
    assert sub.got == [b"from the buffer 2", b"from the buffer 3", b"public 4"]


def test_a_private_frame_not_received_is_a_gap_never_the_public_one() -> None:
    fan = FanOut("t")
    gaps: list[Sub] = []
    fan.on_gap = gaps.append  # type: ignore[assignment]
    ann, bob = Sub("ann"), Sub("bob")
    fan.add(ann, 0)
    fan.add(bob, 0)
    fan.send(event(1), 1, private_to=["ann"])  # ann's cards did not come with it
    assert ann.got == []
    assert bob.got == [b"public 1"]
    assert gaps == [ann]
    fan.fill(ann, [(1, b"ann's cards")])
    assert ann.got == [b"ann's cards"]


def test_a_gap_the_buffer_cannot_fill_is_passed_on_to_the_client() -> None:
    """The client sees the gap and asks for a snapshot (protocol/PROTOCOL.md, section 3)."""
    fan = FanOut("t")
    fan.on_gap = lambda sub: None
    sub = Sub("ann")
    fan.add(sub, 1)
    fan.send(event(9), 9)
    fan.fill(sub, [], skip=True)
    assert sub.got == [b"public 9"]


def test_a_hole_left_after_a_fill_asks_again() -> None:
    fan = FanOut("t")
    gaps: list[Sub] = []
    fan.on_gap = gaps.append  # type: ignore[assignment]
    sub = Sub("ann")
    fan.add(sub, 1)
    fan.send(event(5), 5)
    fan.fill(sub, [(2, b"2"), (3, b"3")])  # the buffer was read before 4 was stored
    assert sub.got == [b"2", b"3"]
    assert gaps == [sub, sub]


def test_a_fill_while_a_reply_is_awaited_waits_behind_it() -> None:
    fan = FanOut("t")
    fan.on_gap = lambda sub: None
    sub = Sub("ann")
    fan.add(sub, 1)
    fan.hold(sub)
    fan.fill(sub, [(2, b"2")])
    assert sub.got == []
    fan.release(sub, [b"ok"])
    assert sub.got == [b"ok", b"2"]


def test_counts_are_told() -> None:
    fan = FanOut("t")
    counts: list[tuple[str, int]] = []
    fan.on_count = lambda table, n: counts.append((table, n))
    sub = Sub("ann")
    fan.add(sub, 0)
    fan.add(sub, 3)  # again: not a new subscriber
    fan.discard(sub)
    fan.discard(sub)
    assert counts == [("t", 1), ("t", 0)]
