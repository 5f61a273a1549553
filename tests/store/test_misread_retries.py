"""Schema version 4: "didn't help" rows stored for turns that did not say it (a new question read as a retry,
issue 26 item 3) are reclassified, so /admin no longer counts complaints no one made."""

from __future__ import annotations

from datetime import timedelta

import sqlalchemy as sa

from bot.store.database import MISREAD, SCHEMA_VERSION, Store, _now, events_table, meta_table


def _row(n: int, kind: str, question: str | None, session: str, seconds: float) -> dict:
    return {
        "at": _now() - timedelta(hours=1) + timedelta(seconds=seconds),
        "kind": kind,
        "session": session,
        "question": question,
        "language": "en",
        "tier": "answer" if kind == "not_helpful" else "tentative",
        "confidence": 0.4 if kind == "question" else None,
        "cited": ["tf.md#memory"],
        "origin": "ui",
        "event_id": f"v3-{n}",
    }


# As the version-3 app stored them: a retry with words of its own was a "not_helpful" row (the case's question)
# followed by a "question" row (the message); a bare "没用" only the "not_helpful" row.
V3_ROWS = [
    _row(1, "question", "TensorFlow takes all GPU memory", "keras", 0),
    _row(2, "not_helpful", "TensorFlow takes all GPU memory", "keras", 30),
    _row(3, "question", "Keras model.fit does not use my GPU", "keras", 30.2),  # a new question
    _row(4, "question", "训练时显存不足怎么办", "oom", 0),
    _row(5, "not_helpful", "训练时显存不足怎么办", "oom", 40),
    _row(6, "question", "batch_size 改成 1 试了，还是爆显存", "oom", 40.1),  # says it failed
    _row(7, "question", "loss 变成 nan", "nan", 0),
    _row(8, "not_helpful", "loss 变成 nan", "nan", 50),  # "没用": no question row
    _row(9, "question", "Keras model.fit does not use my GPU", "nan", 120),  # a later turn, not this one's
    _row(10, "not_helpful", "hidden question", "hidden", 0),
    _row(11, "question", None, "hidden", 0.1),  # BOT_STORE_QUESTION_TEXT=0: nothing to read again
]


def _make_v3(settings) -> None:
    store = Store.open(settings)
    try:
        with store.engine.begin() as conn:
            conn.execute(events_table.insert(), V3_ROWS)
            conn.execute(meta_table.update().where(meta_table.c.key == "schema_version").values(value="3"))
    finally:
        store.close()


def test_didnt_help_rows_of_turns_that_did_not_say_it_are_reclassified(store_settings):
    _make_v3(store_settings)
    store = Store.open(store_settings)
    try:
        with store.engine.connect() as conn:
            kinds = dict(conn.execute(sa.select(events_table.c.event_id, events_table.c.kind)).all())
            version = conn.execute(sa.select(meta_table.c.value).where(meta_table.c.key == "schema_version")).scalar()
        assert int(version) == SCHEMA_VERSION == 5
        assert kinds["v3-2"] == MISREAD  # "Keras model.fit does not use my GPU" never said the answer failed
        assert [kinds[f"v3-{n}"] for n in (5, 8, 10)] == ["not_helpful"] * 3
        counted = [r["event_id"] for r in store.rows() if r["kind"] == "not_helpful"]
        assert sorted(counted) == ["v3-10", "v3-5", "v3-8"]
        assert len(store.rows()) == len(V3_ROWS) - 1  # the misread row is kept, not counted
    finally:
        store.close()
