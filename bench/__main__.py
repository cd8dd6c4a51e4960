"""``make bench``: every benchmark, one after the other, each printing its figures."""

from __future__ import annotations

import bench.micro.protocol
import bench.micro.rules
import bench.micro.table
import bench.scenarios.cluster
import bench.scenarios.server


def main() -> None:
    """Run the benchmarks of the rules engine, the table, the protocol codec, the server
    (beside a bare one) and several nodes on one Redis (a player's table held by another
    node)."""
    bench.micro.rules.main()
    bench.micro.table.main()
    bench.micro.protocol.main()
    bench.scenarios.server.main()
    bench.scenarios.cluster.main()


if __name__ == "__main__":
    main()
