"""The history database: round trips, migrations, retention, refusal of corrupt and foreign files, two
writers at once, and a writer killed with SIGKILL in the middle of its transactions."""

from __future__ import annotations

import os
import signal
import sqlite3
import subprocess
import sys
import textwrap
import time
from pathlib import Path

import pytest

from capdoctor.watch.records import LOGS, WATCH, AttemptRecord, RoundRecord
from capdoctor.watch.store import APPLICATION_ID, MIGRATIONS, HistoryError, Store
from tests.conftest import run_cli

T0 = 1_790_000_000.0


def _round(
    started: float, *, ok: tuple[bool, ...] = (False, True), source: str = WATCH, quota: dict[str, float] | None = None
) -> RoundRecord:
    attempts = tuple(
        AttemptRecord(
            at=started + i,
            model="gpt-5.5",
            role="primary",
            ok=o,
            status=200 if o else 503,
            kind="ok" if o else "http_error",
            signature=None if o else "openai.server_is_overloaded",
            cause=None if o else "capacity",
            latency_ms=40 + i,
            request_id=f"req_{i}",
        )
        for i, o in enumerate(ok)
    )
    return RoundRecord(
        started, started + 2, source, "openai", "gpt-5.5", "capacity", 0.8, "summary", attempts, quota or {}
    )


def test_round_trip_keeps_every_field_and_sets_wal_and_identity(tmp_path: Path) -> None:
    db = tmp_path / "sub" / "history.sqlite3"
    rnd = _round(T0, quota={"openai_requests": 9998.0})
    with Store.open(db) as store:
        assert store.record(rnd, retention_days=None) == 2
        [back] = store.rounds()
        assert back.record == rnd
        assert store.version == len(MIGRATIONS)
    conn = sqlite3.connect(db)
    assert conn.execute("PRAGMA journal_mode").fetchone()[0] == "wal"
    assert conn.execute("PRAGMA application_id").fetchone()[0] == APPLICATION_ID
    conn.close()


def test_since_and_retention_prune_old_rounds(tmp_path: Path) -> None:
    db = tmp_path / "h.db"
    now = T0 + 40 * 86400
    with Store.open(db) as store:
        store.record(_round(T0), retention_days=None)  # 40 days old
        store.record(_round(now - 86400), retention_days=None)
        assert len(store.rounds()) == 2
        assert [r.record.started for r in store.rounds(since=now - 2 * 86400)] == [now - 86400]
        store.record(_round(now), retention_days=30, now=now)
        left = store.rounds()
    assert [r.record.started for r in left] == [now - 86400, now]
    conn = sqlite3.connect(db)
    assert conn.execute("SELECT COUNT(*) FROM attempts").fetchone()[0] == 4  # the old round's attempts went too
    conn.close()


def test_imported_log_lines_are_added_once(tmp_path: Path) -> None:
    attempts = tuple(
        AttemptRecord(
            at=T0 + i,
            model="claude-opus-4-7",
            role="log",
            ok=False,
            kind="log",
            signature="anthropic.overloaded_error",
            cause="capacity",
            origin=f"/x.log|{i}",
        )
        for i in range(3)
    )
    rnd = RoundRecord(T0, T0 + 2, LOGS, None, None, "capacity", 0.7, "", attempts)
    with Store.open(tmp_path / "h.db") as store:
        assert store.record(rnd, retention_days=None) == 3
        assert store.record(rnd, retention_days=None) == 0
        assert len(store.rounds()) == 1  # the second import left no empty round behind


def test_migrations_run_once_and_keep_data(tmp_path: Path) -> None:
    db = tmp_path / "h.db"
    with Store.open(db) as store:
        store.record(_round(T0), retention_days=None)
    newer = (*MIGRATIONS, ("ALTER TABLE rounds ADD COLUMN host TEXT",))
    with Store.open(db, migrations=newer) as store:
        assert store.version == len(newer)
        assert len(store.rounds()) == 1
        columns = [r[1] for r in store.conn.execute("PRAGMA table_info(rounds)")]
        assert "host" in columns
    with pytest.raises(HistoryError, match="newer than this capdoctor knows"):
        Store.open(db)


