"""Inputs of the log scanner: paths to files, directories (recursive), `-` for stdin, `.gz` and `.zst`.

Contract: `expand(paths)` turns what the user named into `Source`s plus `Skipped` entries (with a one-line
reason) without reading file contents; `open_reader(source)` gives a stream that fills the scanner's one
reusable buffer (`readinto`), decompressing on the fly. Unreadable, binary or broken inputs raise
`SourceError` with a reason: the scanner records it and goes on. This module never decodes text, never
classifies, and never holds a whole file in memory.
"""

from __future__ import annotations

import contextlib
import os
import stat
import sys
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

CHUNK_BYTES = 4 * 1024 * 1024
"""Read size: large enough that per-chunk overhead vanishes, small enough to keep RSS well under budget. Measured
on two cores sharing a 32 MiB L3, the whole command on the benchmark's logs, 4 MiB and 8 MiB in turn (medians):
quiet 0.56–0.59 s against 0.65 s; "every error text different" 1.02 s against 1.13 s, and 1.36 s against 1.53 s in
a slow minute; 2 MiB was no faster than 4. At 1 in 10, the process tree's peak PSS 104–106 MB against 111–115 MB,
its RSS sum 151–153 MB against 157–162 MB (`bench/logscan.py`)."""

BINARY_SNIFF = 8192
GZIP_MAGIC = b"\x1f\x8b"
ZSTD_MAGIC = b"\x28\xb5\x2f\xfd"
MAX_FILES = 200_000
"""A directory walk stops listing after this many files (and says so) rather than run for ever."""


class SourceError(Exception):
    """One input cannot be read; the message is the one-line reason shown in `files[].skipped`."""


@dataclass(frozen=True)
class Source:
    """One input to scan: a file path, or stdin when `path` is `-`. `explicit`: named by the user."""

    path: str
    size: int = 0
    mtime: float | None = None
    explicit: bool = True

    @property
    def compressed(self) -> str | None:
        """`gzip`, `zstd` or None, from the file name (the magic bytes are checked again when opened)."""
        lower = self.path.lower()
        if lower.endswith(".gz"):
            return "gzip"
        if lower.endswith((".zst", ".zstd")):
            return "zstd"
        return None


@dataclass(frozen=True)
class Skipped:
    """An input that was not scanned, and why."""

    path: str
    reason: str


def expand(
    paths: list[str], *, since_ts: float | None = None, keep: Callable[[str], bool] | None = None
) -> tuple[list[Source], list[Skipped]]:
    """Files to scan from user-given paths; directories are walked recursively, symlink loops avoided.

    Files inside a directory older than `since_ts` are skipped up front (they cannot hold recent lines); files
    named explicitly are always read, filtered line by line. `keep` filters the files found inside directories.
    """
    sources: list[Source] = []
    skipped: list[Skipped] = []
    for raw in paths:
        if raw == "-":
            sources.append(Source("-"))
            continue
        try:
            st = os.stat(raw)
        except OSError as exc:
            broken = os.path.islink(raw)
            skipped.append(Skipped(raw, "a broken link" if broken else f"cannot read: {exc.strerror or exc}"))
            continue
        if stat.S_ISDIR(st.st_mode):
            _walk(raw, sources, skipped, since_ts, keep)
        elif stat.S_ISREG(st.st_mode):
            sources.append(Source(raw, st.st_size, st.st_mtime, explicit=True))
        else:  # a FIFO or a device would block or never end: named, but not read
            skipped.append(Skipped(raw, "not a regular file"))
    return sources, skipped


def _walk(
    root: str, sources: list[Source], skipped: list[Skipped], since_ts: float | None, keep: Callable[[str], bool] | None
) -> None:
    """Files under `root`, recursively. A symbolic link is followed only while it stays inside `root`: a link
    out of the folder the user named (to their home, to /) is listed as skipped, never read."""
    stack = [root]
    seen_dirs: set[tuple[int, int]] = set()
    count = 0
    inside = os.path.realpath(root)
    while stack:
        current = stack.pop()
        try:
            st = os.stat(current)
            key = (st.st_dev, st.st_ino)
            if key in seen_dirs:
                continue
            seen_dirs.add(key)
            entries = sorted(os.scandir(current), key=lambda e: e.name)
        except OSError as exc:
            skipped.append(Skipped(current, f"cannot list directory: {exc.strerror or exc}"))
            continue
        for entry in entries:
            try:
                if entry.is_symlink() and not _within(os.path.realpath(entry.path), inside):
                    skipped.append(Skipped(entry.path, f"a link out of {root}: not followed"))
                    continue
                if entry.is_dir(follow_symlinks=True):
                    stack.append(entry.path)
                    continue
                if not entry.is_file(follow_symlinks=True):
                    if entry.is_symlink() and not os.path.exists(entry.path):
                        skipped.append(Skipped(entry.path, "a broken link"))
                    continue
                est = entry.stat(follow_symlinks=True)
            except OSError as exc:
                skipped.append(Skipped(entry.path, f"cannot read: {exc.strerror or exc}"))
                continue
            count += 1
            if count > MAX_FILES:
                skipped.append(Skipped(root, f"more than {MAX_FILES} files: the rest were not scanned"))
                return
            if (since_ts is not None and est.st_mtime < since_ts) or (keep is not None and not keep(entry.path)):
                continue
            sources.append(Source(entry.path, est.st_size, est.st_mtime, explicit=False))


