"""One input (or one byte range of it) scanned: chunks → candidate lines → records → statistics and events.

Contract: `FileScanner(prefilter, options, path, result).run(reader)` reads `reader` in large binary chunks (a
carried-over tail joins lines split at chunk boundaries), runs the prefilter once over each chunk, and decodes
only the candidate lines, grouped into records (`records.record_head`). Each record is judged once per distinct
text (`memo.RecordMemo`, `facts.judge`); a record judged before as no error costs a key and a lookup. An error
judged before in the same input costs only its time and event: what follows from its facts is tallied per
judgement and added to the statistics once (`_Tally`). A huge line is never held whole (a window around each
match is used instead). Unreadable input becomes `FileInfo.skipped`; nothing here raises for bad input. It must
not print, decide verdicts, or touch the network.
"""

from __future__ import annotations

from bisect import bisect_right
from collections.abc import Callable, Collection
from datetime import datetime

from capdoctor.classifier.signatures import engine as classifier
from capdoctor.logscan import sources as src
from capdoctor.logscan.facts import Facts, find_request_ids, judge
from capdoctor.logscan.memo import RecordMemo
from capdoctor.logscan.prefilter import CONFIRM, SURE, Prefilter, prefilter_for, scan_literals
from capdoctor.logscan.records import MAX_LINE, RECORD_CHARS, WINDOW, example_of, record_head
from capdoctor.logscan.recovery import SUCCESS_WINDOW, Recovery
from capdoctor.logscan.results import MAX_EVENTS, Event, FileInfo, ScanOptions, ScanResult, SigStat, max_dt, min_dt
from capdoctor.logscan.timestamps import parse_timestamp

CHATTER_HEAD = 160
"""How much of a line `FileScanner._chatter` reads for its level."""
CARRY_CAP = 1024 * 1024
"""A tail without a newline longer than this is scanned as is (a huge line), not carried further."""

Spans = list[tuple[int, int]]
Looked = tuple[bytes, bytes, Facts]
"""A one-line record's bytes, memo key and facts, looked up (or judged) as it was found."""


class _Tally:
    """The records of one remembered judgement (one `Facts`) after its first, in one input: how many, and their
    first and last times. Everything else they add to the statistics follows from the facts alone, so it is
    added once per judgement when the input ends (`FileScanner._fold`) instead of once per record."""

    __slots__ = ("count", "facts", "first", "ids_open", "last")

    def __init__(self, facts: Facts, ids_open: bool) -> None:
        self.facts = facts
        self.count = 0
        self.first: datetime | None = None
        self.last: datetime | None = None
        self.ids_open = ids_open
        """Whether a row of these facts still collects request ids (fewer than KEPT_IDS so far)."""


