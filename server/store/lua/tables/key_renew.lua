-- KEYS[1] a lease of one key; ARGV[1] its holder's value, ARGV[2] ttl ms. Extends it
-- if it is still this holder's: {1}, else {0} (the archiver's lease; a table's is
-- LEASE_RENEW, fenced).
if redis.call('GET', KEYS[1]) == ARGV[1] then
  redis.call('PEXPIRE', KEYS[1], ARGV[2])
  return {1}
end
return {0}
