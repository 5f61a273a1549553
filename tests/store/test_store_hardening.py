"""Nothing acknowledged is lost: a full disk refuses (issue 28 findings 8, 9, 10).

8: a spool write the disk refuses raises NotSpooled (the edge answers 503) and a short write is completed, so no
line is torn; 9: a replay falls back row by row and sets refused rows aside; 10: a replay keeps each answer's last
vote. Against SQLite and a real PostgreSQL server (``store_settings`` is parametrized).
"""

from __future__ import annotations

import errno
import json
import os
from datetime import timedelta
from pathlib import Path

import pytest

from bot.records import Event
from bot.store import NotSpooled
from bot.store import spool as spool_module
from bot.store.database import REFUSED_DIR, SPOOL_DIR, Spool, Store, StoreSettings, _now, _to_json


def _vote(n: int, vote: str = "down") -> Event:
    return Event("vote", f"question {n}", "en", vote=vote, answer_id=f"answer-{n}")


class _Disk:
    """The ``os`` module as the store sees it, with another ``write`` (only the store's calls are affected)."""

    def __init__(self, write) -> None:
        self.write = write

    def __getattr__(self, name: str):
        return getattr(os, name)


def _spooled_rows(folder: Path) -> list[dict]:
    rows = []
    for path in sorted(folder.glob("*.jsonl")):
        for line in path.read_bytes().splitlines():
            rows.append(json.loads(line))  # a torn line fails here
    return rows


# ---------------------------------------------------------------- 8: full disk, short writes


def test_short_writes_are_completed_so_no_line_is_torn(tmp_path, monkeypatch):
    real_write = os.write

    def short_write(fd, data):  # the kernel may take part of a buffer: here at most 7 bytes per call
        return real_write(fd, bytes(data[:7]))

    spool = Spool(tmp_path / SPOOL_DIR)
    monkeypatch.setattr(spool_module, "os", _Disk(short_write))
    for n in range(7):
        spool.add({"at": _now(), "kind": "vote", "event_id": f"e{n}", "answer_id": f"answer-{n}"})
    monkeypatch.undo()
    rows = _spooled_rows(tmp_path / SPOOL_DIR)
    assert [r["answer_id"] for r in rows] == [f"answer-{n}" for n in range(7)]
    spool.close()


def test_a_write_that_takes_nothing_is_a_full_disk(tmp_path, monkeypatch):
    spool = Spool(tmp_path / SPOOL_DIR)
    monkeypatch.setattr(spool_module, "os", _Disk(lambda fd, data: 0))
    row = {"at": _now(), "kind": "vote", "event_id": "e1"}
    with pytest.raises(NotSpooled, match="free space in BOT_DATA_DIR"):
        spool.add(row)
    monkeypatch.undo()
    spool.close()


