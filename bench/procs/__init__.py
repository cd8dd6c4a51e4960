"""Processes for the benchmarks and tests: Redis topologies on one machine."""
