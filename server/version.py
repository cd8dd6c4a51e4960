"""The server's version: the installed package's, so that it is written in one place
(``pyproject.toml``)."""

from __future__ import annotations

from importlib.metadata import PackageNotFoundError, version

try:
    SERVER_VERSION = version("paigow-server")
except PackageNotFoundError:  # run from a source tree that was never installed
    SERVER_VERSION = "0+unknown"
