"""Watch mode: rounds of cheap checks recorded in a history database, the history's patterns, and metrics.

The package `__init__` imports nothing (see tests/test_imports.py): `sqlite3` and `prometheus_client`
load only when `capdoctor watch`, `history` or `logs --into` run.
"""
