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
-- One state change of a table, all or nothing, every key in the table's slot.
-- KEYS: 1 lease, 2 table hash, 3 events stream, 4 applied bucket (current),
--       5 applied bucket (previous), 6 applied bucket (two back, deleted),
--       7 table ledger, 8 transfers in, 9 transfers out, 10 logs out,
--       11 the request's record (when there is a request).
-- ARGV: 1 token, 2 expected version, 3 new version, 4 #parts, 5 table id,
--       6 events cap, 7 ledger maxlen, 8 channel ('' = none), 9 applied ttl ms,
--       10 #entries, 11 #events, 12 #logs, 13 request fingerprint ('' = no request),
--       14 request memo, 15 request ttl ms, 16 the requester's account balance after
--       the request ('' = not known here), 17 the transfer that pays the requester out
--       ('' = none), 18 commit id (names this commit: a retry of it carries the same),
--       then 8 per entry (key kind player amount source dest transfer-id transfer),
--       then 2 per event (seq payload), then 2 per log (transfer-id record), then 2
--       per part of the state (field of the table hash, value): at least one part.
-- An entry from an account names the transfer the account reserved for it: its
-- record in KEYS[8] must be open, for that player and amount, and becomes
-- 'received'. An entry to an account starts a transfer: KEYS[9][id] = transfer.
-- Replies: {'OK', applied, skipped, id of each transfer from an account it took};
-- {'DUPLICATE', stored version}; {'REPEATED',
-- fingerprint, memo, account ('' unknown), payout transfer, version} (the request was
-- applied already, by the commit recorded there); {'VOIDED', transfer id} (a transfer
-- from an account is no longer open: refused, or never opened); or a refusal
-- ({'STALE_LEASE', token}, ...).
local n_ent = tonumber(ARGV[10])
local n_evt = tonumber(ARGV[11])
local n_log = tonumber(ARGV[12])
local has_request = ARGV[13] ~= ''
local ent_base = 18
local evt_base = ent_base + 8 * n_ent
local log_base = evt_base + 2 * n_evt
local part_base = log_base + 2 * n_log
local n_part = tonumber(ARGV[4])
local new_version = tonumber(ARGV[3])

-- 1. Checks; no write before the last of them.
local stored_v = tonumber(redis.call('HGET', KEYS[2], 'v') or '0')
-- The very same commit already stored (a retry after a lost reply): its version, by
-- this writer, under its id. Comparing its parts instead would take another commit
-- of that version whose parts happen to match for this one.
if stored_v == new_version then
  local mine = redis.call('HMGET', KEYS[2], 'tok', 'cid')
  if mine[1] == ARGV[1] and mine[2] == ARGV[18] then
    return {'DUPLICATE', stored_v}
  end
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
-- A client's money request applies once per (player, key) at this table (the claim
-- in the player's slot keeps it once across tables): a repeat changes nothing and
-- gets what the first one was told.
if has_request then
  local done = redis.call('HMGET', KEYS[11], 'f', 'm', 'a', 'x', 'v')
  if done[1] then
    return {'REPEATED', done[1], done[2] or '', done[3] or '', done[4] or '',
      tonumber(done[5] or '0')}
  end
end

