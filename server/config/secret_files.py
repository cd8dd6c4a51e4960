"""Secrets read from files: a setting that carries one is also read from the file its
variable names with ``_FILE`` appended."""

from __future__ import annotations

import argparse
from pathlib import Path

# The settings that carry a secret (a key, or a URL with a password in it). Each is also
# read from a file named by its variable with _FILE appended (PAIGOW_TOKEN_SECRET_FILE),
# as Kubernetes and Docker mount secrets: never in the process's environment, nor in
# `ps`. Setting both the variable and its _FILE is an error.
SECRET_SETTINGS = frozenset({"token_secret", "redis_url", "archive_url", "wallet_secret"})
FILE_SUFFIX = "_FILE"


def read_secret_file(env: str, path: str) -> str:
    """The secret held in ``path`` (named by the variable ``env``): its text without
    the line ending an editor adds; raises ``argparse.ArgumentTypeError`` when it cannot
    be read or is empty."""
    try:
        text = Path(path).read_text(encoding="utf-8").rstrip("\r\n")
    except (OSError, UnicodeDecodeError) as exc:
        raise argparse.ArgumentTypeError(f"{env}{FILE_SUFFIX}: cannot read {path}: {exc}") from None
    if not text:
        raise argparse.ArgumentTypeError(f"{env}{FILE_SUFFIX}: {path} is empty")
    return text
