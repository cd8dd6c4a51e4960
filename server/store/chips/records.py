"""What travels between a table and the accounts, as records: chips from an account
(:class:`Incoming`), chips or a game log to one (:class:`Delivery`), the game logs of a
commit packed together (:func:`pack_logs`), and the ids and times they carry; and the
client request a commit carries (:class:`ClientRequest`) with its record
(:class:`RequestRecord`), which the account's side reads too. The steps that move them
are :mod:`server.store.chips.transfers`'."""

from __future__ import annotations

import time
import zlib
from collections.abc import Sequence
from dataclasses import dataclass

import msgpack

from server.store.client.replies import as_bytes, as_int, as_str

LOG = "log"
"""The kind of a :class:`Delivery` that carries a game log, not chips."""


def now_ms() -> int:
    """Epoch milliseconds (when a transfer was opened, for people reading Redis)."""
    return time.time_ns() // 1_000_000


@dataclass(frozen=True, slots=True)
class Incoming:
    """``amount`` chips of ``player``'s account going to the table, for the table's
    ledger entry ``key`` of ``kind`` (``buy_in``, ``rebuy``)."""

    transfer_id: str
    player: str
    amount: int
    kind: str
    key: str = ""

    def record(self, state: str, ms: int) -> str:
        """The transfer's record in the table's slot."""
        return f"{state}:{self.player}:{self.amount}:{ms}:{self.kind}"


def read_incoming(transfer_id: str, raw: bytes | str) -> tuple[str, Incoming]:
    """``(state, transfer)`` of a record of the table's ``in`` hash."""
    state, player, amount, _, kind = as_str(raw).split(":", 4)
    return state, Incoming(transfer_id, player, int(amount), kind)


@dataclass(frozen=True, slots=True)
class Delivery:
    """What a table sends ``player``: ``amount`` chips of ``kind`` for its ledger entry
    ``key``, or (``kind`` :data:`LOG`) a game log ``record``."""

    transfer_id: str
    player: str
    kind: str
    amount: int = 0
    key: str = ""
    record: bytes = b""

    @property
    def is_log(self) -> bool:
        """Whether this carries a game log, not chips."""
        return self.kind == LOG

    def pack(self) -> bytes:
        """The delivery as the table's slot keeps it until delivered."""
        packed: bytes = msgpack.packb(
            [self.player, self.kind, self.amount, self.key, self.record], use_bin_type=True
        )
        return packed


def read_delivery(transfer_id: str, raw: bytes | str) -> Delivery:
    """The inverse of :meth:`Delivery.pack`."""
    player, kind, amount, key, record = msgpack.unpackb(as_bytes(raw), raw=False)
    return Delivery(transfer_id, player, kind, amount, key, record)


_LOGS = b"z"
"""The first byte of an entry of :func:`pack_logs` (a packed delivery starts with a
msgpack array's)."""


def pack_logs(items: Sequence[Delivery]) -> bytes:
    """The game logs of one commit as one entry of the table's slot, until delivered:
    the 6 logs of a round repeat the table, the round, its seed, commitment and the
    dealer's hand, and come to a fifth of their size compressed together."""
    packed = msgpack.packb([[d.transfer_id, d.pack()] for d in items], use_bin_type=True)
    return _LOGS + zlib.compress(packed)


def read_logs(name: str, raw: bytes | str) -> list[Delivery]:
    """The deliveries of an entry of the table's ``logs`` hash named ``name``: of
    :func:`pack_logs`, or one delivery, as earlier versions kept each log (under its
    transfer id)."""
    blob = as_bytes(raw)
    if not blob.startswith(_LOGS):
        return [read_delivery(name, blob)]
    items = msgpack.unpackb(zlib.decompress(blob[len(_LOGS) :]), raw=False)
    return [read_delivery(transfer_id, packed) for transfer_id, packed in items]


@dataclass(frozen=True, slots=True)
class ClientRequest:
    """The client request a commit carries: ``player``'s request ``rid``.

    Rids are chosen by clients, so they are unique per player at best (the server
    passes one scoped by session): the record is keyed by both. ``fingerprint`` (not
    empty) says what was asked, so that a repeat can be told from another request
    reusing the rid; ``memo`` is what the reply needs besides the player's account
    balance (opaque to the store).
    """

    player: str
    rid: str
    fingerprint: bytes
    memo: bytes = b""


@dataclass(frozen=True, slots=True)
class RequestRecord:
    """A request as recorded by the commit that applied it: its ``fingerprint`` and
    ``memo``, ``account`` (the player's balance right after that commit; None when
    only the account knew it: then ``payout`` names the transfer that paid the player
    out, whose marker holds it) and the commit's ``table_id`` and ``version``."""

    fingerprint: bytes
    memo: bytes
    account: int | None
    table_id: str
    version: int
    payout: str = ""


def read_record(table_id: str, fields: Sequence[object]) -> RequestRecord | None:
    """The record in ``fields`` (fingerprint, memo, account, payout, version as the
    scripts and :meth:`~server.store.tables.applied.Requests.record` read them), or
    None without a fingerprint."""
    fingerprint, memo, account, payout, version = fields
    if fingerprint is None or fingerprint is False:
        return None
    account_text = as_str(account) if isinstance(account, bytes | str) else ""
    return RequestRecord(
        fingerprint=as_bytes(fingerprint),  # type: ignore[arg-type]
        memo=as_bytes(memo) if isinstance(memo, bytes | str) else b"",
        account=int(account_text) if account_text else None,
        table_id=table_id,
        version=as_int(version),
        payout=as_str(payout) if isinstance(payout, bytes | str) else "",
    )
