"""Schema version 3: questions carry their reply's ``answer_id``, and votes name it; a version-2 database is
upgraded in place, on SQLite and a real PostgreSQL server, with nothing lost and old rows still read.

The version-2 database is made as version 2 made it: the table as it was then (``answer_id`` UNIQUE, votes
only), ``bot_meta`` at version 2, rows written as the old app wrote them (questions without an answer id).
"""

from __future__ import annotations

from datetime import timedelta
from pathlib import Path

import sqlalchemy as sa

from bot.kb.embed import HashEmbedder
from bot.records import Event
from bot.store.database import (
    SCHEMA_VERSION,
    SPOOL_DIR,
    Store,
    _now,
    _to_json,
    events_table,
    make_engine,
    meta_table,
    resolve_url,
)
from bot.web.admin.report import build_report

OOM = "gpu.md#oom"


def _v2_schema() -> tuple[sa.MetaData, sa.Table]:
    """The tables exactly as schema version 2 created them (frozen here: the app's own definition moved on)."""
    old = sa.MetaData()
    sa.Table(
        "bot_meta", old, sa.Column("key", sa.String(200), primary_key=True), sa.Column("value", sa.Text, nullable=False)
    )
    table = sa.Table(
        "bot_events",
        old,
        sa.Column("id", sa.BigInteger().with_variant(sa.Integer, "sqlite"), primary_key=True, autoincrement=True),
        sa.Column("at", sa.DateTime, nullable=False, index=True),
        sa.Column("kind", sa.String(16), nullable=False, index=True),
        sa.Column("session", sa.String(32), nullable=False, default=""),
        sa.Column("question", sa.Text),
        sa.Column("language", sa.String(8), nullable=False, default=""),
        sa.Column("tier", sa.String(16), nullable=False, default=""),
        sa.Column("confidence", sa.Float),
        sa.Column("cited", sa.JSON, nullable=False, default=list),
        sa.Column("signature", sa.Text),
        sa.Column("vote", sa.String(8)),
        sa.Column("reason", sa.String(32)),
        sa.Column("answer_id", sa.String(80), unique=True),
        sa.Column("latency_ms", sa.Float),
        sa.Column("origin", sa.String(16), nullable=False, default="app"),
        sa.Column("event_id", sa.String(32)),
    )
    sa.Index("ix_bot_events_event_id", table.c.event_id, unique=True)
    return old, table


def _row(
    n: int,
    kind: str,
    question: str,
    *,
    session: str = "s1",
    tier: str = "none",
    vote=None,
    reason=None,
    answer_id=None,
    minutes: int = 0,
) -> dict:
    return {
        "at": _now() - timedelta(hours=1) + timedelta(minutes=minutes),
        "kind": kind,
        "session": session,
        "question": question,
        "language": "zh",
        "tier": tier,
        "confidence": 0.3 if kind == "question" else None,
        "cited": [OOM],
        "signature": None,
        "vote": vote,
        "reason": reason,
        "answer_id": answer_id,
        "latency_ms": 12.0 if kind == "question" else None,
        "origin": "ui",
        "event_id": f"old-{n}",
    }


V2_ROWS = [
    _row(1, "question", "Jetson 上训练显存不足", tier="tentative"),
    _row(
        2,
        "vote",
        "Jetson 上训练显存不足",
        tier="tentative",
        vote="down",
        reason="not_my_framework",
        answer_id="old-answer-1",
        minutes=1,
    ),
    _row(3, "question", "显存不足怎么办", tier="answer", session="s2", minutes=2),
    _row(4, "vote", "显存不足怎么办", tier="answer", vote="up", answer_id="old-answer-2", session="s2", minutes=3),
]


def _make_v2(settings) -> None:
    engine = make_engine(resolve_url(settings))
    old, table = _v2_schema()
    try:
        with engine.begin() as conn:
            old.create_all(conn)
            conn.execute(
                old.tables["bot_meta"].insert(),
                [{"key": "session_salt", "value": "ab" * 16}, {"key": "schema_version", "value": "2"}],
            )
            conn.execute(table.insert(), V2_ROWS)
    finally:
        engine.dispose()


def _version(store: Store) -> int:
    with store.engine.connect() as conn:
        return int(conn.execute(sa.select(meta_table.c.value).where(meta_table.c.key == "schema_version")).scalar())


def test_a_version_2_database_is_upgraded_with_every_row_kept(store_settings):
    _make_v2(store_settings)
    store = Store.open(store_settings)
    try:
        assert _version(store) == SCHEMA_VERSION == 5
        rows = store.rows()
        kept = [
            {c: r[c] for c in ("id", "kind", "question", "tier", "vote", "reason", "answer_id", "event_id")}
            for r in rows
        ]
        assert kept == [
            {"id": n, **{c: old[c] for c in ("kind", "question", "tier", "vote", "reason", "answer_id", "event_id")}}
            for n, old in enumerate(V2_ROWS, 1)
        ]
        # New rows after the upgrade: a question and the votes on its reply share the answer id.
        store.record(Event("question", "多机训练 NCCL 超时", "zh", tier="none", cited=(OOM,), answer_id="new-1"))
        store.record(Event("vote", "多机训练 NCCL 超时", "zh", vote="up", answer_id="new-1"))
        store.record(
            Event(
                "vote", "多机训练 NCCL 超时", "zh", vote="down", reason="outdated", answer_id="new-1", comment="过时了"
            )
        )
        # A changed vote on an answer from before the upgrade still replaces the first one.
        store.record(Event("vote", "显存不足怎么办", "zh", vote="down", reason="outdated", answer_id="old-answer-2"))
        assert store.flush(10)
        rows = store.rows()
        assert len(rows) == 6 and {1, 2, 3, 4} <= {r["id"] for r in rows}  # the changed vote kept its row
        linked = [(r["kind"], r["vote"], r["reason"]) for r in rows if r["answer_id"] == "new-1"]
        assert linked == [("question", None, None), ("vote", "down", "outdated")]
        # Version 5's column, added to the rebuilt table: the 👎's own words kept with the vote.
        assert [r["comment"] for r in rows if r["answer_id"] == "new-1"] == [None, "过时了"]
        assert [(r["vote"], r["reason"]) for r in rows if r["answer_id"] == "old-answer-2"] == [("down", "outdated")]
    finally:
        store.close()
    assert Store.open(store_settings).rows()[0]["question"] == V2_ROWS[0]["question"]  # a second start changes nothing


