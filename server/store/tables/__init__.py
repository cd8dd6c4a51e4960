"""Tables in Redis: the store, its commit, parts, leases, replay, applied requests, game logs."""
