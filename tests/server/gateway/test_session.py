"""The session's rules without sockets, Redis or sleeps: every time is given.

``now`` is the event loop's clock as the connection would pass it; ``WALL_S`` the epoch
seconds at which tokens are checked.
"""

from __future__ import annotations

import pytest

from protocol.codec import encode
from protocol.errors import CloseCode
from protocol.messages import OkReply, Ping
from protocol.structs import Welcome
from server.auth import tokens
from server.gateway.options import GatewayOptions
from server.gateway.session import (
    RESUME_TTL_S,
    TEXT_FRAME,
    Close,
    Credentials,
    Identity,
    Refuse,
    Session,
)
from server.store.players.sessions import Session as StoredSession
from tests.server.gateway.sessions import (
    DAY_MS,
    GUEST_ENDS,
    SECRET,
    T0,
    WALL_MS,
    WALL_S,
    closed_with,
    greet,
    hello_frame,
    identify,
    new_session,
    options,
    welcomed,
)

# --- the hello ----------------------------------------------------------------------


def test_the_hello_has_the_handshake_time_from_the_opening() -> None:
    session = new_session(handshake_ms=3000)
    assert session.hello_wait(T0) == 3.0
    assert session.hello_wait(T0 + 2.5) == pytest.approx(0.5)
    assert session.hello_wait(T0 + 3.0) == 0
    assert session.hello_wait(T0 + 60) == 0


def test_the_first_frame_must_be_a_hello() -> None:
    close = closed_with(
        new_session().receive_hello(encode(Ping(rid="p1"))),
        CloseCode.HELLO_REQUIRED,
        "hello_required",
    )
    assert close.reply is not None
    assert close.reply.rid == "p1"
    closed_with(
        new_session().receive_hello(b"\xc1not msgpack"), CloseCode.HELLO_REQUIRED, "malformed"
    )
    assert new_session().receive_hello("hello") is TEXT_FRAME
    assert TEXT_FRAME.code == CloseCode.UNSUPPORTED_DATA


def test_the_version_is_the_highest_both_speak() -> None:
    assert greet(new_session(), hello_frame(min_version=1, max_version=7)).version == 1
    close = closed_with(
        new_session().receive_hello(hello_frame(min_version=2, max_version=9)),
        CloseCode.VERSION_UNSUPPORTED,
        "version_unsupported",
    )
    assert close.reply is not None
    assert close.reply.rid == "h"


def test_a_second_hello_is_refused_and_the_session_carries_on() -> None:
    session = welcomed(new_session())
    refused = session.receive(hello_frame(rid="again"), T0 + 1)
    assert isinstance(refused, Refuse)
    assert (refused.reply.code, refused.reply.rid) == ("hello_required", "again")
    assert session.closing is None
    assert session.receive(encode(Ping(rid="p")), T0 + 1) == Ping(rid="p")


# --- who the session speaks for -----------------------------------------------------


def test_a_login_token_names_the_player() -> None:
    token = tokens.issue(SECRET, "alice", 600, WALL_S)
    identity = identify(new_session(), hello_frame(token=token, guest=False))
    assert identity == Identity(
        "s-new",
        "alice",
        "alice",
        False,
        resumed=False,
        new_guest=False,
        expires_ms=WALL_MS + 600_000,
        opened_ms=WALL_MS,
    )
    named = identify(new_session(), hello_frame(token=token, guest=False, name="Al"))
    assert isinstance(named, Identity)
    assert named.name == "Al"


def test_a_bad_or_expired_token_closes_4001() -> None:
    good = tokens.issue(SECRET, "alice", 600, WALL_S)
    forged = tokens.issue(b"another-secret-0123456789", "alice", 600, WALL_S)
    expired = tokens.issue(SECRET, "alice", 60, WALL_S - 60)  # its last second is gone
    for token in (forged, expired, "garbage"):
        close = identify(new_session(), hello_frame(token=token, guest=False))
        closed_with(close, CloseCode.UNAUTHORIZED, "unauthorized")
    assert isinstance(identify(new_session(), hello_frame(token=good, guest=False)), Identity)


