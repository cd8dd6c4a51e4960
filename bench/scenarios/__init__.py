"""Whole-server benchmarks: the game server beside a bare one, several nodes, Redis's
failover, the soak, lone actions, a round's Redis work, an archiver pass; and the goals
``make bench`` judges."""
