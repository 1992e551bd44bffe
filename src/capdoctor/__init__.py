"""capdoctor: tell *why* an LLM API or AI coding tool says "Selected model is at capacity".

The package is imported by every command, so it must stay import-light: no httpx, psutil, NVML or rich
here. Heavy modules load inside the functions that need them.
"""

__version__ = "0.1.0"