def test_a_resume_token_is_checked_with_its_own_key() -> None:
    session = new_session()
    # A login token is no resume token: the keys differ.
    login = tokens.issue(SECRET, "s-old", 600, WALL_S)
    close = identify(session, hello_frame(resume_token=login))
    assert isinstance(close, Close)
    assert close.reason == "resume refused"
    assert close.reply is not None
    assert close.reply.code == "unauthorized"


def resume_token(session_id: str, opts: GatewayOptions | None = None) -> str:
    return tokens.issue((opts or options()).resume_secret, session_id, 600, WALL_S)


def test_a_live_session_is_resumed_as_it_was() -> None:
    stored = StoredSession("s-old", "g-ann", "Ann", guest=True, expires_ms=GUEST_ENDS, opened_ms=5)
    session = new_session()
    identity = identify(session, hello_frame(resume_token=resume_token("s-old")), stored)
    assert identity == Identity(
        "s-old",
        "g-ann",
        "Ann",
        True,
        resumed=True,
        new_guest=False,
        expires_ms=GUEST_ENDS,
        opened_ms=5,
    )
    assert session.session_id == "s-old"
    renamed = identify(
        new_session(), hello_frame(resume_token=resume_token("s-old"), name="Annie"), stored
    )
    assert isinstance(renamed, Identity)
    assert (renamed.name, renamed.resumed) == ("Annie", True)


def test_a_gone_session_gives_a_fresh_one() -> None:
    identity = identify(new_session(), hello_frame(resume_token=resume_token("s-gone")))
    assert identity == Identity(
        "s-new",
        "g-new",
        "Guest",
        True,
        resumed=False,
        new_guest=True,
        expires_ms=GUEST_ENDS,
        opened_ms=WALL_MS,
    )


def test_someone_elses_session_is_not_resumed_with_a_login_token() -> None:
    stored = StoredSession("s-old", "bob", "Bob", guest=False, expires_ms=WALL_MS + 600_000)
    token = tokens.issue(SECRET, "alice", 600, WALL_S)
    token_ends = WALL_MS + 600_000
    identity = identify(
        new_session(),
        hello_frame(token=token, guest=False, resume_token=resume_token("s-old")),
        stored,
    )
    assert identity == Identity(
        "s-new",
        "alice",
        "alice",
        False,
        resumed=False,
        new_guest=False,
        expires_ms=token_ends,
        opened_ms=WALL_MS,
    )
    mine = StoredSession(
        "s-old", "alice", "Alice", guest=False, expires_ms=WALL_MS + 1, opened_ms=7
    )
    identity = identify(
        new_session(),
        hello_frame(token=token, guest=False, resume_token=resume_token("s-old")),
        mine,
    )
    assert identity == Identity(
        "s-old",
        "alice",
        "Alice",
        False,
        resumed=True,
        new_guest=False,
        expires_ms=token_ends,
        opened_ms=7,
    )


def test_guests_come_in_only_where_allowed() -> None:
    identity = identify(new_session(), hello_frame(name="Zed"))
    assert identity == Identity(
        "s-new",
        "g-new",
        "Zed",
        True,
        resumed=False,
        new_guest=True,
        expires_ms=GUEST_ENDS,
        opened_ms=WALL_MS,
    )
    close = identify(new_session(guests=False), hello_frame())
    closed_with(close, CloseCode.UNAUTHORIZED, "unauthorized")
    # A stored guest session is resumed even where new guests are refused.
    stored = StoredSession("s-old", "g-ann", "Ann", guest=True, expires_ms=GUEST_ENDS)
    opts = options(guests=False)
    resumed = identify(
        Session(opts, "s-new", T0), hello_frame(resume_token=resume_token("s-old", opts)), stored
    )
    assert isinstance(resumed, Identity)
    assert resumed.resumed


