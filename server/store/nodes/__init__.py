"""What several nodes on one Redis share there besides the tables."""
