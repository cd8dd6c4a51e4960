"""The archive's tables, the same in SQLite and PostgreSQL but for the binary type.

======================  ======================================================================
table                   holds
======================  ======================================================================
``ledger``              every archived ledger entry; primary key (stream, ms, seq): its Redis
                        entry id, so an entry copied twice is stored once; indexed by
                        stream and key
``game_logs``           every archived game log (a protocol ``RoundRecord``); primary key
                        (player, ordinal)
``checkpoints``         per ledger stream: the sum of its entries up to an id
                        (:class:`~server.store.archiving.records.StreamCheckpoint`: the id,
                        the count, the pots' totals as JSON, whether it started from the
                        owner's totals)
``duplicates``          ledger entries whose key an earlier entry of the same stream had
                        (found while archiving): the audit reports them
``log_players``         players whose game logs in Redis may have records to archive
``log_cursor``          per ledger stream, the last entry whose player was noted there
``jackpot_ledger``      every archived entry of a progressive jackpot's ledger; primary key
                        (jackpot, ms, seq): its Redis entry id (since version 3)
``jackpot_checkpoints`` per jackpot: the sum of its archived entries up to an id, by the
                        meter's totals
                        (:class:`~server.store.archiving.records.JackpotCheckpoint`)
``meta``                ``schema``: the version of these tables
======================  ======================================================================
"""

from __future__ import annotations

SCHEMA_VERSION = 3
"""1 had one checkpoint for the whole product (before the ledger was split by owner);
3 added the jackpots' ledgers (:data:`JACKPOT_TABLES`)."""

_TABLES = """
CREATE TABLE IF NOT EXISTS meta (
    name TEXT PRIMARY KEY,
    value TEXT NOT NULL
);
CREATE TABLE IF NOT EXISTS ledger (
    stream TEXT NOT NULL,
    ms BIGINT NOT NULL,
    seq BIGINT NOT NULL,
    entry_key TEXT NOT NULL,
    kind TEXT NOT NULL,
    player TEXT NOT NULL,
    amount BIGINT NOT NULL,
    source TEXT NOT NULL,
    dest TEXT NOT NULL,
    table_id TEXT NOT NULL,
    extra TEXT NOT NULL,
    PRIMARY KEY (stream, ms, seq)
);
CREATE INDEX IF NOT EXISTS ledger_stream_key ON ledger (stream, entry_key);
CREATE INDEX IF NOT EXISTS ledger_player ON ledger (player);
CREATE TABLE IF NOT EXISTS game_logs (
    player TEXT NOT NULL,
    ordinal BIGINT NOT NULL,
    table_id TEXT NOT NULL,
    ended_ms BIGINT NOT NULL,
    record {blob} NOT NULL,
    PRIMARY KEY (player, ordinal)
);
CREATE TABLE IF NOT EXISTS checkpoints (
    stream TEXT PRIMARY KEY,
    ms BIGINT NOT NULL,
    seq BIGINT NOT NULL,
    entries BIGINT NOT NULL,
    totals TEXT NOT NULL,
    baseline_ms BIGINT,
    made_ms BIGINT NOT NULL
);
CREATE TABLE IF NOT EXISTS duplicates (
    stream TEXT NOT NULL,
    ms BIGINT NOT NULL,
    seq BIGINT NOT NULL,
    entry_key TEXT NOT NULL,
    PRIMARY KEY (stream, ms, seq)
);
CREATE TABLE IF NOT EXISTS log_players (
    player TEXT PRIMARY KEY
);
CREATE TABLE IF NOT EXISTS log_cursor (
    stream TEXT PRIMARY KEY,
    ms BIGINT NOT NULL,
    seq BIGINT NOT NULL
);
"""

JACKPOT_TABLES = """
CREATE TABLE IF NOT EXISTS jackpot_ledger (
    jackpot TEXT NOT NULL,
    ms BIGINT NOT NULL,
    seq BIGINT NOT NULL,
    entry_key TEXT NOT NULL,
    kind TEXT NOT NULL,
    player TEXT NOT NULL,
    amount BIGINT NOT NULL,
    source TEXT NOT NULL,
    dest TEXT NOT NULL,
    table_id TEXT NOT NULL,
    extra TEXT NOT NULL,
    PRIMARY KEY (jackpot, ms, seq)
);
CREATE TABLE IF NOT EXISTS jackpot_checkpoints (
    jackpot TEXT PRIMARY KEY,
    ms BIGINT NOT NULL,
    seq BIGINT NOT NULL,
    entries BIGINT NOT NULL,
    seeded BIGINT NOT NULL,
    contributed BIGINT NOT NULL,
    paid BIGINT NOT NULL,
    unknown BIGINT NOT NULL,
    baseline_ms BIGINT,
    made_ms BIGINT NOT NULL
);
"""
"""The tables of the jackpots' ledgers (version 3, migration 3)."""


def _split(text: str) -> list[str]:
    return [s.strip() for s in text.split(";") if s.strip()]


def jackpot_statements(blob: str) -> list[str]:
    """The statements that create the jackpots' tables (migration 3)."""
    del blob
    return _split(JACKPOT_TABLES)


def statements(blob: str) -> list[str]:
    """The statements that create every table (each one does nothing if it exists),
    with ``blob`` the dialect's binary type."""
    return [*_split(_TABLES.format(blob=blob)), *jackpot_statements(blob)]