# --- sessions bounded by their credentials ----------------------------------------


def test_a_resume_after_the_login_token_expired_is_refused() -> None:
    """The hole this closes: a player's session resumed with ``guest: true`` and its
    resume token, after the login token that opened it expired."""
    token = tokens.issue(SECRET, "alice", 60, WALL_S)
    opened = identify(new_session(), hello_frame(token=token, guest=False))
    assert isinstance(opened, Identity)
    assert opened.expires_ms == WALL_MS + 60_000
    stored = StoredSession(
        "s-old", "alice", "alice", guest=False, expires_ms=opened.expires_ms, opened_ms=WALL_MS
    )
    resume = hello_frame(resume_token=tokens.issue(options().resume_secret, "s-old", 600, WALL_S))
    # Within the token's time the session is resumed; at its end, refused with 4001.
    resumed = identify(new_session(), resume, stored, wall_s=WALL_S + 59)
    assert isinstance(resumed, Identity)
    assert (resumed.resumed, resumed.player, resumed.expires_ms) == (
        True,
        "alice",
        WALL_MS + 60_000,
    )
    refused = identify(new_session(), resume, stored, wall_s=WALL_S + 60)
    closed_with(refused, CloseCode.UNAUTHORIZED, "unauthorized")
    # A new token of the same player resumes it, bounded by that token (section 5).
    fresh_token = tokens.issue(SECRET, "alice", 600, WALL_S + 60)
    renewed = identify(
        new_session(),
        hello_frame(
            token=fresh_token,
            guest=False,
            resume_token=tokens.issue(options().resume_secret, "s-old", 600, WALL_S),
        ),
        stored,
        wall_s=WALL_S + 60,
    )
    assert isinstance(renewed, Identity)
    assert (renewed.resumed, renewed.session_id, renewed.expires_ms) == (
        True,
        "s-old",
        WALL_MS + 660_000,
    )
    assert renewed.opened_ms == WALL_MS  # still the session opened then: revocable
    # Ended by an operator: even a new token does not resume it.
    revoked = identify(
        new_session(),
        hello_frame(
            token=fresh_token,
            guest=False,
            resume_token=tokens.issue(options().resume_secret, "s-old", 600, WALL_S),
        ),
        stored,
        wall_s=WALL_S + 60,
        revoked_ms=WALL_MS + 1,
    )
    closed_with(revoked, CloseCode.UNAUTHORIZED, "unauthorized")


def test_a_guest_session_lasts_its_lifetime_from_the_guest_s_creation() -> None:
    opts = options(guest_lifetime_ms=3_600_000)
    created = Session(opts, "s-g", T0)
    guest = identify(created, hello_frame())
    assert isinstance(guest, Identity)
    assert guest.expires_ms == WALL_MS + 3_600_000
    stored = StoredSession(
        "s-g", guest.player, "Guest", guest=True, expires_ms=guest.expires_ms, opened_ms=WALL_MS
    )
    resume = hello_frame(resume_token=tokens.issue(opts.resume_secret, "s-g", 7200, WALL_S))
    later = identify(Session(opts, "x", T0), resume, stored, wall_s=WALL_S + 3599)
    assert isinstance(later, Identity)
    assert later.expires_ms == guest.expires_ms  # a resume does not extend it
    refused = identify(Session(opts, "x", T0), resume, stored, wall_s=WALL_S + 3600)
    closed_with(refused, CloseCode.UNAUTHORIZED, "unauthorized")


