"""Over real sockets: players signed in with the operator's JWTs, checked against a JWKS
the test serves over HTTP on 127.0.0.1; the operator rotates its key mid-session, a
resume after that works with a token of the new key, and bad tokens close 4001."""

from __future__ import annotations

import time
from collections.abc import AsyncIterator
from pathlib import Path

import pytest
import pytest_asyncio

from protocol.errors import CloseCode
from protocol.messages import ErrorReply, Hello, ListTables, Ping
from server.app import App
from server.auth import tokens
from server.auth.jwks import FileKeySet
from server.config import Settings
from server.gateway.options import operator_tokens
from tests.helpers import url
from tests.server.auth.operator_keys import (
    AUDIENCE,
    ISSUER,
    JwksServer,
    claims,
    ec_key,
    ed_key,
    hs256_with_public_key,
    rsa_key,
    unsigned,
)
from tests.server.conftest import StartApp
from tests.server.helpers import Client

SECRET = b"test-secret-0123456789"  # the tests' server settings' token secret


@pytest_asyncio.fixture
async def operator() -> AsyncIterator[JwksServer]:
    async with JwksServer(rsa_key("key-2026-01")).running() as server:
        yield server


async def operator_app(start_app: StartApp, operator: JwksServer) -> App:
    # The keys may be read again at once: the interval is the unit tests' business.
    return await start_app(
        jwt_jwks_url=operator.url,
        jwt_issuer=ISSUER,
        jwt_audience=AUDIENCE,
        jwt_jwks_refresh_ms=0,
    )


async def refused(address: str, token: str, resume_token: str | None = None) -> ErrorReply:
    """A hello with ``token`` that the server refuses with ``unauthorized`` and 4001."""
    client = await Client.open(address)
    try:
        reply = await client.call(
            Hello,
            min_version=1,
            max_version=1,
            client="tests/1",
            token=token,
            resume_token=resume_token,
        )
        assert isinstance(reply, ErrorReply), reply
        assert reply.code == "unauthorized"
        closed = await client.wait_closed()
        assert closed.code == CloseCode.UNAUTHORIZED
        return reply
    finally:
        await client.close()


@pytest.mark.asyncio
@pytest.mark.parametrize("old_key", ["removed", "kept"])
async def test_a_session_resumes_after_the_operator_rotates_its_key(
    start_app: StartApp, operator: JwksServer, old_key: str
) -> None:
    app = await operator_app(start_app, operator)
    first_key = operator.keys[0]
    first_token = first_key.sign(claims("alice", name="Alice Liddell"))
    player = await Client.hello(url(app), token=first_token, name="ignored")
    assert player.welcome is not None
    # The operator's name for the player, not the one the hello asked for.
    assert (player.welcome.player_id, player.welcome.name) == ("alice", "Alice Liddell")
    assert not player.welcome.guest
    session_id, resume = player.welcome.session_id, player.welcome.resume_token
    await player.ok(ListTables)

    # Mid-session, the operator rotates: a new key (EC P-256), the old one removed or kept.
    new_key = ec_key("key-2026-02")
    operator.keys = [new_key] if old_key == "removed" else [first_key, new_key]
    await player.call(Ping, time_ms=None)  # the live connection does not notice
    assert player.closed is None
    await player.close()

    # A resume with a token of the new key: the same session.
    back = await Client.hello(
        url(app), token=new_key.sign(claims("alice", name="Alice")), resume_token=resume
    )
    assert back.welcome is not None
    assert (back.welcome.resumed, back.welcome.session_id) == (True, session_id)
    assert back.welcome.name == "Alice"
    await back.ok(ListTables)
    await back.close()

    # The old key's tokens: refused once the key is gone, good while it is kept.
    if old_key == "removed":
        error = await refused(url(app), first_token)
        assert "unknown_key" in error.message
    else:
        kept = await Client.hello(url(app), token=first_token)
        assert kept.welcome is not None
        assert kept.welcome.player_id == "alice"
        await kept.close()

    # A third rotation, to Ed25519.
    third = ed_key("key-2026-03")
    operator.keys = [third]
    again = await Client.hello(
        url(app), token=third.sign(claims("alice")), resume_token=back.welcome.resume_token
    )
    assert again.welcome is not None
    assert (again.welcome.resumed, again.welcome.session_id) == (True, session_id)
    await again.close()


