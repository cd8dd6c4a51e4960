"""A node's name and its token-signing secret, both settled before anything starts."""

from __future__ import annotations

import os
import re
import secrets

from server.config import Settings

SECRET_FILE = "token-secret"
NODE_NAME = re.compile(r"[A-Za-z0-9._-]{1,64}")
"""What a node's name may be (``--node-name``)."""


def token_secret(settings: Settings) -> bytes:
    """The token-signing secret: the configured one, else one kept in the data folder."""
    if settings.token_secret:
        return settings.token_secret.encode()
    path = settings.data_dir / SECRET_FILE
    if not path.exists():
        settings.data_dir.mkdir(parents=True, exist_ok=True)
        fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
        with os.fdopen(fd, "w") as f:
            f.write(secrets.token_hex(32))
    return path.read_text().strip().encode()


def default_node_name(settings: Settings) -> str:
    """``<host name>-<port>`` (the process id when the port is any free one)."""
    return f"{os.uname().nodename}-{settings.port or os.getpid()}"
