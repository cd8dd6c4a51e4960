"""The client's heartbeat timing (clients/heartbeat.py), without a connection: times
are set in the past rather than waited for."""

from __future__ import annotations

import time

import pytest

from clients.heartbeat import Heartbeat


def test_a_ping_is_due_after_a_heartbeat_without_sending_or_without_receiving() -> None:
    beats = Heartbeat(20.0)
    assert not beats.due()
    now = time.monotonic()
    beats.last_sent = now - 20.5
    assert beats.due()  # nothing sent for a heartbeat, though frames came in
    beats.last_sent, beats.last_received = now, now - 20.5
    assert beats.due()  # nothing received for one, though requests went out
    beats.last_received = now - 19.0
    assert not beats.due()


def test_it_sleeps_until_the_ping_is_due_and_never_less_than_its_floor() -> None:
    beats = Heartbeat(20.0)
    beats.last_sent = beats.last_received = time.monotonic() - 5.0
    assert beats.sleep_s() == pytest.approx(15.0, abs=0.1)
    beats.last_sent -= 60.0
    assert beats.sleep_s() == 1.0  # overdue: checks again a second later, never spins
    short = Heartbeat(1.0)  # the protocol's shortest heartbeat: a second is too late
    short.last_sent -= 60.0
    assert short.sleep_s() == 0.25


def test_a_ping_waits_two_heartbeats_or_the_request_timeout_for_anything_back() -> None:
    assert Heartbeat(20.0).dead_after_s(15.0) == 40.0
    assert Heartbeat(1.0).dead_after_s(15.0) == 15.0
    beats = Heartbeat(20.0)
    sent = time.monotonic()
    assert not beats.heard_since(sent + 1.0)
    beats.last_received = sent + 2.0
    assert beats.heard_since(sent + 1.0)
    beats.restart(30.0)
    assert beats.every_s == 30.0
    assert not beats.due()
