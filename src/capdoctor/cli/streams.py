"""Output streams that never die on an encoding: any stdout works (cp1252 redirects, `PYTHONIOENCODING=ascii`).

Contract: `protect()` is called once by the CLI before anything is printed. A stream whose encoding is not
UTF-8/16/32 gets an error handler that writes capdoctor's own typography in ASCII (`—` → `-`, `✓` → `ok`)
and any other unencodable character as `?`, instead of raising `UnicodeEncodeError` halfway through a
report. JSON never relies on it: the JSON renderer escapes non-ASCII itself when `is_utf` is false, so the
document stays complete and lossless. Importing this module is cheap (codecs only); it never closes or
replaces a stream, it only changes the error policy of the one it was given.
"""

from __future__ import annotations

import codecs
from typing import Any

HANDLER = "capdoctor.ascii"


def _fallback(exc: UnicodeError) -> tuple[str, int]:
    if not isinstance(exc, UnicodeEncodeError):
        raise exc
    from capdoctor.text import to_ascii  # only once something cannot be encoded: start-up stays light

    return to_ascii(exc.object[exc.start : exc.end]), exc.end


codecs.register_error(HANDLER, _fallback)


def encoding_of(stream: Any) -> str:
    """The normalised codec name of `stream` ("utf-8", "cp1252", "ascii"; "" when it has none)."""
    name = getattr(stream, "encoding", None) or ""
    try:
        return codecs.lookup(name).name
    except LookupError:
        return name.lower()


def is_utf(stream: Any) -> bool:
    """True when `stream` can hold every character: UTF-8/16/32, or an in-memory text buffer (no encoding)."""
    return getattr(stream, "encoding", None) is None or encoding_of(stream).startswith("utf")


def protect(*streams: Any) -> None:
    """Give every non-UTF text stream among `streams` the ASCII fallback error handler."""
    for stream in streams:
        reconfigure = getattr(stream, "reconfigure", None)
        if reconfigure is not None and not is_utf(stream) and getattr(stream, "errors", None) != HANDLER:
            try:
                reconfigure(errors=HANDLER)
            except (ValueError, OSError):  # a detached or closed stream: nothing will be written to it
                continue