def test_the_resume_token_outlives_the_session_s_credential_for_a_day() -> None:
    """So that a new token of the same player can resume a session whose credential
    expired (the session refuses the resume without one)."""
    session = new_session(guest_lifetime_ms=90_000)
    greeting = greet(session, hello_frame())
    identity = session.identify(greeting.hello, Credentials(None, None), None, "g-1", WALL_MS)
    assert isinstance(identity, Identity)
    reply = session.welcome(greeting, identity, WALL_MS)
    assert isinstance(reply.result, Welcome)
    secret = session.options.resume_secret
    assert tokens.verify(secret, reply.result.resume_token, WALL_S + 90) == "s-new"
    assert tokens.verify(secret, reply.result.resume_token, WALL_S + RESUME_TTL_S - 1) == "s-new"
    with pytest.raises(tokens.TokenExpired):
        tokens.verify(secret, reply.result.resume_token, WALL_S + RESUME_TTL_S)


def test_a_live_session_is_closed_when_its_credential_expires() -> None:
    session = new_session(guest_lifetime_ms=30_000, heartbeat_ms=60_000)
    greeting = greet(session, hello_frame())
    identity = session.identify(greeting.hello, Credentials(None, None), None, "g-1", WALL_MS)
    assert isinstance(identity, Identity)
    session.welcome(greeting, identity, WALL_MS, T0)
    session.heard(T0)
    assert session.check_silence(T0 + 1) == T0 + 30  # woken at the session's end
    assert session.receive(encode(Ping(rid="p")), T0 + 29.9) == Ping(rid="p")
    session.handled(T0 + 29.9)
    ended = session.check_silence(T0 + 30)
    closed_with(ended, CloseCode.UNAUTHORIZED, "unauthorized")
    closed_with(
        session.receive(encode(Ping(rid="q")), T0 + 30), CloseCode.UNAUTHORIZED, "unauthorized"
    )


def test_a_session_opened_before_a_revocation_is_refused() -> None:
    stored = StoredSession(
        "s-old", "g-ann", "Ann", guest=True, expires_ms=GUEST_ENDS, opened_ms=100
    )
    resume = hello_frame(resume_token=resume_token("s-old"))
    refused = identify(new_session(), resume, stored, revoked_ms=101)
    closed_with(refused, CloseCode.UNAUTHORIZED, "unauthorized")
    after = identify(new_session(), resume, stored, revoked_ms=100)  # opened at that time
    assert isinstance(after, Identity)
    assert after.resumed


def test_a_player_s_session_stored_without_an_end_is_not_resumed_without_a_token() -> None:
    legacy = StoredSession("s-old", "bob", "Bob", guest=False)
    refused = identify(new_session(), hello_frame(resume_token=resume_token("s-old")), legacy)
    closed_with(refused, CloseCode.UNAUTHORIZED, "unauthorized")
    guest = StoredSession("s-old", "g-ann", "Ann", guest=True)  # a guest's: a lifetime from now
    resumed = identify(new_session(), hello_frame(resume_token=resume_token("s-old")), guest)
    assert isinstance(resumed, Identity)
    assert resumed.expires_ms == GUEST_ENDS


def test_the_welcome_carries_a_resume_token_for_the_session() -> None:
    # A guest that outlives the resume token's own lifetime: the token's is the bound.
    session = new_session(heartbeat_ms=7000, guest_lifetime_ms=2 * DAY_MS)
    greeting = greet(session, hello_frame(rid="h1"))
    identity = session.identify(greeting.hello, Credentials(None, None), None, "g-1", WALL_MS)
    assert isinstance(identity, Identity)
    reply = session.welcome(greeting, identity, WALL_S * 1000 + 250)
    assert isinstance(reply, OkReply)
    assert reply.rid == "h1"
    welcome = reply.result
    assert isinstance(welcome, Welcome)
    assert (welcome.session_id, welcome.player_id, welcome.guest) == ("s-new", "g-1", True)
    assert (welcome.server_time_ms, welcome.heartbeat_ms) == (WALL_S * 1000 + 250, 7000)
    secret = session.options.resume_secret
    assert tokens.verify(secret, welcome.resume_token, WALL_S + RESUME_TTL_S - 1) == "s-new"
    with pytest.raises(tokens.TokenExpired):
        tokens.verify(secret, welcome.resume_token, WALL_S + RESUME_TTL_S)
