"""The build cache: what capdoctor compiles from its own data at start-up, kept between runs.

Contract: `load(name, key)` returns the payload last stored under `name` with the same `key`, else None;
`store(name, key, payload)` writes it atomically (`os.replace`). `key(*parts)` digests whatever the payload
was built from, and every payload carries its own checksum, so a stale or damaged file reads as a miss. Nothing
here raises: a bad cache costs one rebuild, never a crash. The directory is `$CAPDOCTOR_CACHE_DIR` (`off`
disables it), else the user cache directory (`context.user_dir`, honouring `XDG_CACHE_HOME`) plus `build/`.
It holds only what capdoctor derives from files it ships, never anything a user or a server said.
"""

from __future__ import annotations

import contextlib
import hashlib
import os
import sys
import tempfile
from pathlib import Path

ENV_VAR = "CAPDOCTOR_CACHE_DIR"
"""Where the build cache lives instead of the platform's cache directory; `off` turns the cache off."""
MAGIC = b"capdoctor-build-cache 1\n"
_KEY_BYTES = 32
_SUM_BYTES = 16


def directory() -> Path | None:
    """The cache directory (not created here), or None when the cache is off."""
    value = os.environ.get(ENV_VAR, "")
    if value.lower() == "off":
        return None
    if value:
        return Path(value)
    from capdoctor.run.context import user_dir

    try:
        home = Path.home()
    except (RuntimeError, KeyError, OSError):  # no home directory to resolve: no cache
        return None
    return user_dir("cache", os.environ, home, sys.platform) / "build"


def key(*parts: bytes) -> bytes:
    """A digest of everything a payload was built from (each part length-prefixed: no two lists collide)."""
    h = hashlib.blake2b(digest_size=_KEY_BYTES)
    for part in parts:
        h.update(len(part).to_bytes(8, "little"))
        h.update(part)
    return h.digest()


def _checksum(payload: bytes) -> bytes:
    return hashlib.blake2b(payload, digest_size=_SUM_BYTES).digest()


def _path(name: str) -> Path | None:
    folder = directory()
    return None if folder is None else folder / f"{name}.bin"


def load(name: str, key: bytes) -> bytes | None:
    """The payload stored as `name` with this `key`, or None (absent, another key, damaged, unreadable)."""
    path = _path(name)
    if path is None:
        return None
    try:
        data = path.read_bytes()
    except (OSError, ValueError):
        return None
    head = len(MAGIC) + _KEY_BYTES + _SUM_BYTES
    if len(data) < head or not data.startswith(MAGIC) or data[len(MAGIC) : len(MAGIC) + _KEY_BYTES] != key:
        return None
    payload = data[head:]
    if _checksum(payload) != data[head - _SUM_BYTES : head]:
        return None
    return payload


def store(name: str, key: bytes, payload: bytes) -> bool:
    """Write `payload` as `name` under `key`, atomically; False when it could not be written (never raises)."""
    path = _path(name)
    if path is None:
        return False
    tmp = ""
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        fd, tmp = tempfile.mkstemp(prefix=f".{name}.", suffix=".tmp", dir=path.parent)
        with os.fdopen(fd, "wb") as fh:
            fh.write(MAGIC + key + _checksum(payload) + payload)
        os.replace(tmp, path)
        return True
    except (OSError, ValueError):
        if tmp:
            with contextlib.suppress(OSError):
                os.unlink(tmp)
        return False
