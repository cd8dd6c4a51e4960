-- KEYS[1] an account hash, KEYS[2] its ledger. The ledger of a closed account, once
-- the archive holds all of it (empty in Redis), is deleted. Returns 1 if it was.
if redis.call('HEXISTS', KEYS[1], 'closed') == 1 and redis.call('XLEN', KEYS[2]) == 0 then
  return redis.call('DEL', KEYS[2])
end
return 0