@pytest.mark.asyncio
async def test_bad_operator_tokens_close_4001(start_app: StartApp, operator: JwksServer) -> None:
    app = await operator_app(start_app, operator)
    key = operator.keys[0]
    bad = {
        "forged": rsa_key(key.kid).sign(claims()),
        "expired": key.sign(claims(ttl_s=-120)),
        "wrong audience": key.sign(claims(aud="another-game")),
        "wrong issuer": key.sign(claims(iss="https://evil.test/")),
        "not yet valid": key.sign(claims(nbf=int(time.time()) + 600)),
        "unknown key": rsa_key("key-nobody").sign(claims()),
        "alg none": unsigned(claims(), key.kid),
        "HS256 with the public key": hs256_with_public_key(key, claims()),
    }
    messages = {what: (await refused(url(app), token)).message for what, token in bad.items()}
    assert "bad_signature" in messages["forged"]
    assert "expired" in messages["expired"]
    assert "wrong_audience" in messages["wrong audience"]
    assert "wrong_issuer" in messages["wrong issuer"]
    assert "not_yet_valid" in messages["not yet valid"]
    assert "unknown_key" in messages["unknown key"]
    assert "algorithm_not_allowed" in messages["alg none"]
    assert "algorithm_not_allowed" in messages["HS256 with the public key"]
    # A bad token with a good session's resume token does not resume it either.
    good = await Client.hello(url(app), token=key.sign(claims("bob")))
    assert good.welcome is not None
    await good.close()
    await refused(url(app), bad["forged"], good.welcome.resume_token)
    # This server's own tokens still sign players in beside the operator's.
    own = await Client.hello(url(app), token=tokens.issue(SECRET, "carol", 600, int(time.time())))
    assert own.welcome is not None
    assert own.welcome.player_id == "carol"
    await own.close()


@pytest.mark.asyncio
async def test_without_a_jwks_an_operator_token_is_refused(
    start_app: StartApp, operator: JwksServer
) -> None:
    app = await start_app()
    await refused(url(app), operator.keys[0].sign(claims()))


@pytest.mark.asyncio
async def test_a_session_ends_with_its_jwt_and_a_new_jwt_resumes_it(
    start_app: StartApp, operator: JwksServer
) -> None:
    app = await operator_app(start_app, operator)
    key = operator.keys[0]
    lifetime_s = 5  # long enough for the hello on a loaded machine, short for the test
    player = await Client.hello(url(app), token=key.sign(claims("dora", ttl_s=lifetime_s)))
    assert player.welcome is not None
    session_id, resume = player.welcome.session_id, player.welcome.resume_token
    closed = await player.wait_closed(within=lifetime_s + 15)
    assert closed.code == CloseCode.UNAUTHORIZED
    await player.close()
    back = await Client.hello(url(app), token=key.sign(claims("dora")), resume_token=resume)
    assert back.welcome is not None
    assert (back.welcome.resumed, back.welcome.session_id) == (True, session_id)
    await back.close()


def test_the_settings_make_the_check_or_refuse_to(tmp_path: Path) -> None:
    assert operator_tokens(Settings()) is None
    jwks_file = tmp_path / "jwks.json"
    made = operator_tokens(
        Settings(
            jwt_jwks_file=jwks_file,
            jwt_issuer=ISSUER,
            jwt_audience=AUDIENCE,
            jwt_algorithms=("EdDSA",),
            jwt_player_claim="uid",
            jwt_leeway_ms=5000,
        )
    )
    assert made is not None
    assert isinstance(made.keys, FileKeySet)
    assert (made.rules.algorithms, made.rules.player_claim, made.rules.leeway_s) == (
        frozenset({"EdDSA"}),
        "uid",
        5,
    )
    both = Settings(
        jwt_jwks_url="http://127.0.0.1:1/",
        jwt_jwks_file=jwks_file,
        jwt_issuer="i",
        jwt_audience="a",
    )
    with pytest.raises(ValueError, match="not both"):
        operator_tokens(both)
    with pytest.raises(ValueError, match="an issuer and an audience"):
        operator_tokens(Settings(jwt_jwks_url="http://127.0.0.1:1/", jwt_issuer=ISSUER))
    with pytest.raises(ValueError, match="may use only"):
        operator_tokens(
            Settings(
                jwt_jwks_url="http://127.0.0.1:1/",
                jwt_issuer=ISSUER,
                jwt_audience=AUDIENCE,
                jwt_algorithms=("HS256",),
            )
        )
