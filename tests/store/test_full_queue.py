"""A database down long enough to fill the writer's queue loses nothing acknowledged.

The rows that found the queue full wait in the spool alone and are read back once the queue is empty; past the
spool's cap (``bot.limits.SPOOL_BYTES``) an event is refused (``NotSpooled``, 503) instead of acknowledged. Against
SQLite and a real PostgreSQL server (``store_settings`` is parametrized); the outage is real (a held SQLite write
lock, or a PostgreSQL database closed to connections).
"""

from __future__ import annotations

import queue
import threading
from pathlib import Path

import pytest

from bot.records import Event
from bot.store import NotSpooled
from bot.store import spool as spool_module
from bot.store.database import SPOOL_DIR, Spool, Store, StoreSettings, _now
from fixtures.store import Outage, until

QUEUE = 5


def _question(n: int) -> Event:
    return Event("question", f"question {n}", "en", tier="none", origin="api")


def _vote(n: int) -> Event:
    return Event("vote", f"question {n}", "en", vote="down", answer_id=f"answer-{n}", origin="api")


def _event(n: int) -> Event:
    return _vote(n) if n % 10 == 0 else _question(n)


def _spool_files(settings: StoreSettings) -> list[Path]:
    return sorted((Path(settings.data_dir) / SPOOL_DIR).glob("*.jsonl"))


def _down(store: Store, outage) -> Store:
    """Record one event and wait until the writer has met the outage: it holds that row and retries it."""
    store.record(_event(0))
    assert until(lambda: not store.healthy), "the writer never noticed the outage"
    return store


def test_events_recorded_while_the_queue_is_full_are_written_when_the_database_is_back(store_settings, outage):
    store = Store.open(store_settings, busy_timeout=0.2, retry_seconds=0.1, max_retry_seconds=0.2, queue_size=QUEUE)
    try:
        with outage:
            _down(store, outage)
            for n in range(1, 60):
                store.record(_event(n))  # returned: acknowledged (the edge thanks, /api/feedback says 200)
            assert store.spool.waiting() == 60  # every acknowledged event is on disk, none was given up
            assert store.spilled == 59 - QUEUE  # the queue took 5; the others waited in the spool alone
            assert not store.flush(0.3)
        assert store.flush(30)
        rows = store.rows()
        assert sorted(r["question"] for r in rows) == sorted(f"question {n}" for n in range(60))
        assert sorted(r["answer_id"] for r in rows if r["kind"] == "vote") == [f"answer-{n}" for n in range(0, 60, 10)]
        assert store.refused == 0 and store.spool.waiting() == 0
        assert [p.read_bytes() for p in _spool_files(store_settings)] == [b""]  # written: the spool is empty
    finally:
        store.close()


def test_events_that_waited_in_the_spool_survive_a_crash(store_settings, outage):
    store = Store.open(store_settings, busy_timeout=0.2, retry_seconds=0.1, max_retry_seconds=0.2, queue_size=QUEUE)
    with outage:
        _down(store, outage)
        for n in range(1, 40):
            store.record(_event(n))
        assert store.spilled > 0
        # SIGKILL now: the queue in memory is gone, the spool is what was promised.
        store._stop.set()
        store.spool.close()
    store.engine.dispose()
    again = Store.open(store_settings)
    try:
        assert sorted(r["question"] for r in again.rows()) == sorted(f"question {n}" for n in range(40))
    finally:
        again.close()


def test_events_recorded_while_the_spool_is_read_back_are_each_written_once(store_settings, outage, monkeypatch):
    """Rows keep coming while the writer reads the spool back across several files: none lost, none twice."""
    monkeypatch.setattr(spool_module, "SPOOL_SEGMENT_BYTES", 2_000)  # a fresh file every ~5 rows
    store = Store.open(store_settings, busy_timeout=0.2, retry_seconds=0.1, max_retry_seconds=0.2, queue_size=QUEUE)
    try:
        with outage:
            _down(store, outage)
            for n in range(1, 80):
                store.record(_event(n))
            assert len(_spool_files(store_settings)) > 5
        more = threading.Thread(target=lambda: [store.record(_event(n)) for n in range(80, 200)])
        more.start()
        more.join()
        assert store.flush(30)
        rows = store.rows()
        assert sorted(r["question"] for r in rows) == sorted(f"question {n}" for n in range(200))
        assert len({r["event_id"] for r in rows}) == 200 and store.refused == 0
        assert store.spool.waiting() == 0 and len(_spool_files(store_settings)) == 1
    finally:
        store.close()


