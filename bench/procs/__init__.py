"""Processes for the benchmarks and tests: Redis topologies on one machine, the servers
under test (pinned to their CPUs), what ``/proc`` says of them, and py-spy's samples."""
