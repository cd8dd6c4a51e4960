-- What tables send a player: chips (their transfers out) and game logs, each once.
-- KEYS: 1 account hash, 2 account ledger, 3 game-log list, then one key per item: the
--       transfer's marker (chips), or KEYS[3] again (a game log: its record is its id).
-- ARGV: 1 player, 2 table id, 3 ledger maxlen, 4 ttl ms, 5 log cap, 6 how many of the
--       newest game logs to look through for a log delivered before, then 5 per item
--       (transfer id, kind ('log' for a game log), amount, ledger key, record).
-- Returns the balance after the item that moved chips, per item (0 for a log): as
-- the first delivery left it, for an item delivered before.
local function deliver(K, A)
  local out = {}
  local base = 6
  local n = (#A - base) / 5
  for i = 1, n do
    local b = base + 5 * (i - 1)
    if A[b + 2] == 'log' then
      -- A round's record is unique (table, round, cards): one among the newest is this
      -- one, delivered before. (A marker per log would cost a key per player and round.)
      local newest = redis.call('LRANGE', K[3], 0, tonumber(A[6]) - 1)
      local seen = false
      for _, item in ipairs(newest) do
        if string.sub(item, 9) == A[b + 5] then
          seen = true
          break
        end
      end
      if not seen then
        local ordinal = 1
        if newest[1] then
          ordinal = struct.unpack('>I8', newest[1]) + 1  -- the head's, plus one
        end
        local length = redis.call('LPUSH', K[3], struct.pack('>I8', ordinal) .. A[b + 5])
        if length > tonumber(A[5]) then
          redis.call('LTRIM', K[3], 0, tonumber(A[5]) - 1)
        end
      end
      out[i] = 0
    else
      local marker = K[3 + i]
      local done = redis.call('GET', marker)
      if done then
        out[i] = tonumber(string.match(done, '^applied:(%-?%d+)$') or '0')
      else
        local balance = redis.call('HINCRBY', K[1], 'balance', A[b + 3])
        redis.call('HINCRBY', K[1], 'n', 1)
        redis.call('XADD', K[2], 'MAXLEN', '~', A[3], '*',
          'key', A[b + 4], 'kind', A[b + 2], 'player', A[1], 'amount', A[b + 3],
          'source', 'table', 'dest', 'account', 'table', A[2], 'xfer', A[b + 1])
        redis.call('SET', marker, 'applied:' .. string.format('%d', balance), 'PX', A[4])
        out[i] = balance
      end
    end
  end
  return out
end
