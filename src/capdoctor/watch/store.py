"""The history database: rounds and attempts in SQLite (stdlib `sqlite3`), crash-safe and shareable.

Contract: `Store.open(path)` creates or opens a capdoctor history and refuses anything else with a
`HistoryError` (a `UsageError`: exit 2): a damaged or non-SQLite file, another program's database (its
`application_id`, or other tables), a history from a newer capdoctor (`user_version`). `record` writes one
round (row, attempts, quota, retention pruning) in ONE `BEGIN IMMEDIATE` transaction, so `kill -9` loses at
most that round, and two watchers on one file take turns (WAL, a busy timeout) instead of corrupting it.
`MIGRATIONS` take version N to N+1 in one transaction on open. It must not print and stores no secret.

Schema 2 adds `capdoctor proxy`'s records: `rounds.kind` (`probe` for watch's rounds, `proxy` for one exchange
of the user's traffic), `exchanges` (the proxy's facts, one row per proxy round) and `snapshots` (the network
when a burst of failures came, pruned by the same retention). An older capdoctor refuses the file by its version.
"""

from __future__ import annotations

import json
import sqlite3
import time
from collections.abc import Iterator, Mapping, Sequence
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from capdoctor.errors import UsageError
from capdoctor.watch.records import WATCH, AttemptRecord, ExchangeRecord, RoundRecord

APPLICATION_ID = 0x43617044
"""`PRAGMA application_id` of a capdoctor history ("CapD"): tells our file from any other SQLite file."""

BUSY_TIMEOUT_S = 30.0
"""How long a writer waits for another watcher's transaction before giving up on its round."""

DEFAULT_RETENTION_DAYS = 30.0

MIGRATIONS: tuple[tuple[str, ...], ...] = (
    (  # 0 -> 1: rounds, their attempts, quota per round
        """CREATE TABLE rounds (
            id INTEGER PRIMARY KEY,
            started REAL NOT NULL,
            finished REAL NOT NULL,
            source TEXT NOT NULL,
            provider TEXT,
            model TEXT,
            verdict TEXT NOT NULL,
            confidence REAL NOT NULL,
            summary TEXT NOT NULL DEFAULT ''
        )""",
        "CREATE INDEX rounds_finished ON rounds(finished)",
        """CREATE TABLE attempts (
            id INTEGER PRIMARY KEY,
            round_id INTEGER NOT NULL REFERENCES rounds(id) ON DELETE CASCADE,
            seq INTEGER NOT NULL,
            at REAL NOT NULL,
            model TEXT NOT NULL,
            role TEXT NOT NULL,
            ok INTEGER NOT NULL,
            status INTEGER,
            kind TEXT,
            signature TEXT,
            cause TEXT,
            latency_ms INTEGER,
            request_id TEXT,
            origin TEXT UNIQUE
        )""",
        "CREATE INDEX attempts_round ON attempts(round_id, seq)",
        "CREATE INDEX attempts_at ON attempts(at)",
        """CREATE TABLE quota (
            round_id INTEGER NOT NULL REFERENCES rounds(id) ON DELETE CASCADE,
            kind TEXT NOT NULL,
            remaining REAL NOT NULL,
            PRIMARY KEY (round_id, kind)
        )""",
    ),
    (  # 1 -> 2: the proxy's exchanges and burst snapshots; rounds say whose traffic they are
        "ALTER TABLE rounds ADD COLUMN kind TEXT NOT NULL DEFAULT 'probe'",
        """CREATE TABLE exchanges (
            round_id INTEGER PRIMARY KEY REFERENCES rounds(id) ON DELETE CASCADE,
            method TEXT NOT NULL,
            path TEXT NOT NULL,
            upstream TEXT NOT NULL,
            client TEXT,
            client_version TEXT,
            stream INTEGER NOT NULL,
            outcome TEXT NOT NULL,
            bytes INTEGER NOT NULL,
            ttfb_ms REAL,
            total_ms REAL,
            request_ids TEXT NOT NULL DEFAULT '{}',
            ratelimit TEXT NOT NULL DEFAULT '{}',
            error_text TEXT
        )""",
        """CREATE TABLE snapshots (
            id INTEGER PRIMARY KEY,
            at REAL NOT NULL,
            reason TEXT NOT NULL,
            verdict TEXT NOT NULL,
            data TEXT NOT NULL
        )""",
        "CREATE INDEX snapshots_at ON snapshots(at)",
    ),
)
"""`MIGRATIONS[n]` takes a history from schema version n to n+1; the last index + 1 is the current version."""

