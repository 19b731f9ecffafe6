"""Measurement scripts (accuracy, speed) and their shared helpers; not part of the library.

Run them from the repository root, e.g. ``python -m benchmarks.accuracy --help``.
"""