def test_a_full_disk_refuses_the_event_and_acknowledged_ones_survive_a_crash(store_settings, outage, monkeypatch):
    """Every third write fails half-way with ENOSPC: those events raise, the others are kept whole and written."""
    real_write = os.write
    calls = {"n": 0}

    def full_sometimes(fd, data):
        calls["n"] += 1
        if calls["n"] % 3 == 0:
            real_write(fd, bytes(data[: len(data) // 2]))  # part of the line went to disk before the error
            raise OSError(errno.ENOSPC, "No space left on device")
        return real_write(fd, data)

    store = Store.open(store_settings, busy_timeout=0.2, retry_seconds=0.2, max_retry_seconds=0.5)
    acknowledged, refused = [], 0
    with outage:  # the database is away: everything waits in the spool
        monkeypatch.setattr(spool_module, "os", _Disk(full_sometimes))
        for n in range(30):
            try:
                store.record(_vote(n))
            except NotSpooled:
                refused += 1
            else:
                acknowledged.append(f"answer-{n}")
        monkeypatch.undo()
        # A crash now (SIGKILL): the memory queue is gone, the spool is what was promised.
        spooled = _spooled_rows(Path(store_settings.data_dir) / SPOOL_DIR)
        assert refused == 10 and sorted(r["answer_id"] for r in spooled) == sorted(acknowledged)
        store._stop.set()
        store.spool.close()
    store.engine.dispose()
    again = Store.open(store_settings)
    try:
        assert sorted(r["answer_id"] for r in again.rows()) == sorted(acknowledged)
    finally:
        again.close()


def test_the_feedback_edge_answers_503_when_the_vote_cannot_be_kept(tmp_path, hash_settings, monkeypatch):
    import httpx

    from app import build_app
    from bot.engine.retrieve import Engine
    from fixtures.server import ThreadServer

    store = Store.open(StoreSettings(data_dir=tmp_path / "data"))
    app = build_app(hash_settings, engine=Engine.open(hash_settings, auto_build=True), progress=False, store=store)

    def no_space(fd, data):
        raise OSError(errno.ENOSPC, "No space left on device")

    try:
        with ThreadServer(app) as server:
            monkeypatch.setattr(spool_module, "os", _Disk(no_space))
            vote = httpx.post(server.url + "/api/feedback", timeout=30, json={"question": "显存不足", "vote": "up"})
            monkeypatch.undo()
            assert vote.status_code == 503 and vote.json()["ok"] is False, vote.text
            assert "free space" in vote.json()["error"] and vote.headers["retry-after"]
            again = httpx.post(server.url + "/api/feedback", timeout=30, json={"question": "显存不足", "vote": "up"})
            assert again.status_code == 200
        assert store.flush(10) and [r["vote"] for r in store.rows()] == ["up"]
    finally:
        store.close()


# ---------------------------------------------------------------- 9: a poisoned row


def _spool_file(settings: StoreSettings, rows: list[dict], name: str = "dead-run.jsonl") -> Path:
    folder = Path(settings.data_dir) / SPOOL_DIR
    folder.mkdir(parents=True, exist_ok=True)
    path = folder / name
    path.write_text("".join(_to_json(r) + "\n" for r in rows), encoding="utf-8")
    return path


def test_one_poisoned_row_does_not_hold_back_the_others_at_replay(store_settings, caplog):
    store = Store.open(store_settings)
    rows = [store._row(_vote(n), "", None) for n in range(40)]
    store.close()
    poisoned = dict(rows[20], answer_id="bad\x00id", event_id="poisoned-event")  # valid JSON; PostgreSQL refuses it
    rows.insert(20, poisoned)
    path = _spool_file(store_settings, rows)
    again = Store.open(store_settings)
    try:
        stored = {r["answer_id"] for r in again.rows()}
        assert {f"answer-{n}" for n in range(40)} <= stored  # the good rows are written
        assert not path.exists()  # and the file no longer blocks every start
        if store_settings.database_url:  # SQLite stores a NUL; PostgreSQL refuses it for good
            assert again.refused == 1 and again.replayed == 40
            aside = list((Path(store_settings.data_dir) / SPOOL_DIR / REFUSED_DIR).glob("*.jsonl"))
            kept = [json.loads(line) for p in aside for line in p.read_text().splitlines()]
            assert [k["row"]["event_id"] for k in kept] == ["poisoned-event"] and kept[0]["refused"]
            assert any("poisoned-event" in r.getMessage() for r in caplog.records)
    finally:
        again.close()
    third = Store.open(store_settings)  # nothing is left to replay, nothing written twice
    try:
        assert third.replayed == 0 and len(third.rows()) == len(stored)
    finally:
        third.close()


def test_a_control_character_in_answer_id_is_cleaned_before_the_database(store_settings):
    store = Store.open(store_settings)
    try:
        store.record(Event("vote", "q", "en", vote="up", answer_id="a\x00b"))
        assert store.flush(10)
        assert [r["answer_id"] for r in store.rows()] == ["a b"]
    finally:
        store.close()


# ---------------------------------------------------------------- 10: the last vote wins across replays


def test_a_replay_killed_half_way_does_not_revert_changed_votes(store_settings):
    store = Store.open(store_settings)
    earlier = _now() - timedelta(seconds=5)
    ups = [store._row(_vote(n, "up"), "", None, at=earlier) for n in range(50)]
    downs = [store._row(_vote(n, "down"), "", None) for n in range(50)]
    store._write(ups)
    store._write(downs)  # every vote changed from up to down
    assert {r["vote"] for r in store.rows()} == {"down"}
    store.close()
    # A crash before the spool was cleaned (or a replay killed after the first pass): both votes replay again.
    _spool_file(store_settings, ups + downs)
    again = Store.open(store_settings)
    try:
        assert {r["vote"] for r in again.rows()} == {"down"} and len(again.rows()) == 50
    finally:
        again.close()
    _spool_file(store_settings, list(reversed(ups + downs)), name="older-first.jsonl")  # order does not matter
    third = Store.open(store_settings)
    try:
        assert {r["vote"] for r in third.rows()} == {"down"}
    finally:
        third.close()
