"""``make bench``: every benchmark, one after the other, each printing its figures."""

from __future__ import annotations

import bench.cluster
import bench.protocol
import bench.rules
import bench.server
import bench.table


def main() -> None:
    """Run the benchmarks of the rules engine, the table, the protocol codec, the server
    (beside a bare one) and several nodes on one Redis (a player's table held by another
    node)."""
    bench.rules.main()
    bench.table.main()
    bench.protocol.main()
    bench.server.main()
    bench.cluster.main()


if __name__ == "__main__":
    main()
