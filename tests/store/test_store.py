"""The store, against SQLite and a real PostgreSQL server (the same tests for both: ``store_settings`` is parametrized)."""

from __future__ import annotations

import logging
import os
import subprocess
import sys
from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest
import sqlalchemy as sa

from bot.records import Event
from bot.store.database import SCHEMA_VERSION, Store, StoreError, StoreSettings, meta_table
from fixtures.old_log import old_line, write_log

REPO = Path(__file__).resolve().parents[2]


@pytest.fixture
def store(store_settings):
    s = Store.open(store_settings)
    yield s
    s.close()


def q(text: str, tier: str = "none", cited=("a.md#x",), **kw) -> Event:
    return Event("question", text, "en", tier=tier, confidence=0.3, cited=tuple(cited), **kw)


def test_records_questions_votes_and_not_helpful(store):
    store.record(q("how to bake bread"), session="browser-1", latency_ms=12.5)
    store.record(Event("not_helpful", "nccl", "en", tier="answer", cited=("b.md#1",)), session="browser-1")
    store.record(Event("vote", "显存不足", "zh", tier="answer", cited=("c.md#1",), vote="up", answer_id="ans-1"))
    store.record(
        Event(
            "vote",
            "显存不足",
            "zh",
            tier="answer",
            cited=("c.md#1",),
            vote="down",
            reason="outdated",
            answer_id="ans-1",
        )
    )  # the user changed their mind: the last vote counts
    assert store.flush(10)
    rows = store.rows()
    assert [r["kind"] for r in rows] == ["question", "not_helpful", "vote"]
    question, _, vote = rows
    assert question["question"] == "how to bake bread" and question["cited"] == ["a.md#x"]
    assert question["latency_ms"] == 12.5 and question["tier"] == "none" and question["confidence"] == 0.3
    assert question["session"] and question["session"] != "browser-1" and question["session"] == rows[1]["session"]
    assert (vote["vote"], vote["reason"], vote["answer_id"], vote["language"]) == ("down", "outdated", "ans-1", "zh")


def test_votes_without_an_answer_id_all_count_and_bad_events_are_ignored(store):
    for _ in range(3):
        store.record(Event("vote", "q", "en", vote="down", reason="whatever"))
    store.record(Event("vote", "q", "en", vote="meh"))  # refused quietly: the answer must not fail for it
    store.record(Event("shout", "q", "en"))
    assert store.flush(10)
    rows = store.rows()
    assert len(rows) == 3 and {r["reason"] for r in rows} == {"other"}


def test_keeps_no_question_text_when_told(store_settings):
    store = Store.open(store_settings.model_copy(update={"store_question_text": False}))
    try:
        store.record(q("my secret project name crashed", signature="Error: /home/alice/secret.py"))
        assert store.flush(10)
        (row,) = store.rows()
        assert row["question"] is None and row["signature"] is None and row["cited"] == ["a.md#x"]
    finally:
        store.close()


def test_retention_deletes_old_rows(store_settings):
    store = Store.open(store_settings.model_copy(update={"retention_days": 30}))
    try:
        now = datetime.now(UTC).replace(tzinfo=None)
        store._write(
            [
                store._row(q("old"), "", None, at=now - timedelta(days=31)),
                store._row(q("recent"), "", None, at=now - timedelta(days=29)),
            ]
        )
        assert store.purge() == 1
        assert [r["question"] for r in store.rows()] == ["recent"]
    finally:
        store.close()


def test_schema_is_versioned_and_a_newer_one_is_refused(store_settings, store):
    with store.engine.begin() as conn:
        version = conn.execute(sa.select(meta_table.c.value).where(meta_table.c.key == "schema_version")).scalar()
        assert int(version) == SCHEMA_VERSION
    again = Store.open(store_settings)  # a second start (or replica) upgrades nothing and keeps the rows
    again.close()
    with store.engine.begin() as conn:
        conn.execute(meta_table.update().where(meta_table.c.key == "schema_version").values(value="99"))
    with pytest.raises(StoreError, match="schema version 99.*BOT_DATABASE_URL"):
        Store.open(store_settings)