OUR_TABLES = frozenset({"rounds", "attempts", "quota", "exchanges", "snapshots"})


class HistoryError(UsageError):
    """The history file cannot be used: corrupt, foreign, newer, unreadable. One line, exit 2."""


class HistoryBusy(HistoryError):
    """Another writer held the database longer than the busy timeout: this round was not recorded."""


@dataclass(frozen=True)
class StoredRound:
    """A round read back: its row id and the record."""

    id: int
    record: RoundRecord


@dataclass(frozen=True)
class Snapshot:
    """How the network looked at a burst of failures: when, why it was taken, the checks' verdict and rows."""

    at: float
    reason: str
    verdict: str
    data: Mapping[str, Any]


def _describe(exc: sqlite3.Error) -> str:
    return str(exc) or type(exc).__name__


@contextmanager
def _errors(path: Path, doing: str) -> Iterator[None]:
    """Turn sqlite3/OS errors into one HistoryError line that names the file and what was being done."""
    try:
        yield
    except sqlite3.DatabaseError as exc:
        text = _describe(exc)
        if isinstance(exc, sqlite3.OperationalError) and "locked" in text:
            raise HistoryBusy(f"history database {path}: cannot {doing}: {text}") from None
        if "not a database" in text or "malformed" in text or "corrupt" in text:
            raise HistoryError(
                f"history database {path} is corrupt or not a SQLite file ({text}); move it away or pass another --db"
            ) from None
        raise HistoryError(f"history database {path}: cannot {doing}: {text}") from None
    except OSError as exc:
        raise HistoryError(f"history database {path}: cannot {doing}: {exc.strerror or exc}") from None