def test_corrupt_foreign_and_odd_paths_are_one_clear_error(tmp_path: Path) -> None:
    garbage = tmp_path / "garbage.db"
    garbage.write_bytes(os.urandom(8192))
    with pytest.raises(HistoryError, match="corrupt or not a SQLite file"):
        Store.open(garbage)
    foreign = tmp_path / "foreign.db"
    conn = sqlite3.connect(foreign)
    conn.execute("CREATE TABLE notes (body TEXT)")
    conn.commit()
    conn.close()
    with pytest.raises(HistoryError, match="another program"):
        Store.open(foreign)
    with pytest.raises(HistoryError, match="is a directory"):
        Store.open(tmp_path)
    with pytest.raises(HistoryError, match="no history database"):
        Store.open(tmp_path / "missing.db", create=False)


def test_damaged_pages_are_caught_on_open(tmp_path: Path) -> None:
    db = tmp_path / "h.db"
    with Store.open(db) as store:
        for i in range(200):
            store.record(_round(T0 + i * 300, ok=(False,) * 10), retention_days=None)
        store.conn.execute("PRAGMA wal_checkpoint(TRUNCATE)")
    page = sqlite3.connect(db).execute("PRAGMA page_size").fetchone()[0]
    data = bytearray(db.read_bytes())
    assert len(data) > 8 * page
    for n in (3, 5, 7):  # b-tree pages of the tables: their headers become nonsense
        data[n * page : n * page + 64] = b"\xff" * 64
    db.write_bytes(bytes(data))
    with pytest.raises(HistoryError, match="corrupt"):
        Store.open(db)


@pytest.mark.parametrize("kind", ["garbage", "foreign"])
def test_cli_refuses_a_bad_history_with_one_line_and_exit_2(tmp_path: Path, kind: str) -> None:
    db = tmp_path / "h.db"
    if kind == "garbage":
        db.write_bytes(b"this is not a database" * 100)
    else:
        conn = sqlite3.connect(db)
        conn.execute("CREATE TABLE t (x)")
        conn.commit()
        conn.close()
    for args in (["history", "--db", str(db)], ["logs", "--into", str(db), str(tmp_path)]):
        proc = run_cli(*args)
        assert proc.returncode == 2, proc.stderr
        lines = proc.stderr.strip().splitlines()
        assert len(lines) == 1 and str(db.name) in lines[0] and "Traceback" not in proc.stderr
        assert proc.stdout == ""


WRITER = textwrap.dedent("""
    import sys, time
    from capdoctor.watch.records import AttemptRecord, RoundRecord
    from capdoctor.watch.store import Store
    db, n, per_round, tag = sys.argv[1], int(sys.argv[2]), int(sys.argv[3]), sys.argv[4]
    store = Store.open(__import__("pathlib").Path(db))
    i = 0
    while n < 0 or i < n:
        t = time.time()
        attempts = tuple(AttemptRecord(at=t, model=tag, role="primary", ok=k % 2 == 0, status=200,
                                       kind="ok", latency_ms=k) for k in range(per_round))
        store.record(RoundRecord(t, t, "watch", "openai", tag, "none", 1.0, tag, attempts), retention_days=None)
        i += 1
""")


def _writer(db: Path, rounds: int, per_round: int, tag: str) -> subprocess.Popen[bytes]:
    return subprocess.Popen(
        [sys.executable, "-c", WRITER, str(db), str(rounds), str(per_round), tag],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
    )


def test_two_writers_on_one_database_do_not_corrupt_it(tmp_path: Path) -> None:
    db = tmp_path / "h.db"
    Store.open(db).close()
    procs = [_writer(db, 40, 5, tag) for tag in ("a", "b")]
    for p in procs:
        _, err = p.communicate(timeout=120)
        assert p.returncode == 0, err.decode()
    with Store.open(db) as store:
        assert store.integrity() == "ok"
        rounds = store.rounds()
    assert sorted(r.record.model for r in rounds) == ["a"] * 40 + ["b"] * 40
    assert all(len(r.record.attempts) == 5 for r in rounds)


