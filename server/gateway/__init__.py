"""The WebSocket gateway, in layers (as ``websockets`` keeps its sans-I/O protocol apart
from the asyncio connection around it):

- :mod:`~server.gateway.session`: one connection's rules (hello, who it speaks for,
  the rate, invalid frames, silence, reply order), with no I/O and no clock;
- :mod:`~server.gateway.connection`: its WebSocket I/O (send path, queue, drop, timer);
- :mod:`~server.gateway.wsconn`: the receive side of that I/O, each message queued
  whole as it comes and read without a coroutine;
- :mod:`~server.gateway.handlers` (and :mod:`~server.gateway.money`): one small
  function per request type;
- :mod:`~server.gateway.presence`: the lobby, and who is connected and where;
- :mod:`~server.gateway.table_info`: what ``table_info`` tells of a table, from its
  settings;
- :mod:`~server.gateway.gateway`: the :class:`Gateway` that wires them, configured
  by one :class:`GatewayOptions`.
"""

from server.gateway.gateway import Gateway
from server.gateway.options import GatewayOptions, gateway_options

__all__ = ["Gateway", "GatewayOptions", "gateway_options"]
