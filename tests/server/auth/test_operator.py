"""Operator JWTs checked against a JWKS served over real HTTP on 127.0.0.1: each
algorithm, every refusal with its reason, key rotation, and the keys' cache."""

from __future__ import annotations

import asyncio
import json
from collections.abc import AsyncIterator, Callable
from pathlib import Path

import pytest
import pytest_asyncio

from server.auth.jwks import FileKeySet, JwksUnavailable, UrlKeySet, parse_jwks
from server.auth.operator import (
    OperatorIdentity,
    OperatorTokenError,
    OperatorTokenRules,
    Reason,
)
from server.auth.operator_jwt import OperatorTokens
from tests.server.auth.operator_keys import (
    AUDIENCE,
    ISSUER,
    JwksServer,
    SigningKey,
    claims,
    ec_key,
    ed_key,
    hs256_with_public_key,
    jwks,
    rsa_key,
    unsigned,
)

RULES = OperatorTokenRules(issuer=ISSUER, audience=AUDIENCE, leeway_s=30)


class Clock:
    """A monotonic clock the test moves."""

    def __init__(self) -> None:
        self.now = 1000.0

    def __call__(self) -> float:
        return self.now


@pytest.fixture(scope="module")
def keys() -> dict[str, SigningKey]:
    return {"rsa": rsa_key("k-rsa"), "ec": ec_key("k-ec"), "ed": ed_key("k-ed")}


@pytest_asyncio.fixture
async def operator(keys: dict[str, SigningKey]) -> AsyncIterator[JwksServer]:
    async with JwksServer(keys["rsa"]).running() as server:
        yield server


Verifier = Callable[..., OperatorTokens]
"""``verifier(rules=RULES, *, max_age_s=3600, min_refresh_s=10, clock=None)``: the
operator's tokens checked against the test's JWKS server."""


@pytest_asyncio.fixture
async def verifier(operator: JwksServer) -> AsyncIterator[Verifier]:
    """Makes verifiers of the tokens against ``operator``'s keys; closes them after."""
    made: list[OperatorTokens] = []

    def make(
        rules: OperatorTokenRules = RULES,
        *,
        max_age_s: float = 3600,
        min_refresh_s: float = 10,
        clock: Clock | None = None,
    ) -> OperatorTokens:
        keys = UrlKeySet(
            operator.url,
            max_age_s=max_age_s,
            min_refresh_s=min_refresh_s,
            clock=clock or Clock(),
        )
        made.append(OperatorTokens(rules, keys))
        return made[-1]

    yield make
    for tokens in made:
        await tokens.keys.close()


async def refused(tokens: OperatorTokens, token: str) -> Reason:
    with pytest.raises(OperatorTokenError) as caught:
        await tokens.verify(token)
    return caught.value.reason


@pytest.mark.asyncio
@pytest.mark.parametrize("which", ["rsa", "ec", "ed"])
async def test_each_algorithm_is_accepted(
    operator: JwksServer, keys: dict[str, SigningKey], which: str, verifier: Verifier
) -> None:
    key = keys[which]
    operator.keys = [key]
    tokens = verifier()
    body = claims("alice", roles=["player", "admin"])
    identity = await tokens.verify(key.sign(body))
    assert identity == OperatorIdentity(
        "alice", "Alice", frozenset({"player", "admin"}), body["exp"]
    )