def test_the_spool_hands_rows_over_once_and_in_order(tmp_path, monkeypatch):
    """Once a row waits in the spool, later rows wait behind it (even when the queue has room) until read back."""
    monkeypatch.setattr(spool_module, "SPOOL_SEGMENT_BYTES", 150)  # a fresh file every 2 rows
    spool = Spool(tmp_path / SPOOL_DIR)
    hand_over: queue.Queue = queue.Queue(maxsize=3)

    def add(n: int) -> bool:
        return spool.add({"at": _now(), "kind": "vote", "event_id": f"e{n}", "answer_id": f"answer-{n}"}, hand_over)

    assert [add(n) for n in range(5)] == [True, True, True, False, False]
    queued = [hand_over.get_nowait() for _ in range(3)]
    assert add(5) is False  # the queue has room, but e3 and e4 wait: e5 goes behind them
    first = spool.read_back(2)
    assert add(6) is False
    rest = spool.read_back(100)
    assert not spool.backlog and add(7) is True  # all read back: the queue again
    handed = [*queued, *first, *rest, hand_over.get_nowait()]
    assert [row["event_id"] for _, row in handed] == [f"e{n}" for n in range(8)]
    assert len({path for path, _ in handed}) == 4  # across four files
    spool.done(path for path, _ in handed)
    assert spool.waiting() == 0 and [p.name for p in (tmp_path / SPOOL_DIR).glob("*.jsonl")] == [spool.current.name]
    spool.close()


# ---------------------------------------------------------------- the cap


def test_past_the_spool_cap_an_event_is_refused_not_acknowledged(store_settings, outage):
    store = Store.open(
        store_settings, busy_timeout=0.2, retry_seconds=0.1, max_retry_seconds=0.2, queue_size=QUEUE, spool_bytes=8_000
    )
    try:
        acknowledged, refused = [], []
        with outage:
            _down(store, outage)
            acknowledged.append(0)
            for n in range(1, 60):
                try:
                    store.record(_event(n))
                except NotSpooled as exc:
                    refused.append(str(exc))
                else:
                    acknowledged.append(n)
        assert refused and len(acknowledged) + len(refused) == 60
        assert "SPOOL_BYTES in bot/limits.py" in refused[0]
        assert store.flush(30)
        assert sorted(r["question"] for r in store.rows()) == sorted(f"question {n}" for n in acknowledged)
        store.record(_event(60))  # written: the spool has room again
        assert store.flush(30) and len(store.rows()) == len(acknowledged) + 1
    finally:
        store.close()


def test_the_feedback_edge_answers_503_when_the_spool_is_full(tmp_path, hash_settings, request):
    import httpx

    from app import build_app
    from bot.engine.retrieve import Engine
    from fixtures.server import ThreadServer

    settings = StoreSettings(data_dir=tmp_path / "data")
    store = Store.open(
        settings, busy_timeout=0.2, retry_seconds=0.1, max_retry_seconds=0.2, queue_size=2, spool_bytes=4_000
    )
    app = build_app(hash_settings, engine=Engine.open(hash_settings, auto_build=True), progress=False, store=store)

    def vote(n: int) -> httpx.Response:
        return httpx.post(
            server.url + "/api/feedback",
            timeout=30,
            json={"question": "显存不足", "vote": "down", "answer_id": f"answer-{n}"},
        )

    try:
        with ThreadServer(app) as server:
            with Outage(settings, request):
                answers = [vote(n) for n in range(30)]
                thanked = [n for n, a in enumerate(answers) if a.status_code == 200]
                full = [a for a in answers if a.status_code != 200]
                assert thanked and full, [a.status_code for a in answers]
                assert {a.status_code for a in full} == {503} and full[0].headers["retry-after"]
                assert full[0].json()["ok"] is False and "SPOOL_BYTES" in full[0].json()["error"]
            assert store.flush(30)
            assert vote(30).status_code == 200  # the database took the spool: votes are kept again
        assert store.flush(30)
        assert sorted(r["answer_id"] for r in store.rows()) == sorted(f"answer-{n}" for n in [*thanked, 30])
    finally:
        store.close()


@pytest.mark.parametrize("cap", [0, 1])
def test_a_spool_with_no_room_refuses_every_event(tmp_path, cap):
    spool = Spool(tmp_path / SPOOL_DIR, cap_bytes=cap)
    with pytest.raises(NotSpooled, match=f"past its cap of {cap} bytes"):
        spool.add({"at": _now(), "kind": "vote", "event_id": "e1"}, queue.Queue())
    assert spool.waiting() == 0
    spool.close()