class Store:
    """One open history database. Not shared between threads; open one per process (or thread)."""

    def __init__(self, conn: sqlite3.Connection, path: Path) -> None:
        self.conn = conn
        self.path = path

    @classmethod
    def open(cls, path: Path, *, create: bool = True, migrations: Sequence[Sequence[str]] = MIGRATIONS) -> Store:
        """Open (and with `create`, create) the history at `path`, migrated to the current schema."""
        if path.is_dir():
            raise HistoryError(f"history database {path} is a directory; pass a file path with --db")
        if not path.exists():
            if not create:
                raise HistoryError(
                    f"no history database at {path}: run `capdoctor watch` (or "
                    f"`capdoctor logs --into {path}`) first, or pass --db"
                )
            with _errors(path, "create its folder"):
                path.parent.mkdir(parents=True, exist_ok=True)
        with _errors(path, "open it"):
            conn = sqlite3.connect(str(path), timeout=BUSY_TIMEOUT_S, isolation_level=None)
        store = cls(conn, path)
        try:
            with _errors(path, "open it"):
                store._prepare(migrations)
        except BaseException:
            conn.close()
            raise
        return store

    def _prepare(self, migrations: Sequence[Sequence[str]]) -> None:
        c = self.conn
        app_id, version, foreign = self._identity()
        if app_id not in (0, APPLICATION_ID) or (app_id == 0 and (version or foreign)):
            raise HistoryError(
                f"{self.path} is a SQLite database of another program, not a capdoctor history; pass another --db"
            )
        if version > len(migrations):
            raise HistoryError(
                f"history database {self.path} has schema version {version}, newer than this "
                f"capdoctor knows ({len(migrations)}): upgrade capdoctor"
            )
        check = c.execute("PRAGMA quick_check").fetchone()
        if not check or check[0] != "ok":
            raise HistoryError(
                f"history database {self.path} is corrupt (quick_check: {check[0] if check else '?'}); "
                "move it away or pass another --db"
            )
        c.execute("PRAGMA journal_mode=WAL")
        c.execute("PRAGMA synchronous=NORMAL")  # in WAL mode: durable against a killed process
        c.execute("PRAGMA foreign_keys=ON")
        if version < len(migrations):
            self._migrate(migrations)

    def _identity(self) -> tuple[int, int, bool]:
        """(application_id, user_version, holds tables that are not ours)."""
        c = self.conn
        app_id = int(c.execute("PRAGMA application_id").fetchone()[0])
        version = int(c.execute("PRAGMA user_version").fetchone()[0])
        tables = {r[0] for r in c.execute("SELECT name FROM sqlite_master WHERE type = 'table'")}
        return app_id, version, bool(tables - OUR_TABLES - {"sqlite_sequence"})

    def _migrate(self, migrations: Sequence[Sequence[str]]) -> None:
        """Apply the missing migrations in one transaction (another process may have just done it)."""
        c = self.conn
        c.execute("BEGIN IMMEDIATE")
        try:
            version = int(c.execute("PRAGMA user_version").fetchone()[0])
            for step in migrations[version:]:
                for statement in step:
                    c.execute(statement)
            c.execute(f"PRAGMA application_id = {APPLICATION_ID}")
            c.execute(f"PRAGMA user_version = {len(migrations)}")
            c.execute("COMMIT")
        except BaseException:
            c.execute("ROLLBACK")
            raise

    @property
    def version(self) -> int:
        """The schema version of the open file."""
        return int(self.conn.execute("PRAGMA user_version").fetchone()[0])

    def close(self) -> None:
        """Close the connection (an open transaction, if any, is rolled back)."""
        self.conn.close()

    def __enter__(self) -> Store:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    # -- writing

    def record(
        self, rnd: RoundRecord, retention_days: float | None = DEFAULT_RETENTION_DAYS, now: float | None = None
    ) -> int:
        """Write `rnd` and prune what is older than the retention, in one transaction; returns attempts added.

        Attempts with an `origin` already stored are skipped; a log round that adds nothing leaves no round.
        """
        return self.record_many((rnd,), retention_days, now)

    def record_many(
        self,
        rounds: Sequence[RoundRecord],
        retention_days: float | None = DEFAULT_RETENTION_DAYS,
        now: float | None = None,
    ) -> int:
        """Write every round of `rounds` and prune, in ONE transaction (the proxy's batch of exchanges: one
        fsync for many rounds instead of one each); returns the attempts added."""
        c = self.conn
        with _errors(self.path, "record a round"):
            c.execute("BEGIN IMMEDIATE")
            try:
                added = sum(self._insert(rnd) for rnd in rounds)
                if retention_days is not None:
                    cutoff = (time.time() if now is None else now) - retention_days * 86400
                    c.execute("DELETE FROM attempts WHERE at < ?", (cutoff,))
                    c.execute("DELETE FROM rounds WHERE finished < ?", (cutoff,))
                    c.execute("DELETE FROM snapshots WHERE at < ?", (cutoff,))
                c.execute("COMMIT")
            except BaseException:
                c.execute("ROLLBACK")
                raise
        return added

    def record_snapshot(self, snap: Snapshot) -> None:
        """Write one network snapshot (its data as JSON; the caller has redacted it)."""
        c = self.conn
        with _errors(self.path, "record a snapshot"):
            c.execute(
                "INSERT INTO snapshots (at, reason, verdict, data) VALUES (?, ?, ?, ?)",
                (snap.at, snap.reason, snap.verdict, json.dumps(dict(snap.data), sort_keys=True, default=str)),
            )

    def _insert(self, rnd: RoundRecord) -> int:
        c = self.conn
        cur = c.execute(
            "INSERT INTO rounds (started, finished, source, provider, model, verdict, confidence, summary, kind) "
            "VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)",
            (
                rnd.started,
                rnd.finished,
                rnd.source,
                rnd.provider,
                rnd.model,
                rnd.verdict,
                rnd.confidence,
                rnd.summary,
                rnd.kind,
            ),
        )
        round_id = cur.lastrowid
        if rnd.exchange is not None:
            self._insert_exchange(round_id, rnd.exchange)
        added = 0
        for seq, a in enumerate(rnd.attempts):
            cur = c.execute(
                "INSERT OR IGNORE INTO attempts (round_id, seq, at, model, role, ok, status, kind, signature, "
                "cause, latency_ms, request_id, origin) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
                (
                    round_id,
                    seq,
                    a.at,
                    a.model,
                    a.role,
                    int(a.ok),
                    a.status,
                    a.kind,
                    a.signature,
                    a.cause,
                    a.latency_ms,
                    a.request_id,
                    a.origin,
                ),
            )
            added += cur.rowcount
        if rnd.attempts and not added:
            c.execute("DELETE FROM rounds WHERE id = ?", (round_id,))
        c.executemany(
            "INSERT INTO quota (round_id, kind, remaining) VALUES (?, ?, ?)",
            [(round_id, k, v) for k, v in sorted(rnd.quota.items())],
        )
        return added

    def _insert_exchange(self, round_id: int | None, ex: ExchangeRecord) -> None:
        self.conn.execute(
            "INSERT INTO exchanges (round_id, method, path, upstream, client, client_version, stream, outcome, "
            "bytes, ttfb_ms, total_ms, request_ids, ratelimit, error_text) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, "
            "?, ?, ?)",
            (
                round_id,
                ex.method,
                ex.path,
                ex.upstream,
                ex.client,
                ex.client_version,
                int(ex.stream),
                ex.outcome,
                ex.bytes,
                ex.ttfb_ms,
                ex.total_ms,
                json.dumps(dict(ex.request_ids), sort_keys=True),
                json.dumps(dict(ex.ratelimit), sort_keys=True),
                ex.error_text,
            ),
        )

    # -- reading

    def exchanges(self, since: float | None = None) -> list[tuple[RoundRecord, ExchangeRecord]]:
        """The proxy's exchanges that ended at or after `since` (None: all), oldest first, each with its round."""
        cutoff = float("-inf") if since is None else since
        by_id = {s.id: s.record for s in self.rounds(since)}
        with _errors(self.path, "read it"):
            rows = self.conn.execute(
                "SELECT e.round_id, e.method, e.path, e.upstream, e.client, e.client_version, e.stream, e.outcome, "
                "e.bytes, e.ttfb_ms, e.total_ms, e.request_ids, e.ratelimit, e.error_text FROM exchanges e "
                "JOIN rounds r ON r.id = e.round_id WHERE r.finished >= ? ORDER BY r.started, r.id",
                (cutoff,),
            ).fetchall()
        return [
            (
                by_id[r[0]],
                ExchangeRecord(
                    r[1],
                    r[2],
                    r[3],
                    r[4],
                    r[5],
                    bool(r[6]),
                    r[7],
                    r[8],
                    r[9],
                    r[10],
                    json.loads(r[11]),
                    json.loads(r[12]),
                    r[13],
                ),
            )
            for r in rows
            if r[0] in by_id
        ]

    def snapshots(self, since: float | None = None) -> list[Snapshot]:
        """The network snapshots taken at or after `since` (None: all), oldest first."""
        cutoff = float("-inf") if since is None else since
        with _errors(self.path, "read it"):
            rows = self.conn.execute(
                "SELECT at, reason, verdict, data FROM snapshots WHERE at >= ? ORDER BY at, id", (cutoff,)
            ).fetchall()
        return [Snapshot(r[0], r[1], r[2], json.loads(r[3])) for r in rows]

    def rounds(self, since: float | None = None) -> list[StoredRound]:
        """Every round that ended at or after `since` (Unix seconds; None: all), oldest first, with attempts.

        Read in one transaction, so rounds and attempts come from the same snapshot while watchers write.
        """
        c = self.conn
        cutoff = float("-inf") if since is None else since
        with _errors(self.path, "read it"):
            c.execute("BEGIN")
            try:
                rows = c.execute(
                    "SELECT id, started, finished, source, provider, model, verdict, confidence, summary, kind "
                    "FROM rounds WHERE finished >= ? ORDER BY started, id",
                    (cutoff,),
                ).fetchall()
                attempts: dict[int, list[AttemptRecord]] = {}
                for r in c.execute(
                    "SELECT a.round_id, a.at, a.model, a.role, a.ok, a.status, a.kind, a.signature, a.cause, "
                    "a.latency_ms, a.request_id, a.origin FROM attempts a JOIN rounds r ON r.id = a.round_id "
                    "WHERE r.finished >= ? AND (a.at >= ? OR r.source = ?) ORDER BY a.round_id, a.seq",
                    (cutoff, cutoff, WATCH),
                ):
                    attempts.setdefault(r[0], []).append(
                        AttemptRecord(
                            at=r[1],
                            model=r[2],
                            role=r[3],
                            ok=bool(r[4]),
                            status=r[5],
                            kind=r[6],
                            signature=r[7],
                            cause=r[8],
                            latency_ms=r[9],
                            request_id=r[10],
                            origin=r[11],
                        )
                    )
                quota: dict[int, dict[str, float]] = {}
                for q in c.execute(
                    "SELECT q.round_id, q.kind, q.remaining FROM quota q JOIN rounds r "
                    "ON r.id = q.round_id WHERE r.finished >= ?",
                    (cutoff,),
                ):
                    quota.setdefault(q[0], {})[q[1]] = q[2]
            finally:
                c.execute("COMMIT")
        return [
            StoredRound(
                r[0],
                RoundRecord(
                    r[1],
                    r[2],
                    r[3],
                    r[4],
                    r[5],
                    r[6],
                    r[7],
                    r[8],
                    tuple(attempts.get(r[0], ())),
                    quota.get(r[0], {}),
                    kind=r[9],
                ),
            )
            for r in rows
        ]

    def integrity(self) -> str:
        """`PRAGMA integrity_check`'s first line: `ok` for an intact file."""
        with _errors(self.path, "check it"):
            row = self.conn.execute("PRAGMA integrity_check").fetchone()
        return str(row[0]) if row else "?"
