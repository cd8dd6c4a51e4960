"""Which Redis a benchmark's servers ran: the one they used, asked (``INFO server``),
not the binary this process would pick (another checkout's server, with
``PAIGOW_BENCH_SERVER_ROOT``, or another environment may start another)."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import redis


def named(info: Mapping[str, Any]) -> str:
    """``Valkey 9.1.2`` or ``Redis 7.0.15``, from a server's ``INFO server``."""
    if "valkey_version" in info:
        return f"Valkey {info['valkey_version']}"
    return f"Redis {info.get('redis_version', 'unknown')}"


def running(url: str) -> str:
    """:func:`named` of the Redis at ``url``, or ``unknown Redis`` if it does not answer."""
    try:
        with redis.Redis.from_url(url, socket_timeout=5) as client:
            info: Mapping[str, Any] = client.info("server")
    except (redis.RedisError, OSError):
        return "unknown Redis"
    return named(info)
