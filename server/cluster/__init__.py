"""Many nodes, one casino: this process as one node of several on one Redis.

Any node serves any table: tables are spread over the live nodes, each held by one of
them, and a node's connections reach a table held elsewhere through Redis (requests
to its holder, its events back). See :mod:`server.cluster.node` for the parts, and
docs/DESIGN.md, "Several nodes on one Redis".
"""

from server.cluster.node import Cluster

__all__ = ["Cluster"]
