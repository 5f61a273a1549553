"""Benchmarks: ``python -m bench`` (see bench/run.py)."""
