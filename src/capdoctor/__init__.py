"""capdoctor: tell *why* an LLM API or AI coding tool says "Selected model is at capacity".

The package is imported by every command, so it must stay import-light: no httpx, psutil, NVML or rich
here. Heavy modules load inside the functions that need them. `IMPORTED_AT` is the earliest instant
capdoctor itself sees (`time.monotonic()`): the run's clock falls back to it where the OS does not say when
the process started (see `startclock`).
"""

import time as _time

__version__ = "0.1.0"
IMPORTED_AT = _time.monotonic()
