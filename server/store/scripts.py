"""The Lua scripts of the store, as module-level strings (so they ship inside the
package with no data-file configuration).

Each script receives every key it touches in ``KEYS`` (names come from
:mod:`server.store.keys`; a script never builds one) and runs atomically. A script
that may refuse does all its checks before its first write: Redis does not roll back
a script that fails half-way, so "nothing written" must hold by construction.

Numbers cross into Lua as doubles: every chip amount, version and token stays below
2**53 (the Python side checks amounts), and numbers are formatted with ``%d`` before
being concatenated into strings, because Lua's ``tostring`` keeps only 14 digits.
"""

from __future__ import annotations

LEASE_ACQUIRE = """
-- KEYS[1] lease, KEYS[2] fencing counter; ARGV[1] owner, ARGV[2] ttl ms.
-- Only a free table is taken: the counter grows only for a real new owner.
if redis.call('EXISTS', KEYS[1]) == 1 then
  return false
end
local token = redis.call('INCR', KEYS[2])
redis.call('SET', KEYS[1], string.format('%d', token) .. ':' .. ARGV[1], 'PX', ARGV[2])
return token
"""

LEASE_RENEW = """
-- KEYS[i] the lease of table i, ARGV[i] its '<token>:<owner>'; ARGV[#KEYS + 1] ttl ms.
-- One call renews every lease of a process: a list, 1 where the lease was still ours
-- (and is extended), 0 where it was not.
local ttl = ARGV[#KEYS + 1]
local out = {}
for i = 1, #KEYS do
  if redis.call('GET', KEYS[i]) == ARGV[i] then
    redis.call('PEXPIRE', KEYS[i], ttl)
    out[i] = 1
  else
    out[i] = 0
  end
end
return out
"""

LEASE_RELEASE = """
-- KEYS[1] lease; ARGV[1] '<token>:<owner>'. Deletes only our own lease.
if redis.call('GET', KEYS[1]) == ARGV[1] then
  redis.call('DEL', KEYS[1])
  return 1
end
return 0
"""

