-- ARGV[1] channel, ARGV[2] message: PUBLISH, as a script so that it shares a pipeline.
return redis.call('PUBLISH', ARGV[1], ARGV[2])
