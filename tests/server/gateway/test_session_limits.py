"""The session's limits without sockets, Redis or sleeps: the rate, invalid frames,
silence, and how it closes; every time is given."""

from __future__ import annotations

from protocol.codec import encode
from protocol.errors import CloseCode
from protocol.messages import ErrorReply, ListTables, Ping
from server.gateway.session import SILENCE, TEXT_FRAME, Close, Invalid, Throttle
from tests.server.gateway.sessions import T0, closed_with, new_session, welcomed

# --- the rate -----------------------------------------------------------------------


def test_past_the_burst_a_request_is_dropped_with_when_to_retry() -> None:
    session = welcomed(new_session(rate_per_s=16))
    for i in range(32):  # the burst: twice the rate
        assert isinstance(session.receive(encode(Ping(rid=f"p{i}")), T0), Ping)
        session.handled(T0)
    throttled = session.receive(encode(Ping(rid="late")), T0)
    assert isinstance(throttled, Throttle)
    assert (throttled.reply.code, throttled.reply.rid) == ("rate_limited", "late")
    assert throttled.reply.retryable
    assert throttled.reply.retry_after_ms == 63  # a token comes back every 1/16 s
    unreadable = session.receive(b"\xc1", T0)
    assert isinstance(unreadable, Throttle)
    assert unreadable.reply.rid is None
    # The wait it named is enough.
    assert isinstance(session.receive(encode(Ping(rid="then")), T0 + 0.063), Ping)


def test_far_over_the_rate_closes_4008() -> None:
    session = welcomed(new_session(rate_per_s=20))
    outcomes = [session.receive(encode(Ping(rid=f"p{i}")), T0) for i in range(101)]
    assert [type(o) for o in outcomes[:100]] == [Ping] * 40 + [Throttle] * 60
    # More than five times the rate within one second.
    closed_with(outcomes[100], CloseCode.RATE_LIMITED)
    # As many over more than a second are only throttled.
    session = welcomed(new_session(rate_per_s=20))
    outcomes = [session.receive(encode(Ping(rid=f"p{i}")), T0 + i / 90) for i in range(101)]
    assert Throttle in {type(o) for o in outcomes}
    assert not any(isinstance(o, Close) for o in outcomes)


# --- invalid frames -----------------------------------------------------------------


def test_ten_invalid_frames_in_a_row_close_4006_after_their_error() -> None:
    session = welcomed(new_session())
    for _ in range(9):
        invalid = session.receive(b"\xc1", T0)
        assert isinstance(invalid, Invalid)
        assert invalid.reply.code == "malformed"
        assert invalid.then is None
    # A valid request in between: the count starts again.
    assert isinstance(session.receive(encode(ListTables(rid="ok")), T0), ListTables)
    session.handled(T0)
    for _ in range(9):
        invalid = session.receive(b"\xc1", T0)
        assert isinstance(invalid, Invalid)
        assert invalid.then is None
    tenth = session.receive(b"\xc1", T0)
    assert isinstance(tenth, Invalid)
    assert tenth.reply.code == "malformed"  # the error goes out, then the close
    closed_with(tenth.then, CloseCode.TOO_MANY_ERRORS)


def test_a_text_frame_closes_1003() -> None:
    assert welcomed(new_session()).receive('{"type": "ping"}', T0) is TEXT_FRAME


# --- silence ------------------------------------------------------------------------


def test_two_heartbeats_without_a_frame_close_4004() -> None:
    session = welcomed(new_session(heartbeat_ms=1000), now=T0)
    assert session.check_silence(T0) == T0 + 2
    assert session.check_silence(T0 + 1.9) == T0 + 2
    assert session.check_silence(T0 + 2) is SILENCE
    assert SILENCE.code == CloseCode.HEARTBEAT_TIMEOUT


def test_each_frame_restarts_the_wait() -> None:
    session = welcomed(new_session(heartbeat_ms=1000), now=T0)
    for t in (1.5, 3.0, 4.5):
        assert isinstance(session.receive(encode(Ping(rid=f"p{t}")), T0 + t), Ping)
        session.handled(T0 + t)
        assert session.check_silence(T0 + t + 1.9) == T0 + t + 2
    assert session.check_silence(T0 + 6.5) is SILENCE


def test_the_time_a_request_is_handled_is_not_silence() -> None:
    session = welcomed(new_session(heartbeat_ms=1000), now=T0)
    assert isinstance(session.receive(encode(ListTables(rid="slow")), T0 + 1), ListTables)
    # Handled for ten heartbeats: each check moves the wait on.
    for t in (3.0, 5.0, 7.0, 11.0):
        assert session.check_silence(T0 + t) == T0 + t + 2
    session.handled(T0 + 11)
    assert session.check_silence(T0 + 12.9) == T0 + 13
    assert session.check_silence(T0 + 13) is SILENCE


# --- closing ------------------------------------------------------------------------


def test_the_error_goes_before_the_close_and_the_first_close_stands() -> None:
    session = welcomed(new_session())
    reply = ErrorReply(code="unauthorized", message="no", retryable=False, rid="h")
    first = Close(CloseCode.UNAUTHORIZED, "token refused", reply)
    assert session.close(first) == [reply]
    assert session.close(Close(CloseCode.HEARTBEAT_TIMEOUT, "silent")) is None
    assert session.closing is first
    # Closing: no frame is taken any more.
    assert session.receive(encode(Ping(rid="p")), T0) is None


def test_a_close_without_an_error_sends_nothing_first() -> None:
    session = welcomed(new_session())
    assert session.close(SILENCE) == []
    assert session.closing is SILENCE