class FileScanner:
    """Scans the chunks of one input (or one byte range of it) into a ScanResult."""

    def __init__(
        self,
        prefilter: Prefilter,
        options: ScanOptions,
        path: str,
        result: ScanResult,
        memo: RecordMemo | None = None,
        shown: Collection[str] = (),
    ) -> None:
        self.pf = prefilter
        self.literals = scan_literals()
        self.selective = self.literals.selective
        self.extra = prefilter_for(options.engine, extra=True) if self.selective else None
        """The selective literals the engine lacks (`_chatter`)."""
        self._extra_ends: list[int] = []
        self._extra_ids: list[int] = []
        """Where those stand in the chunk being read (end offsets, ascending), and which they are."""
        self._quiet = classifier().quiet_level
        self._confirms = classifier().confirms
        self._table = classifier().literals()
        self.memo = memo if memo is not None else RecordMemo()
        self.shown = shown
        """Rows whose example an earlier byte range of this file, scanned by the same worker, holds: the ranges
        are merged in file order and the first example stays (finding its excerpt again costs a classification)."""
        self.opt = options
        self.path = path
        self.res = result
        self.info = FileInfo(path)
        self.res.files.append(self.info)
        self.recovery = Recovery()
        self.huge = False
        self._tallies: dict[int, _Tally] = {}
        """By `id(facts)` (the tally holds the facts, so the id stays theirs): the judgements seen before here."""

    def run(
        self,
        reader: src.Reader,
        line_base: int = 0,
        base: int = 0,
        size_hint: int | None = None,
        buffer: bytearray | None = None,
    ) -> None:
        """Scan everything `reader` yields; `base` is the absolute offset of its first byte.

        One buffer of `chunk_bytes + CARRY_CAP` is reused for the whole input: each round fills it after the
        carried-over partial line, scans up to the last newline, and moves the tail to the front. `buffer`: one of
        that size to use (a pool worker's, kept for all its ranges: a new one costs ~5 ms of page faults)."""
        chunk = self.opt.chunk_bytes if size_hint is None else max(1, min(self.opt.chunk_bytes, size_hint + 1))
        carry_cap = CARRY_CAP if size_hint is None else min(CARRY_CAP, size_hint + 1)
        # sized to the file: 100,000 small files must not cost 9 MiB each
        buf = buffer if buffer is not None and len(buffer) == chunk + carry_cap else bytearray(chunk + carry_cap)
        view = memoryview(buf)
        carry = 0
        lines = line_base
        unterminated = False  # bytes of a huge line were scanned and no newline has ended it yet
        try:
            while True:
                n = reader.readinto(view[carry : carry + chunk])
                if n == 0:
                    break
                self.info.bytes += n
                end = carry + n
                if n < chunk:  # the reader fills its view unless the input ended: scan the rest in one piece,
                    lines += self._process(buf, view, end, base, lines)  # so the last record stays whole
                    unterminated = buf[end - 1] != 0x0A
                    base += end
                    carry = 0
                    continue
                cut = buf.rfind(b"\n", carry, end) + 1
                if cut == 0:
                    if end > carry_cap:  # a line longer than the carry: scan it in windows, as is
                        self.huge = unterminated = True
                        lines += self._process(buf, view, end, base, lines)
                        base += end
                        carry = 0
                    else:
                        carry = end
                    continue
                lines += self._process(buf, view, cut, base, lines)
                unterminated = False
                rest = end - cut
                if rest > carry_cap:  # the tail is itself a huge partial line
                    self.huge = unterminated = True
                    view[0:rest] = view[cut:end]
                    lines += self._process(buf, view, rest, base + cut, lines)
                    base += end
                    carry = 0
                    continue
                view[0:rest] = view[cut:end]
                carry = rest
                base += cut
        except src.SourceError as exc:
            self.info.skipped = str(exc)
        finally:
            reader.close()
        self._finish(buf, view, carry, base, lines, line_base, unterminated)

    def _finish(
        self, buf: bytearray, view: memoryview, carry: int, base: int, lines: int, line_base: int, unterminated: bool
    ) -> None:
        """The carried tail scanned, the line count and notes set, the tallies folded in."""
        if carry:
            self._process(buf, view, carry, base, lines)
        if carry or unterminated:
            lines += 1  # the last line has no newline
        self.info.lines = lines - line_base
        if self.huge:
            self.info.note = f"a line longer than {CARRY_CAP // 1024} KiB was scanned in windows"
        last = self.res.last_success.get(self.path, -1)
        self.res.last_success[self.path] = max(last, self.recovery.last_success)
        self._fold()

    def _fold(self) -> None:
        """Add each tally to the statistics of its facts' rows: what `_record` adds per record, times the count
        (the first record of each judgement went through `_record`, so every key is already in its counter and
        the counters keep the order in which the records first named them)."""
        stats = self.res.stats
        for tally in self._tallies.values():
            n = tally.count
            if not n:
                continue
            facts = tally.facts
            for sid, provider in zip(facts.sids, facts.providers, strict=True):
                stat = stats[sid]
                stat.count += n
                stat.first = min_dt(stat.first, tally.first)
                stat.last = max_dt(stat.last, tally.last)
                if facts.model:
                    stat.models[facts.model] += n
                if provider:
                    stat.providers[provider] += n
                if facts.status:
                    stat.statuses[facts.status] += n
        self._tallies.clear()

    def _process(self, buf: bytearray, view: memoryview, cut: int, base: int, line_base: int) -> int:
        """Find, group and classify the candidate lines of buf[:cut]; returns the newlines counted there."""
        recovery = self.recovery
        recovery.new_chunk()
        if recovery.open:
            recovery.settle(self.res.events, buf, base, cut)
        ends, ids = self.pf.hits(view[:cut])
        if not ends:
            recovery.look(buf, cut, base)
            return buf.count(b"\n", 0, cut)
        if ids is not None and self.extra is not None:
            self._extra_ends, extra_ids = self.extra.hits(view[:cut])
            self._extra_ids = extra_ids or []
        records, looked, in_order = self._group(buf, cut, ends, ids)
        counted_to, count = 0, 0
        tallies = self._tallies
        memo_lookup = self.memo.lookup
        for head in records if in_order else sorted(records):
            spans = records[head]
            end = spans[-1][1]
            raw: bytes | None = None
            key: bytes | None = None
            facts: Facts | None = None
            if end - head <= RECORD_CHARS:
                seen = looked.get(head)
                if seen is not None:
                    raw, key, facts = seen
                else:
                    raw = bytes(buf[head:end])
                    key, facts = memo_lookup(raw)
                if facts is not None:
                    if not facts.matches:
                        continue  # a record judged before as no error
                    tally = tallies.get(id(facts))
                    if tally is not None:  # an error judged before in this input: its time and event only
                        count += buf.count(b"\n", counted_to, head)
                        counted_to = head
                        self._again(buf, cut, head, end, base, line_base + count + 1, raw, tally)
                        continue
            count += buf.count(b"\n", counted_to, head)  # lines are counted up to the records that need a number
            counted_to = head
            self._record(buf, cut, head, spans, base, line_base + count + 1, ends, ids, raw, key, facts)
        recovery.look(buf, cut, base)
        return count + buf.count(b"\n", counted_to, cut)

    def _group(
        self, buf: bytearray, cut: int, ends: list[int], ids: list[int] | None
    ) -> tuple[dict[int, Spans], dict[int, Looked], bool]:
        """The candidate records of buf[:cut], by start: the spans of their candidate lines; the one-line records
        already looked up (or judged) as they were found; and whether the records were found in the order of their
        starts (no continuation reached back). One-line records judged as no error are dropped as found (an access
        log's 404)."""
        records: dict[int, Spans] = {}
        looked: dict[int, Looked] = {}
        quiet: dict[int, int] = {}
        """One-line records judged as no error, by start -> end (a continuation under one may still make it one)."""
        in_order = True
        rfind, find = buf.rfind, buf.find
        last_end = -1
        for e in ends:
            if e <= last_end:  # another literal on a line already taken
                continue
            p = e - 1
            ls = rfind(b"\n", 0, p) + 1
            le = find(b"\n", p, cut)
            if le < 0:
                le = cut
            if le - ls > MAX_LINE:
                self.huge = True
                ws, we = max(ls, p - WINDOW), min(le, p + WINDOW)
                records.setdefault(ws, []).append((ws, we))
                last_end = we
                continue
            last_end = le
            head = record_head(buf, ls, cut)
            if head == ls:
                if le - ls <= RECORD_CHARS:
                    line = bytes(buf[ls:le])
                    if ids is not None and self._chatter(line, ids, ends, ls, le):
                        quiet[ls] = le
                        continue
                    facts, key = self._line_facts(line, ids, ends, ls, le)
                    if not facts.matches:
                        quiet[ls] = le
                        continue
                    looked[ls] = (line, key, facts)
                records[ls] = [(ls, le)]
                continue
            in_order = False
            spans = records.get(head)
            if spans is None:  # a record whose first candidate line is this continuation (or a quiet line above it)
                spans = records[head] = [(head, quiet.pop(head))] if head in quiet else []
            spans.append((ls, le))
            looked.pop(head, None)  # no longer one line: looked up whole afterwards
        return records, looked, in_order

    def _chatter(self, line: bytes, ids: list[int], ends: list[int], start: int, end: int) -> bool:
        """Whether the one-line record `line` (buf[start:end]) is no error whatever the engine reads: it is logged
        at a quiet level, where the words layer never speaks (`Engine.quiet_level`, read in its first
        CHATTER_HEAD bytes: a level further on is left to the engine), and it holds none of the selective
        literals (`Engine.selective`: no row, status name or spelling can match it) but those whose rows and
        spellings do not match it (`Engine.confirms`: a 404 access line). Non-ASCII lines and lines with `\\u`
        escapes are left to the engine (the prefilter folds ASCII case only)."""
        if self.extra is None or not line.isascii() or b"\\u" in line:
            return False
        selective, extra = self.selective, self._extra_ends
        found = ids[bisect_right(ends, start) : bisect_right(ends, end)]
        found += self.pf.complete(found, line)
        kinds = [selective[i] for i in found]
        lo, hi = bisect_right(extra, start), bisect_right(extra, end)
        if lo < hi:
            if not self._extra_ids:  # (an engine that names no literal: each counts as sure)
                return False
            kinds += [self.literals.extra_kinds[i] for i in self._extra_ids[lo:hi]]
        if SURE in kinds:
            return False
        head = line[:CHATTER_HEAD].decode("ascii")
        if not self._quiet(head, len(head) < len(line)):
            return False
        if CONFIRM not in kinds:
            return True
        pending = {self._table[i] for i in found if selective[i] == CONFIRM}
        pending.update(self.literals.extra[i] for i in self._extra_ids[lo:hi])
        return not self._confirms(line.decode("ascii"), pending)

    def _line_facts(
        self, line: bytes, ids: list[int] | None, ends: list[int], start: int, end: int
    ) -> tuple[Facts, bytes]:
        """The facts of the one-line record `line` (buf[start:end]) and its memo key: remembered, or judged now."""
        key, facts = self.memo.lookup(line)
        if facts is None:
            text = line.decode("utf-8", "replace")
            facts = judge(text, self._literals_in(text, line, ids, ends, start, end))
            self.memo.put(key, facts)
        return facts, key

    def _record(
        self,
        buf: bytearray,
        cut: int,
        head: int,
        spans: Spans,
        base: int,
        line_no: int,
        ends: list[int],
        ids: list[int] | None,
        raw: bytes | None,
        key: bytes | None,
        facts: Facts | None,
    ) -> None:
        """Judge one candidate record and fold it into the statistics (`raw`, `key` and `facts`: the record's
        bytes, memo key and remembered facts when `_process` already looked them up; None for a long record).
        An error's time is read next: one older than `since` is only counted (`too_old`)."""
        end = spans[-1][1]
        if raw is None:  # a long record: its head and the first spans, judged every time (no key)
            parts = [bytes(buf[head : min(spans[0][0], head + 1024)])] if head < spans[0][0] else []
            parts += [bytes(buf[s : min(e, s + 4096)]) for s, e in spans[:4]]
            raw = b"\n".join(parts)
        text = ""
        if facts is None:
            text = raw.decode("utf-8", "replace")
            facts = judge(text, self._literals_in(text, raw, ids, ends, head, end))
            if key is not None:
                self.memo.put(key, facts)
        if not facts.matches:
            return
        text = text or raw.decode("utf-8", "replace")
        nl = text.find("\n")
        ts = parse_timestamp(text if nl < 0 else text[:nl], self.opt.now)
        if self._too_old(ts):
            return
        self._count(facts, text, ts, line_no, lambda: self._literals_in(text, raw, ids, ends, head, end))
        if key is not None and id(facts) not in self._tallies:
            if len(self._tallies) >= max(1, self.memo.entries):  # bounded like the memo (a log of unique texts)
                self._fold()
            self._tallies[id(facts)] = _Tally(facts, _ids_open(facts, self.res.stats))
        self._event(buf, cut, head, end, base, line_no, ts, facts)

    def _count(
        self, facts: Facts, text: str, ts: datetime | None, line_no: int, lits: Callable[[], Collection[int]]
    ) -> None:
        """Add one error record of `facts` (its text, time and line) to the statistics of each of its rows."""
        model = facts.model
        rids: list[str] | None = None
        stats = self.res.stats
        for m, provider, sid, cause in zip(facts.matches, facts.providers, facts.sids, facts.causes, strict=True):
            stat = stats.get(sid)
            if stat is None:
                stat = stats[sid] = SigStat(sid, cause)
            stat.count += 1
            if ts is not None:  # inline min/max: this loop runs once per error record
                if stat.first is None or ts < stat.first:
                    stat.first = ts
                if stat.last is None or ts > stat.last:
                    stat.last = ts
            if not stat.example and sid not in self.shown:
                stat.example, stat.example_path, stat.example_line = example_of(text), self.path, line_no
                stat.excerpt = m.excerpt if facts.text == text else _excerpt_in(text, lits(), sid, m.excerpt)
            if model:
                stat.models[model] += 1
            if provider:
                stat.providers[provider] += 1
            if facts.request_ids and stat.ids_open:  # the first few are kept: stop looking then
                if rids is None:
                    rids = find_request_ids(text)
                stat.keep_ids(rids)
            if facts.status:
                stat.statuses[facts.status] += 1

    def _again(
        self, buf: bytearray, cut: int, head: int, end: int, base: int, line_no: int, raw: bytes, tally: _Tally
    ) -> None:
        """One more record of a judgement this input saw before (`_Tally`): what `_record` does for it, less what
        follows from the facts alone (counted once per judgement by `_fold`): its time (and `--since`), the
        request ids while its rows collect them, and its event."""
        facts = tally.facts
        nl = raw.find(b"\n")
        ts = parse_timestamp((raw if nl < 0 else raw[:nl]).decode("utf-8", "replace"), self.opt.now)
        if self._too_old(ts):
            return
        if ts is not None:
            if tally.first is None or ts < tally.first:
                tally.first = ts
            if tally.last is None or ts > tally.last:
                tally.last = ts
        tally.count += 1
        if tally.ids_open:
            stats = self.res.stats
            rids = find_request_ids(raw.decode("utf-8", "replace"))
            for sid in facts.sids:
                stats[sid].keep_ids(rids)
            tally.ids_open = _ids_open(facts, stats)
        self._event(buf, cut, head, end, base, line_no, ts, facts)

    def _literals_in(
        self, text: str, raw: bytes, ids: list[int] | None, ends: list[int], head: int, end: int
    ) -> Collection[int]:
        """The ids of the engine's literals in the record `raw` (buf[head:end], decoded: `text`), as
        `Engine.literal_ids` gives them: the prefilter's own hits inside it, with the literals that hold one of
        them (`complete`: the database leaves those out); for non-ASCII text (whose case folding only Python does
        right) the prefilter's hits in its lower-cased form, the literals being lower-case; the engine's literal
        finder when the prefilter names no literals."""
        if ids is None:
            return classifier().literal_ids(text)
        if raw.isascii():
            return self.pf.complete(ids[bisect_right(ends, head) : bisect_right(ends, end)], raw)
        low = text.lower().encode("utf-8", "surrogatepass")
        return frozenset(self.pf.complete(self.pf.hits(low)[1] or (), low))

    def _too_old(self, ts: datetime | None) -> bool:
        """Whether a record written at `ts` is older than `--since` (then only counted, in `too_old`)."""
        since = self.opt.since
        if ts is not None and since is not None and ts < since:
            self.res.too_old += 1
            return True
        return False

    def _event(
        self, buf: bytearray, cut: int, head: int, end: int, base: int, line_no: int, ts: datetime | None, facts: Facts
    ) -> None:
        """The event of one error record: whether a request completed soon after it (it recovered; with a retry
        it announced, the retry succeeded), and that a completed request is looked for after it."""
        recovery = self.recovery
        succeeded = recovery.succeeded(buf, cut, end)
        recovery.after_error(end)
        events = self.res.events
        if len(events) >= MAX_EVENTS:
            self.res.events_dropped += 1
            return
        if not succeeded and end + SUCCESS_WINDOW > cut:  # its window goes on after this chunk
            recovery.open.append((len(events), base + end + SUCCESS_WINDOW))
        cause, sid = facts.causes[0], facts.sids[0]
        events.append(Event(ts, cause, sid, facts.model, facts.retry, succeeded, self.path, line_no, base + head))


def _ids_open(facts: Facts, stats: dict[str, SigStat]) -> bool:
    """Whether a record of `facts` could still add a request id: it names some, and a row of it has fewer than
    KEPT_IDS (`SigStat.keep_ids`)."""
    return facts.request_ids and any(stats[sid].ids_open for sid in facts.sids)


def _excerpt_in(text: str, lits: Collection[int], signature_id: str, fallback: str) -> str:
    """The deciding words of `signature_id` in this very text (a remembered judgement was made on a text whose
    timestamp or ids differ; the first example of a signature shows its own words)."""
    for m in classifier().classify_candidates(text, lits, origin="log"):
        if m.signature.id == signature_id:
            return m.excerpt
    return fallback
