"""The Redis client: connections, Sentinel, the group commit, replies, the layout migration."""
