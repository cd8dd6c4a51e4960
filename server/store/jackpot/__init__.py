"""Progressive jackpots: meters shared by tables on every node (:mod:`.meters`)."""