COMMIT = """
-- One state change of a table, all or nothing.
-- KEYS: 1 lease, 2 table hash, 3 events stream, 4 applied bucket (current),
--       5 applied bucket (previous), 6 applied bucket (two back, deleted),
--       7 ledger stream, 8 money hash, 9 tables set, 10 accounts set,
--       then one account hash per distinct player with an account entry (and the
--       requester's, when there is a request), then one game-log list per log
--       record, then the request record (when there is a request).
-- ARGV: 1 token, 2 expected version, 3 new version, 4 #parts, 5 table id,
--       6 events cap, 7 ledger maxlen, 8 log cap, 9 channel ('' = none),
--       10 applied ttl ms, 11 #accounts, 12 #entries, 13 #events, 14 #logs,
--       15 request fingerprint ('' = no request), 16 request memo, 17 request ttl
--       ms, 18 requester's account index, 19 commit id (names this commit: a
--       retry of it carries the same),
--       then the account players, then 7 per entry (key kind player amount source
--       dest account-index, 0 when no side is 'account'), then 2 per event (seq
--       payload), then 1 per log (record), then 2 per part of the state (field of
--       the table hash, value): the parts this commit changes, at least one.
-- Replies: {'OK', applied, skipped, balance per account} (balances after the commit,
-- in the order of the account players); {'DUPLICATE', stored version, balance per
-- account} (as they are now); {'REPEATED', fingerprint, memo, account, table,
-- version} (the request was already applied, by the commit recorded there); or a
-- refusal ({'STALE_LEASE', token}, ...).
local n_acc = tonumber(ARGV[11])
local n_ent = tonumber(ARGV[12])
local n_evt = tonumber(ARGV[13])
local n_log = tonumber(ARGV[14])
local has_request = ARGV[15] ~= ''
local request_key = KEYS[10 + n_acc + n_log + 1]
local acc_base = 19
local ent_base = acc_base + n_acc
local evt_base = ent_base + 7 * n_ent
local log_base = evt_base + 2 * n_evt
local n_part = tonumber(ARGV[4])
local part_base = log_base + n_log
local new_version = tonumber(ARGV[3])

-- Whether this very commit is stored already (a retry after a lost reply): its
-- version, by this writer, under its id. Comparing its parts instead would take
-- another commit of that version whose parts happen to match for this one.
local function stored_already(stored_v)
  if stored_v ~= new_version then
    return false
  end
  local mine = redis.call('HMGET', KEYS[2], 'tok', 'cid')
  return mine[1] == ARGV[1] and mine[2] == ARGV[19]
end

-- 1. Checks; no write before the last of them.
local stored_v = tonumber(redis.call('HGET', KEYS[2], 'v') or '0')
-- The very same commit already stored (a retry after a lost reply): say so.
if stored_already(stored_v) then
  local reply = {'DUPLICATE', stored_v}
  for a = 1, n_acc do
    reply[2 + a] = tonumber(redis.call('HGET', KEYS[10 + a], 'balance') or '0')
  end
  return reply
end
local lease = redis.call('GET', KEYS[1])
if not lease then
  return {'STALE_LEASE', ''}
end
local lease_token = string.match(lease, '^(%d+):')
if lease_token ~= ARGV[1] then
  return {'STALE_LEASE', lease_token or ''}
end
if stored_v ~= tonumber(ARGV[2]) then
  return {'STALE_VERSION', stored_v}
end
local last_seq = tonumber(redis.call('HGET', KEYS[2], 'seq') or '0')
if n_evt > 0 then
  local first = tonumber(ARGV[evt_base + 1])
  local top = redis.call('XREVRANGE', KEYS[3], '+', '-', 'COUNT', 1)[1]
  local top_seq = top and tonumber(string.match(top[1], '^(%d+)')) or 0
  -- Sequence numbers follow each other without gaps (events_since relies on it),
  -- and XADD would fail half-way on an id not above the stream's top.
  if first ~= last_seq + 1 or top_seq >= first then
    return {'BAD_SEQ', last_seq}
  end
  last_seq = tonumber(ARGV[evt_base + 2 * (n_evt - 1) + 1])
end
-- A client's money request applies once per (player, key): a repeat (a retry after a
-- lost reply, or the same request sent twice) changes nothing, whatever it
-- would do now (even what the account could no longer afford), and gets what the
-- first one was told.
if has_request then
  local done = redis.call('HMGET', request_key, 'f', 'm', 'a', 't', 'v')
  if done[1] then
    return {'REPEATED', done[1], done[2] or '', tonumber(done[3] or '0'), done[4] or '',
      tonumber(done[5] or '0')}
  end
end

-- Entries not yet applied (by an earlier commit, or earlier in this one).
local fresh = {}
local seen = {}
local delta = {}
for a = 1, n_acc do delta[a] = 0 end
for i = 0, n_ent - 1 do
  local b = ent_base + 7 * i
  local key = ARGV[b + 1]
  if not seen[key]
      and redis.call('HEXISTS', KEYS[4], key) == 0
      and redis.call('HEXISTS', KEYS[5], key) == 0 then
    fresh[#fresh + 1] = b
    local a = tonumber(ARGV[b + 7])
    if a > 0 then
      local amount = tonumber(ARGV[b + 4])
      if ARGV[b + 5] == 'account' then
        delta[a] = delta[a] - amount
      else
        delta[a] = delta[a] + amount
      end
    end
  end
  seen[key] = true
end
-- The net change per account must not overdraw it (the commit is one step, so
-- only its end result counts).
for a = 1, n_acc do
  if delta[a] < 0 then
    local balance = tonumber(redis.call('HGET', KEYS[10 + a], 'balance') or '0')
    if balance + delta[a] < 0 then
      return {'INSUFFICIENT', ARGV[acc_base + a], balance, -delta[a]}
    end
  end
end

-- 2. Writes.
-- Each account's balance once this commit is applied: the caller's reply states it,
-- and a balance read before the commit may be stale by then (other tables, credits).
local balances = {}
for a = 1, n_acc do
  if delta[a] ~= 0 then
    balances[a] = redis.call('HINCRBY', KEYS[10 + a], 'balance', delta[a])
    redis.call('SADD', KEYS[10], ARGV[acc_base + a])
  else
    balances[a] = tonumber(redis.call('HGET', KEYS[10 + a], 'balance') or '0')
  end
end
for _, b in ipairs(fresh) do
  local id = redis.call('XADD', KEYS[7], 'MAXLEN', '~', ARGV[7], '*',
    'key', ARGV[b + 1], 'kind', ARGV[b + 2], 'player', ARGV[b + 3],
    'amount', ARGV[b + 4], 'source', ARGV[b + 5], 'dest', ARGV[b + 6],
    'table', ARGV[5])
  redis.call('HSET', KEYS[4], ARGV[b + 1], id)
end
if #fresh > 0 then
  redis.call('PEXPIRE', KEYS[4], ARGV[10])
  redis.call('HINCRBY', KEYS[8], 'entries', #fresh)
end
-- Buckets two windows back are never consulted again.
redis.call('DEL', KEYS[6])

local table_fields = {'v', ARGV[3], 'seq', string.format('%d', last_seq), 'tok', ARGV[1],
  'cid', ARGV[19]}
for i = 1, 2 * n_part do
  table_fields[8 + i] = ARGV[part_base + i]
end
redis.call('HSET', KEYS[2], unpack(table_fields))
-- The state whole, as tables were stored before parts: the first commit in parts
-- gives every part (the caller's side of the bargain). Once gone, HDEL writes
-- nothing, not even to the append-only file.
redis.call('HDEL', KEYS[2], 's')
if has_request then
  redis.call('HSET', request_key, 'f', ARGV[15], 'm', ARGV[16],
    'a', string.format('%d', balances[tonumber(ARGV[18])]), 't', ARGV[5], 'v', ARGV[3])
  redis.call('PEXPIRE', request_key, ARGV[17])
end
redis.call('SADD', KEYS[9], ARGV[5])

for i = 0, n_evt - 1 do
  local seq = ARGV[evt_base + 2 * i + 1]
  local payload = ARGV[evt_base + 2 * i + 2]
  redis.call('XADD', KEYS[3], 'MAXLEN', ARGV[6], seq .. '-0', 'e', payload)
  if ARGV[9] ~= '' then
    redis.call('PUBLISH', ARGV[9], struct.pack('>I8', tonumber(seq)) .. payload)
  end
end

for i = 1, n_log do
  local key = KEYS[10 + n_acc + i]
  local head = redis.call('LINDEX', key, 0)
  local ordinal = 1
  if head then
    ordinal = struct.unpack('>I8', head) + 1
  end
  redis.call('LPUSH', key, struct.pack('>I8', ordinal) .. ARGV[log_base + i])
  redis.call('LTRIM', key, 0, tonumber(ARGV[8]) - 1)
end

local reply = {'OK', #fresh, n_ent - #fresh}
for a = 1, n_acc do reply[3 + a] = balances[a] end
return reply
"""

