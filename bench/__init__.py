"""Benchmarks: performance figures, printed beside the configuration that produced them."""
