"""Wallet mode: the players' balances live in the operator's wallet (docs/DESIGN.md,
"The operator's wallet"; the API the operator implements: protocol/wallet-api.yaml).

- :mod:`server.wallet.client`: the wallet's HTTP API, called with ``aiohttp``.
- :mod:`server.wallet.funding`: a buy-in's debit and the chips' way back (the intents
  and the outbox in Redis, :class:`~server.store.WalletStore`), and the workers that
  finish them: the outbox's sender, the intents' recovery, the sweep.
- :mod:`server.wallet.reconcile`: this server's record against the wallet's, for a
  window of time.
- :mod:`server.wallet.reference`: a reference wallet (``python -m server.wallet.reference``),
  for the tests, ``make run-wallet`` and operators reading the contract.
"""

from server.wallet.client import WalletClient, WalletError, WalletRefused, WalletUnknown
from server.wallet.funding import Funding, Hold, wallet_client, wallet_funding

__all__ = [
    "Funding",
    "Hold",
    "WalletClient",
    "WalletError",
    "WalletRefused",
    "WalletUnknown",
    "wallet_client",
    "wallet_funding",
]
