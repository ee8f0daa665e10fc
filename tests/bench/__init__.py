"""Benchmarks: run by ``make bench``, never collected by pytest (no ``test_`` files)."""