def test_old_jsonl_log_is_imported_once(store_settings, tmp_path):
    log = write_log(
        tmp_path / "logs" / "feedback.jsonl",
        old_line("unanswered", "how to bake bread", cited=["a#1"]),
        old_line("vote", "显存不足", language="zh", answered=True, cited=["b#1"], vote="down"),
        old_line("not_helpful", "nccl", answered=True, cited=["c#1"], vote="down"),
        "{broken\n",
    )
    store = Store.open(store_settings)
    try:
        assert store.rows() == []  # the app no longer reads the old log: `python -m bot store import-jsonl` does
        assert store.import_jsonl(log) == 3
        rows = store.rows()
        assert [(r["kind"], r["question"], r["origin"]) for r in rows] == [
            ("question", "how to bake bread", "import"),
            ("vote", "显存不足", "import"),
            ("not_helpful", "nccl", "import"),
        ]
        assert rows[0]["tier"] == "none" and rows[1]["vote"] == "down" and rows[1]["cited"] == ["b#1"]
        assert store.import_jsonl(log) == 0  # the same file again (a restart, another replica): nothing
        assert len(store.rows()) == 3
        # an old replica still appending during a rolling upgrade: only the new line comes in
        write_log(log, old_line("unanswered", "horovod hangs"))
        assert store.import_jsonl(log) == 1 and store.import_jsonl(log) == 0
        # another replica's own log (same path on its machine, other content) is a log of its own
        other = tmp_path / "other" / "feedback.jsonl"
        write_log(other, old_line("unanswered", "NPU 报错", language="zh"))
        assert store.import_jsonl(other) == 1
        assert [r["question"] for r in store.rows()][-2:] == ["horovod hangs", "NPU 报错"]
    finally:
        store.close()


def test_answers_go_on_while_the_database_is_away(store_settings, outage, caplog):
    store = Store.open(store_settings, busy_timeout=0.2, retry_seconds=0.2, max_retry_seconds=0.5)
    try:
        caplog.set_level(logging.WARNING, logger="bot.store")
        with outage:
            # Recording never waits for the database: each call returns while it is away (a call that waited would
            # hang here until the outage ends, which only comes after this block); nothing recorded is lost.
            for n in range(20):
                store.record(q(f"question {n}"))
            assert not store.flush(3)  # nothing can be written now
            assert not store.healthy
        assert store.flush(30)  # back: the queued rows are written
        assert store.healthy and len(store.rows()) == 20
        unavailable = [r for r in caplog.records if "unavailable" in r.getMessage()]
        assert len(unavailable) == 1, [r.getMessage() for r in caplog.records]  # logged once, not per retry
        assert any("is back" in r.getMessage() for r in caplog.records)
    finally:
        store.close()


# ---------------------------------------------------------------- start-up errors


@pytest.mark.parametrize(
    "url,expected",
    [
        ("not a url at all", "BOT_DATABASE_URL='not a url at all' is not a database URL"),
        ("mongodb://db.example/bot", "BOT_DATABASE_URL='mongodb://db.example/bot' names the database kind 'mongodb'"),
        ("mysql+mysqldb://bot:pw@db.example/bot", "needs the Python driver MySQLdb, which is not installed"),
    ],
)
def test_malformed_database_url_is_named(url, expected, tmp_path):
    with pytest.raises(StoreError) as caught:
        Store.open(StoreSettings(database_url=url, data_dir=tmp_path))
    assert expected in str(caught.value) and "postgresql+psycopg://" in str(caught.value)
    assert "pw" not in str(caught.value)


def test_a_plain_postgresql_url_uses_the_installed_driver(postgres, tmp_path):
    url = postgres.url(postgres.new_database()).replace("postgresql+psycopg://", "postgresql://")
    store = Store.open(StoreSettings(database_url=url, data_dir=tmp_path))
    try:
        assert store.engine.url.drivername == "postgresql+psycopg"
    finally:
        store.close()


def test_unreachable_database_is_named_without_its_password(tmp_path):
    from fixtures.server import free_port

    url = f"postgresql+psycopg://bot:hunter2@127.0.0.1:{free_port()}/bot"
    with pytest.raises(StoreError) as caught:
        Store.open(StoreSettings(database_url=url, data_dir=tmp_path))
    message = str(caught.value)
    assert "BOT_DATABASE_URL=" in message and "127.0.0.1" in message and "hunter2" not in message
    assert "running and reachable" in message


def test_bad_store_settings_name_the_variable():
    with pytest.raises(ValueError, match="BOT_RETENTION_DAYS='a week'"):
        StoreSettings.from_env({"BOT_RETENTION_DAYS": "a week"})
    with pytest.raises(ValueError, match="BOT_STORE_QUESTION_TEXT='maybe'"):
        StoreSettings.from_env({"BOT_STORE_QUESTION_TEXT": "maybe"})
    settings = StoreSettings.from_env({"XDG_STATE_HOME": "/var/lib/x"})
    assert settings.data_dir == Path("/var/lib/x/gpu-troubleshooter") and settings.retention_days == 180


