"""Redis pub/sub: the node's shared listening connection, and one channel heard for good."""
