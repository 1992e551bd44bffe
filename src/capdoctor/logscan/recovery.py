"""Whether an error recovered: a completed request (`outcomes.toml`'s success markers) soon after it, and the
first completed request after the newest error (the log 'went quiet' when there is none).

Contract: `Recovery` reads the bytes of one input's chunks as the file scanner hands them over; the answer for
an error whose window runs past a chunk (or a byte range) is settled by the bytes that follow (`settle`), so it
is the same however the input is cut. No decoding, no classification.
"""

from __future__ import annotations

import sys

from capdoctor.logscan import outcomes
from capdoctor.logscan.results import Event

SUCCESS_MARKERS = outcomes.success_markers()
"""Bytes that mean a request completed (`outcomes.toml`): an error they follow recovered."""
SUCCESS_WINDOW = 256 * 1024
_UNSEARCHED = sys.maxsize
"""A marker's search start before any search in a chunk (`Recovery.succeeded`)."""


class Recovery:
    """The success markers of one input (or one byte range of it), chunk by chunk."""

    def __init__(self) -> None:
        self.last_success = -1
        """Absolute offset of the first completed request after the newest error (-1: none found)."""
        self.pending = True  # a completed request is looked for until one is found after the newest error
        self.record_end = 0
        """Where the last error record of the chunk being read ends (the quiet search starts there)."""
        n = len(SUCCESS_MARKERS)
        self._from, self._to, self._at = [_UNSEARCHED] * n, [0] * n, [-1] * n
        """Per success marker, in the chunk being read: the bytes the last search for it read and the first
        occurrence it found there (-1: none). See `succeeded`."""
        self.open: list[tuple[int, int]] = []
        """Errors whose success window runs past the chunk they are in, with no success marker before its end:
        each event's index in the result and the absolute offset where its window ends."""

    def new_chunk(self) -> None:
        """A new chunk: nothing known of its markers."""
        self.record_end = 0
        self._from = [_UNSEARCHED] * len(SUCCESS_MARKERS)

    def succeeded(self, buf: bytearray, cut: int, end: int) -> bool:
        """Whether a success marker lies wholly in `buf[end:min(cut, end + SUCCESS_WINDOW)]`: what
        `any(buf.find(m, end, stop) >= 0 for m in SUCCESS_MARKERS)` says, without searching the same bytes again
        for every error record (a marker absent from a dense log cost a 256 KiB search per record).

        Per marker, what the last search read is kept: it searched `[lo, hi)` and found its first whole occurrence
        at `at` (-1: none). While `at` lies at or after `end` it is also the first from `end`; while there is none,
        a window that starts inside `[lo, hi)` reads only what follows `hi`; anything else is read afresh."""
        stop = min(cut, end + SUCCESS_WINDOW)
        los, his, ats = self._from, self._to, self._at
        for k, marker in enumerate(SUCCESS_MARKERS):
            at = ats[k]
            if at < 0 and los[k] <= end <= his[k] < stop:  # none up to `hi`: only what follows is new
                at = ats[k] = buf.find(marker, max(los[k], his[k] - len(marker) + 1), stop)
                his[k] = stop
            if end < los[k] or 0 <= at < end or (at < 0 and stop > his[k]):  # read from `end` afresh
                at = ats[k] = buf.find(marker, end, stop)
                los[k], his[k] = end, stop
            if at >= 0 and at + len(marker) <= stop:
                return True
        return False

    def after_error(self, end: int) -> None:
        """An error record ended at `end`: a completed request is looked for after it."""
        self.pending = True
        if end > self.record_end:
            self.record_end = end

    def look(self, buf: bytearray, cut: int, base: int) -> None:
        """Record the first completed request after the newest error (only searched while one is pending)."""
        if not self.pending:
            return
        best = -1
        for marker in SUCCESS_MARKERS:
            pos = buf.find(marker, self.record_end, cut)
            while pos >= 0 and buf[max(0, pos - 7) : pos] == b"before ":
                pos = buf.find(marker, pos + 1, cut)
            if pos >= 0 and (best < 0 or pos < best):
                best = pos
        if best >= 0:
            self.last_success = base + best
            self.pending = False

    def settle(self, events: list[Event], data: bytes | bytearray, base: int, cut: int | None = None) -> None:
        """Mark succeeded the open errors (`open`) whose window holds a success marker in `data[:cut]`, the bytes
        that follow them from absolute offset `base` on; those whose window ends within them are settled either
        way, the others stay open. (A chunk ends at a line's end, so no marker spans two.)"""
        cut = len(data) if cut is None else cut
        still: list[tuple[int, int]] = []
        for index, stop in self.open:
            local = min(cut, stop - base)
            if any(data.find(marker, 0, local) >= 0 for marker in SUCCESS_MARKERS):
                events[index] = events[index]._replace(succeeded=True)
            elif stop - base > cut:
                still.append((index, stop))
        self.open = still
