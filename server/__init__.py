"""The Pai Gow table server: the pure core (rules, table) and the asyncio shell around it."""
