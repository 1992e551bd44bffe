"""What real clients write when they retry a request and when a request completed: `outcomes.toml`, read once.

The scanner uses `retry_pattern()` to tell a retried error record, `success_markers()` to tell that a
request completed after an error (it recovered) or that nothing did (it persists), and `quiet()` to tell a
client's metadata record, never an error whatever its words. Data, not code: a new
client's wording is a row in the TOML file, with its source.
"""

from __future__ import annotations

import functools
import re
import tomllib
from importlib import resources
from typing import Any


@functools.cache
def _table() -> dict[str, Any]:
    text = resources.files(__package__).joinpath("outcomes.toml").read_text("utf-8")
    doc: dict[str, Any] = tomllib.loads(text)
    return doc


def retry_pattern() -> re.Pattern[str]:
    """One case-insensitive regex over every `[[retry]]` row."""
    return re.compile("|".join(f"(?:{row['pattern']})" for row in _table()["retry"]), re.IGNORECASE)


def success_markers() -> tuple[bytes, ...]:
    """Every `[[success]]` marker, as bytes, in table order."""
    return tuple(row["marker"].encode("utf-8") for row in _table()["success"])


QUIET_HEAD = 160
"""How far into a record a `[[quiet]]` marker is looked for: the record's own type comes first in the compact
JSON the clients write, and a marker further on is a quoted text, not the record's kind."""


@functools.cache
def quiet_markers() -> tuple[str, ...]:
    """Every `[[quiet]]` marker, in table order."""
    return tuple(row["marker"] for row in _table().get("quiet", ()))


def quiet(text: str) -> bool:
    """Whether the record `text` is a client's metadata (a `[[quiet]]` marker near its start): never an error."""
    head = text[:QUIET_HEAD]
    return any(marker in head for marker in quiet_markers())
