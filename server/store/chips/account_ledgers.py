"""What the stores whose scripts write the accounts' ledgers share: a client that
returns bytes, the key names, and the cap of each ledger stream."""

from __future__ import annotations

import redis.asyncio

from server.store.errors import require_bytes_client
from server.store.keys import DEFAULT_KEYS, Keys

DEFAULT_LEDGER_MAXLEN = 1_000_000
"""As the tables' (:mod:`server.store.tables.store`): about 100 MB of Redis memory."""


class AccountLedgerStore:
    """A store writing account ledger entries: its client (bytes, checked), ``keys``,
    and ``ledger_maxlen``, the length each ledger stream is trimmed to. A subclass
    loads its scripts in :meth:`register_scripts`, called once by ``__init__``."""

    def __init__(
        self,
        client: redis.asyncio.Redis,
        *,
        keys: Keys = DEFAULT_KEYS,
        ledger_maxlen: int = DEFAULT_LEDGER_MAXLEN,
    ) -> None:
        require_bytes_client(client)
        self.redis = client
        self.keys = keys
        self.ledger_maxlen = ledger_maxlen
        self.register_scripts(client)

    def register_scripts(self, client: redis.asyncio.Redis) -> None:
        """Load the store's Lua scripts on ``client`` (none here)."""
