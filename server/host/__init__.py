"""The table host: one table hosted by this process, in parts.

- :mod:`~server.host.lease_keeper`: the table's lease through its life cycle (acquire, renew,
  lose, release) and the :class:`LeaseKeeper` that renews every lease of the process;
- :mod:`~server.host.applying`: the commit path, an :class:`Applier` (an event applied,
  handed to the store as one change, answered, sent; the events that wait for a busy
  table stored together);
- :mod:`~server.host.money`: money requests, applied at most once, a repeat answered
  as the first time; :mod:`~server.host.errors`: the errors the host raises itself;
- :mod:`~server.host.recovery`: the transfers a table left under way, finished;
- :mod:`~server.host.fanout`: the connections at the table, the frames each receives,
  and replay;
- :mod:`~server.host.host`: :class:`TableHost`, which holds one of each and ties them to
  the table's timer, and its :class:`Hooks`.
"""

from server.host.errors import TableNotWritable, TableUnavailable
from server.host.fanout import Subscriber, encode_outbound, frame_for, pack_outbound
from server.host.host import Hooks, TableHost, now_ms
from server.host.lease_keeper import LeaseKeeper
from server.host.money import MoneyRequest

__all__ = [
    "Hooks",
    "LeaseKeeper",
    "MoneyRequest",
    "Subscriber",
    "TableHost",
    "TableNotWritable",
    "TableUnavailable",
    "encode_outbound",
    "frame_for",
    "now_ms",
    "pack_outbound",
]
