"""The Lua scripts of the operator's wallet (wallet mode), every key in the player's
slot (the rules of :mod:`server.store.lua`). A debit of the wallet is an *intent*
written before the wallet is asked (``INTENT_OPEN``), then applied into the account
(``INTENT_APPLY``: the chips come in from outside) or made void (``INTENT_VOID``), then
released by the request that held it (``INTENT_RELEASE``). Chips an account holds and
no request holds go back to the wallet as a credit queued in the player's outbox
(``SWEEP``), removed from it once the wallet acknowledges it (``OUTBOX_ACK``).
docs/DESIGN.md, "The operator's wallet"."""

from __future__ import annotations

from server.store.lua import load

INTENT_OPEN = load("wallet/intent_open")
INTENT_APPLY = load("wallet/intent_apply")
INTENT_VOID = load("wallet/intent_void")
INTENT_RELEASE = load("wallet/intent_release")
SWEEP = load("wallet/sweep")
OUTBOX_ACK = load("wallet/outbox_ack")
