"""Provider adapters: per-provider request shapes, headers, endpoints and error reading.

The catalogue (`adapter_for`, `PROVIDER_NAMES`, `canonical`, …) lives in `capdoctor.providers.catalog`.
This `__init__` imports nothing on purpose: see the catalogue's docstring.
"""
