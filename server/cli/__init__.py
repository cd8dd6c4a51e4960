"""``paigow-server``: run the server, and the operator's commands beside it.

- ``paigow-server [serve]``: run (embedded Redis unless ``--redis-url``);
- ``paigow-server token --player NAME --ttl 12h``: a signed login token;
- ``paigow-server account list [--guests] | show NAME | ledger NAME``;
- ``paigow-server account credit NAME AMOUNT [--create] | debit NAME AMOUNT |
  reverse NAME ENTRY``, each with ``--reason`` and an idempotency ``--key``: the
  operator API's moves (:mod:`server.admin.operations`), refused for an unknown
  player unless ``--create`` (a credit);
- ``paigow-server audit``: check that every chip is accounted for, across Redis and
  the archive (exit 1 if not);
- ``paigow-server archive``: move what is older than the retention window to the
  archive now (one pass, as the server's archiver does every ``--archive-every-ms``);
- ``paigow-server session revoke NAME``: end a player's sessions at once;
- ``paigow-server nodes``: the live nodes, and which one holds each table;
  ``nodes drain NAME``: that node hands its tables over and stops;
- ``paigow-server admin token --name N --ttl 12h | list | revoke ID``: the tokens of the
  operator's API (``--admin-port``).
- ``paigow-server table list | create ID NAME [KEY=VALUE...] | change ID
  KEY=VALUE... | close ID``: the tables catalog, changed while the servers run (every
  node picks a change up within about a second).

The operator's commands reach the same Redis as the server, and say which on standard
error: ``--redis-url``; else the embedded Redis of the server running on ``--data-dir``
(the URL it keeps in ``DATA_DIR/redis.url``); else, no server running there, the
embedded Redis's data in ``DATA_DIR/redis``, started for the command. A folder holding
none of these is not a server's: the command stops (exit 2) rather than start an empty
Redis there. ``token`` likewise signs only with ``--token-secret`` or the secret the
server keeps in ``DATA_DIR/token-secret``, never with one made up on the spot.

The package's rooms: :mod:`~server.cli.serve` (``main``: the parser, the dispatch, the
server's start), one module per command named for it (``account``, ``admin``,
``archive``, ``audit``, ``nodes``, ``sessions`` for ``token`` and ``session``,
``table``, ``wallet``), each declaring its arguments and running them, and
:mod:`~server.cli.common` (what they share: the stores, the archive, the secret, the
columns of a listing).
"""

from server.cli.serve import main

__all__ = ["main"]
