"""The audit: do the chips add up, and was no ledger entry applied twice or lost?"""
