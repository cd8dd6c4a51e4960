"""Progressive jackpots: meters shared by tables on every node
(:mod:`server.store.jackpot.meters`)."""