@pytest.mark.asyncio
async def test_every_bad_token_is_refused_with_its_reason(
    keys: dict[str, SigningKey], verifier: Verifier
) -> None:
    good = keys["rsa"]
    tokens = verifier(min_refresh_s=0)
    attacker = rsa_key(good.kid)  # same kid, another key: a forgery
    signed = good.sign(claims())
    head, body, sig = signed.split(".")
    cases = {
        "forged": (attacker.sign(claims()), Reason.BAD_SIGNATURE),
        "altered": (f"{head}.{body}x.{sig}", Reason.BAD_SIGNATURE),
        "expired": (good.sign(claims(ttl_s=-31)), Reason.EXPIRED),
        "not yet": (good.sign(claims(nbf=claims()["iat"] + 120)), Reason.NOT_YET_VALID),
        "issuer": (good.sign(claims(iss="https://evil.test/")), Reason.WRONG_ISSUER),
        "audience": (good.sign(claims(aud="another-game")), Reason.WRONG_AUDIENCE),
        "unknown kid": (rsa_key("k-nobody").sign(claims()), Reason.UNKNOWN_KEY),
        "alg none": (unsigned(claims(), good.kid), Reason.ALGORITHM),
        "HS256 with the public key": (
            hs256_with_public_key(good, claims()),
            Reason.ALGORITHM,
        ),
        # The kid names an RSA key, the token says ES256 (signed with an EC key).
        "alg of another key": (
            keys["ec"].sign(claims(), kid=good.kid),
            Reason.ALGORITHM,
        ),
        "no sub": (
            good.sign({k: v for k, v in claims().items() if k != "sub"}),
            Reason.BAD_CLAIM,
        ),
        "bad player id": (
            good.sign(claims(sub="0b5e4d3c-2a19-4f8e-9d7c-6b5a49382716")),
            Reason.BAD_CLAIM,
        ),
        "not a jwt": ("abc.def", Reason.MALFORMED),
        "garbage": ("a.b.c", Reason.MALFORMED),
        "too long": (good.sign(claims(pad="x" * 2000)), Reason.MALFORMED),
    }
    got = {what: await refused(tokens, token) for what, (token, _) in cases.items()}
    assert got == {what: reason for what, (_, reason) in cases.items()}
    # Within the clock skew, still good.
    assert (await tokens.verify(good.sign(claims(ttl_s=-5)))).player_id == "alice"


@pytest.mark.asyncio
async def test_claims_are_configurable(keys: dict[str, SigningKey], verifier: Verifier) -> None:
    rules = OperatorTokenRules(
        issuer=ISSUER,
        audience=AUDIENCE,
        player_claim="uid",
        name_claim="nick",
        roles_claim="scope",
    )
    tokens = verifier(rules)
    token = keys["rsa"].sign(
        claims(
            sub="someone-else",
            uid="p_42",
            nick="  A very long display name, cut at 32  ",
            scope="read admin",
        )
    )
    identity = await tokens.verify(token)
    assert identity.player_id == "p_42"
    assert identity.name == "A very long display name, cut at"
    assert identity.roles == frozenset({"read", "admin"})
    # No name claim: no name; roles absent: none.
    bare = await tokens.verify(keys["rsa"].sign(claims(uid="p_43", name="ignored")))
    assert (bare.name, bare.roles) == (None, frozenset())


def test_unsafe_algorithms_cannot_be_configured() -> None:
    for algorithms in ({"HS256"}, {"none"}, {"RS256", "HS512"}, set()):
        with pytest.raises(ValueError, match="operator tokens may use only"):
            OperatorTokenRules(ISSUER, AUDIENCE, algorithms=frozenset(algorithms))
    with pytest.raises(ValueError, match="an issuer and an audience"):
        OperatorTokenRules("", AUDIENCE)


@pytest.mark.asyncio
async def test_an_algorithm_not_configured_is_refused(
    operator: JwksServer, keys: dict[str, SigningKey], verifier: Verifier
) -> None:
    operator.keys = [keys["rsa"], keys["ed"]]
    tokens = verifier(OperatorTokenRules(ISSUER, AUDIENCE, algorithms=frozenset({"RS256"})))
    assert await refused(tokens, keys["ed"].sign(claims())) is Reason.ALGORITHM
    assert (await tokens.verify(keys["rsa"].sign(claims()))).player_id == "alice"