-- Entries not yet applied (by an earlier commit, or earlier in this one); chips
-- from an account only on an open transfer of that player and amount.
local fresh = {}
local seen = {}
for i = 0, n_ent - 1 do
  local b = ent_base + 8 * i
  local key = ARGV[b + 1]
  if not seen[key]
      and redis.call('HEXISTS', KEYS[4], key) == 0
      and redis.call('HEXISTS', KEYS[5], key) == 0 then
    fresh[#fresh + 1] = b
    if ARGV[b + 5] == 'account' then
      local want = 'open:' .. ARGV[b + 3] .. ':' .. ARGV[b + 4] .. ':'
      local have = redis.call('HGET', KEYS[8], ARGV[b + 7])
      if not have or string.sub(have, 1, #want) ~= want then
        return {'VOIDED', ARGV[b + 7]}
      end
    end
  end
  seen[key] = true
end

-- 2. Writes.
local moved = 0
local taken = {}
for _, b in ipairs(fresh) do
  local fields = {'key', ARGV[b + 1], 'kind', ARGV[b + 2], 'player', ARGV[b + 3],
    'amount', ARGV[b + 4], 'source', ARGV[b + 5], 'dest', ARGV[b + 6], 'table', ARGV[5]}
  local xid = ARGV[b + 7]
  if xid ~= '' then
    fields[#fields + 1] = 'xfer'
    fields[#fields + 1] = xid
    moved = moved + 1
    if ARGV[b + 5] == 'account' then
      local have = redis.call('HGET', KEYS[8], xid)
      redis.call('HSET', KEYS[8], xid, 'received' .. string.sub(have, 5))
      taken[#taken + 1] = xid
    else
      redis.call('HSET', KEYS[9], xid, ARGV[b + 8])
    end
  end
  local id = redis.call('XADD', KEYS[7], 'MAXLEN', '~', ARGV[7], '*', unpack(fields))
  redis.call('HSET', KEYS[4], ARGV[b + 1], id)
end
if #fresh > 0 then
  redis.call('PEXPIRE', KEYS[4], ARGV[9])
  redis.call('HINCRBY', KEYS[2], 'n', #fresh)
end
if moved > 0 then
  redis.call('HINCRBY', KEYS[2], 'xn', moved)
end
-- Buckets two windows back are never consulted again.
redis.call('DEL', KEYS[6])

local table_fields = {'v', ARGV[3], 'seq', string.format('%d', last_seq), 'tok', ARGV[1],
  'cid', ARGV[18]}
for i = 1, 2 * n_part do
  table_fields[8 + i] = ARGV[part_base + i]
end
redis.call('HSET', KEYS[2], unpack(table_fields))
-- The state whole, as tables were stored before parts: the first commit in parts
-- gives every part (the caller's side of the bargain). Once gone, HDEL writes
-- nothing, not even to the append-only file.
redis.call('HDEL', KEYS[2], 's')
if has_request then
  redis.call('HSET', KEYS[11], 'f', ARGV[13], 'm', ARGV[14], 'v', ARGV[3])
  if ARGV[16] ~= '' then
    redis.call('HSET', KEYS[11], 'a', ARGV[16])
  end
  if ARGV[17] ~= '' then
    redis.call('HSET', KEYS[11], 'x', ARGV[17])
  end
  redis.call('PEXPIRE', KEYS[11], ARGV[15])
end

for i = 0, n_evt - 1 do
  local seq = ARGV[evt_base + 2 * i + 1]
  local payload = ARGV[evt_base + 2 * i + 2]
  redis.call('XADD', KEYS[3], 'MAXLEN', ARGV[6], seq .. '-0', 'e', payload)
  if ARGV[8] ~= '' then
    redis.call('PUBLISH', ARGV[8], struct.pack('>I8', tonumber(seq)) .. payload)
  end
end

for i = 0, n_log - 1 do
  redis.call('HSET', KEYS[10], ARGV[log_base + 2 * i + 1], ARGV[log_base + 2 * i + 2])
end

local reply = {'OK', #fresh, n_ent - #fresh}
for _, xid in ipairs(taken) do reply[#reply + 1] = xid end
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

TRANSFERS_OPEN = """
-- Before chips come from accounts: the commit already stored?, the request's record
-- at this table, and the transfers the accounts will reserve (by the table's holder
-- only, and not for entries the table applied already).
-- KEYS: 1 lease, 2 transfers in, 3 the request's record (or KEYS[2]: none),
--       4 table hash, 5 applied bucket (current), 6 applied bucket (previous).
-- ARGV: 1 token, 2 '1' if KEYS[3] is a request's record, 3 the commit's new version,
--       4 its commit id, then 3 per transfer (id, 'open:<player>:<amount>:<ms>:<kind>',
--       the ledger key of its entry).
-- Replies: {'OK', id of each transfer not opened because its entry was applied};
-- {'STALE_LEASE'}; {'DUPLICATE'} (this very commit is stored); {'REPEATED',
-- fingerprint, memo, account ('' unknown), payout transfer, version} (the request
-- was applied here already). Only OK writes, and never over a transfer recorded.
local lease = redis.call('GET', KEYS[1])
if not lease or string.match(lease, '^(%d+):') ~= ARGV[1] then
  return {'STALE_LEASE'}
end
local stored = redis.call('HMGET', KEYS[4], 'v', 'tok', 'cid')
if stored[1] == ARGV[3] and stored[2] == ARGV[1] and stored[3] == ARGV[4] then
  return {'DUPLICATE'}
end
if ARGV[2] == '1' then
  local done = redis.call('HMGET', KEYS[3], 'f', 'm', 'a', 'x', 'v')
  if done[1] then
    return {'REPEATED', done[1], done[2] or '', done[3] or '', done[4] or '',
      tonumber(done[5] or '0')}
  end
end
local out = {'OK'}
for i = 5, #ARGV, 3 do
  if redis.call('HEXISTS', KEYS[5], ARGV[i + 2]) == 1
      or redis.call('HEXISTS', KEYS[6], ARGV[i + 2]) == 1 then
    out[#out + 1] = ARGV[i]
  else
    redis.call('HSETNX', KEYS[2], ARGV[i], ARGV[i + 1])
  end
end
return out
"""

TRANSFERS_VOID = """
-- Refuse transfers from accounts that the table has not received: once void, no
-- commit can take them, so their chips may go back to the accounts.
-- KEYS[1] transfers in; ARGV the transfer ids. Returns each one's record as it was
-- ('' : none), an open one now void.
local out = {}
for i = 1, #ARGV do
  local have = redis.call('HGET', KEYS[1], ARGV[i])
  out[i] = have or ''
  if have and string.sub(have, 1, 5) == 'open:' then
    redis.call('HSET', KEYS[1], ARGV[i], 'void' .. string.sub(have, 5))
  end
end
return out
"""

TRANSFERS_FORGET = """
-- Transfers finished on both sides, and game logs delivered: forgotten by the table.
-- KEYS: 1 transfers in, 2 transfers out, 3 logs out. ARGV: 1 #in, 2 #out, then the
-- ids of each, in that order (the rest are logs).
local n_in = tonumber(ARGV[1])
local n_out = tonumber(ARGV[2])
for i = 3, #ARGV do
  local key = KEYS[3]
  if i < 3 + n_in then
    key = KEYS[1]
  elseif i < 3 + n_in + n_out then
    key = KEYS[2]
  end
  redis.call('HDEL', key, ARGV[i])
end
return 1
"""

TABLE_SNAPSHOT = """
-- A table's money as of one instant: its hash, its transfers in and out, and the id
-- of its ledger's last entry ('' : none).
-- KEYS: 1 table hash, 2 transfers in, 3 transfers out, 4 table ledger.
local last = redis.call('XREVRANGE', KEYS[4], '+', '-', 'COUNT', 1)[1]
return {redis.call('HGETALL', KEYS[1]), redis.call('HGETALL', KEYS[2]),
  redis.call('HGETALL', KEYS[3]), last and last[1] or ''}
"""

# --- several nodes on one Redis (server/cluster) ---------------------------------------

NODES_BEAT = """
-- A node's heartbeat, and the live nodes.
-- KEYS[1] the nodes sorted set (member: instance, score: when it expires, ms),
-- KEYS[2] the node's hash. ARGV[1] the instance ('' : only read), ARGV[2] ttl ms,
-- ARGV[3..] field, value pairs for the node's hash.
-- Forgets the nodes whose registration ran out (by Redis's clock), renews this one's,
-- and returns {now, instance, expires, instance, expires, ...} of the live nodes.
redis.replicate_commands()
local t = redis.call('TIME')
local now = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
redis.call('ZREMRANGEBYSCORE', KEYS[1], '-inf', string.format('%d', now))
if ARGV[1] ~= '' then
  local ttl = tonumber(ARGV[2])
  redis.call('ZADD', KEYS[1], string.format('%d', now + ttl), ARGV[1])
  if #ARGV > 2 then
    redis.call('HSET', KEYS[2], unpack(ARGV, 3))
  end
  redis.call('PEXPIRE', KEYS[2], ttl)
end
local live = redis.call('ZRANGE', KEYS[1], 0, -1, 'WITHSCORES')
table.insert(live, 1, string.format('%d', now))
return live
"""

PUBLISH_COMMIT = """
-- What the other nodes learn of a table's stored change, in one call after it.
-- KEYS[1] the table's summary, then the seats set of each player who sat down, then
-- of each who stood up. ARGV[1] table id, ARGV[2] the summary ('' : unchanged),
-- ARGV[3] how many sat down, ARGV[4] how many stood up, then (channel, message) pairs,
-- published in order: the players' private frames before the table's events.
if ARGV[2] ~= '' then
  redis.call('SET', KEYS[1], ARGV[2])
end
local sat = tonumber(ARGV[3])
local stood = tonumber(ARGV[4])
for i = 1, sat do
  redis.call('SADD', KEYS[1 + i], ARGV[1])
end
for i = 1, stood do
  redis.call('SREM', KEYS[1 + sat + i], ARGV[1])
end
for i = 5, #ARGV, 2 do
  redis.call('PUBLISH', ARGV[i], ARGV[i + 1])
end
return 1
"""

PUBLISH_ONE = """
-- ARGV[1] channel, ARGV[2] message: PUBLISH, as a script so that it shares a pipeline.
return redis.call('PUBLISH', ARGV[1], ARGV[2])
"""

EVENTS_FOR = """
-- A table's events after a seq, as some players see them: the replay a node that
-- relays the table needs, without the private frames of players not connected there.
-- KEYS[1] table hash, KEYS[2] events stream; ARGV[1] the seq after which to read,
-- ARGV[2..] the players. Returns {last seq, oldest seq kept (0: none)}, then, if the
-- stream reaches back to ARGV[1] + 1, per event: seq, public frame, and each player's
-- private frame ('' : none). Each stored event is the msgpack array [public frame,
-- {player: private frame}] (server/host/fanout.py, pack_outbound), read here by hand:
-- the Lua msgpack library of Redis 6 does not know its binary type.
local function item(s, i)
  local b = string.byte(s, i)
  local n, h
  if b >= 0xa0 and b <= 0xbf then
    n, h = b - 0xa0, 1
  elseif b == 0xc4 or b == 0xd9 then
    n, h = string.byte(s, i + 1), 2
  elseif b == 0xc5 or b == 0xda then
    n, h = struct.unpack('>I2', s, i + 1), 3
  elseif b == 0xc6 or b == 0xdb then
    n, h = struct.unpack('>I4', s, i + 1), 5
  else
    error('unexpected msgpack type ' .. b)
  end
  return string.sub(s, i + h, i + h + n - 1), i + h + n
end
local function frames(s)
  if string.byte(s, 1) ~= 0x92 then
    error('a stored event is an array of two')
  end
  local public, i = item(s, 2)
  local b = string.byte(s, i)
  local n
  if b >= 0x80 and b <= 0x8f then
    n, i = b - 0x80, i + 1
  elseif b == 0xde then
    n, i = struct.unpack('>I2', s, i + 1), i + 3
  elseif b == 0xdf then
    n, i = struct.unpack('>I4', s, i + 1), i + 5
  else
    error('unexpected msgpack type ' .. b)
  end
  local private = {}
  for _ = 1, n do
    local k, v
    k, i = item(s, i)
    v, i = item(s, i)
    private[k] = v
  end
  return public, private
end
local after = tonumber(ARGV[1])
local last = tonumber(redis.call('HGET', KEYS[1], 'seq') or '0')
local first = redis.call('XRANGE', KEYS[2], '-', '+', 'COUNT', 1)[1]
local oldest = first and tonumber(string.match(first[1], '^(%d+)')) or 0
local out = {last, oldest}
if after >= last or oldest == 0 or oldest > after + 1 then
  return out
end
local from = string.format('%d', after + 1) .. '-0'
for _, entry in ipairs(redis.call('XRANGE', KEYS[2], from, '+')) do
  local fields = entry[2]
  local blob = ''
  for j = 1, #fields, 2 do
    if fields[j] == 'e' then
      blob = fields[j + 1]
    end
  end
  local public, private = frames(blob)
  out[#out + 1] = tonumber(string.match(entry[1], '^(%d+)'))
  out[#out + 1] = public
  for p = 2, #ARGV do
    out[#out + 1] = private[ARGV[p]] or ''
  end
end
return out
"""