def _within(path: str, folder: str) -> bool:
    """Whether the resolved `path` is `folder` or lies under it."""
    try:
        return os.path.commonpath([path, folder]) == folder
    except ValueError:  # different drives on Windows
        return False


class Reader:
    """A byte stream with one method, `readinto`, that fills a caller's buffer (no per-chunk allocations).

    Decompression and read errors become `SourceError`; the first bytes are sniffed for NULs (binary).
    `limit` stops after that many bytes *and the rest of the line they end in* (a byte range of a file).
    """

    def __init__(
        self, raw: Any, closers: list[Any], errors: tuple[type[BaseException], ...], what: str, limit: int | None = None
    ) -> None:
        self._raw = raw
        self._closers = closers
        self._errors = errors
        self._what = what
        self._left = limit
        self._finishing = False
        self._done = False
        self._sniffed = False
        self.plain = what == "read failed" and bool(closers)
        """True for an uncompressed file: its size on disk is the size of its data."""

    def _read(self, view: memoryview) -> int:
        try:
            n = self._raw.readinto(view)
        except self._errors as exc:
            raise SourceError(f"{self._what}: {exc}") from exc
        return int(n or 0)

    def readinto(self, view: memoryview) -> int:
        """Fill `view` as far as the data goes; 0 means the end."""
        if self._done:
            return 0
        total = 0
        while total < len(view):
            want = view[total:]
            if self._finishing:
                n = self._read(want[:65536])
                if n == 0:
                    self._done = True
                    break
                nl = bytes(want[:n]).find(b"\n")
                if nl >= 0:
                    total += nl + 1
                    self._done = True
                    break
                total += n
                continue
            if self._left is not None:
                want = want[: self._left]
            n = self._read(want)
            if n == 0:
                self._done = True
                break
            if not self._sniffed:
                self._sniffed = True
                if b"\x00" in bytes(view[: min(n, BINARY_SNIFF)]):
                    raise SourceError("binary data (NUL bytes)")
            total += n
            if self._left is not None:
                self._left -= n
                if self._left <= 0:
                    if total and view[total - 1] == 0x0A:
                        self._done = True
                        break
                    self._finishing = True
        return total

    def close(self) -> None:
        """Close every layer (decompressor, then file)."""
        for closer in self._closers:
            with contextlib.suppress(Exception):  # closing a broken stream must not mask the real error
                closer.close()


def open_reader(source: Source, *, start: int = 0, limit: int | None = None) -> Reader:
    """A `Reader` over `source` (decompressing gzip/zstd by magic bytes); raises SourceError.

    `start`/`limit` read a byte range of a plain file (used to split one big file across processes).
    """
    if source.path == "-":
        return Reader(sys.stdin.buffer, [], (OSError,), "read failed")
    try:
        fh = open(source.path, "rb")  # noqa: SIM115 - the Reader owns and closes it
        head = fh.read(4)
        fh.seek(start)
    except OSError as exc:
        raise SourceError(f"cannot read: {exc.strerror or exc}") from exc
    if head.startswith(GZIP_MAGIC):
        import gzip
        import zlib

        gz = gzip.GzipFile(fileobj=fh)
        return Reader(gz, [gz, fh], (OSError, EOFError, zlib.error), "broken gzip data")
    if head.startswith(ZSTD_MAGIC):
        try:
            import zstandard
        except ImportError as exc:
            fh.close()
            raise SourceError("zstd-compressed, and the zstandard module is not installed") from exc
        reader = zstandard.ZstdDecompressor().stream_reader(fh, read_across_frames=True)
        return Reader(reader, [reader, fh], (zstandard.ZstdError, OSError, EOFError), "broken zstd data")
    if source.compressed:
        fh.close()
        raise SourceError(f"named like {source.compressed} data but is not")
    return Reader(fh, [fh], (OSError,), "read failed", limit)


def display_path(path: str, home: Path | None) -> str:
    """`path` with the home directory shortened to `~` (reports are shared)."""
    if home is not None:
        h = str(home).rstrip("/\\")
        if h and (path == h or path.startswith(h + os.sep)):
            return "~" + path[len(h) :]
    return path