@pytest.mark.asyncio
async def test_a_rotated_key_is_fetched_when_a_token_names_it(
    operator: JwksServer, keys: dict[str, SigningKey], verifier: Verifier
) -> None:
    clock = Clock()
    tokens = verifier(min_refresh_s=10, clock=clock)
    old_token = keys["rsa"].sign(claims())
    assert (await tokens.verify(old_token)).player_id == "alice"
    assert operator.requests == 1
    # The operator rotates: a new key, the old one removed.
    operator.keys = [keys["ec"]]
    new_token = keys["ec"].sign(claims("bob"))
    # Read again at most once an interval: within it, the new kid is unknown.
    assert await refused(tokens, new_token) is Reason.UNKNOWN_KEY
    assert operator.requests == 1
    clock.now += 10
    assert (await tokens.verify(new_token)).player_id == "bob"
    assert operator.requests == 2
    # The old key is gone from the set, and so are its tokens.
    clock.now += 10
    assert await refused(tokens, old_token) is Reason.UNKNOWN_KEY
    assert operator.requests == 3


@pytest.mark.asyncio
async def test_a_flood_of_unknown_kids_reads_the_keys_once_an_interval(
    operator: JwksServer, keys: dict[str, SigningKey], verifier: Verifier
) -> None:
    clock = Clock()
    tokens = verifier(min_refresh_s=10, clock=clock)
    await tokens.verify(keys["rsa"].sign(claims()))
    clock.now += 10
    strangers = [rsa_key("k-stranger").sign(claims(), kid=f"k-{i}") for i in range(3)]
    for round_ in range(100):
        assert await refused(tokens, strangers[round_ % 3]) is Reason.UNKNOWN_KEY
    assert operator.requests == 2  # the first read, and one for the whole flood
    # Many at once: one read between them.
    clock.now += 10
    reasons = await asyncio.gather(*(refused(tokens, t) for t in strangers * 20))
    assert set(reasons) == {Reason.UNKNOWN_KEY}
    assert operator.requests == 3


@pytest.mark.asyncio
async def test_the_keys_are_read_again_when_old_and_kept_when_the_operator_is_down(
    operator: JwksServer, keys: dict[str, SigningKey], verifier: Verifier
) -> None:
    clock = Clock()
    tokens = verifier(max_age_s=60, min_refresh_s=10, clock=clock)
    token = keys["rsa"].sign(claims())
    await tokens.verify(token)
    clock.now += 59
    await tokens.verify(token)
    assert operator.requests == 1
    clock.now += 1
    await tokens.verify(token)
    assert operator.requests == 2
    # Down: the keys held still serve, and the operator is asked once an interval.
    operator.failing = True
    clock.now += 60
    for _ in range(20):
        assert (await tokens.verify(token)).player_id == "alice"
    assert operator.requests == 3


@pytest.mark.asyncio
async def test_no_keys_ever_read_refuses_every_token(
    operator: JwksServer, keys: dict[str, SigningKey], verifier: Verifier
) -> None:
    operator.failing = True
    tokens = verifier()
    assert await refused(tokens, keys["rsa"].sign(claims())) is Reason.KEYS_UNAVAILABLE


@pytest.mark.asyncio
async def test_keys_from_a_file(tmp_path: Path, keys: dict[str, SigningKey]) -> None:
    path = tmp_path / "jwks.json"
    path.write_text(json.dumps(jwks(keys["ed"])))
    clock = Clock()
    tokens = OperatorTokens(RULES, FileKeySet(path, min_refresh_s=10, clock=clock))
    assert (await tokens.verify(keys["ed"].sign(claims()))).player_id == "alice"
    # The operator replaces the file: picked up when a token names the new key.
    path.write_text(json.dumps(jwks(keys["ed"], keys["ec"])))
    clock.now += 10
    assert (await tokens.verify(keys["ec"].sign(claims("carol")))).player_id == "carol"
    await tokens.keys.close()


def test_only_public_signing_keys_are_kept(keys: dict[str, SigningKey]) -> None:
    document = jwks(keys["rsa"], keys["ec"])
    document["keys"][1]["use"] = "enc"
    document["keys"].append({"kty": "oct", "kid": "k-secret", "k": "c2VjcmV0"})
    document["keys"].append({"kty": "RSA", "kid": "k-broken"})
    assert set(parse_jwks(document)) == {"k-rsa"}
    bad: object
    for bad in ({}, {"keys": "no"}, {"keys": [{"kty": "oct", "k": "c2VjcmV0"}]}, []):
        with pytest.raises(JwksUnavailable):
            parse_jwks(bad)
