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
-- A commit's events are one entry (id its first seq; fields e, e1, e2...: the events
-- of the seqs that many after it): the entry holding after + 1, then the later ones.
local entries = redis.call('XREVRANGE', KEYS[2], string.format('%d', after + 1) .. '-0', '-',
  'COUNT', 1)
for _, entry in ipairs(redis.call('XRANGE', KEYS[2], string.format('%d', after + 2) .. '-0',
    '+')) do
  entries[#entries + 1] = entry
end
for _, entry in ipairs(entries) do
  local start = tonumber(string.match(entry[1], '^(%d+)'))
  local fields = entry[2]
  for j = 1, #fields, 2 do
    local k = nil
    if fields[j] == 'e' then
      k = 0
    else
      k = tonumber(string.match(fields[j], '^e(%d+)$'))
    end
    if k and start + k > after then
      local public, private = frames(fields[j + 1])
      out[#out + 1] = start + k
      out[#out + 1] = public
      for p = 2, #ARGV do
        out[#out + 1] = private[ARGV[p]] or ''
      end
    end
  end
end
return out
