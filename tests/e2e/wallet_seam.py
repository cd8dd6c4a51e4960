"""``python -m tests.e2e.wallet_seam ARGS``: the server (``paigow-server ARGS``) that
kills itself with SIGKILL right after the wallet answers a debit, before the debit's
intent is applied in Redis. The seam is set here only: the server never sets it, and
this module ships with the tests, not with the server."""

from __future__ import annotations

import os
import signal
import sys

from server import cli
from server.wallet import funding


def _die() -> None:
    os.kill(os.getpid(), signal.SIGKILL)


if __name__ == "__main__":
    funding.after_debit_answer = _die
    sys.exit(cli.main(sys.argv[1:]))