HISTORY = """
-- KEYS[1] a game-log list (newest first, ordinals contiguous from the head down);
-- ARGV[1] cursor (0 = newest; else return ordinals below it), ARGV[2] count.
local head = redis.call('LINDEX', KEYS[1], 0)
if not head then
  return {}
end
local start = 0
local cursor = tonumber(ARGV[1])
if cursor > 0 then
  -- The item with ordinal o is at index (head ordinal - o).
  start = struct.unpack('>I8', head) - cursor + 1
  if start < 0 then start = 0 end
end
return redis.call('LRANGE', KEYS[1], start, start + tonumber(ARGV[2]) - 1)
"""

CREDIT = """
-- Money from outside into an account.
-- KEYS: 1 account hash, 2 accounts set, 3 credits hash, 4 ledger stream, 5 money hash.
-- ARGV: 1 player, 2 amount (>= 0), 3 ledger key, 4 ledger maxlen,
--       5 mode: 'credit' (idempotent by key) or 'guest' (only if no account yet).
-- Returns {1 if applied else 0, balance}.
if ARGV[5] == 'guest' then
  if redis.call('EXISTS', KEYS[1]) == 1 then
    return {0, tonumber(redis.call('HGET', KEYS[1], 'balance') or '0')}
  end
elseif redis.call('HEXISTS', KEYS[3], ARGV[3]) == 1 then
  return {0, tonumber(redis.call('HGET', KEYS[1], 'balance') or '0')}
end
local balance = redis.call('HINCRBY', KEYS[1], 'balance', ARGV[2])
redis.call('SADD', KEYS[2], ARGV[1])
if tonumber(ARGV[2]) > 0 then
  local id = redis.call('XADD', KEYS[4], 'MAXLEN', '~', ARGV[4], '*',
    'key', ARGV[3], 'kind', 'credit', 'player', ARGV[1], 'amount', ARGV[2],
    'source', 'outside', 'dest', 'account', 'table', '')
  redis.call('HINCRBY', KEYS[5], 'in', ARGV[2])
  redis.call('HINCRBY', KEYS[5], 'entries', 1)
  if ARGV[5] == 'credit' then
    redis.call('HSET', KEYS[3], ARGV[3], id)
  end
end
return {1, balance}
"""

