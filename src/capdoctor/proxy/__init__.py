"""`capdoctor proxy`: a recording pass-through for the user's own traffic to an LLM API.

The package holds small modules, one concern each: `settings` (the arguments, checked before anything listens,
and the lines each client needs), `exchange` (what one exchange shows, read as it passes: pure), `forward` (the
aiohttp server and client that carry the bytes), `recording` (classification, the history and metrics off the
event loop), `metrics` (Prometheus), `burst` (the network snapshot at a burst of failures) and `command` (the
glue `cli.py` calls). aiohttp is imported only by `forward` and `command`, so no other command's start-up
pays for it. This `__init__` imports none of its submodules (see tests/test_imports.py).
"""
