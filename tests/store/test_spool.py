"""Acknowledged events survive a restart while the database is down; a nearly full disk takes rows as soon as they fit.

Against SQLite and a real PostgreSQL server (``store_settings`` is parametrized); the outage is real
(a held SQLite write lock, or a PostgreSQL database closed to connections).
"""

from __future__ import annotations

import logging
import signal
import subprocess
import sys
import time
from datetime import timedelta
from pathlib import Path

import pytest
import sqlalchemy as sa
from sqlalchemy import exc as sa_exc

from bot.records import Event
from bot.store.database import SCHEMA_VERSION, SPOOL_DIR, Store, StoreError, StoreSettings, _now, _to_json, meta_table

REPO = Path(__file__).resolve().parents[2]

# A process that uses the store as app.py does: on SIGTERM it leaves through `finally`, closing the store.
SCRIPT = """
import logging, signal, sys
sys.path.insert(0, {repo!r})
from bot.records import Event
from bot.store.database import Store, StoreSettings

settings = StoreSettings.model_validate_json(sys.argv[1])
store = Store.open(settings, busy_timeout=0.2, retry_seconds=0.1, max_retry_seconds=0.2)
signal.signal(signal.SIGTERM, lambda *_: sys.exit(0))
try:
    print("ready", flush=True)
    sys.stdin.readline()
    for n in range(100):
        if n % 10 == 0:
            store.record(Event("vote", f"question {{n}}", "en", vote="down", answer_id=f"answer-{{n}}"))
        else:
            store.record(Event("question", f"question {{n}}", "en", tier="none", origin="api"))
    print("acked", flush=True)  # record() returned 100 times: the caller was told the events are kept
    sys.stdin.readline()  # wait to be killed
finally:
    store.close(timeout=1)
"""


def _poll(condition, seconds: float = 30.0) -> bool:
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        if condition():
            return True
        time.sleep(0.02)
    return condition()


@pytest.mark.parametrize("sig", [signal.SIGTERM, signal.SIGKILL], ids=["sigterm", "sigkill"])
def test_no_acknowledged_event_is_lost_across_a_kill_during_an_outage(store_settings, outage, sig, tmp_path):
    script = tmp_path / "recorder.py"
    script.write_text(SCRIPT.format(repo=str(REPO)))
    proc = subprocess.Popen(
        [sys.executable, str(script), store_settings.model_dump_json()],
        cwd=REPO,
        text=True,
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
    )
    try:
        assert proc.stdout.readline().strip() == "ready", proc.stderr.read()
        with outage:
            proc.stdin.write("go\n")
            proc.stdin.flush()
            assert proc.stdout.readline().strip() == "acked", proc.stderr.read()
            proc.send_signal(sig)
            proc.wait(timeout=60)
            stderr = proc.stderr.read()
        if sig == signal.SIGTERM:  # a clean exit says where the events are
            assert "100 event(s) stay in the spool" in stderr, stderr
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()
    store = Store.open(store_settings)  # the restart, with the database back
    try:
        rows = store.rows()
        assert len(rows) == 100 and store.replayed == 100
        assert sorted(r["question"] for r in rows) == sorted(f"question {n}" for n in range(100))
        assert {r["origin"] for r in rows if r["kind"] == "question"} == {"api"}
        assert [p.name for p in (Path(store_settings.data_dir) / SPOOL_DIR).glob("*.jsonl")] == [
            store.spool.current.name
        ]
    finally:
        store.close()
    again = Store.open(store_settings)  # nothing is replayed twice
    try:
        assert again.replayed == 0 and len(again.rows()) == 100
    finally:
        again.close()


def test_a_spooled_row_already_written_is_not_written_again(store_settings, caplog):
    store = Store.open(store_settings)
    for n in range(5):
        store.record(Event("question", f"q{n}", "en", tier="none"))
    assert store.flush(10)
    # A crash between the commit and the spool's clean-up: the file still holds rows that are in the database.
    lines = [_to_json(r) for r in store.rows()]
    store.close()
    spool = Path(store_settings.data_dir) / SPOOL_DIR
    (spool / "crashed.jsonl").write_text("\n".join(lines) + '\n{"kind": "question", "torn', encoding="utf-8")
    caplog.set_level(logging.WARNING, logger="bot.store")
    again = Store.open(store_settings)
    try:
        assert len(again.rows()) == 5 and not (spool / "crashed.jsonl").exists()
        assert any("dropped 1 unreadable line(s)" in r.getMessage() for r in caplog.records)
    finally:
        again.close()


def test_after_a_write_error_rows_go_in_as_soon_as_one_fits(tmp_path):
    """A nearly full disk: a write of more rows than fit fails as a whole (as SQLite's 'database or disk is full')."""
    store = Store.open(StoreSettings(data_dir=tmp_path / "data"), retry_seconds=0.01, max_retry_seconds=0.05)
    room = {"rows": 0}
    write = store._write

    def full_disk(rows: list[dict]) -> None:
        if len(rows) > room["rows"]:
            raise sa_exc.OperationalError("INSERT INTO bot_events", {}, Exception("database or disk is full"))
        room["rows"] -= len(rows)
        write(rows)

    store._write = full_disk
    try:
        for n in range(50):
            store.record(Event("question", f"q{n}", "en", tier="none"))
        assert not store.flush(0.3)
        room["rows"] = 5  # a little space comes free: those rows go in, without waiting for room for all 50
        assert _poll(lambda: len(store.rows()) == 5), len(store.rows())
        room["rows"] = 45
        assert store.flush(30) and len(store.rows()) == 50
    finally:
        store.close()


# ---------------------------------------------------------------- schema, retention, readers


def test_a_version_1_database_gets_event_ids(store_settings):
    Store.open(store_settings).close()
    store = Store.open(store_settings)
    with store.engine.begin() as conn:  # back to version 1: no event_id column
        conn.execute(sa.text("DROP INDEX ix_bot_events_event_id"))
        conn.execute(sa.text("ALTER TABLE bot_events DROP COLUMN event_id"))
        conn.execute(meta_table.update().where(meta_table.c.key == "schema_version").values(value="1"))
    store.close()
    upgraded = Store.open(store_settings)
    try:
        upgraded.record(Event("question", "q", "en"))
        assert upgraded.flush(10) and upgraded.rows()[0]["event_id"]
        with upgraded.engine.connect() as conn:
            version = conn.execute(sa.select(meta_table.c.value).where(meta_table.c.key == "schema_version")).scalar()
        assert int(version) == SCHEMA_VERSION == 5
    finally:
        upgraded.close()


def test_retention_runs_in_the_app_and_says_what_it_removed(store_settings, caplog):
    store = Store.open(store_settings)
    old = store._row(Event("question", "old", "en"), "", None, at=_now() - timedelta(days=200))
    store._write([old, store._row(Event("question", "new", "en"), "", None)])
    store.close()
    reader = Store.reader(store_settings)
    try:
        assert len(reader.rows()) == 2  # a reader keeps what it finds
        with pytest.raises(StoreError, match="never deletes"):
            reader.purge()
    finally:
        reader.close()
    caplog.set_level(logging.WARNING, logger="bot.store")
    app_store = Store.open(store_settings)
    try:
        assert [r["question"] for r in app_store.rows()] == ["new"]
        assert any("retention removed 1 event(s)" in r.getMessage() for r in caplog.records)
    finally:
        app_store.close()


def test_a_reader_creates_nothing(tmp_path):
    with pytest.raises(StoreError, match="no store at .* yet"):
        Store.reader(StoreSettings(data_dir=tmp_path / "data"))
    assert not (tmp_path / "data" / "bot.sqlite3").exists()
