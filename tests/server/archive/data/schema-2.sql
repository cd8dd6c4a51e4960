-- The archive's tables as release 0.1.0 created them (schema version 2), {blob} standing
-- for the binary type (BLOB, BYTEA); and its meta row.
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
INSERT INTO meta (name, value) VALUES ('schema', '2');
