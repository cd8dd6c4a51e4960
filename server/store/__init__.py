"""The Redis store: key names, the embedded Redis, tables, accounts and the audit.

Everything that touches Redis for the product lives here; see :mod:`server.store.keys`
for the layout. The stores take a ``redis.asyncio.Redis`` client that returns bytes.
"""

from server.store.audit.check import AuditReport, TableMoney, audit
from server.store.embedded.process import EmbeddedRedis, EmbeddedRedisError, find_redis_server
from server.store.keys import DEFAULT_KEYS, Keys
from server.store.players.accounts import AccountStore, CreditResult
from server.store.tables.store import (
    CommitResult,
    CommitStatus,
    HistoryPage,
    StoredTable,
    StoreError,
    TableStore,
    decode_published,
    encode_published,
)

__all__ = [
    "DEFAULT_KEYS",
    "AccountStore",
    "AuditReport",
    "CommitResult",
    "CommitStatus",
    "CreditResult",
    "EmbeddedRedis",
    "EmbeddedRedisError",
    "HistoryPage",
    "Keys",
    "StoreError",
    "StoredTable",
    "TableMoney",
    "TableStore",
    "audit",
    "decode_published",
    "encode_published",
    "find_redis_server",
]
