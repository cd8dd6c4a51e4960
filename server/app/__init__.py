"""One server process: Redis (embedded or external), the tables, the gateway, and its
place among the nodes on the same Redis (``server/cluster``).

- :mod:`server.app.node`: :class:`App`, a running node, started in order and stopped in
  reverse (the drain on SIGTERM);
- :mod:`server.app.process`: :func:`run`, the process's life around it (signals, the
  collector, the "listening" line);
- :mod:`server.app.features`: the parts run only when configured (the operator's API,
  the wallet), whose modules are imported only then;
- :mod:`server.app.identity`: the node's name and token secret;
- :mod:`server.app.figures`: what the metrics and the archiver read off the tables.
"""

from server.app.figures import round_money, seats_taken, table_money
from server.app.identity import SECRET_FILE, default_node_name, token_secret
from server.app.node import App
from server.app.process import browser_url, run

__all__ = [
    "SECRET_FILE",
    "App",
    "browser_url",
    "default_node_name",
    "round_money",
    "run",
    "seats_taken",
    "table_money",
    "token_secret",
]