KILLED = textwrap.dedent("""
    import sys, time
    from pathlib import Path
    from capdoctor.watch.records import AttemptRecord, RoundRecord
    from capdoctor.watch.store import Store

    class Stalling(tuple):
        \"\"\"Attempts that stop halfway through being written: the process is killed right there.\"\"\"
        def __iter__(self):
            for i, a in enumerate(tuple.__iter__(self)):
                if i == len(self) // 2:
                    print("mid-transaction", flush=True)
                    time.sleep(120)
                yield a

    store = Store.open(Path(sys.argv[1]))
    for n in range(4):
        attempts = tuple(AttemptRecord(at=time.time(), model="m", role="primary", ok=True) for _ in range(500))
        if n == 3:
            attempts = Stalling(attempts)
        store.record(RoundRecord(time.time(), time.time(), "watch", "openai", "m", "none", 1.0, str(n), attempts),
                     retention_days=None)
        print(f"committed {n}", flush=True)
""")


@pytest.mark.skipif(sys.platform == "win32", reason="SIGKILL is POSIX")
def test_sigkill_inside_the_transaction_loses_only_that_round(tmp_path: Path) -> None:
    db = tmp_path / "h.db"
    proc = subprocess.Popen(
        [sys.executable, "-c", KILLED, str(db)], stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True
    )
    assert proc.stdout is not None
    lines = []
    for line in proc.stdout:
        lines.append(line.strip())
        if line.startswith("mid-transaction"):
            break
    proc.send_signal(signal.SIGKILL)
    proc.wait(timeout=30)
    assert lines == ["committed 0", "committed 1", "committed 2", "mid-transaction"], proc.stderr
    assert db.with_name("h.db-wal").exists()  # the half-written round sits in the write-ahead log
    with Store.open(db) as store:
        assert store.integrity() == "ok"
        rounds = store.rounds()
        assert [r.record.summary for r in rounds] == ["0", "1", "2"]
        assert all(len(r.record.attempts) == 500 for r in rounds)
        store.record(_round(T0), retention_days=None)  # and it still takes writes


@pytest.mark.skipif(sys.platform == "win32", reason="SIGKILL is POSIX")
def test_sigkill_mid_transaction_loses_at_most_the_round_in_flight(tmp_path: Path) -> None:
    db = tmp_path / "h.db"
    Store.open(db).close()
    per_round = 3000  # a transaction long enough that the kill lands inside one now and then
    proc = _writer(db, -1, per_round, "k")
    deadline = time.monotonic() + 60
    committed = 0
    while committed < 3 and time.monotonic() < deadline:
        time.sleep(0.2)
        conn = sqlite3.connect(db, timeout=30)
        committed = conn.execute("SELECT COUNT(*) FROM rounds").fetchone()[0]
        conn.close()
    time.sleep(0.05)
    proc.send_signal(signal.SIGKILL)
    proc.wait(timeout=30)
    assert committed >= 3, "the writer did not get going"
    with Store.open(db) as store:
        assert store.integrity() == "ok"
        rounds = store.rounds()
        assert len(rounds) >= committed
        assert all(len(r.record.attempts) == per_round for r in rounds)  # no half-written round
        store.record(_round(T0), retention_days=None)  # and it still takes writes


def test_the_default_history_lives_in_the_one_user_data_folder(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """`--db` defaults to the data folder `context.user_dir` gives (the same answer that places capdoctor.toml)."""
    from capdoctor.run.context import user_dir
    from capdoctor.watch.command import DB_NAME, default_db

    monkeypatch.setenv("XDG_DATA_HOME", str(tmp_path / "data"))
    monkeypatch.setenv("LOCALAPPDATA", str(tmp_path / "local"))
    monkeypatch.setenv("HOME", str(tmp_path))
    assert default_db() == user_dir("data", dict(os.environ), Path.home(), sys.platform) / DB_NAME
    if sys.platform.startswith("linux"):
        assert default_db() == tmp_path / "data" / "capdoctor" / DB_NAME
