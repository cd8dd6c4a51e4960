"""The Lua scripts of a table, every key in the table's slot: its lease, its commit,
its game logs' history, its transfers to and from accounts, and the audit's snapshot of
its money. ``KEY_RENEW`` and ``KEY_RELEASE`` keep a lease of one key with no fence (the
archiver's). The rules every script follows are :mod:`server.store.lua`'s."""

from __future__ import annotations

from server.store.lua import load

LEASE_ACQUIRE = load("tables/lease_acquire")
LEASE_RENEW = load("tables/lease_renew")
LEASE_RELEASE = load("tables/lease_release")
KEY_RENEW = load("tables/key_renew")
KEY_RELEASE = load("tables/key_release")
COMMIT = load("tables/commit")
HISTORY = load("tables/history")
TRANSFERS_OPEN = load("tables/transfers_open")
TRANSFERS_VOID = load("tables/transfers_void")
TRANSFERS_FORGET = load("tables/transfers_forget")
TABLE_SNAPSHOT = load("tables/snapshot")