def test_old_rows_are_still_shown_in_context_after_the_upgrade(store_settings):
    _make_v2(store_settings)
    store = Store.open(store_settings)
    try:
        embedder = HashEmbedder()
        report = build_report(store.rows(), lambda texts: embedder.embed(texts, role="query"))
    finally:
        store.close()
    (example,) = [e for g in report.groups for e in g.examples]
    # The old vote has no link: it is matched to its question by session and wording, as before version 3.
    assert (example.tier, example.reasons) == ("tentative", (("not_my_framework", 1),))
    assert report.totals["questions"] == 2 and report.totals["up"] == 1 and report.totals["down"] == 1


def test_rows_spooled_while_the_database_was_down_keep_their_answer_id(store_settings, outage):
    store = Store.open(store_settings, busy_timeout=0.2, retry_seconds=0.1, max_retry_seconds=0.2)
    try:
        with outage:
            store.record(Event("question", "Ascend 上训练报错", "zh", tier="none", answer_id="during-outage"))
            store.record(
                Event("vote", "Ascend 上训练报错", "zh", vote="down", reason="wrong_section", answer_id="during-outage")
            )
            assert not store.flush(1)
        assert store.flush(30)
        assert [(r["kind"], r["answer_id"]) for r in store.rows()] == [
            ("question", "during-outage"),
            ("vote", "during-outage"),
        ]
    finally:
        store.close()


def test_a_spool_left_by_a_version_2_app_is_written_after_the_upgrade(store_settings):
    """A version-2 app killed while its database was down: its spool has questions without an answer id."""
    _make_v2(store_settings)
    spool = Path(store_settings.data_dir) / SPOOL_DIR
    spool.mkdir(parents=True)
    left = [
        {**_row(10, "question", "昇腾 NPU 上训练报错", minutes=5), "answer_id": None},
        _row(11, "vote", "昇腾 NPU 上训练报错", vote="down", reason="wrong_section", answer_id="a-11", minutes=6),
    ]
    for row in left:
        row.pop("event_id")
        row["event_id"] = f"spooled-{row['kind']}"
    (spool / "123-old.jsonl").write_text("".join(_to_json(r) + "\n" for r in left), encoding="utf-8")
    store = Store.open(store_settings)
    try:
        rows = store.rows()
        assert [r["event_id"] for r in rows] == [*(r["event_id"] for r in V2_ROWS), "spooled-question", "spooled-vote"]
        assert rows[-2]["answer_id"] is None and rows[-1]["answer_id"] == "a-11"
        assert not (spool / "123-old.jsonl").exists()
    finally:
        store.close()


def test_a_fresh_database_has_the_version_3_indexes(store_settings):
    store = Store.open(store_settings)
    try:
        with store.engine.connect() as conn:
            inspector = sa.inspect(conn)
            unique = [c for c in inspector.get_unique_constraints(events_table.name)]
            indexes = {i["name"]: i for i in inspector.get_indexes(events_table.name)}
        assert not [c for c in unique if c["column_names"] == ["answer_id"]]
        assert indexes["ux_bot_events_vote_answer"]["unique"]
    finally:
        store.close()


def test_an_upgrade_that_fails_half_way_leaves_version_2_whole(store_settings, monkeypatch):
    """The steps run in one transaction (SQLite too, where Python's sqlite3 would commit DDL as it goes)."""
    from bot.store import migrations

    _make_v2(store_settings)

    def crash_after_the_rebuild(conn):
        migrations.v3_answer_id_on_questions(conn)
        raise RuntimeError("power cut")

    monkeypatch.setattr(
        migrations, "MIGRATIONS", [migrations.v1_tables, migrations.v2_event_id, crash_after_the_rebuild]
    )
    try:
        Store.open(store_settings)
    except RuntimeError:
        pass
    engine = make_engine(resolve_url(store_settings))
    try:
        with engine.connect() as conn:
            inspector = sa.inspect(conn)
            assert sorted(inspector.get_table_names()) == ["bot_events", "bot_meta"]  # no parked copy left
            assert [c["column_names"] for c in inspector.get_unique_constraints("bot_events")] == [["answer_id"]]
            version = conn.execute(sa.select(meta_table.c.value).where(meta_table.c.key == "schema_version")).scalar()
            assert version == "2"
            assert [r.event_id for r in conn.execute(sa.text("SELECT event_id FROM bot_events ORDER BY id"))] == [
                r["event_id"] for r in V2_ROWS
            ]
    finally:
        engine.dispose()
    monkeypatch.undo()
    store = Store.open(store_settings)  # the next start upgrades it
    try:
        assert _version(store) == SCHEMA_VERSION and len(store.rows()) == len(V2_ROWS)
    finally:
        store.close()
