-- KEYS[1] a lease of one key; ARGV[1] its holder's value. Deletes it if it is still
-- this holder's.
if redis.call('GET', KEYS[1]) == ARGV[1] then
  redis.call('DEL', KEYS[1])
  return 1
end
return 0
