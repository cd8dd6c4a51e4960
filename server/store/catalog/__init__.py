"""The tables catalog: which tables exist, their settings and status, in Redis
(:mod:`server.store.catalog.catalog`)."""