TRIM_LOG = """
-- KEYS[1] a game-log list (newest first, each record behind its 8-byte ordinal);
-- ARGV[1] an ordinal. Removes from the tail (the oldest end) every record numbered up
-- to it, never the newest: the next record's ordinal follows the newest one's. Run
-- after the archive stored those records; running it again removes nothing more.
-- Returns how many records it removed.
local through = tonumber(ARGV[1])
local removed = 0
while redis.call('LLEN', KEYS[1]) > 1 do
  local tail = redis.call('LINDEX', KEYS[1], -1)
  if struct.unpack('>I8', tail) > through then
    break
  end
  redis.call('RPOP', KEYS[1])
  removed = removed + 1
end
return removed
"""

GUEST_ADMIT = """
-- A new guest, if the limits allow one more this minute.
-- KEYS: 1 guests created this minute, 2 the same from the client's address, 3 guests set.
-- ARGV: 1 limit in total (0: none), 2 limit per address (0: none), 3 the counters'
--       ttl ms, 4 player, 5 now ms.
-- Returns 'ok' (counted, and the guest listed with its activity), or which limit
-- refused it: 'total' or 'address' (nothing written).
local total = tonumber(redis.call('GET', KEYS[1]) or '0')
local mine = tonumber(redis.call('GET', KEYS[2]) or '0')
if ARGV[1] ~= '0' and total >= tonumber(ARGV[1]) then
  return 'total'
end
if ARGV[2] ~= '0' and mine >= tonumber(ARGV[2]) then
  return 'address'
end
redis.call('INCR', KEYS[1])
redis.call('PEXPIRE', KEYS[1], ARGV[3])
redis.call('INCR', KEYS[2])
redis.call('PEXPIRE', KEYS[2], ARGV[3])
redis.call('ZADD', KEYS[3], ARGV[5], ARGV[4])
return 'ok'
"""

CLOSE_GUEST = """
-- Close an idle guest's account: its chips go back outside the product by a ledger
-- entry, and the account, its game log and its place in the guests set go.
-- KEYS: 1 guests set, 2 account hash, 3 accounts set, 4 game log, 5 ledger stream,
--       6 money hash, 7 display names hash.
-- ARGV: 1 player, 2 idle before (ms: only a guest whose last activity is older),
--       3 ordinal of the newest game log the archive holds (0: none), 4 ledger
--       maxlen, 5 the entry's ledger key.
-- Nothing is done (reply {0, 0}) when the guest is gone already, was active since,
-- or has a game log the archive does not hold yet. Else {1, chips taken out}.
local seen = redis.call('ZSCORE', KEYS[1], ARGV[1])
if not seen or tonumber(seen) >= tonumber(ARGV[2]) then
  return {0, 0}
end
local head = redis.call('LINDEX', KEYS[4], 0)
local newest = 0
if head then
  newest = struct.unpack('>I8', head)
end
if newest ~= tonumber(ARGV[3]) then
  return {0, 0}
end
local balance = tonumber(redis.call('HGET', KEYS[2], 'balance') or '0')
if balance > 0 then
  redis.call('XADD', KEYS[5], 'MAXLEN', '~', ARGV[4], '*',
    'key', ARGV[5], 'kind', 'close', 'player', ARGV[1],
    'amount', string.format('%d', balance), 'source', 'account', 'dest', 'outside',
    'table', '')
  redis.call('HINCRBY', KEYS[6], 'out', balance)
  redis.call('HINCRBY', KEYS[6], 'entries', 1)
end
redis.call('DEL', KEYS[2], KEYS[4])
redis.call('SREM', KEYS[3], ARGV[1])
redis.call('HDEL', KEYS[7], ARGV[1])
redis.call('ZREM', KEYS[1], ARGV[1])
return {1, balance}
"""
