"""Chips between tables and accounts: transfers, their records, the ledgers."""
