"""Micro-benchmarks in one process: the rules engine, the table, the protocol codec."""