def _unprivileged() -> list[str]:
    """Root writes into read-only folders anyway: as root, drop the capability that lets it (CAP_DAC_OVERRIDE)."""
    if os.geteuid() != 0:
        return []
    caps = "-dac_override,-dac_read_search"
    return ["setpriv", f"--inh-caps={caps}", f"--bounding-set={caps}", "--"]


def test_read_only_data_directory_is_named_at_start_up(tmp_path, tiny_seeds):
    data = Path(tmp_path) / "readonly"
    data.mkdir()
    data.chmod(0o555)
    env = {
        **os.environ,
        "BOT_DATA_DIR": str(data),
        "BOT_EMBEDDER": "hash",
        "BOT_SEEDS_DIR": str(tiny_seeds),
        "BOT_INDEX_DIR": str(tmp_path / "index"),
        "BOT_DATABASE_URL": "",
    }
    done = subprocess.run(
        [*_unprivileged(), sys.executable, str(REPO / "app.py"), "--port", "1"],
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
        cwd=REPO,
    )
    assert done.returncode == 2, done.stderr
    assert f"BOT_DATA_DIR='{data}' is not writable" in done.stderr and "Permission denied" in done.stderr
    assert not (tmp_path / "index").exists()  # refused before any work


@pytest.mark.parametrize(
    "env,expected",
    [
        ({"BOT_DATABASE_URL": "postgres//oops"}, "BOT_DATABASE_URL='postgres//oops' is not a database URL"),
        (
            {"BOT_DATABASE_URL": "postgresql+psycopg://bot:pw@127.0.0.1:9/bot"},
            "cannot use the database BOT_DATABASE_URL=",
        ),
        ({"BOT_RETENTION_DAYS": "-3"}, "BOT_RETENTION_DAYS='-3' is not allowed: it must be a whole number of days"),
    ],
)
def test_app_refuses_to_start_with_a_clear_message(env, expected, monkeypatch, capsys, tmp_path):
    import app as app_module

    monkeypatch.setenv("BOT_DATA_DIR", str(tmp_path / "data"))
    for name, value in env.items():
        monkeypatch.setenv(name, value)
    assert app_module.main(["--port", "1", "--index", str(tmp_path / "no-index")]) == 2
    err = capsys.readouterr().err
    assert err.startswith("error: ") and expected in err, err
    assert not (tmp_path / "no-index").exists()  # the store is checked before the index is built


def test_the_app_answers_while_the_store_is_down(store_settings, outage, hash_settings):
    import httpx

    from app import build_app
    from bot.engine.retrieve import Engine
    from fixtures.server import ThreadServer

    store = Store.open(
        store_settings.model_copy(update={"admin_token": "operator-1"}),
        busy_timeout=0.2,
        retry_seconds=0.2,
        max_retry_seconds=0.5,
    )
    app = build_app(hash_settings, engine=Engine.open(hash_settings, auto_build=True), progress=False, store=store)
    try:
        with ThreadServer(app) as server, outage:
            for _ in range(3):
                answer = httpx.post(server.url + "/api/ask", json={"question": "显存不足怎么办"}, timeout=30)
                assert answer.status_code == 200 and answer.json()["hits"], answer.text
            vote = httpx.post(
                server.url + "/api/feedback", timeout=30, json={"question": "显存不足怎么办", "vote": "up"}
            )
            assert vote.status_code == 200
            chat = httpx.post(
                server.url + "/v1/chat/completions",
                timeout=30,
                json={"messages": [{"role": "user", "content": "libnccl.so 报错"}]},
            )
            assert chat.status_code == 200 and chat.json()["citations"]
            admin = httpx.get(server.url + "/admin", headers={"Authorization": "Bearer operator-1"}, timeout=60)
            assert admin.status_code in (200, 503), admin.text  # SQLite still reads; PostgreSQL says it cannot, no 500
            if admin.status_code == 503:
                assert "cannot be read right now" in admin.text
            assert not store.flush(1) and not store.healthy
        assert store.flush(30)  # the database is back: nothing was lost
        assert [r["kind"] for r in store.rows()] == ["question"] * 3 + ["vote", "question"]
    finally:
        store.close()
