"""The Redis store: the one way in for the rest of the server.

Everything that touches Redis lives in this package, and the rest of the server
imports only this module (an import-linter contract in pyproject.toml says so): the
stores a process needs are opened by one call from the settings
(:func:`open_stores` for the server, :func:`open_command_stores` for an operator's
command), and every store's calls raise the store's own errors
(:class:`StoreUnavailable` where Redis or the socket failed), never Redis's.

Its rooms, by job: ``client`` (connections, the group commit), ``embedded`` (the
embedded Redis and its supervisor), ``lua`` (the scripts), ``players`` (accounts,
sessions, guests), ``tables`` (commits, parts, leases, replay, requests), ``chips``
(transfers and ledgers between them), ``nodes`` (what nodes share), ``pubsub`` (the
channels they listen to), ``archiving`` (the archive's Redis side), ``audit``,
``operators`` (the operator API's admin tokens),
``catalog`` (which tables exist: created, changed and closed at runtime);
``keys`` names every key (see it for the layout), ``errors`` the errors, ``opening``
the front door itself.
"""

from server.store.archiving.lease import lease_ms
from server.store.archiving.records import (
    CREDITED,
    REMOVED,
    ZERO_ID,
    AuditView,
    JackpotCheckpoint,
    LedgerRow,
    LogRow,
    StreamCheckpoint,
    StreamId,
    parse_id,
)
from server.store.archiving.source import ArchivingCalls, LedgerStart
from server.store.audit.check import TableMoney
from server.store.audit.report import AuditReport
from server.store.audit.wallet import wallet_audit
from server.store.catalog.catalog import (
    Catalog,
    CatalogRefusal,
    CatalogRefused,
    CatalogTable,
    TableCatalog,
    TableStatus,
)
from server.store.chips.ledgers import LedgerSource
from server.store.chips.records import ClientRequest, RequestRecord
from server.store.chips.transfers import Recovered, Transfers
from server.store.chips.wallet import (
    Intent,
    OpenIntent,
    WalletStore,
    WalletTxn,
    credit_prefix,
    debit_base,
)
from server.store.embedded.process import EmbeddedRedisError
from server.store.errors import (
    StoreError,
    StoreFailure,
    StoreUnavailable,
    Unreplicated,
    WritesRefused,
)
from server.store.jackpot.meters import (
    Contribution,
    Hit,
    JackpotStore,
    Meter,
    PendingHit,
    contribution_key,
    hit_key,
)
from server.store.nodes.formats import FORMATS, FormatsAhead, announcement
from server.store.nodes.shared import ClusterStore, LiveNodes
from server.store.opening import NotTheServers, Stores, open_command_stores, open_stores
from server.store.operators.tokens import AdminTokenRecord, AdminTokens
from server.store.players.accounts import (
    MAX_REASON,
    AccountStore,
    LedgerEntry,
    Move,
    Moved,
    MoveRefused,
    Refusal,
    check_operator_key,
)
from server.store.players.guests import MINUTE_MS, Admission, Closing, GuestLimits
from server.store.players.sessions import Session, SessionStore
from server.store.pubsub.channel import ChannelListener
from server.store.pubsub.relay import Relay
from server.store.tables.commit_args import CommitResult, CommitStatus
from server.store.tables.leases import Leases
from server.store.tables.leftovers import Leftovers
from server.store.tables.parts import stored_state
from server.store.tables.replay import Replay
from server.store.tables.store import (
    DEFAULT_LOG_CAP,
    Change,
    StoredTable,
    TableStore,
    stored_table,
)

__all__ = [
    "CREDITED",
    "DEFAULT_LOG_CAP",
    "FORMATS",
    "MAX_REASON",
    "MINUTE_MS",
    "REMOVED",
    "ZERO_ID",
    "AccountStore",
    "AdminTokenRecord",
    "AdminTokens",
    "Admission",
    "ArchivingCalls",
    "AuditReport",
    "AuditView",
    "Catalog",
    "CatalogRefusal",
    "CatalogRefused",
    "CatalogTable",
    "Change",
    "ChannelListener",
    "ClientRequest",
    "Closing",
    "ClusterStore",
    "CommitResult",
    "CommitStatus",
    "Contribution",
    "EmbeddedRedisError",
    "FormatsAhead",
    "GuestLimits",
    "Hit",
    "Intent",
    "JackpotCheckpoint",
    "JackpotStore",
    "Leases",
    "LedgerEntry",
    "LedgerRow",
    "LedgerSource",
    "LedgerStart",
    "Leftovers",
    "LiveNodes",
    "LogRow",
    "Meter",
    "Move",
    "MoveRefused",
    "Moved",
    "NotTheServers",
    "OpenIntent",
    "PendingHit",
    "Recovered",
    "Refusal",
    "Relay",
    "Replay",
    "RequestRecord",
    "Session",
    "SessionStore",
    "StoreError",
    "StoreFailure",
    "StoreUnavailable",
    "StoredTable",
    "Stores",
    "StreamCheckpoint",
    "StreamId",
    "TableCatalog",
    "TableMoney",
    "TableStatus",
    "TableStore",
    "Transfers",
    "Unreplicated",
    "WalletStore",
    "WalletTxn",
    "WritesRefused",
    "announcement",
    "check_operator_key",
    "contribution_key",
    "credit_prefix",
    "debit_base",
    "hit_key",
    "lease_ms",
    "open_command_stores",
    "open_stores",
    "parse_id",
    "stored_state",
    "stored_table",
    "wallet_audit",
]
