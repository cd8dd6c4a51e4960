"""The Lua scripts of an account, every key in the player's slot (the rules of
:mod:`server.store.lua`: every key in ``KEYS``, every check before the first write,
numbers formatted with ``%d``).

Chips enter an account from outside (``CREDIT``, or an operator's ``OPERATE``, which also
debits an account back outside and reverses a credit), leave it for a table (``CLAIM``
reserves them), come back when a table refused them (``REFUND``) or when a table pays
out (``DELIVER``). Each of these is idempotent by its transfer id: the account keeps
what it did with a transfer in a marker key, so a call made again (a retry, a
recovery) changes nothing (docs/DESIGN.md, "Keys ready for Redis Cluster"). A game log
is delivered once by its record: a round's record is unique, and one delivered before
is among the player's newest (:data:`LOG_WINDOW` of them). ``DELIVER`` and
``DELIVER_MANY`` share the fragment ``accounts/_deliver`` (its Lua function
``deliver``).
"""

from __future__ import annotations

from server.store.lua import load

LOG_WINDOW = 50
"""How many of a player's newest game logs ``DELIVER`` looks through for the one it
delivers: a log delivered again (its table's holder died before forgetting it) comes
within seconds, well before that many other rounds."""

CREDIT = load("accounts/credit")
CLAIM = load("accounts/claim")
REFUND = load("accounts/refund")
SETTLE = load("accounts/settle")
DELIVER = load("accounts/deliver")
DELIVER_MANY = load("accounts/deliver_many")
ACCOUNT_SNAPSHOT = load("accounts/snapshot")
OPERATE = load("accounts/operate")
