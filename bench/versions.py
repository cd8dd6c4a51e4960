"""Which Redis the benchmarks' servers run: the binary the embedded Redis starts
(:func:`server.store.embedded.find_redis_server`), named as it names itself."""

from __future__ import annotations

import re
import subprocess

from server.store.embedded import EmbeddedRedisError, find_redis_server


def embedded_redis() -> str:
    """``Valkey 9.1.2`` or ``Redis 6.2.14`` (its ``--version``), or ``unknown``."""
    try:
        binary = find_redis_server()
        out = subprocess.run(
            [binary, "--version"], capture_output=True, text=True, check=False, timeout=10
        ).stdout
    except (EmbeddedRedisError, OSError, subprocess.SubprocessError):
        return "unknown"
    match = re.search(r"^(\w+) server v=(\S+)", out)
    return f"{match.group(1)} {match.group(2)}" if match else "unknown"
